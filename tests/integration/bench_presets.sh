#!/usr/bin/env bash
# Presets and sweeps: --preset cdm prints CrystalDiskMark's table (8 rows), --preset
# rados-bench prints rados's per-second rows and both summaries, the seed's fio template runs
# as it is with filename/ioengine from the command line, --sweep-paths prints the scaling
# table and writes a PNG.
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p1
pick_port p2
start_target 1 "$p1" "$p2"
echo "bench_presets: $UB_TARGET on 127.0.0.1:$p1,$p2"

"$BENCH" --preset=cdm --filename="${URL[0]}" --runtime=300ms --size=16m >"$TMPD/cdm.out" 2>&1
rc=$?
check "cdm: rc $rc" test $rc -eq 0
check "cdm: 4 read + 4 write rows in CDM units" test "$(grep -cE \
	'^  (SEQ|RND) +(1MiB|4KiB) \(Q= *[0-9]+, T= 1\): +[0-9.]+ MB/s \[ *[0-9.]+ IOPS\] < *[0-9.]+ us>$' \
	"$TMPD/cdm.out")" = 8
check "cdm: the four default tests" grep -q "RND    4KiB (Q= 32, T= 1)" "$TMPD/cdm.out"
check "cdm: [Read] then [Write]" test "$(grep -c '^\[Read\]$\|^\[Write\]$' "$TMPD/cdm.out")" = 2

"$BENCH" --preset=rados-bench --filename="${URL[0]}" --runtime=2 --bs=1m --iodepth=8 \
	>"$TMPD/rados.out" 2>&1
rc=$?
check "rados-bench: rc $rc" test $rc -eq 0
check "rados-bench: the table header" \
	grep -q "^   sec Cur ops   started  finished  avg MB/s  cur MB/s  last lat   avg lat$" \
	"$TMPD/rados.out"
check "rados-bench: rows for seconds 1 and 2" test "$(grep -cE '^ +[12] +[0-9]+ +[0-9]+ +[0-9]+ ' \
	"$TMPD/rados.out")" -ge 2
check "rados-bench: write summary" grep -q "^Total writes made:      [1-9]" "$TMPD/rados.out"
check "rados-bench: seq summary" grep -q "^Total reads made:      [1-9]" "$TMPD/rados.out"
check "rados-bench: sizes" grep -q "^Write size:             1048576$" "$TMPD/rados.out"

cat >"$TMPD/rbd-bench.fio" <<'FIO'
[global]
ioengine=libaio
iodepth=100
size=1g
direct=1
runtime=60
filename=/dev/rbd2

[seq-read]
rw=read
bs=4M
stonewall

[rand-read]
rw=randread
bs=4k
stonewall

[seq-write]
rw=write
bs=4M
stonewall

[rand-write]
rw=randwrite
bs=4K
stonewall
FIO
"$BENCH" "$TMPD/rbd-bench.fio" --filename="${URL[0]}" --ioengine=iscsi --size=8m \
	--output-format=json >"$TMPD/seed.json" 2>"$TMPD/seed.err"
rc=$?
check "seed 002 template as it is: rc $rc" test $rc -eq 0
check "  4 jobs in 4 groups" test "$(jget "$TMPD/seed.json" '[.jobs[].groupid] | join(",")')" = 0,1,2,3
check "  iodepth=100 from the file" test "$(jget "$TMPD/seed.json" '.jobs[1].iodepth')" = 100
check "  each moved its 8 MiB" test "$(jget "$TMPD/seed.json" \
	'[.jobs[] | .read.io_bytes + .write.io_bytes] | unique | join(",")')" = 8388608

"$BENCH" --paths="${URL[0]},${URL[1]}" --sweep-paths=1,2 --sweep-plot="$TMPD/sweep.png" \
	--name=s --rw=randread --bs=4k --iodepth=16 --time_based --runtime=1 >"$TMPD/sweep.out" 2>&1
rc=$?
check "sweep: rc $rc" test $rc -eq 0
check "sweep: table header" grep -q "^ paths        MiB/s         IOPS   speedup  efficiency$" \
	"$TMPD/sweep.out"
check "sweep: rows for 1 and 2 paths" test "$(grep -cE '^ +[12] +[0-9.]+ +[0-9]+ +[0-9.]+x +[0-9.]+%$' \
	"$TMPD/sweep.out")" = 2
check "sweep: 1 path is the 1.00x baseline" grep -qE '^ +1 +[0-9.]+ +[0-9]+ +1\.00x +100\.0%$' \
	"$TMPD/sweep.out"
check "sweep: PNG written" sh -c "head -c 4 '$TMPD/sweep.png' | grep -q PNG"
finish
