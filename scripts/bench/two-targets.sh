#!/usr/bin/env bash
# Two jobs at once (not a test): two targets with one ramdisk LU each, one utgt-bench 4 KiB
# randread QD32 process on each at the same time (ONE=1: both on the first target).  Per run:
# each job's IOPS side by side, their ratio (slower / faster: 1.00 is fair), the sum,
# utgtd's CPU per I/O, and for each job the CPU time and the run-queue wait
# (/proc/.../schedstat: ready to run but not running) of the utgtd worker serving it and of
# its utgt-bench job thread, over the middle of the run: a starved job shows which of its
# threads was held back and by how much.  BASE=another utgtd runs in the same rounds,
# alternating with UTGTD; CONF= and BASE_CONF= add iscsi driver attributes to either (the
# same build against itself: BASE=build/utgtd BASE_CONF='pin 1').  Medians at the end, and
# how many runs were below 2/3 (one job under two thirds of the other).
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
ONE=${ONE:-0}
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
[ "$SECS" -ge 2 ] || { echo "SECONDS must be at least 2"; exit 1; }

threads() { # pid... -> "pid tid comm run_ms wait_ms" per thread
	local p t run wait
	for p in "$@"; do
		for t in /proc/"$p"/task/*; do
			{ read -r run wait _ <"$t/schedstat"; } 2>/dev/null || continue
			echo "$p ${t##*/} $(cat "$t/comm" 2>/dev/null) $((run / 1000000)) $((wait / 1000000))"
		done
	done
}

one() { # utgtd conf-lines -> "iops0 iops1 cpu_us_per_io w0 run0 wait0 brun0 bwait0 w1 ..."
	local bin=$1 extra=$2 port c0 c1 sum=0 pids=() t tt i out="" wk
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
	$extra
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
		tt=$t
		[ "$ONE" = 1 ] && tt=0
		"$BENCH" --name=b --filename="iscsi://127.0.0.1:$port/$IQN-$tt/0" --rw=randread --bs=4k \
			--iodepth=32 --runtime=$((SECS + 1)) --time_based --output-format=json \
			--progress=never >"$W/r$t" 2>/dev/null &
		pids+=($!)
	done
	for _ in $(seq 100); do # both logged in and running (a job thread each): where are they?
		"$ADM" -s "$W/s.sock" show sessions --json >"$W/sessions" 2>/dev/null
		[ "$(jq '.sessions | length' "$W/sessions" 2>/dev/null)" = 2 ] &&
			[ "$(ls /proc/"${pids[0]}"/task 2>/dev/null | wc -l)" -ge 2 ] &&
			[ "$(ls /proc/"${pids[1]}"/task 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	sleep 0.5
	threads "$UPID" "${pids[@]}" >"$W/t0"
	ss -tnpH state established "( dport = :$port )" >"$W/ss" 2>/dev/null
	sleep $((SECS - 1))
	threads "$UPID" "${pids[@]}" >"$W/t1"
	wait "${pids[@]}"
	c1=$(awk '{print $14 + $15}' /proc/$UPID/stat)
	for t in 0 1; do
		i=$(jq -r '.jobs[0].read.iops | floor' "$W/r$t" 2>/dev/null)
		out="$out ${i:-0}"
		sum=$((sum + ${i:-0}))
	done
	out="$out $(awk -v a=$c0 -v b=$c1 -v n=$sum -v s=$((SECS + 1)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN {printf "%.2f", n ? (b - a) / hz / (n * s) * 1e6 : 0}')"
	# each job's connection: the session whose initiator port is that process's socket
	for t in 0 1; do
		wk=$(jq -r --arg p "$(grep "pid=${pids[t]}," "$W/ss" | awk '{split($3, a, ":"); print a[length(a)]}' | head -1)" \
			'[.sessions[] | .connections[] | select(.peer | endswith(":" + $p)) | .worker][0] // "?"' "$W/sessions" 2>/dev/null)
		out="$out w${wk:-?} $(join <(awk -v p="$UPID" -v c="iscsi-w${wk:-?}" \
			'$1 == p && $3 == c {print $3, $4, $5}' "$W/t0") <(awk -v p="$UPID" \
			-v c="iscsi-w${wk:-?}" '$1 == p && $3 == c {print $3, $4, $5}' "$W/t1") |
			awk '{print $4 - $2, $5 - $3}') $(join <(awk -v p="${pids[t]}" '$1 == p {print $2, $4, $5}' \
			"$W/t0" | sort) <(awk -v p="${pids[t]}" '$1 == p {print $2, $4, $5}' "$W/t1" | sort) |
			awk '{r = $4 - $2; if (r >= best) {best = r; w = $5 - $3}} END {print best + 0, w + 0}')"
	done
	kill "$UPID"
	wait "$UPID" 2>/dev/null
	UPID=
	echo "$out"
}

: >"$W/res"
for rep in $(seq "$REPS"); do
	order="u b" # alternate which build goes first
	((rep % 2)) || order="b u"
	for side in $order; do
		[ $side = b ] && [ -z "$BASE" ] && continue
		bin=$UTGTD
		conf=${CONF:-}
		[ $side = b ] && bin=$BASE && conf=${BASE_CONF:-}
		r=$(one "$bin" "$conf")
		echo "$side $r" >>"$W/res"
		set -- $r
		printf '%s%s run %d: %6d | %6d IOPS, ratio %.2f, sum %d, %s us CPU/IO; job 1: %s run/wait %s/%s ms, bench %s/%s; job 2: %s %s/%s, bench %s/%s\n' \
			"$bin" "${conf:+ ($conf)}" "$rep" "$1" "$2" \
			"$(awk -v a="$1" -v b="$2" 'BEGIN {print (a < b ? a : b) / ((a > b ? a : b) + !(a + b))}')" \
			$(($1 + $2)) "$3" "${4:-?}" "${5:-?}" "${6:-?}" "${7:-?}" "${8:-?}" "${9:-?}" \
			"${10:-?}" "${11:-?}" "${12:-?}" "${13:-?}"
	done
done
for side in u b; do
	grep -q "^$side " "$W/res" || continue
	name=$UTGTD${CONF:+ ($CONF)}
	[ $side = b ] && name=$BASE${BASE_CONF:+ ($BASE_CONF)}
	awk -v s=$side -v name="$name" '$1 == s {
		n++; sum[n] = $2 + $3; cpu[n] = $4; lo = $2 < $3 ? $2 : $3; hi = $2 < $3 ? $3 : $2
		ratio[n] = hi ? lo / hi : 0; rs = rs sprintf(" %.2f", ratio[n]); starved += ratio[n] < 2 / 3 }
		function med(a, n,  i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { printf "%s: ratios%s: median %.2f, %d of %d runs below 2/3; median sum %d IOPS, %.2f us CPU/IO\n",
			name, rs, med(ratio, n), starved, n, med(sum, n), med(cpu, n) }' "$W/res"
done
