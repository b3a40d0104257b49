#!/usr/bin/env bash
# Independent targets, each on its own worker (not a test): two targets with one ramdisk LU
# each, one utgt-bench 4 KiB randread QD32 job on each at the same time; the summed IOPS,
# utgtd's CPU per I/O and the worker each connection ended on (utgtadm show sessions).
# Connection placement (docs/performance.md, issue 16) must leave these where accept spread
# them.  BASE=another utgtd runs in the same rounds, alternating with UTGTD; medians at the end.
#
#   scripts/bench/two-targets.sh [SECONDS]                       (default 3)
#   BASE=/tmp/place-before/utgtd REPS=6 scripts/bench/two-targets.sh 3
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-3}
UTGTD=${UTGTD:-build/utgtd}
BASE=${BASE:-}
BENCH=${BENCH:-build/utgt-bench}
ADM=${ADM:-build/utgtadm}
REPS=${REPS:-3}
IQN=iqn.2026-12.org.utgt:two
. scripts/bench/lib.sh
W=$(mktemp -d /tmp/utgt-two.XXXXXX)
UPID=
cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for b in "$UTGTD" ${BASE:+"$BASE"} "$BENCH" "$ADM"; do [ -x "$b" ] || { echo "$b not built"; exit 1; }; done
command -v jq >/dev/null || { echo "jq missing"; exit 1; }

one() { # utgtd -> "sum_iops cpu_us_per_io workers"
	local bin=$1 port c0 c1 sum=0 pids=() t i
	pick_port port
	cat >"$W/c.conf" <<EOF
HANDLER ramdisk {
	DEVICE d0 {
		size_mb 256
	}
	DEVICE d1 {
		size_mb 256
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$port
	TARGET $IQN-0 {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		LUN 0 d0
	}
	TARGET $IQN-1 {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		LUN 0 d1
	}
}
EOF
	"$bin" -f -c "$W/c.conf" --admin-socket "$W/s.sock" --state-dir "$W/state" >"$W/log" 2>&1 &
	UPID=$!
	bench_wait_listening "$W/log"
	for t in 0 1; do # first touch of the LUs is not measured
		"$BENCH" --name=fill --filename="iscsi://127.0.0.1:$port/$IQN-$t/0" --rw=write --bs=1m \
			--iodepth=8 --size=100% --output-format=json --progress=never >/dev/null 2>&1
	done
	c0=$(awk '{print $14 + $15}' /proc/$UPID/stat)
	for t in 0 1; do
		"$BENCH" --name=b --filename="iscsi://127.0.0.1:$port/$IQN-$t/0" --rw=randread --bs=4k \
			--iodepth=32 --runtime=$((SECS + 1)) --time_based --output-format=json \
			--progress=never >"$W/r$t" 2>/dev/null &
		pids+=($!)
	done
	for _ in $(seq 100); do # both logged in and running: where are they?
		"$ADM" -s "$W/s.sock" show sessions --json >"$W/sessions" 2>/dev/null
		[ "$(jq '.sessions | length' "$W/sessions" 2>/dev/null)" = 2 ] && break
		sleep 0.05
	done
	wait "${pids[@]}"
	c1=$(awk '{print $14 + $15}' /proc/$UPID/stat)
	for t in 0 1; do
		i=$(jq -r '.jobs[0].read.iops | floor' "$W/r$t" 2>/dev/null)
		sum=$((sum + ${i:-0}))
	done
	kill "$UPID"
	wait "$UPID" 2>/dev/null
	UPID=
	echo "$sum $(awk -v a=$c0 -v b=$c1 -v n=$sum -v s=$((SECS + 1)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN {printf "%.2f", n ? (b - a) / hz / (n * s) * 1e6 : 0}') $(jq -r '[.sessions[] |
		.connections[0].worker] | sort | map(tostring) | join(",")' "$W/sessions")"
}

: >"$W/res"
for rep in $(seq "$REPS"); do
	order="u b" # alternate which build goes first
	((rep % 2)) || order="b u"
	for side in $order; do
		[ $side = b ] && [ -z "$BASE" ] && continue
		bin=$UTGTD
		[ $side = b ] && bin=$BASE
		r=$(one "$bin")
		echo "$side $r" >>"$W/res"
		printf '%s run %d: %s IOPS, %s us CPU/IO, workers %s\n' \
			"$([ $side = u ] && echo "$UTGTD" || echo "$BASE")" "$rep" $r
	done
done
for side in u b; do
	grep -q "^$side " "$W/res" || continue
	awk -v s=$side -v name="$([ $side = u ] && echo "$UTGTD" || echo "$BASE")" '$1 == s {
		n++; iops[n] = $2; cpu[n] = $3 }
		function med(a, n,  i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { printf "%s: median %d IOPS, %.2f us CPU/IO over %d runs\n", name, med(iops, n), med(cpu, n), n }' "$W/res"
done
