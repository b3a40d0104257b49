#!/usr/bin/env bash
# System calls, context switches and CPU time utgtd spends per 4 KiB I/O (not a test).
#
#   scripts/bench/syscalls-per-io.sh [N_IOS]            (default 100000 per row)
#   UTGTD=/tmp/old/utgtd scripts/bench/syscalls-per-io.sh   # another build, same client
#   LU=fileio ONLY='QD32' scripts/bench/syscalls-per-io.sh
#   POLL_US=50 scripts/bench/syscalls-per-io.sh             # the workers' poll_us
#
# Counted by the kernel (perf stat software events and syscall tracepoints on utgtd's threads,
# no hardware counters needed), so the system call and switch counts do not move with the
# neighbours' load as much as time does; CPU per I/O (task-clock) does.  utgtd serves a ramdisk
# LU (completed inline on the worker) or, with LU=fileio, a file on /dev/shm through the
# io_uring engine.  Each row: one utgt-bench run of N_IOS 4 KiB I/Os after a warm-up session;
# the counts cover that run only (perf attaches after the warm-up).
set -u
cd "$(dirname "$0")/../.."
N=${1:-100000}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
LU=${LU:-ramdisk}
ONLY=${ONLY:-}
IQN=iqn.2026-12.org.utgt:sysc
W=$(mktemp -d /tmp/utgt-sysc.XXXXXX)
IMG=/dev/shm/utgt-sysc-$$.img
UPID=
cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
	rm -f "$IMG"
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for t in perf python3; do
	command -v $t >/dev/null || { echo "missing $t"; exit 1; }
done
. scripts/bench/lib.sh
pick_port port
url=iscsi://127.0.0.1:$port/$IQN/0
case $LU in
ramdisk) dev="HANDLER ramdisk {
	DEVICE sysc0 {
		size_mb 256
	}
}" ;;
fileio) dev="HANDLER vdisk_fileio {
	DEVICE sysc0 {
		filename $IMG
		size_mb 256
	}
}" ;;
*) echo "LU is ramdisk or fileio"; exit 1 ;;
esac
cat >"$W/u.conf" <<EOF
$dev
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$port
$([ -n "${POLL_US:-}" ] && printf '\tpoll_us %s\n' "$POLL_US")
	TARGET $IQN {
		enabled 1
		NopInInterval 0
		LUN 0 sysc0
	}
}
EOF
"$UTGTD" -f -c "$W/u.conf" --state-dir "$W" --admin-socket none >"$W/log" 2>&1 &
UPID=$!
bench_wait_listening "$W/log"

EV=task-clock,context-switches,raw_syscalls:sys_enter
for s in readv recvfrom recvmsg sendmsg writev epoll_wait epoll_pwait io_uring_enter futex read write epoll_ctl; do
	EV+=,syscalls:sys_enter_$s
done

row() { # rw depth
	local label="$1 QD$2" p out
	[ -n "$ONLY" ] && ! [[ $label =~ $ONLY ]] && return
	"$BENCH" --name=warm --filename="$url" --rw="$1" --bs=4k --iodepth="$2" --number_ios=2000 \
		--size=128m --output-format=terse --progress=never >/dev/null 2>&1
	perf stat -x, -e "$EV" -p "$UPID" -o "$W/perf" &
	p=$!
	sleep 0.3 # perf attached
	out=$("$BENCH" --name=m --filename="$url" --rw="$1" --bs=4k --iodepth="$2" --number_ios="$N" \
		--size=256m --loops=1000 --output-format=terse --progress=never 2>/dev/null) || { echo "utgt-bench failed"; kill -INT $p; exit 1; }
	kill -INT $p
	wait $p 2>/dev/null
	iops=$(awk -F';' '{print ($8 > 0 ? $8 : $49); exit}' <<<"$out")
	ios=$(awk -F';' '{print ($6 + $47) / 4; exit}' <<<"$out") # KiB moved / 4 KiB
	awk -F, -v n="$ios" -v label="$label" -v iops="$iops" '
		$3 == "task-clock" { cpu = $1 }
		$3 == "context-switches" { cs = $1 }
		$3 == "raw_syscalls:sys_enter" { sc = $1 }
		$3 ~ /^syscalls:sys_enter_/ && $1 > 0 { sub("syscalls:sys_enter_", "", $3); det = det sprintf(" %s %.2f", $3, $1 / n) }
		END { printf "%-14s %8d IOPS  %6.2f µs CPU  %5.2f syscalls  %5.2f switches per I/O |%s\n",
			label, iops, cpu * 1000 / n, sc / n, cs / n, det }' "$W/perf"
}

# Write the whole LU once: a READ of a ramdisk page never written maps it on first touch, and
# those page faults (about one per I/O in a run this long) are not the transport's cost.
"$BENCH" --name=fill --filename="$url" --rw=write --bs=1m --iodepth=8 --size=100% \
	--output-format=terse --progress=never >/dev/null 2>&1 || { echo "could not fill the LU"; exit 1; }
echo "utgtd: $UTGTD, $LU LU, $N 4 KiB I/Os per row; counts per I/O (perf stat on utgtd)"
row randread 1
row randread 32
row randwrite 1
row randwrite 32
