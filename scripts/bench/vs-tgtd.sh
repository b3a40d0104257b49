#!/usr/bin/env bash
# utgtd versus Debian's tgtd on loopback, same LU size, same clients (not a test).
#
#   scripts/bench/vs-tgtd.sh [SECONDS_PER_RUN]      (default 5)
#   REPS=3 ONLY='QD1|QD32' scripts/bench/vs-tgtd.sh 3
#
# utgtd serves a ramdisk LU; tgtd serves a file of the same size on tmpfs (/dev/shm) through
# its rdwr backing store, its closest equivalent.  Clients: libiscsi's iscsi-perf (reads) and
# build/utgt-bench (writes, and reads again when present).  For each workload: IOPS, MiB/s,
# target CPU per I/O (utime+stime of the daemon during the run over the I/Os it served), target
# RSS after the run, and the utgt/tgt IOPS ratio.  REPS runs every row that many times,
# utgtd and tgtd in alternating order, and prints medians (the machine may be shared: compare
# the two columns of one run, not figures of different runs).  ONLY (an extended regex)
# keeps the rows whose label matches.  Printed with the QD1 row: a raw TCP ping-pong on
# loopback (48-byte request, 4,144-byte answer: the shape of a 4 KiB READ), the floor under any
# target's QD1 latency.  Printed with the 4 KiB QD32 read row: the same exchange pipelined 32
# deep against an epoll server that batches as utgtd's workers do, its CPU per answer with the
# data from one cached buffer and from random pages of a store the LU's size: the floor under
# any target's CPU per I/O on this machine (tcp_pingpong.c).  The "N paths" rows spread one utgt-bench job over N portals of the same
# LU (round robin, a path switch every command); iperf3's one-stream figure closes the report.
# ISCSI_WORKERS=N sets utgtd's worker_threads (ISCSI_WORKERS=1: every connection on one
# worker, as placing the paths of one LU together would); POLL_US=N sets its poll_us.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-5}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
SIZE_MB=${SIZE_MB:-1024}
REPS=${REPS:-1}
ONLY=${ONLY:-}
NPATHS=4
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
# more portals for the multipath rows, each target its own
PUS=($PU) PTS=($PT)
for _ in $(seq 2 $NPATHS); do
	PUS+=($(free_port $((${PTS[-1]} > PI ? ${PTS[-1]} + 1 : PI + 1))))
	PTS+=($(free_port $((${PUS[-1]} + 1))))
done

# ---------------------------------------------------------------- targets
cat >"$W/utgtd.conf" <<EOF
HANDLER ramdisk {
	DEVICE bench0 {
		size_mb $SIZE_MB
	}
}
TARGET_DRIVER iscsi {
$(for p in "${PUS[@]}"; do printf '\tlisten 127.0.0.1:%s\n' $p; done)
$([ -n "${ISCSI_WORKERS:-}" ] && printf '\tworker_threads %s\n' "$ISCSI_WORKERS")
$([ -n "${POLL_US:-}" ] && printf '\tpoll_us %s\n' "$POLL_US")
	TARGET $IQN_U {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		LUN 0 bench0
	}
}
EOF
"$UTGTD" -f -c "$W/utgtd.conf" --admin-socket "$W/utgtd.sock" --state-dir "$W/state" >"$W/utgtd.log" 2>&1 &
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
	tgtadm -C $CTL --lld iscsi --op bind --mode target --tid 1 -I ALL &&
	for p in "${PTS[@]:1}"; do
		tgtadm -C $CTL --lld iscsi --op new --mode portal --param portal=127.0.0.1:$p || exit 1
	done ||
	{ echo "tgtd setup failed"; cat "$W/tgtd.log"; exit 1; }
URL_U=iscsi://127.0.0.1:$PU/$IQN_U/0
URL_T=iscsi://127.0.0.1:$PT/$IQN_T/1
paths() { # target-iqn lun n ports... -> URL,URL,... over the first n ports
	local iqn=$1 lun=$2 n=$3 out= p
	shift 3
	for p in "${@:1:$n}"; do out+=${out:+,}iscsi://127.0.0.1:$p/$iqn/$lun; done
	echo "$out"
}

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

