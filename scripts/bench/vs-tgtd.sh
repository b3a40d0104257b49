#!/usr/bin/env bash
# utgtd versus Debian's tgtd on loopback, same LU size, same clients (not a test).
#
#   scripts/bench/vs-tgtd.sh [SECONDS_PER_RUN]      (default 5)
#
# utgtd serves a ramdisk LU; tgtd serves a file of the same size on tmpfs (/dev/shm) through
# its rdwr backing store, its closest equivalent.  Clients: libiscsi's iscsi-perf (reads) and
# build/utgt-bench (writes, and reads again when present).  For each workload: IOPS, MiB/s,
# target CPU seconds (utime+stime of the daemon during the run), target RSS after the run, and
# the utgt/tgt ratio; iperf3's one-stream loopback figure is printed for reference.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-5}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
SIZE_MB=${SIZE_MB:-1024}
IQN_U=iqn.2026-12.org.utgt:bench
IQN_T=iqn.2026-12.org.tgt:bench
W=$(mktemp -d /tmp/utgt-bench.XXXXXX)
SHM=/dev/shm/utgt-bench-$$.img
UPID= TPID= IPID=
CTL=$((100 + $$ % 800))

cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null
	if [ -n "$TPID" ]; then
		# tgtd only leaves through tgtadm, and not while sessions linger: force it
		tgtadm -C $CTL --op delete --mode system --force >/dev/null 2>&1
		sleep 0.5
		kill -9 "$TPID" 2>/dev/null
	fi
	[ -n "$IPID" ] && kill "$IPID" 2>/dev/null
	wait 2>/dev/null
	rm -f "$SHM"
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

for t in iscsi-perf tgtd tgtadm iperf3 python3; do
	command -v $t >/dev/null || { echo "missing $t (scripts/deps.sh)"; exit 1; }
done
[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }
free_port() {
	python3 -c '
import socket, sys
for p in range(int(sys.argv[1]), 65000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError:
        s.close()' "$1"
}
PU=$(free_port $((30000 + $$ % 10000)))
PT=$(free_port $((PU + 1)))
PI=$(free_port $((PT + 1)))

# ---------------------------------------------------------------- targets
cat >"$W/utgtd.conf" <<EOF
HANDLER ramdisk {
	DEVICE bench0 {
		size_mb $SIZE_MB
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PU
	TARGET $IQN_U {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		LUN 0 bench0
	}
}
EOF
"$UTGTD" -f -c "$W/utgtd.conf" --admin-socket "$W/utgtd.sock" >"$W/utgtd.log" 2>&1 &
UPID=$!
truncate -s ${SIZE_MB}M "$SHM"
mkdir -p /var/run/tgtd
tgtd -f -C $CTL --iscsi portal=127.0.0.1:$PT >"$W/tgtd.log" 2>&1 &
TPID=$!
for _ in $(seq 50); do
	grep -q "listening on" "$W/utgtd.log" && tgtadm -C $CTL --op show --mode system >/dev/null 2>&1 && break
	sleep 0.1
done
tgtadm -C $CTL --lld iscsi --op new --mode target --tid 1 -T $IQN_T &&
	tgtadm -C $CTL --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$SHM" &&
	tgtadm -C $CTL --lld iscsi --op bind --mode target --tid 1 -I ALL ||
	{ echo "tgtd setup failed"; cat "$W/tgtd.log"; exit 1; }
URL_U=iscsi://127.0.0.1:$PU/$IQN_U/0
URL_T=iscsi://127.0.0.1:$PT/$IQN_T/1

# ---------------------------------------------------------------- measurement helpers
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' /proc/$1/status; }
HZ=$(getconf CLK_TCK)

# iscsi-perf: prints "iops average N (M MB/s)" at the end
perf_run() { # url depth blocks random -> "iops mibs"
	local out
	out=$(timeout $((SECS + 20)) iscsi-perf -m "$2" -b "$3" -t "$SECS" $4 "$1" 2>&1 | tr '\r' '\n')
	echo "$out" | grep -o 'iops average [0-9]*' | tail -1 | awk -v bs=$(($3 * 512)) \
		'{printf "%d %.1f\n", $3, $3 * bs / 1048576}'
}

bench_run() { # url rw bs depth -> "iops mibs"
	[ -x "$BENCH" ] || { echo "- -"; return; }
	timeout $((SECS + 30)) "$BENCH" --name=b --filename="$1" --rw="$2" --bs="$3" --iodepth="$4" \
		--runtime=$SECS --time_based --output-format=json --progress=never 2>/dev/null |
		python3 -c '
import json, sys
try:
    j = json.load(sys.stdin)["jobs"][0]
    k = "write" if "write" in sys.argv[1] else "read"
    print("%d %.1f" % (j[k]["iops"], j[k]["bw_bytes"] / 1048576))
except Exception:
    print("- -")' "$2"
}

# 64 sessions: 64 iscsi-perf processes at depth 4, 4 KiB random reads; sums their IOPS
many_run() { # url
	local pids=() i
	for i in $(seq 64); do
		timeout $((SECS + 30)) iscsi-perf -i "iqn.2026-12.org.utgt:bench-$i" -m 4 -b 8 -t "$SECS" -r "$1" \
			>"$W/many.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in $(seq 64); do # the last "iops average" of each run is its result
		tr '\r' '\n' <"$W/many.$i" | grep -o 'iops average [0-9]*' | tail -1
	done | awk '{s += $3} END {printf "%d %.1f\n", s, s * 4096 / 1048576}'
	rm -f "$W"/many.*
}

declare -a ROWS
measure() { # label pid cmd... -> "iops mibs cpu_s rss"
	local pid=$1; shift
	local c0 c1 r
	c0=$(cpu_ticks "$pid")
	r=$("$@")
	c1=$(cpu_ticks "$pid")
	echo "$r $(awk -v a=$c0 -v b=$c1 -v hz=$HZ 'BEGIN {printf "%.2f", (b - a) / hz}') $(rss_mb "$pid")"
}

row() { # label kind args...
	local label=$1 kind=$2; shift 2
	local u t
	case $kind in
	perf) u=$(measure $UPID perf_run "$URL_U" "$@"); t=$(measure $TPID perf_run "$URL_T" "$@") ;;
	bench) u=$(measure $UPID bench_run "$URL_U" "$@"); t=$(measure $TPID bench_run "$URL_T" "$@") ;;
	many) u=$(measure $UPID many_run "$URL_U"); t=$(measure $TPID many_run "$URL_T") ;;
	esac
	ROWS+=("$label|$u|$t")
	printf '.'
}

