#!/usr/bin/env bash
# verify=crc32c end to end: a write+read-back run passes; a block then overwritten through
# another path (a second utgt-bench session on the other portal) makes a read-verify run fail,
# naming the LBA and the path it was read through.
. "$(dirname "$0")/lib/bench_env.sh"
pick_port p1
pick_port p2
start_target 1 "$p1" "$p2"
echo "bench_verify: $UB_TARGET on 127.0.0.1:$p1,$p2"

"$BENCH" --name=fill --filename="${URL[0]}" --rw=randwrite --bs=8k --iodepth=16 --size=4m \
	--verify=crc32c --output-format=json >"$TMPD/fill.json" 2>"$TMPD/fill.err"
rc=$?
check "write + read back with verify=crc32c passes (rc $rc)" test $rc -eq 0
check "every 512-byte block checked: $(jget "$TMPD/fill.json" '.jobs[0].verify.blocks') of 8192" \
	test "$(jget "$TMPD/fill.json" '.jobs[0].verify.blocks')" = 8192
check "no verify errors" test "$(jget "$TMPD/fill.json" '.jobs[0].verify.errors')" = 0

"$BENCH" --name=reread --filename="${URL[1]}" --rw=randread --bs=4k --iodepth=8 --size=4m \
	--verify=crc32c >"$TMPD/reread.out" 2>&1
check "read-verify through the second portal passes (rc $?)" grep -q "8192 blocks checked, 0 errors" \
	"$TMPD/reread.out"

# Corrupt one 4 KiB block (LBAs 2048..2055) through the second portal, without verify headers.
"$BENCH" --name=corrupt --filename="${URL[1]}" --rw=write --bs=4k --size=4k --offset=1m \
	>"$TMPD/corrupt.out" 2>&1
check "plain overwrite of one block through path 2 (rc $?)" true

"$BENCH" --name=check --filename="${URL[0]}" --rw=read --bs=64k --iodepth=4 --size=4m \
	--verify=crc32c >"$TMPD/check.out" 2>"$TMPD/check.err"
rc=$?
check "read-verify after the overwrite fails (rc $rc = 1)" test $rc -eq 1
check "the report names LBA 2048 and path 0" \
	grep -q "mismatch at LBA 2048 (byte offset 1048576) read via path 0 (iscsi://127.0.0.1:$p1/" \
	"$TMPD/check.out"
check "the error goes to stderr too" grep -q "mismatch at LBA 2048" "$TMPD/check.err"
check "and says why (no verify header)" grep -q "no verify header" "$TMPD/check.out"
finish
