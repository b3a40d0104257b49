#!/usr/bin/env bash
# vdisk_rbd against its ceiling and its peer, on one Ceph cluster brought up here (not a test).
#
#   scripts/bench/rbd.sh [SECONDS_PER_RUN] [REPS]      (defaults 5 and 1)
#
# One memstore cluster (scripts/ceph-cluster.sh), one 1 GiB image, written once in full.
# For each workload (seed 002's shape: 4 KiB random and 1 MiB sequential, read and write,
# QD 1, 16 and 32) the clients run one after the other, alternating, REPS times (the median
# is kept):
#   fio-rbd   fio's rbd engine, librbd in the client: the ceiling a gateway cannot pass
#   utgt      build/utgt-bench over iSCSI to build/utgtd serving the image as vdisk_rbd
#   tgt       the same utgt-bench over iSCSI to Debian's tgtd serving it with bs_rbd (tgt-rbd)
# and rados bench (4 KiB and 1 MiB objects, write then rand read, 16 in flight) reports the
# object store itself.  librbd's cache is off for every client (the gateways are write-through).
# The table (IOPS, MiB/s, utgt/fio-rbd and utgt/tgt) is printed in markdown for docs/rbd.md,
# then a second one: CPU time per I/O (user + system, µs) of the fio process (librbd in it),
# of utgtd and of tgtd, of the OSD during the fio and the utgt runs, and of utgt-bench.  Everything
# competes for the same 2 cores, so when they are saturated IOPS follow the sum of those
# figures, and a gateway's CPU per I/O is what it can change.  The load average and the
# machine's idle time during the run are printed too: other work on the machine moves IOPS.
# Needs scripts/deps.sh rbd.  Everything runs on this machine's 2 cores, cluster included:
# the figures say how the three compare on it, not what a real cluster does.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-5}
REPS=${2:-1}
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
IQN_U=iqn.2026-12.org.utgt:rbdbench
IQN_T=iqn.2026-12.org.tgt:rbdbench
W=$(mktemp -d /tmp/utgt-rbdbench.XXXXXX)
CEPHDIR=$W/ceph
UPID= TPID=
CTL=$((100 + $$ % 800))

cleanup() {
	[ -n "$UPID" ] && kill "$UPID" 2>/dev/null
	if [ -n "$TPID" ]; then
		tgtadm -C $CTL --op delete --mode system --force >/dev/null 2>&1
		sleep 0.5
		kill -9 "$TPID" 2>/dev/null
	fi
	wait 2>/dev/null
	[ -e "$CEPHDIR/.utgt-ceph-cluster" ] && scripts/ceph-cluster.sh stop "$CEPHDIR" >/dev/null 2>&1
	rm -rf "$W"
	ub_cleanup
}
# pick_port; its EXIT trap is replaced by ours, which calls it
. tests/integration/lib/bench_env.sh
trap cleanup EXIT INT TERM

for t in fio tgtd tgtadm rados rbd python3; do
	command -v $t >/dev/null || { echo "missing $t (scripts/deps.sh rbd)"; exit 1; }
done
[ -e /usr/lib/tgt/backing-store/bs_rbd.so ] ||
	{ echo "tgtd has no bs_rbd (scripts/deps.sh rbd installs tgt-rbd)"; exit 1; }
[ -x "$UTGTD" ] && [ -x "$BENCH" ] || { echo "build utgtd and utgt-bench first (make)"; exit 1; }

STORE_BYTES=$((6 << 30)) scripts/ceph-cluster.sh start "$CEPHDIR" || exit 1
# every client reads this copy: librbd's cache off, as vdisk_rbd forces it
cp "$CEPHDIR/ceph.conf" "$W/client.conf"
printf '[client]\nrbd cache = false\n' >>"$W/client.conf"
export CEPH_CONF=$W/client.conf CEPH_ARGS="-c $W/client.conf"
rbd create --size 1G rbd/bench || exit 1