bench_run() { # url rw bs depth [more utgt-bench options] -> "iops mibs"
	[ -x "$BENCH" ] || { echo "- -"; return; }
	local url=$1 rw=$2 bs=$3 depth=$4
	shift 4
	timeout $((SECS + 30)) "$BENCH" --name=b --filename="$url" --rw="$rw" --bs="$bs" --iodepth="$depth" "$@" \
		--runtime=$SECS --time_based --output-format=json --progress=never 2>/dev/null |
		python3 -c '
import json, sys
try:
    j = json.load(sys.stdin)["jobs"][0]
    k = "write" if "write" in sys.argv[1] else "read"
    print("%d %.1f" % (j[k]["iops"], j[k]["bw_bytes"] / 1048576))
except Exception:
    print("- -")' "$rw"
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

measure() { # pid cmd... -> "iops mibs cpu_s rss"
	local pid=$1; shift
	local c0 c1 r
	c0=$(cpu_ticks "$pid")
	r=$("$@")
	c1=$(cpu_ticks "$pid")
	echo "$r $(awk -v a=$c0 -v b=$c1 -v hz=$HZ 'BEGIN {printf "%.2f", (b - a) / hz}') $(rss_mb "$pid")"
}

one() { # side kind args... -> "iops mibs cpu_s rss"
	local side=$1 kind=$2; shift 2
	local pid url iqn lun ports
	if [ "$side" = u ]; then
		pid=$UPID url=$URL_U iqn=$IQN_U lun=0 ports=("${PUS[@]}")
	else
		pid=$TPID url=$URL_T iqn=$IQN_T lun=1 ports=("${PTS[@]}")
	fi
	case $kind in
	perf) measure $pid perf_run "$url" "$@" ;;
	bench) measure $pid bench_run "$url" "$@" ;;
	many) measure $pid many_run "$url" ;;
	paths) # n rw bs depth
		local n=$1; shift
		measure $pid bench_run "$url" "$@" --paths="$(paths $iqn $lun $n "${ports[@]}")" --rr-iops=1 ;;
	esac
}

RES=$W/results
FLOOR=$W/floor
CPUFLOOR=$W/cpufloor
PINGPONG=$W/tcp_pingpong
cc -O2 -o "$PINGPONG" scripts/bench/tcp_pingpong.c || { echo "cannot build tcp_pingpong"; exit 1; }

row() { # rep label kind args...
	local rep=$1 label=$2 kind=$3; shift 3
	[ -n "$ONLY" ] && ! [[ $label =~ $ONLY ]] && return
	local u t
	# alternate which target goes first, so neither always runs on the warmer machine
	if ((rep % 2)); then
		t=$(one t $kind "$@"); u=$(one u $kind "$@")
	else
		u=$(one u $kind "$@"); t=$(one t $kind "$@")
	fi
	echo "$label|$u|$t" >>"$RES"
	case $label in
	*QD1\ *) "$PINGPONG" "$SECS" | awk '{print $2}' >>"$FLOOR" ;;
	"4k randread  QD32 (utgt-bench)")
		# the socket work alone at the same depth: from a cached buffer, and from random
		# pages of a store the LU's size (what a RAM LU's READ must touch)
		echo "$("$PINGPONG" "$SECS" 32 | awk '{print $6, $8}') $("$PINGPONG" "$SECS" 32 "$SIZE_MB" |
			awk '{print $6, $8}')" >>"$CPUFLOOR" ;;
	esac
	printf '.'
}

echo "utgtd pid $UPID ($URL_U), tgtd pid $TPID ($URL_T); ${SECS}s per run, $REPS rep(s)"
# warm both LUs so first-touch page faults are not measured
"$BENCH" --name=fill --filename="$URL_U" --rw=write --bs=1m --iodepth=8 --size=100% \
	--output-format=json --progress=never >/dev/null 2>&1 || true
"$BENCH" --name=fill --filename="$URL_T" --rw=write --bs=1m --iodepth=8 --size=100% \
	--output-format=json --progress=never >/dev/null 2>&1 || true
for rep in $(seq $REPS); do
	row $rep "4k randread  QD1 (iscsi-perf)" perf 1 8 -r
	row $rep "4k randread  QD32 (iscsi-perf)" perf 32 8 -r
	row $rep "4k randread  QD32 (utgt-bench)" bench randread 4k 32
	row $rep "4k randwrite QD32 (utgt-bench)" bench randwrite 4k 32
	for n in 1 2 4; do
		row $rep "4k randread  QD32 $n path(s) rr" paths $n randread 4k 32
	done
	for d in 1 8 32; do row $rep "1M seqread   QD$d (iscsi-perf)" perf $d 2048 ""; done
	for d in 1 8 32; do row $rep "1M seqwrite  QD$d (utgt-bench)" bench write 1m $d; done
	row $rep "4k randread 64 sessions x QD4" many
done
echo

