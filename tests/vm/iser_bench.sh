#!/bin/bash
# vm-timeout: 900
# vm-target: none
# utgt-bench's iser:// URLs (libiscsi 1.19's iSER transport, a userspace iSER initiator) against
# an iSER target inside the guest (tests/vm/lib/iser.sh; target=utgtd by default, lio|tgtd for
# the references), portals on two extra addresses of eth0: crc32c-verified writes at 4 KiB,
# 64 KiB and 256 KiB (libiscsi's per-command limit), a queue deeper than the iSER engine's
# window of 32, a 512 KiB block size refused up front with a message, round-robin over two
# iser:// URLs (--paths, --rr-iops=1) with both paths carrying commands, CHAP refused up front
# (libiscsi cannot do it over iSER), an address with no iSER listener refused quickly, and the
# throughput without the kernel initiator.  No path is cut here: libiscsi 1.19's iSER transport
# does not survive one (docs/utgt-bench.md: a late response after its own cancel dereferences
# a NULL command and utgt-bench dies in memcpy; or its connect waits for ever on a semaphore).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
. /src/tests/vm/lib/bench.sh
on_fail() { iser_on_fail; }
trap iser_cleanup EXIT
[ "$ISER_TCP" = 0 ] || fail "iser_bench tests iser:// URLs: transport=tcp makes no sense here"
RUNTIME=$([ "$QUICK" = 1 ] && echo 5 || echo 15)
# An iSER login under TCG can take longer than the default 5 s (tgtd: ~10 s).
BENCH_ARGS=--connect-timeout=30s
IP1=10.0.2.16 IP2=10.0.2.17
P1=$IP1:$ISER_PORT P2=$IP2:$ISER_PORT
U1=iser://$P1/$IQN_PLAIN/$LU0_LUN
U2=iser://$P2/$IQN_PLAIN/$LU0_LUN
: >"$ISER_LOG"

step "soft-RoCE, $ISER_KIND serving $P1 and $P2"
rxe_link_up
iser_files
iser_addr_add "$IP1"
iser_addr_add "$IP2"
iser_start "$ISER_KIND" "$P1" "$P2"

step "verified random writes at 4 KiB, 64 KiB, 256 KiB through $U1"
for bs in 4k 64k 256k; do
	r=$(bench "verify-$bs" --filename="$U1" --rw=randwrite --bs=$bs --size=32M --iodepth=16 \
		--verify=crc32c --do_verify=1)
	blocks=$(bench_json "verify-$bs" "j['verify']['blocks']")
	[ "$blocks" -gt 0 ] || fail "nothing verified at bs=$bs"
	ok "bs=$bs: $blocks blocks written and verified (write $(echo "$r" | cut -d' ' -f2) MB/s)"
done
bench deep --filename="$U1" --rw=randwrite --bs=4k --size=16M --iodepth=96 --verify=crc32c \
	--do_verify=1 >/dev/null
ok "iodepth 96 (commands beyond the engine's window of 32 wait in it): $(bench_json deep \
	"j['verify']['blocks']") blocks verified"

step "512 KiB commands are refused before anything connects"
if "$BENCH" $BENCH_ARGS --name=big --filename="$U1" --rw=write --bs=512k --size=16M >/tmp/big.out 2>&1; then
	fail "bs=512k over iser:// ran: libiscsi 1.19 cannot move it"
fi
grep -q "256 KiB" /tmp/big.out || { cat /tmp/big.out; fail "bs=512k refused without saying why"; }
ok "bs=512k refused: $(grep -m1 -o 'bs=524288 is too large[^;]*' /tmp/big.out)"

step "round-robin over two iser:// URLs"
bench rr --paths="$U1,$U2" --policy=rr --rr-iops=1 --rw=randwrite --bs=8k --iodepth=16 \
	--size=32M --verify=crc32c --do_verify=1 >/dev/null
python3 - /tmp/rr.json <<'PY' || fail "round-robin did not use both iSER paths"
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["paths"]
n = [x["read_ios"] + x["write_ios"] for x in p]
print("per-path commands:", n, [x["url"] for x in p])
sys.exit(0 if len(n) == 2 and min(n) * 5 >= 2 * sum(n) else 1)
PY
ok "both iSER paths carried commands, verification clean"

step "CHAP through iser://user%secret@... is refused up front"
# libiscsi 1.19's iSER transport fails every CHAP login (LIO and utgtd alike: a local QP
# operation error on its login receive after the challenge); utgt-bench says so instead.
UC=iser://$CHAP_USER%$CHAP_SECRET@$P1/$IQN_CHAP/$LU1_LUN
if "$BENCH" $BENCH_ARGS --name=chap --filename="$UC" --rw=read --bs=4k --size=4M \
	>/tmp/chap.out 2>&1; then
	fail "CHAP over iser:// ran: libiscsi 1.19 cannot log in with CHAP over iSER"
fi
grep -q "CHAP is not available over iser://" /tmp/chap.out ||
	{ cat /tmp/chap.out; fail "CHAP over iser:// refused without saying why"; }
ok "CHAP over iser:// refused with the reason"

step "an address without an iSER listener"
t0=$SECONDS
if "$BENCH" $BENCH_ARGS --name=none --filename="iser://$GUEST_IP:3299/$IQN_PLAIN/0" --rw=read --bs=4k \
	--size=4M >/tmp/none.out 2>&1; then
	fail "utgt-bench ran against a port nobody listens on"
fi
grep -q "no iSER connection to $GUEST_IP:3299" /tmp/none.out ||
	{ cat /tmp/none.out; fail "no clear message for a missing listener"; }
[ $((SECONDS - t0)) -le 20 ] || fail "took $((SECONDS - t0)) s to give up"
ok "refused in $((SECONDS - t0)) s: $(grep -m1 -o 'no iSER connection[^[]*' /tmp/none.out)"

step "throughput through the userspace iSER initiator (256 KiB: libiscsi's largest)"
r=$(bench seqread --filename="$U1" --rw=read --bs=256k --iodepth=8 --size=128M --time_based \
	--runtime=$RUNTIME)
SR=${r% *}
r=$(bench seqwrite --filename="$U1" --rw=write --bs=256k --iodepth=8 --size=128M --time_based \
	--runtime=$RUNTIME)
SW=${r#* }
bench randread --filename="$U1" --rw=randread --bs=4k --iodepth=16 --size=128M --time_based \
	--runtime=$RUNTIME >/dev/null
RR=$(bench_json randread "round(j['read']['iops'])")
printf '| %-36s | %9s MB/s | %10s MB/s | %12s IOPS |\n' \
	"$ISER_KIND <- utgt-bench iser:// (256k, 4k)" "$SR" "$SW" "$RR" | tee /out/iser-bench.txt

step "teardown"
iser_stop "$ISER_KIND"
if [ "$ISER_KIND" = utgtd ]; then
	expect_eq "utgtd exit status" "$UTGTD_RC" 0
	grep -qE "AddressSanitizer|runtime error" "$ISER_LOG" && fail "sanitizer report in utgtd's log"
fi
say "PASS iser_bench ($ISER_KIND)"
