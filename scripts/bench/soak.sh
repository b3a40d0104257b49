#!/usr/bin/env bash
# Soak: the hostile clients of tests/integration/iscsi_hostile.py (READ floods that are never
# read back, immediate and inside the CmdSN window; a NOP-Out flood from a client that never
# reads; logins past max_sessions and connections past max_connections) run in rounds for the
# whole time, beside one verified utgt-bench session (random 16 KiB reads and writes with
# verify=crc32c) on its own LU of the same target.  Prints utgtd's peak RSS, peak descriptor
# count and CPU, and the verified session's I/O and error count (not a test: a table for
# docs/security.md; exit status 1 when the verified session saw an error or a hostile check
# failed).
#
#   scripts/bench/soak.sh [-t MINUTES]      (default 10; "-t 30s" for seconds)
#
# The target has the budgets iscsi_hostile.sh tests (mem_limit 96M, session_mem_limit 16M,
# max_sessions 4, max_connections 8, NopInInterval 0).  Sampled once a second from /proc.
set -u
cd "$(dirname "$0")/../.."
DUR=10
while getopts t: o; do
	case $o in
	t) DUR=$OPTARG ;;
	*) echo "usage: $0 [-t MINUTES|SECONDSs]" >&2; exit 2 ;;
	esac
done
case $DUR in
*s) SECS=${DUR%s} ;;
*) SECS=$(awk -v m="$DUR" 'BEGIN { printf "%d", m * 60 }') ;;
esac
[ "$SECS" -ge 20 ] 2>/dev/null || { echo "soak: at least 20 s (-t $DUR)" >&2; exit 2; }
UTGTD=${UTGTD:-build/utgtd}
UTGTADM=${UTGTADM:-build/utgtadm}
BENCH=${BENCH:-build/utgt-bench}
for b in "$UTGTD" "$UTGTADM" "$BENCH"; do [ -x "$b" ] || { echo "$b not built (make)"; exit 1; }; done
IQN=iqn.2026-12.org.utgt:soak
W=$(mktemp -d /tmp/utgt-soak.XXXXXX)
UPID= BPID= HPID=
cleanup() {
	for p in $HPID $BPID $UPID; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ "${KEEP:-0}" = 1 ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT

PORT=$(python3 -c '
import socket, sys
for p in range(int(sys.argv[1]), 65000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError:
        s.close()' $((30000 + $$ % 20000)))
cat >"$W/utgtd.conf" <<EOF
HANDLER ramdisk {
	DEVICE hostile {
		size_mb 64
	}
	DEVICE verified {
		size_mb 64
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PORT
	mem_limit 96M
	max_sessions 4
	max_connections 8
	TARGET $IQN {
		enabled 1
		session_mem_limit 16M
		NopInInterval 0
		LUN 0 hostile
		LUN 1 verified
	}
}
EOF
"$UTGTD" -f -c "$W/utgtd.conf" --admin-socket "$W/utgtd.sock" --state-dir "$W/state" \
	>"$W/utgtd.log" 2>&1 &
UPID=$!
for _ in $(seq 600); do
	grep -q "utgtd .* serving " "$W/utgtd.log" 2>/dev/null && break
	kill -0 $UPID 2>/dev/null || break
	sleep 0.1
done
grep -q "utgtd .* serving " "$W/utgtd.log" || { echo "utgtd did not start:"; cat "$W/utgtd.log"; exit 1; }

cpu() { awk '{ print $14 + $15 }' "/proc/$UPID/stat" 2>/dev/null || echo 0; }
status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$UPID/status" 2>/dev/null || echo 0; }
tck=$(getconf CLK_TCK)
cpu0=$(cpu)
rss0=$(status VmRSS)
fd0=$(ls "/proc/$UPID/fd" | wc -l)
echo "soak: utgtd pid $UPID on 127.0.0.1:$PORT for $SECS s (RSS $((rss0 / 1024)) MiB, $fd0 fds at start)"

"$BENCH" --name=verified --filename="iscsi://127.0.0.1:$PORT/$IQN/1" \
	--initiator-name=iqn.2026-12.org.utgt:soak-verified --rw=randrw --bs=16k \
	--iodepth=8 --size=64m --verify=crc32c --time_based --runtime="${SECS}s" \
	--output-format=json --output="$W/bench.json" >"$W/bench.out" 2>&1 &
BPID=$!
python3 tests/integration/iscsi_hostile.py 127.0.0.1 "$PORT" "$IQN" "$UPID" "$UTGTADM" \
	"$W/utgtd.sock" "$SECS" >"$W/hostile.out" 2>&1 &
HPID=$!

peak_fd=$fd0 peak_rss=$rss0 t0=$SECONDS
while kill -0 $BPID 2>/dev/null || kill -0 $HPID 2>/dev/null; do
	kill -0 $UPID 2>/dev/null || { echo "utgtd died"; tail -20 "$W/utgtd.log"; exit 1; }
	n=$(ls "/proc/$UPID/fd" 2>/dev/null | wc -l)
	[ "$n" -gt "$peak_fd" ] && peak_fd=$n
	r=$(status VmRSS)
	[ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
	# far past the end: something hangs
	[ $((SECONDS - t0)) -gt $((SECS + 300)) ] && { echo "soak: still running after $((SECONDS - t0)) s"; exit 1; }
	sleep 1
done
wait $BPID
brc=$?
wait $HPID
hrc=$?
BPID= HPID=
elapsed=$((SECONDS - t0))
cpu1=$(cpu)
hwm=$(status VmHWM)
rss1=$(status VmRSS)
fd1=$(ls "/proc/$UPID/fd" | wc -l)
j() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))["jobs"][0]
v = eval(sys.argv[2], {}, {"d": d})
print(v)' "$W/bench.json" "$1" 2>/dev/null || echo "?"; }
rounds=$(sed -n 's/.* \([0-9]*\) round(s) of attacks, \([0-9]*\) check(s) failed.*/\1/p' "$W/hostile.out")
hfail=$(grep -c '^FAIL' "$W/hostile.out")
verr=$(j 'd["verify"]["errors"]')
cpu_s=$(awk -v a="$cpu0" -v b="$cpu1" -v t="$tck" 'BEGIN { printf "%.1f", (b - a) / t }')

echo
echo "| figure | value |"
echo "|---|---|"
echo "| duration | $elapsed s |"
echo "| hostile rounds (each: 40 immediate + 32 windowed READ(16) of 32 MiB never read, 300 MiB NOP-Out flood, 5th session, 9th connection) | ${rounds:-?}, $hfail check(s) failed |"
echo "| utgtd RSS: start / end / peak sampled / peak (VmHWM) | $((rss0 / 1024)) / $((rss1 / 1024)) / $((peak_rss / 1024)) / $((hwm / 1024)) MiB |"
echo "| utgtd descriptors: start / end / peak sampled | $fd0 / $fd1 / $peak_fd |"
echo "| utgtd CPU (user+system) | $cpu_s s, $(awk -v c="$cpu_s" -v e="$elapsed" 'BEGIN { printf "%.0f", 100 * c / e }') % of one core |"
echo "| verified session: reads / writes (IOPS) | $(j 'round(d["read"]["iops"])') / $(j 'round(d["write"]["iops"])') |"
echo "| verified session: blocks checked, errors | $(j 'd["verify"]["blocks"]'), $verr |"
echo "| utgt-bench / iscsi_hostile.py exit status | $brc / $hrc |"
grep -E '^FAIL' "$W/hostile.out" | head -5
[ "$brc" -ne 0 ] && tail -5 "$W/bench.out"
[ "$brc" -eq 0 ] && [ "$hrc" -eq 0 ] && [ "$verr" = 0 ]