iperf3 -s -1 -p $PI >/dev/null 2>&1 &
IPID=$!
sleep 0.3
IPERF=$(iperf3 -c 127.0.0.1 -p $PI -t $SECS -J 2>/dev/null |
	python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' 2>/dev/null)
IPID=

# Medians per row and column; CPU per I/O = CPU seconds / (IOPS x seconds).
python3 - "$RES" "$FLOOR" "$SECS" "$CPUFLOOR" "$SIZE_MB" <<'PY'
import statistics, sys
res, floor_f, secs, cpufloor_f, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows, order = {}, []
for line in open(res):
    label, u, t = line.rstrip("\n").split("|")
    if label not in rows:
        rows[label] = ([], [])
        order.append(label)
    for side, txt in zip(rows[label], (u, t)):
        f = txt.split()
        try:
            iops, mibs, cpu, rss = float(f[0]), float(f[1]), float(f[2]), float(f[3])
        except (ValueError, IndexError):
            continue
        side.append((iops, mibs, cpu * 1e6 / (iops * secs) if iops else 0.0, rss))

def med(samples, k):
    return statistics.median(s[k] for s in samples) if samples else None

def cols(samples):
    if not samples:
        return "%9s %8s %7s %5s" % ("-", "-", "-", "-")
    return "%9.0f %8.1f %7.2f %4.0fM" % tuple(med(samples, k) for k in range(4))

print("%-32s | %9s %8s %7s %5s | %9s %8s %7s %5s | %6s" % ("workload", "utgt IOPS", "MiB/s",
      "CPU/IO", "RSS", "tgt IOPS", "MiB/s", "CPU/IO", "RSS", "ratio"))
print("-" * 33 + "+" + "-" * 35 + "+" + "-" * 35 + "+" + "-" * 7)
for label in order:
    u, t = rows[label]
    mu, mt = med(u, 0), med(t, 0)
    ratio = "%.2fx" % (mu / mt) if mu and mt else "-"
    print("%-32s | %s | %s | %6s" % (label, cols(u), cols(t), ratio))
print("(CPU/IO: microseconds of the daemon's utime+stime per I/O)")
one = {l: rows[l] for l in order if "path(s)" in l}
base = [l for l in one if " 1 path" in l]
if base:
    bu, bt = med(rows[base[0]][0], 0), med(rows[base[0]][1], 0)
    for l in one:
        if l == base[0]:
            continue
        u, t = med(rows[l][0], 0), med(rows[l][1], 0)
        print("%s vs 1 path: utgt %s, tgt %s" % (l.split("QD32 ")[1].split(" rr")[0],
              "%.2fx" % (u / bu) if u and bu else "-", "%.2fx" % (t / bt) if t and bt else "-"))
qd1 = [l for l in order if "QD1 " in l and "4k" in l]
try:
    floors = [float(x) for x in open(floor_f)]
except OSError:
    floors = []
if qd1:
    u, t = med(rows[qd1[0]][0], 0), med(rows[qd1[0]][1], 0)
    fl = statistics.median(floors) if floors else None
    if u and t:
        print("QD1 4k read latency: utgt %.1f us, tgt %.1f us (%.2fx)" % (1e6 / u, 1e6 / t, (1e6 / t) / (1e6 / u)))
    if fl and u and t:
        print("TCP ping-pong floor (48 B / 4,144 B): %.1f us; over the floor: utgt +%.1f us, tgt +%.1f us"
              % (fl, 1e6 / u - fl, 1e6 / t - fl))
try:
    cf = [[float(x) for x in l.split()] for l in open(cpufloor_f) if len(l.split()) == 4]
except OSError:
    cf = []
q32 = "4k randread  QD32 (utgt-bench)"
if cf and q32 in rows and rows[q32][0]:
    hot, hot_r, cold, cold_r = (statistics.median(c[k] for c in cf) for k in range(4))
    uc = med(rows[q32][0], 2)
    print("Socket CPU floor at QD32 (an epoll server answering 48 B with 4,144 B, its own client at depth 32):")
    print("  %.2f us per answer from one cached buffer (%.3f wake-ups per answer), %.2f us from random"
          " pages of a %s MiB store (%.3f); utgtd %.2f us, +%.2f us over the store floor"
          % (hot, hot_r, cold, size_mb, cold_r, uc, uc - cold))
PY
echo "iperf3 one TCP stream on loopback: ${IPERF:-?} MiB/s"
echo "utgtd peak RSS: $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$UPID/status), tgtd peak RSS: $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$TPID/status)"
