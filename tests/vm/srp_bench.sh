#!/bin/bash
# vm-timeout: 600
# vm-target: none
# utgt-bench's srp engine (a userspace SRP initiator over verbs) against utgtd's SRP target,
# both in the guest on rxe0: a crc32c-verified random write run (immediate data for the small
# writes, RDMA READ for the large ones, RDMA WRITE for the reads), throughput without the
# kernel initiator, and round-robin over two channels of one I_T nexus (multichannel=1) with
# both channels carrying commands (bench's per-path counts and utgtd's per-channel counts).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/bench.sh
on_fail() { srp_on_fail; }
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
BENCH=/src/$BUILD_DIR/utgt-bench
RUNTIME=$([ "$QUICK" = 1 ] && echo 5 || echo 15)

rxe_up
rm -f "$SRP_IMG"
: >"$SRP_LOG"
write_conf
utgtd_start
line=$(srp_line "$GUEST_IP:$SRP_PORT")
T="srp:$line"

step "verified random writes, 4 KiB to 256 KiB (immediate data and RDMA READ), then reads"
for bs in 4k 64k 256k; do
	r=$(bench "verify-$bs" --filename="$T,initiator_ext=10" --rw=randwrite --bs=$bs \
		--size=32M --iodepth=16 --verify=crc32c --do_verify=1)
	blocks=$(python3 -c "import json; print(json.load(open('/tmp/verify-$bs.json'))['jobs'][0]['verify']['blocks'])")
	[ "$blocks" -gt 0 ] || fail "nothing verified at bs=$bs"
	ok "bs=$bs: $blocks blocks written and verified (write $(echo "$r" | cut -d' ' -f2) MB/s)"
done

step "throughput through the userspace initiator"
r=$(bench seqread --filename="$T,initiator_ext=11" --rw=read --bs=1m --iodepth=8 \
	--size=256M --time_based --runtime=$RUNTIME)
SR=${r% *}
r=$(bench seqwrite --filename="$T,initiator_ext=11" --rw=write --bs=1m --iodepth=8 \
	--size=256M --time_based --runtime=$RUNTIME)
SW=${r#* }
r=$(bench randread --filename="$T,initiator_ext=11" --rw=randread --bs=4k --iodepth=16 \
	--size=256M --time_based --runtime=$RUNTIME)
RR=$(python3 -c "import json; print(round(json.load(open('/tmp/randread.json'))['jobs'][0]['read']['iops']))")
say "utgt-bench srp: seq read $SR MB/s, seq write $SW MB/s, 4k rand read $RR IOPS"
printf '| %-30s | %9s MB/s | %10s MB/s | %12s IOPS |\n' "utgtd <- utgt-bench srp engine" \
	"$SR" "$SW" "$RR" | tee /out/srp-bench.txt

step "round-robin over two channels of one I_T nexus"
P1="srp:${line//,/;};initiator_ext=12;multichannel=1"
c0=$(grep -c "channel released" "$SRP_LOG" || true)
bench rr --paths="$P1" --paths="$P1" --policy=rr --rw=randrw --bs=8k --iodepth=16 \
	--size=64M --time_based --runtime=$RUNTIME --verify=crc32c >/dev/null
python3 - /tmp/rr.json <<'PY' || fail "round-robin did not use both channels"
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["paths"]
n = [x["read_ios"] + x["write_ios"] for x in p]
print("per-path commands:", n)
sys.exit(0 if len(n) == 2 and min(n) * 5 >= sum(n) else 1)
PY
grep -q "0x0000000000000012505400fffe123456 .*multichannel, channel 2 of the nexus" "$SRP_LOG" ||
	fail "the second path did not join the first one's nexus"
wait_until 60 "both channels released" \
	eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge $((c0 + 2)) ]"
grep "0x0000000000000012505400fffe123456.*channel released" "$SRP_LOG" | sed 's/^/    /'
ok "two channels, one nexus, both carried commands"
utgtd_stop
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
say "PASS srp_bench"
