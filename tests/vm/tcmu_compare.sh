#!/bin/bash
# vm-timeout: 1200
# vm-target: none
# The same tcm_loop disk served three ways, in one guest, alternating, medians of ROUNDS:
#   utgtd       LIO user backstore dev_config=utgt/cmp0, utgtd's vdisk_fileio on a file
#   tcmu-runner LIO user backstore dev_config=qcow/<file>: Debian's tcmu-runner ships no
#               example file/ handler; its qcow handler serves a raw image file as raw
#               ("not qcow: will treat as raw")
#   LIO fileio  the kernel's own target_core_file on a file (buffered, write cache on): the
#               ceiling, no ring at all
# Each on its own 64 MiB file on the ext4 root, read once before the runs so all three are
# served from the page cache (the ring and the handler are measured, not the virtio disk).
# Both user backstores get the same hw_max_sectors (1 MiB commands).  fio jobs: 4 KiB random
# read and write at QD1 and QD32, 1 MiB sequential read at QD8.  Besides IOPS / MB/s, each
# daemon's CPU time per I/O (utime + stime from /proc/PID/stat over its runs) and its context
# switches per I/O for each job (all its threads, /proc/PID/task/*/status: the thread wakeups a
# command costs) and its page faults per I/O (/proc/PID/stat: a data-area page mapped anew
# costs one) show where the time goes.  Under TCG only the ratios mean something.  Table in /out/tcmu-compare.txt.
# Per job and daemon, "where the time goes" lists each thread's CPU per I/O (utime + stime of
# /proc/PID/task/TID/stat, by thread name) and how busy each vCPU was (/proc/stat), so a
# hand-off between threads and the vCPUs it spreads over can be seen.
# Arguments: quick (1 round of 3 s runs), rounds=N, runtime=S (seconds per fio run), jobs=A+B
# (a subset of rr1,rr32,rw1,rw32,sr8: short development runs), build=DIR, base=DIR: a fourth
# target, a second
# utgtd from /src/DIR (another build, e.g. before a change) serving its own LIO device and
# file the same way, in the same rounds; base_env=VAR=VALUE sets one variable for it (e.g.
# base_env=UTGT_NO_IO_URING=1: the fileio engine's thread pool instead of io_uring);
# drv=ATTR:VALUE and base_drv=ATTR:VALUE add one attribute to the TARGET_DRIVER tcmu block
# of utgtd's or the base's scst.conf (e.g. base_drv=ring_threads:1: the same build on one
# ring thread).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/tcmu.sh
. /src/tests/vm/lib/compare.sh
RUNNER_LOG=/tmp/tcmu-runner
MB=64
ROUNDS=$([ "$QUICK" = 1 ] && echo 1 || echo 3)
RUNTIME=$([ "$QUICK" = 1 ] && echo 3 || echo 5)
RAMP=1
KEEP_CACHE=1
OUT=/out/tcmu-compare.txt
RUNNER_PID=
BASE= BASE_ENV= DRV= BASE_DRV=
JOBS=(rr1 rr32 rw1 rw32 sr8)
for a in "$@"; do
	case $a in
	base=*) BASE=/src/${a#base=}/utgtd ;;
	base_env=*) BASE_ENV=${a#base_env=} ;;
	drv=*) DRV=${a#drv=} ;;
	base_drv=*) BASE_DRV=${a#base_drv=} ;;
	rounds=*) ROUNDS=${a#rounds=} ;;
	runtime=*) RUNTIME=${a#runtime=} ;;
	jobs=*) IFS=+ read -r -a JOBS <<<"${a#jobs=}" ;;
	esac
done
BASE_PID=
TG=(utgtd runner lio)
[ -n "$BASE" ] && TG=(utgtd base runner lio)
on_fail() {
	echo "--- utgtd log (tail)"
	tail -20 "$LOG" 2>/dev/null
	echo "--- tcmu-runner log (tail)"
	tail -20 "$RUNNER_LOG"/tcmu-runner.log 2>/dev/null
	dmesg | tail -20
}
trap 'for p in $UTGTD_PID $BASE_PID $RUNNER_PID; do kill -KILL "$p" 2>/dev/null || true; done; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

