#!/usr/bin/env bash
# The multipath lab's campaign: reproduces seed 001 (does bandwidth scale with paths?) and
# seed 004 (what do the iSCSI tunables do to writes?) with utgtd and utgt-bench on this machine,
# then writes LAB_OUT/report.md.
#
#   campaign.sh            full campaign (~12 minutes): make lab
#   campaign.sh --quick    a few seconds per point, prints and enforces its assertions:
#                          make lab-quick
#
# Experiments (full):
#  1. scaling, 1/2/4 paths: 1 MiB sequential read/write at QD 8 per path, 4 KiB random
#     read/write at QD 32; rr iops=1, rr iops=1000, queue-length; against utgtd ...
#  4. ... and the same against Debian's tgtd (side by side in the report);
#  2. failover: 2 paths, path 2's link down for 5 s mid-run: per-second CSV + plot, no
#     application error, verify passes;
#  3. tunables on one path shaped like seed 004's GbE link: Nagle, MaxRecvDataSegmentLength,
#     InitialR2T, ImmediateData one at a time and together, negotiated values from utgtd's log.
#
# Environment: LAB_OUT (lab-results, or lab-results/quick), BUILD (build), LAB_NAME
# (utgt-lab, utgt-lab-quick), SCALE_RATE (200mbit), SCALE_DELAY (0), TUNE_RATE (1gbit),
# TUNE_DELAY (1ms), RUNTIME/RAMP (per run), REPEATS (runs per point; the report shows the
# median run and the spread).
set -uo pipefail

MODE=full
[ "${1:-}" = --quick ] && MODE=quick
[ $# -le 1 ] || { echo "usage: campaign.sh [--quick]" >&2; exit 2; }
case "${1:-}" in "" | --quick) ;; *) echo "usage: campaign.sh [--quick]" >&2; exit 2 ;; esac

LAB_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$LAB_ROOT" || exit 1
if [ $MODE = quick ]; then
	LAB_OUT=${LAB_OUT:-lab-results/quick}
	LAB_NAME=${LAB_NAME:-utgt-lab-quick}
	RUNTIME=${RUNTIME:-3}
	RAMP=${RAMP:-1}
	REPEATS=${REPEATS:-1}
	PATH_COUNTS="1 2"
	WORKLOADS="seqread"
	POLICIES="rr1"
	# The link is down 9 s: an I/O caught on path 2 must time out (--io-timeout=3) while it is
	# down for the failure to be seen, a 2 s margin with the 5 s this had, 6 s now; the run
	# then has 11 s for the reconnect (backoff at most 4 s) after the link is back.
	FO_RUNTIME=24 FO_DOWN_AT=4 FO_DOWN_FOR=9
	TUNE_SETTINGS="untuned seed-tuned"
	TUNE_WORKLOADS="w64k-qd1"
	TUNE_RUNTIME=3
else
	LAB_OUT=${LAB_OUT:-lab-results}
	LAB_NAME=${LAB_NAME:-utgt-lab}
	# three short runs per point, the report takes the median: a neighbour's compile that
	# stalls one run for a second then moves one of three samples instead of the point
	RUNTIME=${RUNTIME:-2}
	RAMP=${RAMP:-500ms}
	REPEATS=${REPEATS:-3}
	PATH_COUNTS="1 2 4"
	WORKLOADS="seqread seqwrite randread randwrite"
	POLICIES="rr1 rr1000 ql"
	FO_RUNTIME=30 FO_DOWN_AT=10 FO_DOWN_FOR=5
	TUNE_SETTINGS="untuned nagle-off mrdsl-64k mrdsl-1m initialr2t-no immediatedata-no seed-tuned all-tuned"
	TUNE_WORKLOADS="w64k-qd1 w1m-qd1 w64k-qd8"
	TUNE_RUNTIME=${TUNE_RUNTIME:-2}
