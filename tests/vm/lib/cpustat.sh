# CPU accounting for the guest comparisons: how much of the guest's CPU a run used, and how
# much of it one process.  Under TCG the guest is CPU bound, so CPU per I/O is what decides a
# target's throughput; it is also steadier from run to run than the throughput itself.
# Source after common.sh.

# cpu_stat: the guest's CPU time so far, in clock ticks, as "busy sys_softirq": busy is every
# state but idle and iowait; sys_softirq is kernel time (system, irq, softirq), where a kernel
# target such as LIO does its work (softirq and kworkers) along with the initiator and rxe.
cpu_stat() {
	awk '$1 == "cpu" { printf "%.0f %.0f\n", $2 + $3 + $4 + $7 + $8 + $9, $4 + $7 + $8; exit }' \
		/proc/stat
}

# proc_sched PID: "run-us wait-us context-switches" summed over PID's threads so far: the time
# they ran and the time they were ready to run but waited for a CPU (schedstat, measured by
# the scheduler's clock: utime and stime are sampled at timer ticks, which under emulation
# charge a short-lived task with whole ticks), and how often they were switched out.  Per
# I/O they show what the daemon costs and what its thread hand-offs cost.  Threads that come
# and go (io_uring's io-wq workers) count only while they exist.
proc_sched() {
	local t r=0 w=0 cs=0 a b c
	for t in /proc/"$1"/task/*; do
		# (the error redirection first: a vanished thread's file fails to open)
		read -r a b _ 2>/dev/null <"$t/schedstat" || continue
		# a thread may end between the two reads
		c=$(awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }' \
			"$t/status" 2>/dev/null) || continue
		r=$((r + a)) w=$((w + b)) cs=$((cs + c))
	done
	echo "$((r / 1000)) $((w / 1000)) $cs"
}

# blk_bytes DEV: bytes read plus written through DEV so far (sectors of /sys/block/DEV/stat).
blk_bytes() {
	awk '{ printf "%.0f\n", ($3 + $7) * 512 }' "/sys/block/$(basename "$1")/stat"
}

# cpu_us_per TICKS BYTES SIZE: microseconds of CPU per SIZE-byte I/O ("-" without I/O).
cpu_us_per() {
	awk -v t="$1" -v b="$2" -v s="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		if (b > 0) printf "%.0f", t / hz * 1e6 / (b / s); else print "-" }'
}

# ctxt_count: context switches of the whole guest so far (/proc/stat ctxt).
ctxt_count() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

# fio_bg NAME DEV FIO_ARGS...: one fio job on DEV for RUNTIME + 2 s in the background, its pid
# in FIO_BG; returns a second in, so what is measured next leaves fio's start-up out.
fio_bg() {
	local name=$1 dev=$2
	shift 2
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--time_based --runtime=$((RUNTIME + 2)) "$@" >/dev/null 2>&1 &
	FIO_BG=$!
	sleep 1
}

# task_snapshot: "TID RUN_NS SWITCHES COMM" for every thread of the guest (schedstat's run
# time, by the scheduler's clock; voluntary plus involuntary context switches).  grep, not
# awk, opens the files: a thread may end while they are read.
task_snapshot() {
	{
		grep -H '' /proc/[0-9]*/task/[0-9]*/comm /proc/[0-9]*/task/[0-9]*/schedstat
		grep -H ctxt_switches /proc/[0-9]*/task/[0-9]*/status
	} 2>/dev/null | awk -F: '{ split($1, p, "/"); t = p[5] }
		$1 ~ /comm$/ { c[t] = substr($0, length($1) + 2) }
		$1 ~ /schedstat$/ { split($2, v, " "); r[t] = v[1] }
		$1 ~ /status$/ { s[t] += $3 }
		END { for (t in r) if (t in c) print t, r[t], s[t] + 0, c[t] }'
}

