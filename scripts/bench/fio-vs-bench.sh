#!/usr/bin/env bash
# fio versus utgt-bench on the same job file and the same file (not a test: figures).
#
#   scripts/bench/fio-vs-bench.sh [SECONDS_PER_RUN] [ROUNDS] [JOBFILE]   (default 3, 5, built-in)
#
# Both run each job of the job file as it is: fio with its io_uring engine, utgt-bench with
# its block engine (io_uring; fio's ioengine=io_uring maps to it), against one file on tmpfs
# (/dev/shm), so neither a device nor a network is measured, only what each tester makes the
# kernel do per I/O and what it adds itself.  The file is written in full first, so reads hit
# data.  The built-in jobs: 4 KiB randread and randwrite and 1 MiB sequential read at queue
# depths 1, 8 and 32, and the 1 MiB read at depth 8 again with mem_align=4k: buffered jobs'
# buffers start where malloc puts them (16 bytes past a page boundary) in both testers unless
# mem_align is given, and the kernel's copy into page-aligned ones costs less per MiB
# (docs/utgt-bench.md, "utgt-bench against fio").  fio runs them with "thread", as utgt-bench
# runs every job: a forked fio job is a session of its own, which autogroup scheduling makes a
# scheduling group of its own, and on a loaded machine that alone cost fio half its IOPS.
#
# The machine may be shared: every job runs ROUNDS times per tester, fio and utgt-bench
# alternating (the order swapped every round), and the table shows medians.  "spread" is
# (max - min) / median over the rounds, per tester: how noisy the machine was.  Per job: IOPS
# and mean completion latency of both, utgt-bench / fio as a ratio, and "within" when both
# ratios are within 0.90-1.10.  Exit 1 when one is not.
set -u
cd "$(dirname "$0")/../.."
SECS=${1:-3}
ROUNDS=${2:-5}
JOBFILE=${3:-}
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
	{
		cat <<EOF
[global]
ioengine=io_uring
thread
direct=0
filename=\${FILE}
size=$SIZE
time_based
runtime=$SECS
randrepeat=0
EOF
		for qd in 1 8 32; do
			printf '\n[randread-4k-qd%s]\nrw=randread\nbs=4k\niodepth=%s\n' $qd $qd
			printf '\n[randwrite-4k-qd%s]\nrw=randwrite\nbs=4k\niodepth=%s\n' $qd $qd
			printf '\n[read-1m-qd%s]\nrw=read\nbs=1m\niodepth=%s\n' $qd $qd
		done
		printf '\n[read-1m-qd8-align]\nrw=read\nbs=1m\niodepth=8\nmem_align=4k\n'
	} >"$JOBFILE"
fi
export FILE=$F
dd if=/dev/urandom of="$F" bs=1M count=$(($(numfmt --from=iec "${SIZE^^}") >> 20)) status=none
JOBS=$(grep -o '^\[[^]]*\]' "$JOBFILE" | tr -d '[]' | grep -vx global)

# one line per run: job, IOPS (read + write), mean clat in us weighted by the I/O counts
row='.jobs[] | [.jobname,
	(.read.iops + .write.iops),
	(if (.read.total_ios + .write.total_ios) > 0 then
		(.read.clat_ns.mean * .read.total_ios + .write.clat_ns.mean * .write.total_ios)
		/ (.read.total_ios + .write.total_ios) / 1000 else 0 end)] | @tsv'
run() { # tester job
	if [ "$1" = fio ]; then
		fio --output-format=json --output="$W/out.json" --section="$2" "$JOBFILE" \
			>/dev/null 2>"$W/err" || { echo "fio failed on $2:"; cat "$W/err"; exit 1; }
	else
		"$BENCH" --output-format=json --output="$W/out.json" --section="$2" "$JOBFILE" \
			>/dev/null 2>"$W/err" ||
			{ echo "utgt-bench failed on $2:"; cat "$W/err"; exit 1; }
	fi
	jq -r "$row" "$W/out.json" | sed "s/^/$1\t/" >>"$W/runs.tsv"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$ROUNDS"); do
	for j in $JOBS; do
		if [ $((r % 2)) = 1 ]; then run fio "$j"; run bench "$j"; else run bench "$j"; run fio "$j"; fi
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "$(fio --version) vs $("$BENCH" --version 2>/dev/null |
	awk '{print $NF}'), file on tmpfs ($SIZE), $(nproc) CPUs, $SECS s per run, $ROUNDS" \
	"rounds alternating, medians; load average $load0 before, $load1 after"
awk -F'\t' -v jobs="$JOBS" '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function stat(key, col,   n, i, a, mn, mx) {
		n = cnt[key]; mn = 1e30; mx = 0
		for (i = 1; i <= n; i++) { a[i] = v[key, i, col]; if (a[i] < mn) mn = a[i]; if (a[i] > mx) mx = a[i] }
		med = median(a, n); spread = med > 0 ? (mx - mn) * 100 / med : 0
	}
	{ k = $1 SUBSEP $2; n = ++cnt[k]; v[k, n, 3] = $3; v[k, n, 4] = $4 }
	END {
		printf "| %-18s | %9s | %9s | %5s | %9s | %9s | %5s | %-13s | %-13s | %s |\n", "job",
			"fio IOPS", "bench", "ratio", "fio clat", "bench", "ratio", "spread IOPS",
			"spread clat", ""
		print "|--------------------|-----------|-----------|-------|-----------|-----------|-------|---------------|---------------|---------|"
		nj = split(jobs, J, "\n")
		for (i = 1; i <= nj; i++) {
			j = J[i]
			stat("fio" SUBSEP j, 3); fi = med; sfi = spread
			stat("bench" SUBSEP j, 3); bi = med; sbi = spread
			stat("fio" SUBSEP j, 4); fl = med; sfl = spread
			stat("bench" SUBSEP j, 4); bl = med; sbl = spread
			ri = fi > 0 ? bi / fi : 0; rl = fl > 0 ? bl / fl : 0
			ok = ri >= 0.9 && ri <= 1.1 && rl >= 0.9 && rl <= 1.1
			bad += !ok
			printf "| %-18s | %9.0f | %9.0f | %5.2f | %7.1fus | %7.1fus | %5.2f | %4.0f%% / %4.0f%% | %4.0f%% / %4.0f%% | %s |\n",
				j, fi, bi, ri, fl, bl, rl, sfi, sbi, sfl, sbl, ok ? "within " : "OUTSIDE"
		}
		print "(spread: fio / utgt-bench)"
		exit bad > 0
	}' "$W/runs.tsv"
