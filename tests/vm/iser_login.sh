#!/bin/bash
# vm-timeout: 1200
# vm-target: none
# Linux's open-iscsi over iSER (ib_iser, iface transport iser) against an iSER target inside the
# guest on soft-RoCE rxe0 (tests/vm/lib/iser.sh; target=utgtd by default, target=lio|tgtd for
# the references): SendTargets discovery over iSER, login, the session really is iSER, the LU's
# identity as configured (size, vendor, product, serial, VPD 83 designator, kernel WWID),
# mkfs.ext4 + files + fsck, fio crc32c verify at 4 KiB random and 1 MiB sequential, LUN resets
# under verified I/O, logout and login again (data and WWID unchanged), CHAP (refused without
# and with a wrong secret, accepted with the right one), and for utgtd its SIGTERM drain under
# I/O (acknowledged writes survive, clean exit, the initiator reconnects to the restarted
# daemon).  Argument "quick": smaller runs, no CHAP.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
on_fail() { iser_on_fail; }
trap iser_cleanup EXIT
PORTAL=$GUEST_IP:$ISER_PORT
: >"$ISER_LOG"

step "soft-RoCE, open-iscsi with an iser iface, $ISER_KIND serving $PORTAL"
iser_env_up
iser_start "$ISER_KIND" "$PORTAL"

step "SendTargets discovery over iSER at $PORTAL"
t0=$SECONDS
disc=$(iser_discover "$PORTAL") || { echo "$disc"; fail "discovery at $PORTAL failed"; }
echo "$disc"
grep -q "^$PORTAL,[0-9]* $IQN_PLAIN\$" <<<"$disc" || fail "discovery does not list $IQN_PLAIN at $PORTAL"
grep -q "^$PORTAL,[0-9]* $IQN_CHAP\$" <<<"$disc" || fail "discovery does not list $IQN_CHAP at $PORTAL"
ok "both targets discovered at $PORTAL over $ISER_IFACE ($((SECONDS - t0)) s)"

step "login to $IQN_PLAIN"
t0=$SECONDS
iser_login "$IQN_PLAIN" "$PORTAL" >/dev/null || fail "login to $IQN_PLAIN at $PORTAL failed"
dev=$(iser_disk "$IQN_PLAIN" "$PORTAL" "$LU0_LUN")
say "login + scan: $((SECONDS - t0)) s; LU is $dev"
iser_check_transport "$IQN_PLAIN" "$PORTAL"
ok "the session runs over iSER"

step "identity"
check_lu0_identity "$dev"
wwid=$LU_WWID

step "ext4: mkfs, files, remount, compare, fsck"
ext4_roundtrip "$dev"

step "fio crc32c verify (the filesystem is overwritten from here on)"
fio_verify_pair "$dev"

