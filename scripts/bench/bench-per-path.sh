#!/usr/bin/env bash
# utgt-bench's own cost per path (not a test): one utgtd (ramdisk LU, 4 portals), one
# utgt-bench 4 KiB randread QD32 job spread over 1, 2 and 4 paths (rr, a path switch every
# command); IOPS, the CPU per I/O of utgt-bench (its utime+stime) and of utgtd (from /proc),
# and N paths / 1 path.  BASE=another utgt-bench runs in the same rounds, alternating with
# BENCH, against the same utgtd; medians of REPS rounds at the end (docs/performance.md,
# issue 16, "utgt-bench's cost per path").
#
#   scripts/bench/bench-per-path.sh [SECONDS]                      (default 3)
#   BASE=/tmp/benchmp-before/utgt-bench REPS=3 scripts/bench/bench-per-path.sh 3
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-3}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
BASE=${BASE:-}
REPS=${REPS:-3}
IQN=iqn.2026-12.org.utgt:perpath
. scripts/bench/lib.sh
W=$(mktemp -d /tmp/utgt-perpath.XXXXXX)
UPID=
cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for b in "$UTGTD" "$BENCH" ${BASE:+"$BASE"}; do [ -x "$b" ] || { echo "$b not built"; exit 1; }; done
command -v jq >/dev/null || { echo "jq missing"; exit 1; }

PORTS=()
for _ in 1 2 3 4; do
	pick_port p || exit 1
	PORTS+=("$p")
	_next_port=$((p + 1))
done
{
	printf 'HANDLER ramdisk {\n\tDEVICE perpath0 {\n\t\tsize_mb 256\n\t}\n}\n'
	printf 'TARGET_DRIVER iscsi {\n'
	for p in "${PORTS[@]}"; do printf '\tlisten 127.0.0.1:%s\n' "$p"; done
	printf '\tTARGET %s {\n\t\tenabled 1\n\t\tQueuedCommands 128\n' "$IQN"
	printf '\t\tNopInInterval 0\n\t\tLUN 0 perpath0\n\t}\n}\n'
} >"$W/utgtd.conf"
"$UTGTD" -f -c "$W/utgtd.conf" --admin-socket "$W/utgtd.sock" --state-dir "$W/state" \
	>"$W/utgtd.log" 2>&1 &
UPID=$!
bench_wait_listening "$W/utgtd.log"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

one() { # bench n -> "iops bench_us_per_io utgtd_us_per_io"
	local bench=$1 n=$2 urls="" i t0 t1
	for i in $(seq 0 $((n - 1))); do urls+=${urls:+,}iscsi://127.0.0.1:${PORTS[$i]}/$IQN/0; done
	t0=$(ticks $UPID)
	/usr/bin/time -f "%U %S" -o "$W/time" "$bench" --name=p --filename="${urls%%,*}" \
		--paths="$urls" --rr-iops=1 --rw=randread --bs=4k --iodepth=32 --runtime="$SECS" \
		--time_based --output-format=json --progress=never >"$W/out.json" 2>"$W/err" ||
		{ echo "- - -"; return; }
	t1=$(ticks $UPID)
	jq -r --argjson ut "$(($t1 - $t0))" --argjson hz "$HZ" --rawfile tm "$W/time" \
		'.jobs[0].read as $r | ($tm | split(" ") | map(tonumber) | add) as $b |
		 "\($r.iops | floor) \($b / $r.total_ios * 1e6) \($ut / $hz / $r.total_ios * 1e6)"' \
		"$W/out.json"
}

builds=("$BENCH")
[ -n "$BASE" ] && builds=("$BASE" "$BENCH")
: >"$W/results"
for rep in $(seq "$REPS"); do
	for n in 1 2 4; do
		for b in "${builds[@]}"; do
			echo "$b $n $rep $(one "$b" "$n")" >>"$W/results"
			printf .
		done
	done
done
echo

python3 - "$W/results" "${builds[@]}" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    b, n, rep, *v = line.split()
    if "-" in v:
        continue
    rows.setdefault((b, int(n)), {})[int(rep)] = [float(x) for x in v]
print("%-36s | paths |     IOPS | bench CPU/IO µs | utgtd CPU/IO µs | vs 1 path (runs)" % "utgt-bench")
print("-" * 37 + "+-------+----------+-----------------+-----------------+-----------------")
for b in sys.argv[2:]:
    one = rows.get((b, 1), {})
    for n in (1, 2, 4):
        r = rows.get((b, n), {})
        if not r:
            print("%-36s | %5d | no result" % (b, n))
            continue
        med = [statistics.median(x[i] for x in r.values()) for i in range(3)]
        ratios = [r[k][0] / one[k][0] for k in sorted(r) if k in one and one[k][0]]
        rs = "" if n == 1 else "%.2fx (%s)" % (statistics.median(ratios),
                                               ", ".join("%.2f" % x for x in ratios))
        print("%-36s | %5d | %8d | %15.2f | %15.2f | %s" % (b, n, med[0], med[1], med[2], rs))
EOF