pick_port PU
pick_port PT
cat >"$W/utgtd.conf" <<EOF
HANDLER vdisk_rbd {
	DEVICE rb {
		pool rbd
		image bench
		ceph_conf $W/client.conf
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PU
	TARGET $IQN_U {
		enabled 1
		QueuedCommands 128
		NopInInterval 0
		LUN 0 rb
	}
}
EOF
"$UTGTD" -f -c "$W/utgtd.conf" --state-dir "$W" --admin-socket "$W/utgtd.sock" >"$W/utgtd.log" 2>&1 &
UPID=$!
mkdir -p /var/run/tgtd
tgtd -f -C $CTL --iscsi portal=127.0.0.1:$PT >"$W/tgtd.log" 2>&1 &
TPID=$!
for _ in $(seq 100); do
	grep -q "listening on" "$W/utgtd.log" && tgtadm -C $CTL --op show --mode system >/dev/null 2>&1 && break
	sleep 0.1
done
grep -q "listening on" "$W/utgtd.log" || { echo "utgtd did not start"; cat "$W/utgtd.log"; exit 1; }
tgtadm -C $CTL --lld iscsi --op new --mode target --tid 1 -T $IQN_T &&
	tgtadm -C $CTL --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 --bstype rbd -b rbd/bench \
		--bsopts "conf=$W/client.conf" &&
	tgtadm -C $CTL --lld iscsi --op bind --mode target --tid 1 -I ALL ||
	{ echo "tgtd setup failed"; cat "$W/tgtd.log"; exit 1; }
URL_U=iscsi://127.0.0.1:$PU/$IQN_U/0
URL_T=iscsi://127.0.0.1:$PT/$IQN_T/1

# fill the image once so reads read data
fio --name=fill --ioengine=rbd --clientname=admin --pool=rbd --rbdname=bench --rw=write --bs=1m \
	--iodepth=16 --size=1G --output=/dev/null || { echo "fio rbd fill failed"; exit 1; }

# fio's JSON (utgt-bench writes the same) on stdin -> "iops mibs" of the first job's RW side
iops_of() { # rw
	python3 -c '
import json, sys
try:
    j = json.load(sys.stdin)["jobs"][0]; k = "write" if "write" in sys.argv[1] else "read"
    print("%d %.1f" % (j[k]["iops"], j[k]["bw_bytes"] / 1048576))
except Exception:
    print("0 0")' "$1"
}
# CPU time (user + system) of a process so far, in clock ticks
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)
OSD_PID=$(cat "$CEPHDIR/run/osd.0.pid")
# "iops mibs" and CPU ticks -> "iops mibs us_per_io..." (one per ticks figure)
per_io() { # "iops mibs" ticks...
	local r=$1
	shift
	awk -v r="$r" -v s="$SECS" -v hz="$HZ" 'BEGIN {
		split(r, a, " "); n = a[1] * s; o = a[1] " " a[2]
		for (i = 1; i < ARGC; i++) o = o " " ((n > 0) ? sprintf("%.1f", ARGV[i] * 1e6 / hz / n) : 0)
		print o }' "$@"
}
fio_run() { # rw bs qd -> "iops mibs fio_us_per_io osd_us_per_io"
	local out t o0 o1
	o0=$(ticks "$OSD_PID")
	t=$( { TIMEFORMAT='%U %S'; time timeout $((SECS + 60)) fio --name=b --ioengine=rbd \
		--clientname=admin --pool=rbd --rbdname=bench --rw="$1" --bs="$2" --iodepth="$3" \
		--runtime="$SECS" --time_based --output-format=json >"$W/fio.json" 2>/dev/null; } 2>&1)
	o1=$(ticks "$OSD_PID")
	out=$(iops_of "$1" <"$W/fio.json")
	per_io "$out" "$(awk -v hz="$HZ" '{printf "%d", ($1 + $2) * hz}' <<<"$t")" $((o1 - o0))
}
bench_run() { # pid url rw bs qd -> "iops mibs gateway_us_per_io osd_us_per_io bench_us_per_io"
	local g0 o0 g1 o1 out t
	g0=$(ticks "$1") o0=$(ticks "$OSD_PID")
	t=$( { TIMEFORMAT='%U %S'; time timeout $((SECS + 60)) "$BENCH" --name=b --filename="$2" \
		--rw="$3" --bs="$4" --iodepth="$5" --runtime="$SECS" --time_based --output-format=json \
		--progress=never >"$W/bench.json" 2>/dev/null; } 2>&1)
	g1=$(ticks "$1") o1=$(ticks "$OSD_PID")
	out=$(iops_of "$3" <"$W/bench.json")
	per_io "$out" $((g1 - g0)) $((o1 - o0)) "$(awk -v hz="$HZ" '{printf "%d", ($1 + $2) * hz}' <<<"$t")"
}
idle_ticks() { awk '/^cpu / {print $5 + $6}' /proc/stat; }
median() { sort -n | awk '{v[NR] = $0} END {print (NR % 2) ? v[(NR + 1) / 2] : v[NR / 2]}'; }
# the median of column N of FILE
med() { awk -v c="$1" '{print $c}' "$2" | median; }