step "LUN reset (sg_reset -d) twice under verified fio"
hctl=$(basename "$(readlink -f "/sys/block/${dev#/dev/}/device")")
resets() { dmesg | grep -c "sd $hctl: Power-on or device reset occurred" || true; }
r0=$(resets)
tmf0=
[ "$ISER_KIND" = utgtd ] && tmf0=$(utgtadm_sessions | python3 -c '
import json, sys
print(sum(s["counters"]["task_mgmt"] for s in json.load(sys.stdin)["sessions"]))')
a0=$(blk_ios "$dev")
fio --name=reset --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite \
	--bs=4k --size="$([ "$QUICK" = 1 ] && echo 16M || echo 48M)" --verify=crc32c \
	--verify_backlog=256 --do_verify=1 --verify_fatal=1 --output-format=json \
	--output=/tmp/fio-reset.json >/dev/null 2>&1 &
fpid=$!
for n in 1 2; do
	wait_until 60 "fio I/O before reset $n" eval "[ \$((\$(blk_ios $dev) - a0)) -ge $((n * 300)) ]"
	sg_reset -d "$dev" || fail "sg_reset -d $dev failed (reset $n)"
	say "LUN reset $n answered, fio running"
done
frc=0
wait "$fpid" || frc=$?
python3 - /tmp/fio-reset.json <<'PY' || fail "fio across the LUN resets failed (exit $frc)"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(f"fio across the resets: err={j['error']} write {j['write']['io_kbytes']} KiB "
      f"verified {j['read']['io_kbytes']} KiB")
sys.exit(1 if j["error"] or not j["read"]["io_kbytes"] else 0)
PY
[ "$frc" = 0 ] || fail "fio exited $frc across the LUN resets"
wait_until 10 "the reset's unit attention in dmesg" eval "[ \$(resets) -gt $r0 ]"
ok "two LUN resets, fio verify clean, reset unit attention seen ($(($(resets) - r0)))"
if [ "$ISER_KIND" = utgtd ]; then
	tmf1=$(utgtadm_sessions | python3 -c '
import json, sys
print(sum(s["counters"]["task_mgmt"] for s in json.load(sys.stdin)["sessions"]))')
	[ $((tmf1 - tmf0)) -ge 2 ] || fail "utgtd counted $((tmf1 - tmf0)) task management requests, want >= 2"
	ok "utgtd counted $((tmf1 - tmf0)) task management requests"
fi

step "logout, login again"
dd if=/dev/urandom of=/tmp/pat bs=1M count=8 status=none
dd if=/tmp/pat of="$dev" bs=1M seek=64 oflag=direct status=none
iser_logout "$IQN_PLAIN" "$PORTAL" >/dev/null || fail "logout failed"
wait_until 10 "$dev gone" test ! -b "$dev"
[ "$(iser_state "$IQN_PLAIN" "$PORTAL")" = none ] || fail "a session is left after logout"
if [ "$ISER_KIND" = utgtd ]; then
	wait_until 10 "utgtd lists no session" eval \
		"[ \"\$(utgtadm_sessions | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"sessions\"]))')\" = 0 ]"
fi
ok "logged out, $dev gone"
iser_login "$IQN_PLAIN" "$PORTAL" >/dev/null || fail "second login failed"
dev=$(iser_disk "$IQN_PLAIN" "$PORTAL" "$LU0_LUN")
iser_check_transport "$IQN_PLAIN" "$PORTAL"
cmp <(dd if="$dev" bs=1M skip=64 count=8 iflag=direct status=none) /tmp/pat ||
	fail "data written before the logout differs after the new login"
expect_eq "kernel WWID after the new login" "$(cat "/sys/block/${dev#/dev/}/device/wwid")" "$wwid"
ok "logged in again: $dev, data and WWID unchanged"

if [ "$QUICK" != 1 ]; then
	step "CHAP on $IQN_CHAP"
	iser_node_new "$IQN_CHAP" "$PORTAL"
	try_login() { iser_login "$IQN_CHAP" "$PORTAL" >/tmp/login.log 2>&1; }
	# iscsiadm's exit status 24 is an authorization failure (Login Response 0201).  LIO
	# sometimes drops the connection instead (8, timed out; or 5); utgtd must answer 0201.
	refused() {
		local rc=0
		try_login || rc=$?
		[ "$rc" != 0 ] || fail "$1: logged in"
		[ "$rc" = 24 ] || [ "$ISER_KIND" != utgtd ] ||
			{ cat /tmp/login.log; fail "$1: iscsiadm exit $rc, want 24 (status 0201)"; }
		[ "$(iser_state "$IQN_CHAP" "$PORTAL")" = none ] || fail "$1: a session exists"
		ok "$1: refused ($(grep -o 'initiator reported error.*' /tmp/login.log | tail -1))"
	}
	refused "no credentials"
	iser_node_set "$IQN_CHAP" "$PORTAL" node.session.auth.authmethod CHAP
	iser_node_set "$IQN_CHAP" "$PORTAL" node.session.auth.username "$CHAP_USER"
	iser_node_set "$IQN_CHAP" "$PORTAL" node.session.auth.password "wrong-secret-123"
	refused "wrong secret"
	iser_node_set "$IQN_CHAP" "$PORTAL" node.session.auth.password "$CHAP_SECRET"
	try_login || { cat /tmp/login.log; fail "CHAP login with the right secret failed"; }
	cdev=$(iser_disk "$IQN_CHAP" "$PORTAL" "$LU1_LUN")
	iser_check_transport "$IQN_CHAP" "$PORTAL"
	expect_eq "CHAP LU size" "$(blockdev --getsize64 "$cdev")" "$LU1_BYTES"
	expect_eq "CHAP LU serial" \
		"$(sg_vpd -p sn "$cdev" | sed -n 's/^ *Unit serial number: *//p')" "$LU1_SERIAL"
	head -c $((4 * 1024 * 1024)) /dev/urandom >/tmp/blob
	dd if=/tmp/blob of="$cdev" bs=1M oflag=direct status=none
	cmp <(dd if="$cdev" bs=1M count=4 iflag=direct status=none) /tmp/blob ||
		fail "data read back through the CHAP session differs"
	ok "right secret: logged in, 4 MiB written and read back"
	iser_logout "$IQN_CHAP" "$PORTAL" >/dev/null
fi

if [ "$ISER_KIND" != utgtd ]; then
	say "skip: SIGTERM drain under I/O (a utgtd check)"
	iser_logout "$IQN_PLAIN" "$PORTAL" >/dev/null
	iser_stop "$ISER_KIND"
	expect_eq "sessions left" "$({ iscsiadm -m session 2>/dev/null || true; } | wc -l)" 0
	say "PASS iser_login ($ISER_KIND)"
	exit 0
fi

step "utgtd: SIGTERM under I/O (verified fio runs + acknowledged 1 MiB writes)"
# The initiator keeps queueing while the target is away (it comes back below).
iser_node_set "$IQN_PLAIN" "$PORTAL" node.session.timeo.replacement_timeout 120 >/dev/null
dd if=/dev/urandom of=/tmp/pat bs=1M count=64 status=none
rm -rf /tmp/drain && mkdir -p /tmp/drain
(
	n=0
	until [ -e /tmp/drain/stop ]; do
		n=$((n + 1)) rc=0
		fio --name=drain$n --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 \
			--rw=randwrite --bs=4k --size=8M --verify=crc32c --verify_backlog=256 \
			--do_verify=1 --verify_fatal=1 --output-format=json \
			--output=/tmp/drain/$n.json >/dev/null 2>&1 || rc=$?
		echo $rc >/tmp/drain/$n.rc
	done
) &
floop=$!
# One MiB at a time from /tmp/pat into [128, 192) MiB; a block is listed once acknowledged.
(
	for i in $(seq 0 63); do
		dd if=/tmp/pat of="$dev" bs=1M skip="$i" seek=$((128 + i)) count=1 oflag=direct \
			conv=notrunc status=none 2>/dev/null || break
		echo "$i" >>/tmp/drain/acked
	done
) &
wloop=$!
wait_until 120 "a verified fio run completed and 4 acknowledged writes" eval \
	'[ -e /tmp/drain/1.rc ] && [ "$(wc -l </tmp/drain/acked 2>/dev/null || echo 0)" -ge 4 ]'
done0=$(ls /tmp/drain/*.rc | wc -l)
t0=$SECONDS
utgtd_stop
say "utgtd exit status $UTGTD_RC, $((SECONDS - t0)) s after SIGTERM"
acked=$(wc -l </tmp/drain/acked)
sed -n '/shutting down/,$p' "$ISER_LOG" | sed 's/^/    /' | tail -20
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -q "exited cleanly" "$ISER_LOG" || fail "utgtd did not log 'exited cleanly'"
grep -q "still waiting for I/O" "$ISER_LOG" && fail "utgtd stopped with I/O still in flight"
grep -qE "AddressSanitizer|runtime error" "$ISER_LOG" && fail "sanitizer report in utgtd's log"
grep -qE "conn [0-9]+: .* closed: " "$ISER_LOG" || fail "utgtd logged no connection close"
ok "utgtd drained and exited cleanly; $acked MiB acknowledged before the stop"
bad=$(for f in /tmp/drain/*.rc; do
	n=$(basename "$f" .rc)
	[ "$n" -le "$done0" ] && [ "$(cat "$f")" != 0 ] && echo "$n"
done || true)
[ -z "$bad" ] || fail "fio runs that ended before the SIGTERM failed: $bad"
ok "the $done0 fio run(s) completed before the SIGTERM verified without error"

step "utgtd restarted: the initiator reconnects, acknowledged writes are there"
iser_start utgtd "$PORTAL"
wait_until 120 "session back to LOGGED_IN" eval \
	'[ "$(iser_state "$IQN_PLAIN" "$PORTAL")" = LOGGED_IN ]'
touch /tmp/drain/stop
wait "$wloop" 2>/dev/null || true
wait "$floop"
python3 - /tmp/drain/*.json <<'PY' || fail "a fio run across the stop reported a verification error"
import json, sys
for f in sys.argv[1:]:
    try:
        j = json.load(open(f))["jobs"][0]
    except Exception:
        continue  # a run cut short by the stop may leave no JSON
    # 84 = EILSEQ: crc32c verification failed; EIO while the target was away is expected
    if j["error"] == 84:
        print(f"{f}: verification failed")
        sys.exit(1)
PY
acked=$(wc -l </tmp/drain/acked)
for i in $(sed -n "1,${acked}p" /tmp/drain/acked); do
	cmp <(dd if="$dev" bs=1M skip=$((128 + i)) count=1 iflag=direct status=none) \
		<(dd if=/tmp/pat bs=1M skip="$i" count=1 status=none) ||
		fail "acknowledged write $i (MiB $((128 + i))) not on the LU after the restart"
done
ok "$acked acknowledged 1 MiB writes read back identical through the restarted utgtd"
iser_check_transport "$IQN_PLAIN" "$PORTAL"
iser_logout "$IQN_PLAIN" "$PORTAL" >/dev/null
utgtd_stop
expect_eq "utgtd exit status (second stop, idle)" "$UTGTD_RC" 0
expect_eq "sessions left" "$({ iscsiadm -m session 2>/dev/null || true; } | wc -l)" 0
say "PASS iser_login ($ISER_KIND)"