fi
SCALE_RATE=${SCALE_RATE:-200mbit}
SCALE_DELAY=${SCALE_DELAY:-0}
TUNE_RATE=${TUNE_RATE:-1gbit}
TUNE_DELAY=${TUNE_DELAY:-1ms}
case "$LAB_OUT" in /*) ;; *) LAB_OUT=$LAB_ROOT/$LAB_OUT ;; esac
export LAB_NAME LAB_OUT
MAXP=${PATH_COUNTS##* }

# shellcheck source=scripts/lab/lib.sh
. "$LAB_ROOT/scripts/lab/lib.sh"
# what a previous campaign left here (not the whole directory: lab-results/quick lives inside
# lab-results)
rm -rf "$LAB_OUT/raw" "$LAB_OUT"/{report.md,scaling.png,failover.png,tunables.png,scaling.dat} \
	"$LAB_OUT"/{tunables.dat,failover.csv,commands.sh,campaign.log,meta.env,machine.txt}
lab_init

meta() { echo "$1=$2" >>"$LAB_OUT/meta.env"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# ------------------------------------------------------------------ the machine and the build
: >"$LAB_OUT/meta.env"
meta mode $MODE
meta date "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
meta dirty "$(git status --porcelain -- scsi target transports initiator 2>/dev/null | wc -l)"
meta runtime "$RUNTIME"
meta ramp "$RAMP"
meta repeats "$REPEATS"
meta scale_rate "$SCALE_RATE"
meta scale_delay "$SCALE_DELAY"
meta tune_rate "$TUNE_RATE"
meta tune_delay "$TUNE_DELAY"
meta lu_mb "$LU_MB"
meta fo_runtime "$FO_RUNTIME"
meta fo_down_at "$FO_DOWN_AT"
meta fo_down_for "$FO_DOWN_FOR"
meta build "$BUILD_REL"
meta out "${LAB_OUT#"$LAB_ROOT"/}"
meta lab_name "$LAB_NAME"
{
	echo "## uname -a"; uname -a
	echo "## lscpu"; lscpu
	echo "## free -m"; free -m
	echo "## versions"
	"$UTGTD" --version 2>&1 | head -1
	"$BENCH" --version 2>&1 | head -1
	tgtd --version 2>&1 | head -1
	dpkg-query -W -f='${Package} ${Version}\n' libiscsi7 tgt iproute2 2>/dev/null
} >"$LAB_OUT/machine.txt" 2>&1
meta load_start "$(loadavg)"
T_START=$(date +%s)

# ------------------------------------------------------------------ link checks
# Round trip per path (TCP connect time to a closed port: SYN out, RST back) and, in the full
# campaign, what one shaped path carries with iperf3: the ceiling the iSCSI numbers sit under.
link_check() { # TAG NPATHS
	local tag=$1 n=$2 i
	for i in $(seq 1 "$n"); do
		ip netns exec "$LAB_INI" python3 -c '
import socket, sys, time
s = []
for _ in range(20):
    t = time.perf_counter()
    try:
        socket.create_connection((sys.argv[1], 9), timeout=3).close()
    except ConnectionRefusedError:
        pass
    s.append((time.perf_counter() - t) * 1e3)
s.sort()
print("%.3f %.3f" % (s[0], s[len(s) // 2]))' "10.77.$i.2" >"$LAB_OUT/raw/rtt-$tag-path$i.txt" 2>&1
	done
	if [ $MODE = full ]; then
		ip netns exec "$LAB_TGT" iperf3 -s -B 10.77.1.2 -p 5201 >/dev/null 2>&1 &
		local spid=$!
		for _ in $(seq 50); do
			ip netns exec "$LAB_TGT" ss -Hltn 'sport = :5201' | grep -q . && break
			sleep 0.1
		done
		lab_record "ip netns exec $LAB_INI iperf3 -c 10.77.1.2 -t 3 -J"
		ip netns exec "$LAB_INI" iperf3 -c 10.77.1.2 -p 5201 -t 3 -J >"$LAB_OUT/raw/iperf-$tag.json" 2>&1
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
}

# bench_rep NAME ARGS...: REPEATS runs of one point, raw/NAME.rK.json
bench_rep() {
	local name=$1 k
	shift
	for k in $(seq 1 "$REPEATS"); do bench "$name.r$k" "$@"; done
}

# ------------------------------------------------------------------ 1 and 4: scaling
wl_args() { # WORKLOAD NPATHS
	case "$1" in
	seqread) echo "--rw=read --bs=1m --iodepth=$((8 * $2))" ;;
	seqwrite) echo "--rw=write --bs=1m --iodepth=$((8 * $2))" ;;
	randread) echo "--rw=randread --bs=4k --iodepth=32" ;;
	randwrite) echo "--rw=randwrite --bs=4k --iodepth=32" ;;
	esac
}
pol_args() {
	case "$1" in
	rr1) echo "--policy=rr --rr-iops=1" ;;
	rr1000) echo "--policy=rr --rr-iops=1000" ;;
	ql) echo "--policy=queue-length" ;;
	esac
}

scaling() { # TARGET
	local tgt=$1 n wl pol
	for wl in $WORKLOADS; do
		for n in $PATH_COUNTS; do
			for pol in $POLICIES; do
				# one path has no policy to speak of: measured once
				[ "$n" -eq 1 ] && [ "$pol" != "${POLICIES%% *}" ] && continue
				# shellcheck disable=SC2046
				bench_rep "s-$tgt-$wl-p$n-$pol" --name="$wl" $(wl_args "$wl" "$n") $(pol_args "$pol") \
					--runtime="$RUNTIME" --ramp_time="$RAMP" --time_based --paths="$(lab_urls "$tgt" "$n")"
			done
		done
	done
}

# ------------------------------------------------------------------ 2: failover
failover() {
	local t0 now
	lab_log "failover: 2 paths, path 2 down at ${FO_DOWN_AT}s for ${FO_DOWN_FOR}s of ${FO_RUNTIME}s"
	t0=$(date +%s.%N)
	sampler_start "$LAB_OUT/raw/failover-wire.csv" 2 "$t0"
	bench failover --name=failover --rw=randrw --rwmixread=50 --bs=256k --iodepth=16 --size=128m \
		--runtime="$FO_RUNTIME" --time_based --verify=crc32c --io-timeout=3 --policy=rr --rr-iops=1 \
		--write_bw_log="$OUT_REL/raw/failover" --paths="$(lab_urls utgtd 2)" &
	bench_bg_pid=$!
	# the cut is meant for a path carrying I/O: wait for utgt-bench's session on path 2 (the
	# condition, bounded at 60 s), then give I/O FO_DOWN_AT seconds to flow
	for _ in $(seq 600); do
		ip netns exec "$LAB_INI" ss -Htn state established "( dst $(portal 2) )" | grep -q . && break
		sleep 0.1
	done
	sleep "$FO_DOWN_AT"
	now=$(date +%s.%N)
	lab_paths link 2 down
	meta fo_down_t "$(awk -v a="$now" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')"
	sleep "$FO_DOWN_FOR"
	now=$(date +%s.%N)
	lab_paths link 2 up
	meta fo_up_t "$(awk -v a="$now" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')"
	wait "$bench_bg_pid"
	meta fo_rc $?
	bench_bg_pid=""
	sampler_stop
}

# ------------------------------------------------------------------ 3: tunables
# name -> "nodelay MRDSL InitialR2T ImmediateData [DataPDUInOrder]" (target and initiator)
tune_setting() {
	case "$1" in
	untuned) echo "0 8192 Yes Yes" ;;
	nagle-off) echo "1 8192 Yes Yes" ;;
	mrdsl-64k) echo "0 65536 Yes Yes" ;;
	mrdsl-1m) echo "0 1048576 Yes Yes" ;;
	initialr2t-no) echo "0 8192 No Yes" ;;
	immediatedata-no) echo "0 8192 Yes No" ;;
	seed-tuned) echo "1 65536 No Yes No" ;;
	all-tuned) echo "1 1048576 No Yes" ;;
	esac
}
tune_wl() {
	case "$1" in
	w64k-qd1) echo "--rw=write --bs=64k --iodepth=1" ;;
	w1m-qd1) echo "--rw=write --bs=1m --iodepth=1" ;;
	w64k-qd8) echo "--rw=write --bs=64k --iodepth=8" ;;
	esac
}

tunables() {
	local s wl nd mrdsl ir2t imm dpio conf keys spid
	for s in $TUNE_SETTINGS; do
		read -r nd mrdsl ir2t imm dpio <<<"$(tune_setting "$s")"
		keys=(nodelay "$nd" MaxRecvDataSegmentLength "$mrdsl" InitialR2T "$ir2t" ImmediateData "$imm")
		[ -n "$dpio" ] && keys+=(DataPDUInOrder "$dpio")
		conf=$LAB_OUT/raw/tune-$s.conf
		utgtd_conf "$conf" 1 "${keys[@]}"
		utgtd_start "$conf" 1
		echo "$s $nd $mrdsl $ir2t $imm ${dpio:-Yes}" >>"$LAB_OUT/raw/tune-settings.txt"
		for wl in $TUNE_WORKLOADS; do
			# shellcheck disable=SC2046
			bench_rep "t-$s-$wl" --name="$wl" $(tune_wl "$wl") --runtime="$TUNE_RUNTIME" --ramp_time="$RAMP" \
				--time_based --nodelay="$nd" --initial-r2t="${ir2t,,}" --immediate-data="${imm,,}" \
				--paths="$(lab_url utgtd 1)"
		done
		if [ $MODE = full ]; then
			# one 64 KiB write's segments, for the report's "why" (scripts/lab/sniff.py)
			ip netns exec "$LAB_INI" python3 "$LAB_ROOT/scripts/lab/sniff.py" lab1 2 \
				>"$LAB_OUT/raw/tune-$s.trace" 2>"$LAB_OUT/raw/tune-$s.trace.err" &
			spid=$!
			for _ in $(seq 50); do
				grep -q listening "$LAB_OUT/raw/tune-$s.trace.err" && break
				sleep 0.1
			done
			bench "t-$s-trace" --name=trace --rw=write --bs=64k --iodepth=1 --size=640k \
				--nodelay="$nd" --initial-r2t="${ir2t,,}" --immediate-data="${imm,,}" \
				--paths="$(lab_url utgtd 1)"
			wait $spid
		fi
		utgtd_stop
		# the negotiated values, as utgtd logged them at each login
		grep 'normal session' "$UTGTD_LOG" >"$LAB_OUT/raw/tune-$s.negotiated" || true
	done
}

# ------------------------------------------------------------------ run
lab_log "mode $MODE, results in $LAB_OUT"
lab_paths up "$MAXP" --rate "$SCALE_RATE" --delay "$SCALE_DELAY"
"$PATHS_SH" env >"$LAB_OUT/raw/paths-scale.env"
link_check scale "$MAXP"

utgtd_conf "$LAB_OUT/raw/scale-utgtd.conf" "$MAXP"
utgtd_start "$LAB_OUT/raw/scale-utgtd.conf" "$MAXP"
lab_log "experiment 1: scaling against utgtd ($(loadavg))"
meta load_exp1 "$(loadavg)"
scaling utgtd
lab_log "experiment 2: failover ($(loadavg))"
meta load_exp2 "$(loadavg)"
failover
utgtd_stop

tgtd_start "$MAXP"
lab_log "experiment 4: scaling against tgtd ($(loadavg))"
meta load_exp4 "$(loadavg)"
scaling tgtd
tgtd_stop

lab_paths shape --rate "$TUNE_RATE" --delay "$TUNE_DELAY"
"$PATHS_SH" env >"$LAB_OUT/raw/paths-tune.env"
link_check tune 1
lab_log "experiment 3: tunables ($(loadavg))"
meta load_exp3 "$(loadavg)"
tunables
meta load_end "$(loadavg)"
meta elapsed_s $(($(date +%s) - T_START))

# Stop everything before the report, so its numbers include the delay helpers' statistics.
"$PATHS_SH" down >>"$LAB_OUT/campaign.log" 2>&1

args=()
[ $MODE = quick ] && args+=(--quick)
python3 "$LAB_ROOT/scripts/lab/report.py" "${args[@]}" "$LAB_OUT"
