#!/usr/bin/env bash
# Instructions utgtd executes per 4 KiB I/O, counted by valgrind's callgrind (not a test).
#
#   scripts/bench/instr-per-io.sh [N_IOS]          (default 4000; about 2 minutes)
#   UTGTD=/tmp/old/utgtd scripts/bench/instr-per-io.sh   # another build, same client
#
# CPU time per I/O on a shared machine moves with the neighbours' load; instruction counts
# barely do: the QD32 rows repeat to 0.1%, the QD1 ones (longer runs, so more of utgtd's own
# timers per command) to about 10%.  utgtd runs under callgrind
# with a ramdisk LU (completed inline, so only the target's own path is counted); for each
# workload (READ and WRITE at QD1 and QD32) the count of a utgtd life serving N_IOS commands is
# taken from that of one serving 2 x N_IOS, which leaves N_IOS commands without start-up,
# logins and shutdown.  User-space instructions only (the kernel's socket work is not in
# them), and callgrind runs the threads one at a time, so lock contention does not show here:
# vs-tgtd.sh measures that.
set -u
cd "$(dirname "$0")/../.."
N=${1:-4000}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
IQN=iqn.2026-12.org.utgt:instr
W=$(mktemp -d /tmp/utgt-instr.XXXXXX)
VPID=
cleanup() {
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for t in valgrind python3; do
	command -v $t >/dev/null || { echo "missing $t"; exit 1; }
done
. scripts/bench/lib.sh
K=0

# Ir of one whole utgtd life under callgrind (into IR): start, a warm-up session of 200 I/Os,
# a session of n I/Os, SIGTERM.  Two lives that differ only in n differ by n I/Os' worth.
life() { # rw depth n
	local port url
	K=$((K + 1))
	pick_port port # a port of its own each time: the last life's may still be in use
	url=iscsi://127.0.0.1:$port/$IQN/0
	cat >"$W/u.$K.conf" <<EOF
HANDLER ramdisk {
	DEVICE instr0 {
		size_mb 64
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$port
	TARGET $IQN {
		enabled 1
		NopInInterval 0
		LUN 0 instr0
	}
}
EOF
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.$K" \
		"$UTGTD" -f -c "$W/u.$K.conf" --state-dir "$W" --admin-socket none >"$W/log.$K" 2>&1 &
	VPID=$!
	bench_wait_listening "$W/log.$K" 1200
	"$BENCH" --name=warm --filename="$url" --rw="$1" --bs=4k --iodepth="$2" --number_ios=200 \
		--size=32m --output-format=terse --progress=never >/dev/null 2>&1
	"$BENCH" --name=m --filename="$url" --rw="$1" --bs=4k --iodepth="$2" --number_ios="$3" \
		--size=32m --output-format=terse --progress=never >/dev/null 2>&1 || { echo "utgt-bench failed"; exit 1; }
	kill -TERM $VPID
	wait $VPID
	VPID=
	IR=$(awk '/^(summary|totals):/ {print $2; exit}' "$W/cg.$K")
}

run() { # rw depth
	local a
	life "$1" "$2" "$N"
	a=$IR
	life "$1" "$2" $((2 * N))
	printf '%-12s QD%-3s %8.0f instructions per I/O\n' "$1" "$2" "$(awk -v a="$a" -v b="$IR" -v n="$N" 'BEGIN {print (b - a) / n}')"
}

echo "utgtd: $UTGTD under callgrind, $N 4 KiB I/Os per row"
run randread 1
run randread 32
run randwrite 1
run randwrite 32
