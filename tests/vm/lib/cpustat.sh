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
