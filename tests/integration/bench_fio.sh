#!/usr/bin/env bash
# suite-timeout: 180
# utgt-bench as a fio citizen, judged by fio's own material (Debian's fio and fio-examples):
# --parse-only over the 48 block-relevant example job files (42 run, the 6 zoned ones are
# refused naming zonemode=zbd); the JSON has every field fio's JSON has, per job and per
# direction; fio_jsonplus_clat2csv converts and validates the json+ histogram; fio2gnuplot
# renders the bw log; the terse line has fio's 121 fields.
. "$(dirname "$0")/lib/bench_env.sh"
EX=/usr/share/doc/fio/examples
# (a system whose dpkg excludes /usr/share/doc, as Debian's container images do, has the package
# but not the files: the message says so rather than failing file by file)
ls "$EX"/*.fio >/dev/null 2>&1 || { echo "  FAIL no $EX/*.fio: fio-examples not installed" \
	"(scripts/deps.sh) or /usr/share/doc excluded by dpkg"; exit 1; }
for t in fio fio2gnuplot fio_jsonplus_clat2csv jq; do
	command -v $t >/dev/null || { echo "  FAIL $t missing (scripts/deps.sh)"; exit 1; }
done
BENCH=$PWD/$BENCH

# The 48: fio's examples minus those whose engine moves no blocks of a file or block device
# (cpuio, dev-dax, dfs, e4defrag*, exec, falloc, file*-ioengine, ftruncate, gfapi, gpudirect*,
# http*, ime, libcufile*, libhdfs, libpmem, librpma*, mtd, netio*, nfs, pmemblk, rados,
# rdmaio*) and nbd and rbd (block devices of other network protocols utgt-bench does not speak).
RUN="1mbs_clients aio-read backwards-read basic-verify butterfly cmdprio-bssplit
cmdprio-percentage cpp_null cross-stripe-verify dedupe-global disk-zone-profile enospc-pressure
exitwhat fio-rand-RW fio-rand-read fio-rand-write fio-seq-RW fio-seq-read fio-seq-write
fixed-rate-submission flow fsx iometer-file-access-server jesd219 latency-profile libiscsi null
numa poisson-rate-submission rand-zones sg_verify-fail sg_verify sg_write_same_ndob
ssd-steadystate ssd-test steadystate surface-scan tiobench-example uring-cmd-ng waitfor
xnvme-compare zipf"
REFUSED="libzbc-rand-write libzbc-seq-read uring-cmd-zoned xnvme-zoned zbd-rand-write
zbd-seq-read"
n=0
for f in $RUN; do
	# xnvme-compare.fio's [override] reads FIO_RW, FIO_IODEPTH, FIO_BS (fio needs them too)
	if FIO_RW=randread FIO_IODEPTH=16 FIO_BS=4k "$BENCH" --parse-only "$EX/$f.fio" \
		2>"$TMPD/$f.err"; then
		n=$((n + 1))
	else
		bad "--parse-only $f.fio: $(grep error "$TMPD/$f.err" | head -2)"
	fi
done
check "--parse-only: $n of 42 runnable example files pass" test "$n" = 42
for f in $REFUSED; do
	"$BENCH" --parse-only "$EX/$f.fio" 2>"$TMPD/$f.err"
	rc=$?
	check "--parse-only $f.fio refused (rc $rc) naming zonemode" \
		grep -q "$f.fio:[0-9]*: error: zonemode: zbd is not supported" "$TMPD/$f.err"
done
check "every error of a file is listed (aio-read with two bad lines)" \
	bash -c "sed 's/^iodepth=4/iodepth=x/; s/^bs=128k/bs=y/' $EX/aio-read.fio >$TMPD/bad.fio;
		! $BENCH --parse-only $TMPD/bad.fio 2>$TMPD/bad.err &&
		test \$(grep -c error: $TMPD/bad.err) = 2"

cd "$TMPD" || exit 1
"$BENCH" --name=j --ioengine=null --size=256m --rw=randrw --bs=4k --iodepth=4 --time_based \
	--runtime=2 --write_bw_log=j --write_iops_log=j --write_lat_log=j --log_avg_msec=500 \
	--output-format=json+ --output=ub.json 2>ub.err
check "utgt-bench json+ run (rc $?)" test -s ub.json
fio --name=j --ioengine=null --size=64m --rw=randrw --bs=4k --output-format=json+ \
	--output=fio.json >/dev/null 2>&1
missing() { # missing JQPATH: keys fio has there that utgt-bench lacks
	jq -n --slurpfile a fio.json --slurpfile b ub.json \
		"(\$a[0]$1 | keys) - (\$b[0]$1 | keys) | join(\",\")" -r
}
for p in "" ".jobs[0]" ".jobs[0].read" ".jobs[0].write" ".jobs[0].trim" ".jobs[0].sync" \
	".jobs[0].read.clat_ns" ".jobs[0].latency_us" ".jobs[0].iodepth_level"; do
	m=$(missing "$p")
	check "JSON ${p:-top level}: every key fio has (missing: ${m:-none})" test -z "$m"
done
check "json+ clat bins add up to the I/Os" test "$(jq '.jobs[0].read.clat_ns.bins | add' ub.json)" \
	= "$(jq '.jobs[0].read.total_ios' ub.json)"
check "fio_jsonplus_clat2csv converts utgt-bench's json+" fio_jsonplus_clat2csv ub.json ub.csv
check "  and validates the CSV against it" fio_jsonplus_clat2csv ub.json ub.csv --validate
check "fio2gnuplot renders the bandwidth log" bash -c 'fio2gnuplot -b -g >g.out 2>&1 &&
	ls j_bw.1-2Draw.png >/dev/null'
check "fio2gnuplot reads the iops log" bash -c 'fio2gnuplot -i >>g.out 2>&1 && grep -q j_iops g.out'
check "lat/clat/slat logs, one line per 500 ms window and direction" \
	test "$(wc -l <j_lat.1.log)" -ge 6
"$BENCH" --name=t --ioengine=null --size=16m --rw=randread --output-format=terse >t.out
check "terse: fio's 121 fields" test "$(tr ';' '\n' <t.out | wc -l)" = 121
finish
