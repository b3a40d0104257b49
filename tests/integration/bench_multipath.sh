#!/usr/bin/env bash
# Multipath to one LU over two portals: with rr iops=1 both paths carry half the commands
# (per-path counters in the JSON report, 50% +- 2); queue-length uses both; paths that
# reach different LUs are refused before any I/O (VPD 83 identity).
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p1
pick_port p2
start_target 2 "$p1" "$p2"
echo "bench_multipath: $UB_TARGET on 127.0.0.1:$p1,$p2"

"$BENCH" --paths="${URL[0]},${URL[1]}" --policy=rr --rr-iops=1 --name=rr --rw=randread \
	--bs=4k --iodepth=16 --time_based --runtime=1 --output-format=json >"$TMPD/rr.json" \
	2>"$TMPD/rr.err"
rc=$?
check "rr iops=1 run: rc $rc" test $rc -eq 0
s0=$(jget "$TMPD/rr.json" '.jobs[0].paths[0].share')
s1=$(jget "$TMPD/rr.json" '.jobs[0].paths[1].share')
n0=$(jget "$TMPD/rr.json" '.jobs[0].paths[0].read_ios')
n1=$(jget "$TMPD/rr.json" '.jobs[0].paths[1].read_ios')
check "path 0 carried $n0 commands (share $s0), path 1 $n1 (share $s1): both 0.48..0.52" \
	awk -v a="$s0" -v b="$s1" 'BEGIN { exit !(a >= 0.48 && a <= 0.52 && b >= 0.48 && b <= 0.52) }'
check "paths sum to all commands" test "$((n0 + n1))" = "$(jget "$TMPD/rr.json" '.jobs[0].read.total_ios')"

"$BENCH" --paths="${URL[0]},${URL[1]}" --policy=queue-length --name=ql --rw=randwrite \
	--bs=4k --iodepth=16 --time_based --runtime=1 --output-format=json >"$TMPD/ql.json" 2>&1
s0=$(jget "$TMPD/ql.json" '.jobs[0].paths[0].share')
w0=$(jget "$TMPD/ql.json" '.jobs[0].paths[0].write_ios')
w1=$(jget "$TMPD/ql.json" '.jobs[0].paths[1].write_ios')
# queue-length follows the paths' speed, and on a loaded machine one path's utgtd worker can
# be far slower than the other's (a run here gave path 0 98.6%, against the 5..95% this
# asked): only ask that both paths carried commands; the exact choice is unit-tested.
check "queue-length uses both paths (path 0 $w0 commands, path 1 $w1; share $s0)" \
	test "${w0:-0}" -gt 0 -a "${w1:-0}" -gt 0

"$BENCH" --paths="${URL[0]},$(lun_url "$p2" 1)" --name=x --rw=read --size=1m >"$TMPD/id.out" \
	2>"$TMPD/id.err"
rc=$?
check "paths to different LUs refused (rc $rc = 3)" test $rc -eq 3
check "the error names both LUs" grep -q "reaches LU .* but path 0 .* reaches LU .*different LUs" \
	"$TMPD/id.err"
check "no I/O was done" grep -q "err=113" "$TMPD/id.out"
finish