# task_profile LABEL DEV SIZE FIO_ARGS...: which threads of the guest ran while one fio job of
# SIZE-byte I/Os ran on DEV for RUNTIME s (from its second second on): per thread name (digits
# as #, so a kworker's or an io-wq worker's instances add up), µs of run time and context
# switches per I/O, from two task_snapshots; then /proc/stat's user, system, irq, softirq
# and idle time per I/O.  Exact where perf's sampling is not: the scheduler's clock, no
# sampling interrupt to change what runs.  Threads that end inside the window are lost;
# softirq work counts to whichever thread it interrupted.
task_profile() {
	local label=$1 dev=$2 size=$3 b0 ios job st0 st1
	shift 3
	fio_bg "tasks-$label" "$dev" "$@"
	job=$FIO_BG
	task_snapshot >"/tmp/tasks0-$label"
	st0=$(awk '$1 == "cpu" { print $2 + $3, $4, $7, $8, $5; exit }' /proc/stat)
	b0=$(blk_bytes "$dev")
	sleep "$RUNTIME"
	ios=$((($(blk_bytes "$dev") - b0) / size))
	st1=$(awk '$1 == "cpu" { print $2 + $3, $4, $7, $8, $5; exit }' /proc/stat)
	task_snapshot >"/tmp/tasks1-$label"
	wait "$job" || fail "task profile $label: fio failed"
	[ "$ios" -gt 0 ] || fail "task profile $label: no I/O"
	echo "  $label, $ios I/Os: threads by run time (us per I/O, switches per I/O):"
	awk -v n="$ios" 'NR == FNR { r0[$1] = $2; s0[$1] = $3; next }
		{ name = $4; for (i = 5; i <= NF; i++) name = name " " $i; gsub(/[0-9]+/, "#", name)
		  run[name] += ($2 - r0[$1]) / 1000; sw[name] += $3 - s0[$1] }
		END { for (k in run) if (run[k] / n >= 10 || sw[k] / n >= 0.5)
			printf "    %8.0f %6.1f  %s\n", run[k] / n, sw[k] / n, k }' \
		"/tmp/tasks0-$label" "/tmp/tasks1-$label" | sort -rn
	awk -v a="$st0" -v b="$st1" -v n="$ios" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "    /proc/stat us per I/O: user %.0f, system %.0f, irq %.0f, softirq %.0f, idle %.0f\n",
			(y[1] - x[1]) / hz * 1e6 / n, (y[2] - x[2]) / hz * 1e6 / n, (y[3] - x[3]) / hz * 1e6 / n,
			(y[4] - x[4]) / hz * 1e6 / n, (y[5] - x[5]) / hz * 1e6 / n }'
}

# profile_job LABEL DEV SIZE FIO_ARGS...: where the guest's CPU goes while one fio job of
# SIZE-byte I/Os runs on DEV: perf samples both vCPUs on the cpu-clock at PROF_HZ for
# RUNTIME s from the job's second second on (fio's start-up left out), and the report gives
# each command + module, each symbol, and each command + symbol, as µs of CPU per I/O (its
# samples over PROF_HZ, over the I/Os done while perf ran), so the profiles of two targets
# under the same job read side by side.  The 30 costliest of each, down to PROF_MIN µs per
# I/O.  Under TCG the sampling timer changes what it measures (a write job that keeps both
# vCPUs busy shows half its time idle while perf runs): read shares, and task_profile's
# figures for the amounts.
PROF_HZ=${PROF_HZ:-997}
PROF_MIN=${PROF_MIN:-20}
profile_job() {
	local label=$1 dev=$2 size=$3 b0 ios data=/tmp/perf-$1.data key job
	shift 3
	fio_bg "prof-$label" "$dev" "$@"
	job=$FIO_BG
	b0=$(blk_bytes "$dev")
	command perf record -a -q -F "$PROF_HZ" -e cpu-clock -o "$data" -- sleep "$RUNTIME" ||
		fail "profile $label: perf record failed"
	ios=$((($(blk_bytes "$dev") - b0) / size))
	wait "$job" || fail "profile $label: fio failed"
	[ "$ios" -gt 0 ] || fail "profile $label: no I/O"
	for key in comm,dso sym comm,sym; do
		echo "  $label, $ios I/Os, by $key (us of CPU per I/O):"
		command perf report -i "$data" --stdio -q --no-children --sort "$key" \
			-F "sample,$key" 2>/dev/null |
			awk -v hz="$PROF_HZ" -v n="$ios" -v min="$PROF_MIN" 'NF >= 2 && $1 ~ /^[0-9]+$/ {
				us = $1 / hz * 1e6 / n; if (us < min) next
				$1 = ""; printf "    %8.0f %s\n", us, $0 }' | sort -rn | awk 'NR <= 30'
	done
}
