#!/usr/bin/env bash
# Where a 1 MiB WRITE over iSCSI/TCP spends its time, against one iperf3 stream (not a test).
#
#   scripts/bench/write-path.sh [SECS]              (default 3 s a run)
#   ROUNDS=5 QDS="1 8" scripts/bench/write-path.sh
#   CONFIGS="default fb256k" UTGTD=/tmp/old/utgtd scripts/bench/write-path.sh
#
# Each round runs every configuration in turn (the order flips every round), utgt-bench
# writing 1 MiB blocks sequentially at each queue depth, then iperf3's one stream on
# loopback; the table gives medians over the rounds.  Configurations:
#   default  ramdisk LU, the target's negotiation defaults
#   fb256k   the same with FirstBurstLength 262144 (utgt-bench's libiscsi offers 256 KiB
#            bursts and one outstanding R2T: a larger first burst saves an R2T round trip)
#   nullio   vdisk_nullio LU: the transport without the store's copy of the data
# Per I/O: utgtd's CPU (utime+stime), and from perf stat on utgtd the sends (R2Ts + status),
# receives and context switches: the counts hold under the neighbours' load, MiB/s does not.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-3}
ROUNDS=${ROUNDS:-3}
QDS=${QDS:-1 8 32}
CONFIGS=${CONFIGS:-default fb256k nullio}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
IQN=iqn.2026-12.org.utgt:wpath
W=$(mktemp -d /tmp/utgt-wpath.XXXXXX)
UPID=
cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for t in perf python3 iperf3; do
	command -v $t >/dev/null || { echo "missing $t"; exit 1; }
done
. scripts/bench/lib.sh
HZ=$(getconf CLK_TCK)
EV=context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_readv,syscalls:sys_enter_sendmsg

start_utgtd() { # config -> UPID, URL
	local port handler=ramdisk extra=
	pick_port port
	case $1 in
	default) ;;
	fb256k) extra="FirstBurstLength 262144" ;;
	nullio) handler=vdisk_nullio ;;
	*) echo "unknown configuration $1"; exit 1 ;;
	esac
	cat >"$W/u.conf" <<EOF
HANDLER $handler {
	DEVICE wp0 {
		size_mb 512
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$port
	TARGET $IQN {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		$extra
		LUN 0 wp0
	}
}
EOF
	"$UTGTD" -f -c "$W/u.conf" --state-dir "$W" --admin-socket none >"$W/log" 2>&1 &
	UPID=$!
	bench_wait_listening "$W/log"
	URL=iscsi://127.0.0.1:$port/$IQN/0
	# written once, so no READ-side first touch and no fresh store pages in the runs
	"$BENCH" --name=fill --filename="$URL" --rw=write --bs=1m --iodepth=8 --size=100% \
		--output-format=terse --progress=never >/dev/null 2>&1
}

one() { # config depth -> "config depth MiB/s ios cpu_s switches syscalls readv sendmsg"
	local c0 c1 p out
	perf stat -x, -e "$EV" -p "$UPID" -o "$W/perf" &
	p=$!
	sleep 0.3 # perf attached
	c0=$(awk '{print $14 + $15}' /proc/$UPID/stat)
	out=$("$BENCH" --name=w --filename="$URL" --rw=write --bs=1m --iodepth="$2" \
		--runtime="$SECS" --time_based --output-format=json --progress=never 2>/dev/null |
		python3 -c 'import json, sys
j = json.load(sys.stdin)["jobs"][0]["write"]
print("%.1f %d" % (j["bw_bytes"] / 1048576, j["total_ios"]))' 2>/dev/null) || out="0 0"
	c1=$(awk '{print $14 + $15}' /proc/$UPID/stat)
	kill -INT $p
	wait $p 2>/dev/null
	echo "$1 $2 $out $(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}') $(awk -F, '
		$3 == "context-switches" { cs = $1 }
		$3 == "raw_syscalls:sys_enter" { sc = $1 }
		$3 == "syscalls:sys_enter_readv" { rv = $1 }
		$3 == "syscalls:sys_enter_sendmsg" { sm = $1 }
		END { print cs + 0, sc + 0, rv + 0, sm + 0 }' "$W/perf")"
}

echo "utgtd: $UTGTD; 1 MiB sequential writes, ${SECS}s a run, $ROUNDS round(s), QD $QDS"
read -r -a CFG <<<"$CONFIGS"
for r in $(seq "$ROUNDS"); do
	order=("${CFG[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#CFG[@]} - 1; i >= 0; i--)); do order+=("${CFG[i]}"); done
	fi
	for c in "${order[@]}"; do
		start_utgtd "$c"
		for d in $QDS; do one "$c" "$d" >>"$W/rows"; done
		kill "$UPID"
		wait "$UPID" 2>/dev/null
		UPID=
	done
	pick_port pi
	iperf3 -s -1 -p "$pi" >/dev/null 2>&1 &
	# ss, not a connect: iperf3 -s -1 serves the first connection only
	for _ in $(seq 100); do ss -Hltn "sport = :$pi" | grep -q . && break; sleep 0.1; done
	ss -Hltn "sport = :$pi" | grep -q . || { echo "iperf3 -s did not listen on $pi"; exit 1; }
	iperf3 -c 127.0.0.1 -p "$pi" -t "$SECS" -J 2>/dev/null | python3 -c 'import json, sys
print("iperf3 %.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' \
		>>"$W/rows" 2>/dev/null
	wait
	printf '.'
done
echo
python3 - "$W/rows" <<'EOF'
import statistics as st, sys
rows, ip = {}, []
for l in open(sys.argv[1]):
    f = l.split()
    if f[0] == "iperf3":
        ip.append(float(f[1]))
        continue
    c, d, mibs, ios, cpu, cs, sc, rv, sm = f[0], int(f[1]), *map(float, f[2:])
    per = lambda x: x / ios if ios else float("nan")
    rows.setdefault((c, d), []).append((mibs, per(cpu) * 1e6, per(sm), per(rv), per(cs), per(sc)))
ipm = st.median(ip) if ip else float("nan")
print("iperf3 one stream: %s MiB/s, median %.0f" % (" / ".join("%.0f" % x for x in ip), ipm))
print("%-8s %-4s %9s %7s %8s %8s %7s %9s %9s" % ("config", "QD", "MiB/s", "x iperf", "CPU/IO",
      "sendmsg", "readv", "switches", "syscalls"))
for (c, d), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    m = [st.median(x[i] for x in v) for i in range(6)]
    print("%-8s %-4d %9.0f %6.2fx %6.0fus %8.2f %7.2f %9.2f %9.2f" % (c, d, m[0], m[0] / ipm, *m[1:]))
print("(medians over the rounds; MiB/s per round: %s)" % "; ".join(
    "%s QD%d %s" % (c, d, "/".join("%.0f" % x[0] for x in v)) for (c, d), v in sorted(rows.items())))
EOF
