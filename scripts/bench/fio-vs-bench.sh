#!/usr/bin/env bash
# fio versus utgt-bench on the same job file and the same file (not a test: figures).
#
#   scripts/bench/fio-vs-bench.sh [SECONDS_PER_JOB] [JOBFILE]     (default 5, the built-in one)
#
# Both run the job file as it is: fio with its io_uring engine, utgt-bench with its block engine
# (io_uring; fio's ioengine=io_uring maps to it), against one file on tmpfs (/dev/shm), so
# neither a device nor a network is measured, only what each tester does per I/O.  tmpfs has
# no O_DIRECT: the jobs say direct=0 (utgt-bench's buffered I/O).  Each job runs alone
# (stonewall) on a file written in full first, so reads hit data.  Per job: IOPS and mean
# completion latency of both and utgt-bench's difference in percent; "within" when both are
# within +-10 %, which says the tester measures what fio measures.  Exit 1 when one is not.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-5}
JOBFILE=${2:-}
BENCH=${BENCH:-build/utgt-bench}
SIZE=${SIZE:-256m}
W=$(mktemp -d /tmp/fio-vs-bench.XXXXXX)
F=/dev/shm/fio-vs-bench-$$.img
cleanup() {
	rm -f "$F"
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
for t in fio jq "$BENCH"; do
	command -v "$t" >/dev/null || { echo "missing $t (scripts/deps.sh; make)"; exit 1; }
done

if [ -z "$JOBFILE" ]; then
	JOBFILE=$W/jobs.fio
	cat >"$JOBFILE" <<EOF
[global]
ioengine=io_uring
direct=0
filename=\${FILE}
size=$SIZE
time_based
runtime=$SECS
randrepeat=0
stonewall

[randread-4k-qd1]
rw=randread
bs=4k
iodepth=1

[randread-4k-qd16]
rw=randread
bs=4k
iodepth=16

[randwrite-4k-qd16]
rw=randwrite
bs=4k
iodepth=16

[read-128k-qd4]
rw=read
bs=128k
iodepth=4

[randrw-8k-qd8]
rw=randrw
rwmixread=70
bs=8k
iodepth=8
EOF
fi
export FILE=$F
dd if=/dev/urandom of="$F" bs=1M count=$(($(numfmt --from=iec "${SIZE^^}") >> 20)) status=none

fio --output-format=json --output="$W/fio.json" "$JOBFILE" >/dev/null 2>"$W/fio.err" ||
	{ echo "fio failed:"; cat "$W/fio.err"; exit 1; }
"$BENCH" --output-format=json --output="$W/ub.json" "$JOBFILE" >/dev/null 2>"$W/ub.err" ||
	{ echo "utgt-bench failed:"; cat "$W/ub.err"; exit 1; }

# per job: name, IOPS (read + write), mean clat in us weighted by the I/O counts
row='.jobs[] | [.jobname,
	(.read.iops + .write.iops),
	(if (.read.total_ios + .write.total_ios) > 0 then
		(.read.clat_ns.mean * .read.total_ios + .write.clat_ns.mean * .write.total_ios)
		/ (.read.total_ios + .write.total_ios) / 1000 else 0 end)] | @tsv'
jq -r "$row" "$W/fio.json" >"$W/fio.tsv"
jq -r "$row" "$W/ub.json" >"$W/ub.tsv"
echo "fio $(fio --version) vs utgt-bench, $SECS s per job, file on tmpfs ($SIZE), $(nproc) CPUs"
join -t $'\t' "$W/fio.tsv" "$W/ub.tsv" | awk -F'\t' '
	function pct(a, b) { return a > 0 ? (b - a) * 100 / a : 0 }
	function abs(x) { return x < 0 ? -x : x }
	BEGIN { printf "%-20s %11s %11s %7s %10s %10s %7s  %s\n", "job", "fio IOPS",
		"bench IOPS", "diff", "fio clat", "bench clat", "diff", "" }
	{ di = pct($2, $4); dl = pct($3, $5); ok = abs(di) <= 10 && abs(dl) <= 10
	  bad += !ok
	  printf "%-20s %11.0f %11.0f %+6.1f%% %8.2fus %8.2fus %+6.1f%%  %s\n", $1, $2, $4, di,
		$3, $5, dl, ok ? "within" : "OUTSIDE +-10%" }
	END { exit bad > 0 }'