# cpu_ticks PID: utime + stime, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# ctx_switches PID: context switches of all its threads so far (each is a thread going to
# sleep or being preempted: the wakeups a command costs)
ctx_switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'; }
# thread_ticks PID: "name ticks" per thread name (utime + stime; threads of one name summed;
# the name is field 2 of stat, in parentheses, without spaces for these daemons)
thread_ticks() {
	cat /proc/"$1"/task/*/stat 2>/dev/null |
		awk '{ sub(/^[0-9]+ \(/, ""); n = $1; sub(/\)$/, "", n); t[n] += $13 + $14 }
			END { for (n in t) print n, t[n] }'
}
# faults PID: page faults of all its threads so far (minor + major: a data-area page the
# handler touches without a mapping costs one each)
faults() { awk '{ print $10 + $12 }' "/proc/$1/stat"; }
# vcpu_busy: "busy0 busy1 ..." ticks of each vCPU so far (every state but idle and iowait)
vcpu_busy() { awk '$1 ~ /^cpu[0-9]/ { printf "%s ", $2 + $3 + $4 + $7 + $8 + $9 } END { print "" }' /proc/stat; }

step "three backing files, utgtd, tcmu-runner, LIO"
[ -x "$UTGTD" ] || fail "no $UTGTD (build it first)"
command -v tcmu-runner >/dev/null || fail "no tcmu-runner in the guest image"
tcmu_modules
modprobe target_core_file
mkdir -p "$DIR" "$RUNNER_LOG" /run/dbus
for f in utgt base runner lio; do
	dd if=/dev/urandom of=/var/tmp/cmp-$f.img bs=1M count=$MB status=none
done
sync
cat >"$CONF" <<CONF
HANDLER vdisk_fileio {
	DEVICE cmp0 {
		filename /var/tmp/cmp-utgt.img
		size_mb $MB
	}
}

TARGET_DRIVER tcmu {
	enabled 1
${DRV:+	${DRV%%:*} ${DRV#*:}}
}
CONF
: >"$LOG"
utgtd_start
if [ -n "$BASE" ]; then
	[ -x "$BASE" ] || fail "no $BASE"
	# its own DEVICE; each utgtd leaves the other's LIO device alone (no such DEVICE)
	sed 's/cmp0/cmpb/; s/cmp-utgt/cmp-base/' "$CONF" | grep -v "^	${DRV%%:*} " >"$DIR/base.conf"
	[ -n "$BASE_DRV" ] && sed -i "s/^	enabled 1$/&\n	${BASE_DRV%%:*} ${BASE_DRV#*:}/" "$DIR/base.conf"
	mkdir -p /tmp/tcmu-base
	env ${BASE_ENV:+"$BASE_ENV"} "$BASE" -f -c "$DIR/base.conf" --state-dir /tmp/tcmu-base \
		>/out/utgtd-base.log 2>&1 &
	BASE_PID=$!
	wait_until 60 "the base utgtd" grep -q "tcmu: watching" /out/utgtd-base.log
fi
# tcmu-runner claims its D-Bus name on the system bus; give it one
command -v dbus-daemon >/dev/null && { dbus-daemon --system --fork 2>/dev/null || true; }
tcmu-runner -l "$RUNNER_LOG" >/tmp/tcmu-runner.out 2>&1 &
RUNNER_PID=$!
user_backstore cmpu utgt/cmp0 $MB nl_reply_supported=-1 hw_max_sectors=2048
user_backstore cmpr "qcow//var/tmp/cmp-runner.img" $MB hw_max_sectors=2048
mkdir -p "$CFS/core/fileio_1/cmpl"
echo "fd_dev_name=/var/tmp/cmp-lio.img,fd_dev_size=$((MB << 20)),fd_buffered_io=1" >"$CFS/core/fileio_1/cmpl/control"
echo 1 >"$CFS/core/fileio_1/cmpl/enable"
wait_until 60 "utgtd serves cmpu" grep -q "'cmpu' served by DEVICE cmp0" "$LOG"
loop_lun 0 "$CORE/cmpu"
loop_lun 1 "$CORE/cmpr"
loop_lun 2 "$CFS/core/fileio_1/cmpl"
LUNS="0 1 2"
if [ -n "$BASE" ]; then
	user_backstore cmpb utgt/cmpb $MB nl_reply_supported=-1 hw_max_sectors=2048
	wait_until 60 "the base utgtd serves cmpb" grep -q "'cmpb' served by DEVICE cmpb" /out/utgtd-base.log
	loop_lun 3 "$CORE/cmpb"
	LUNS="0 1 2 3"
fi
for l in $LUNS; do wait_until 60 "LUN $l disk" loop_disk $l; done
kill -0 "$RUNNER_PID" || { cat /tmp/tcmu-runner.out; fail "tcmu-runner exited"; }
declare -A DEV=([utgtd]=$(loop_disk 0) [runner]=$(loop_disk 1) [lio]=$(loop_disk 2))
declare -A PIDOF=([utgtd]=$UTGTD_PID [runner]=$RUNNER_PID [lio]=)
[ -n "$BASE" ] && DEV[base]=$(loop_disk 3) PIDOF[base]=$BASE_PID
for t in "${TG[@]}"; do
	# every block read once: the backing files sit in the page cache for all three
	dd if="${DEV[$t]}" of=/dev/null bs=1M iflag=direct status=none || fail "$t: first read"
	say "$t: ${DEV[$t]} ($(cat /sys/block/$(basename "${DEV[$t]}")/device/model | tr -s ' '))"
done
grep -q "cmpr" "$RUNNER_LOG"/tcmu-runner.log 2>/dev/null && grep cmpr "$RUNNER_LOG"/tcmu-runner.log | tail -2 | sed 's/^/    /'

declare -A ARGS=(
	[rr1]="--rw=randread --bs=4k --iodepth=1"
	[rr32]="--rw=randread --bs=4k --iodepth=32"
	[rw1]="--rw=randwrite --bs=4k --iodepth=1"
	[rw32]="--rw=randwrite --bs=4k --iodepth=32"
	[sr8]="--rw=read --bs=1M --iodepth=8"
)
declare -A V TICKS IOS SW FL N TT VB WALL
step "$ROUNDS round(s) of ${#JOBS[@]} jobs x ${#TG[@]} targets, ${RUNTIME}s each, alternating"
t0=$SECONDS
for r in $(seq 1 "$ROUNDS"); do
	for j in "${JOBS[@]}"; do
		for t in "${TG[@]}"; do
			p=${PIDOF[$t]}
			[ -n "$p" ] && c0=$(cpu_ticks "$p") && s0=$(ctx_switches "$p") && f0=$(faults "$p") &&
				thread_ticks "$p" >/tmp/tt0
			read -r -a b0 <<<"$(vcpu_busy)"
			# shellcheck disable=SC2086
			v=$(fio_bw "$t-$j-$r" "${DEV[$t]}" ${ARGS[$j]}) || fail "$t $j"
			read -r -a b1 <<<"$(vcpu_busy)"
			for i in "${!b1[@]}"; do VB[$t,$j,$i]=$((${VB[$t,$j,$i]:-0} + b1[i] - b0[i])); done
			WALL[$t,$j]=$((${WALL[$t,$j]:-0} + RUNTIME + RAMP))
			if [ -n "$p" ]; then
				while read -r name k; do
					k0=$(awk -v n="$name" '$1 == n { print $2 }' /tmp/tt0)
					TT[$t,$j,$name]=$((${TT[$t,$j,$name]:-0} + k - ${k0:-0}))
				done < <(thread_ticks "$p")
				TICKS[$t]=$((${TICKS[$t]:-0} + $(cpu_ticks "$p") - c0))
				SW[$t,$j]=$((${SW[$t,$j]:-0} + $(ctx_switches "$p") - s0))
				FL[$t,$j]=$((${FL[$t,$j]:-0} + $(faults "$p") - f0))
				N[$t,$j]=$((${N[$t,$j]:-0} + ${v#* } * (RUNTIME + RAMP)))
				IOS[$t]=$((${IOS[$t]:-0} + ${v#* } * (RUNTIME + RAMP)))
			fi
			if [ "$j" = sr8 ]; then V[$t,$j]+="${v% *} "; else V[$t,$j]+="${v#* } "; fi
		done
	done
	say "round $r done ($((SECONDS - t0)) s)"
done

{
	echo "tcm_loop disk, $MB MiB file in the page cache, fio ${RUNTIME}s per run, median of $ROUNDS (alternating)"
	[ -n "$BASE" ] && echo "base utgtd: $BASE ${BASE_ENV:-} ${BASE_DRV:+driver attribute $BASE_DRV}"
	[ -n "$DRV" ] && echo "utgtd: driver attribute $DRV"
	printf '%-22s %12s %12s %12s %14s %14s' job utgtd tcmu-runner "LIO fileio" "utgtd/runner" "utgtd/LIO"
	[ -n "$BASE" ] && printf ' %12s %12s' "base utgtd" "utgtd/base"
	echo
	for j in "${JOBS[@]}"; do
		case $j in
		rr1) n="4k randread QD1 IOPS" ;; rr32) n="4k randread QD32 IOPS" ;;
		rw1) n="4k randwrite QD1 IOPS" ;; rw32) n="4k randwrite QD32 IOPS" ;;
		sr8) n="1M seq read QD8 MB/s" ;;
		esac
		# shellcheck disable=SC2086
		u=$(median ${V[utgtd,$j]}) rr=$(median ${V[runner,$j]}) l=$(median ${V[lio,$j]})
		printf '%-22s %12s %12s %12s %14s %14s' "$n" "$u" "$rr" "$l" "$(ratio "$u" "$rr")" "$(ratio "$u" "$l")"
		# shellcheck disable=SC2086
		[ -n "$BASE" ] && b=$(median ${V[base,$j]}) && printf ' %12s %12s' "$b" "$(ratio "$u" "$b")"
		echo
	done
	# each round's own ratio (the rounds alternate targets job by job: a ratio within one
	# round compares runs seconds apart)
	for j in "${JOBS[@]}"; do
		printf '%-22s' "per round $j"
		read -r -a vu <<<"${V[utgtd,$j]}"
		read -r -a vr <<<"${V[runner,$j]}"
		read -r -a vl <<<"${V[lio,$j]}"
		printf ' utgtd/runner'
		for i in "${!vu[@]}"; do printf ' %s' "$(ratio "${vu[i]}" "${vr[i]:-}")"; done
		printf ';  utgtd/LIO'
		for i in "${!vu[@]}"; do printf ' %s' "$(ratio "${vu[i]}" "${vl[i]:-}")"; done
		if [ -n "$BASE" ]; then
			read -r -a vb <<<"${V[base,$j]}"
			printf ';  utgtd/base'
			for i in "${!vu[@]}"; do printf ' %s' "$(ratio "${vu[i]}" "${vb[i]:-}")"; done
		fi
		echo
	done
	# thread wakeups per command: a daemon's context switches over its I/Os, per job
	printf '%-22s' "switches per I/O"
	for t in "${TG[@]}"; do
		[ "$t" = lio ] && continue
		printf ' %s' "$t:"
		for j in "${JOBS[@]}"; do
			[ "$j" = sr8 ] && continue
			awk -v s="${SW[$t,$j]:-0}" -v n="${N[$t,$j]:-0}" -v j=$j \
				'BEGIN { printf " %s %.2f", j, (n > 0 ? s / n : 0) }'
		done
		printf ';'
	done
	echo
	# page faults per I/O: both handlers copy into the data area's pages, mapped once each
	printf '%-22s' "page faults per I/O"
	for t in "${TG[@]}"; do
		[ "$t" = lio ] && continue
		printf ' %s' "$t:"
		for j in "${JOBS[@]}"; do
			awk -v f="${FL[$t,$j]:-0}" -v n="${N[$t,$j]:-0}" -v j=$j \
				'BEGIN { printf " %s %.2f", j, (n > 0 ? f / n : 0) }'
		done
		printf ';'
	done
	echo
	# where the time goes: each thread's CPU per I/O, each vCPU's busy share (of the run's
	# wall time, ramp included: so is the CPU)
	hz=$(getconf CLK_TCK)
	for j in "${JOBS[@]}"; do
		for t in "${TG[@]}"; do
			printf '%-6s %-7s vCPUs busy' "$j" "$t"
			for i in $(seq 0 $(($(nproc) - 1))); do
				awk -v i="$i" -v b="${VB[$t,$j,$i]:-0}" -v w="${WALL[$t,$j]}" -v hz="$hz" \
					'BEGIN { printf " cpu%s %.0f%%", i, 100 * b / hz / w }'
			done
			[ "$t" = lio ] || printf ';  us/I/O:'
			for k in "${!TT[@]}"; do
				case $k in "$t,$j,"*)
					awk -v n="${k##*,}" -v k="${TT[$k]}" -v io="${N[$t,$j]:-0}" -v hz="$hz" \
						'BEGIN { if (k > 0 && io > 0) printf " %s %.0f", n, k / hz * 1e6 / io }' ;;
				esac
			done
			echo
		done
	done
	r=$(tcmu_counter cmpu completed_on_ring_thread || echo "?") c=$(tcmu_counter cmpu completions || echo "?")
	echo "utgtd: $r of $c completions made on a ring thread (no hop to an I/O thread)," \
		"$(tcmu_counter cmpu taken_by_second_thread || echo "?") commands taken by the second ring thread"
	if [ -n "$BASE" ]; then
		echo "base: $(UTGTADM="${UTGTADM% -s *} -s /tmp/tcmu-base/utgtd.sock" tcmu_counter cmpb completions || echo "?") completions," \
			"$(UTGTADM="${UTGTADM% -s *} -s /tmp/tcmu-base/utgtd.sock" tcmu_counter cmpb taken_by_second_thread || echo "?") taken by the second ring thread"
	fi
	for t in "${TG[@]}"; do
		[ "$t" = lio ] && continue
		awk -v t="$t" -v k="${TICKS[$t]}" -v n="${IOS[$t]}" -v hz="$hz" 'BEGIN {
			printf "%s: %.1f CPU s over all its runs, ~%.0f us of daemon CPU per I/O\n",
			t, k / hz, (n > 0 ? k / hz * 1e6 / n : 0) }'
	done
} | tee "$OUT"

step "stop"
for l in $LUNS; do loop_unmap $l; done
rmdir "$LOOP/tpgt_1" "$LOOP"
rmdir "$CORE/cmpu" "$CORE/cmpr" "$CFS/core/fileio_1/cmpl"
if [ -n "$BASE" ]; then
	rmdir "$CORE/cmpb"
	kill -TERM "$BASE_PID"
	wait "$BASE_PID" || fail "the base utgtd exited $?"
	BASE_PID=
fi
kill -TERM "$RUNNER_PID" 2>/dev/null || true
wait "$RUNNER_PID" || true # tcmu-runner's own exit status on SIGTERM is not ours to judge
RUNNER_PID=
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
say "PASS tcmu_compare"