echo "utgtd pid $UPID ($URL_U), tgtd pid $TPID ($URL_T); ${SECS}s per run"
# warm both LUs so first-touch page faults are not measured
"$BENCH" --name=fill --filename="$URL_U" --rw=write --bs=1m --iodepth=8 --size=100% \
	--output-format=json --progress=never >/dev/null 2>&1 || true
"$BENCH" --name=fill --filename="$URL_T" --rw=write --bs=1m --iodepth=8 --size=100% \
	--output-format=json --progress=never >/dev/null 2>&1 || true
row "4k randread  QD1 (iscsi-perf)" perf 1 8 -r
row "4k randread  QD32 (iscsi-perf)" perf 32 8 -r
row "4k randread  QD32 (utgt-bench)" bench randread 4k 32
row "4k randwrite QD32 (utgt-bench)" bench randwrite 4k 32
for d in 1 8 32; do row "1M seqread   QD$d (iscsi-perf)" perf $d 2048 ""; done
for d in 1 8 32; do row "1M seqwrite  QD$d (utgt-bench)" bench write 1m $d; done
row "4k randread 64 sessions x QD4" many
echo

iperf3 -s -1 -p $PI >/dev/null 2>&1 &
IPID=$!
sleep 0.3
IPERF=$(iperf3 -c 127.0.0.1 -p $PI -t $SECS -J 2>/dev/null |
	python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' 2>/dev/null)
IPID=

printf '\n%-32s | %9s %8s %6s %5s | %9s %8s %6s %5s | %6s\n' workload "utgt IOPS" "MiB/s" "CPU s" "RSS" \
	"tgt IOPS" "MiB/s" "CPU s" "RSS" "ratio"
printf '%s\n' "---------------------------------+-----------------------------------+-----------------------------------+-------"
for r in "${ROWS[@]}"; do
	IFS='|' read -r label u t <<<"$r"
	read -r ui um uc ur <<<"$u"
	read -r ti tm tc tr <<<"$t"
	ratio=$(awk -v a="$ui" -v b="$ti" 'BEGIN {if (b + 0 > 0 && a + 0 > 0) printf "%.2fx", a / b; else print "-"}')
	printf '%-32s | %9s %8s %6s %4sM | %9s %8s %6s %4sM | %6s\n' "$label" "$ui" "$um" "$uc" "$ur" \
		"$ti" "$tm" "$tc" "$tr" "$ratio"
done
echo
echo "iperf3 one TCP stream on loopback: ${IPERF:-?} MiB/s"
awk -v a="$(echo "${ROWS[0]}" | cut -d'|' -f2 | awk '{print $1}')" \
    -v b="$(echo "${ROWS[0]}" | cut -d'|' -f3 | awk '{print $1}')" \
    'BEGIN {if (a > 0 && b > 0) printf "QD1 4k read latency: utgt %.1f us, tgt %.1f us (%.2fx)\n", 1e6 / a, 1e6 / b, b / a}'
echo "utgtd peak RSS: $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$UPID/status), tgtd peak RSS: $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$TPID/status)"