echo "cluster up; image filled; ${SECS}s per run, $REPS rep(s), alternating fio-rbd / utgt / tgt"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg) IDLE0=$(idle_ticks) T0=$SECONDS
declare -a ROWS CPUS
for wl in "randread 4k" "randwrite 4k" "read 1m" "write 1m"; do
	set -- $wl
	for qd in 1 16 32; do
		: >"$W/f" && : >"$W/u" && : >"$W/t"
		for _ in $(seq "$REPS"); do
			fio_run "$1" "$2" "$qd" >>"$W/f"
			bench_run "$UPID" "$URL_U" "$1" "$2" "$qd" >>"$W/u"
			bench_run "$TPID" "$URL_T" "$1" "$2" "$qd" >>"$W/t"
		done
		f=$(awk '{print $1, $2}' "$W/f" | median)
		u=$(awk '{print $1, $2}' "$W/u" | median)
		t=$(awk '{print $1, $2}' "$W/t" | median)
		ROWS+=("$1 $2 QD$qd|$f|$u|$t")
		CPUS+=("$1 $2 QD$qd|$(med 3 "$W/f")|$(med 3 "$W/u")|$(med 3 "$W/t")|$(med 4 "$W/f")|$(med 4 "$W/u")|$(med 5 "$W/u")")
		echo "  $1 $2 QD$qd: fio-rbd $f, utgt $u, tgt $t (IOPS MiB/s); CPU us/IO fio $(med 3 "$W/f"), utgtd $(med 3 "$W/u"), tgtd $(med 3 "$W/t")"
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg) IDLE1=$(idle_ticks)
IDLE_PCT=$(awk -v i=$((IDLE1 - IDLE0)) -v t=$((SECONDS - T0)) -v hz="$HZ" -v n="$(nproc)" \
	'BEGIN {printf "%.0f", (t > 0) ? 100 * i / hz / t / n : 0}')
rados_run() { # bs -> "write_iops read_iops"
	local w r
	w=$(rados bench -p rbd "$SECS" write -b "$1" -t 16 --no-cleanup --run-name rb$1 2>/dev/null |
		awk '/^Average IOPS/ {print $3}')
	r=$(rados bench -p rbd "$SECS" rand -t 16 --run-name rb$1 2>/dev/null | awk '/^Average IOPS/ {print $3}')
	rados -p rbd cleanup --run-name rb$1 >/dev/null 2>&1
	echo "${w:-0} ${r:-0}"
}
R4=$(rados_run 4096)
R1=$(rados_run 1048576)

echo
echo "| workload | fio-rbd IOPS | MiB/s | utgt IOPS | MiB/s | tgt bs_rbd IOPS | MiB/s | utgt/fio-rbd | utgt/tgt |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in "${ROWS[@]}"; do
	IFS='|' read -r label f u t <<<"$r"
	read -r fi fm <<<"$f"
	read -r ui um <<<"$u"
	read -r ti tm <<<"$t"
	awk -v l="$label" -v fi="$fi" -v fm="$fm" -v ui="$ui" -v um="$um" -v ti="$ti" -v tm="$tm" 'BEGIN {
		rf = (fi > 0) ? sprintf("%.2fx", ui / fi) : "-"
		rt = (ti > 0) ? sprintf("%.2fx", ui / ti) : "-"
		printf "| %s | %d | %.1f | %d | %.1f | %d | %.1f | %s | %s |\n", l, fi, fm, ui, um, ti, tm, rf, rt }'
done
echo
echo "CPU time per I/O, µs (user + system; medians of the same runs):"
echo
echo "| workload | fio-rbd process | utgtd | tgtd | OSD (fio runs) | OSD (utgt runs) | utgt-bench | utgtd/fio-rbd | CPU-bound utgt/fio-rbd |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
# the last column: fio's path (fio + OSD) over utgt's (utgtd + OSD + utgt-bench), the IOPS ratio
# the two would reach if the CPU time they get were all that limited them
for r in "${CPUS[@]}"; do
	IFS='|' read -r label f u t of ou b <<<"$r"
	awk -v l="$label" -v f="$f" -v u="$u" -v t="$t" -v of="$of" -v ou="$ou" -v b="$b" 'BEGIN {
		printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |\n", l, f, u, t, of, ou, b,
			(f > 0) ? sprintf("%.2fx", u / f) : "-",
			(u + ou + b > 0) ? sprintf("%.2fx", (f + of) / (u + ou + b)) : "-" }'
done
echo
echo "load average $LOAD0 at the start, $LOAD1 at the end; the machine was idle $IDLE_PCT% of the" \
	"benchmark runs' time ($(nproc) CPUs, $((SECONDS - T0)) s)"
echo "rados bench, 16 in flight (IOPS): 4 KiB objects write $(echo "$R4" | cut -d' ' -f1), rand read $(echo "$R4" | cut -d' ' -f2); 1 MiB objects write $(echo "$R1" | cut -d' ' -f1), rand read $(echo "$R1" | cut -d' ' -f2)"
echo "utgtd peak RSS $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$UPID/status), tgtd $(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' /proc/$TPID/status)"
