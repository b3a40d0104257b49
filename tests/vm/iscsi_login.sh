#!/bin/bash
# vm-timeout: 600
# Linux's open-iscsi against the target on the host: discovery, login without and with CHAP,
# the LU's identity as the kernel and sg3_utils see it, a filesystem on it, fio with data
# verification, thin-provisioning discards that free space in the host's backing file, logout.
# Argument "quick": login, identity, mkfs/fsck and fio verify only (the make-test subset).
. /src/tests/vm/lib/common.sh
load_target_env
start_iscsid

step "discovery (SendTargets) at $TGT_HOST:$TGT_PORT1"
disc=$(iscsiadm -m discovery -t st -p "$TGT_HOST:$TGT_PORT1")
echo "$disc"
grep -q " $TGT_PLAIN\$" <<<"$disc" || fail "discovery does not list $TGT_PLAIN"
grep -q " $TGT_CHAP\$" <<<"$disc" || fail "discovery does not list $TGT_CHAP"
ok "both targets discovered"
# Replace the discovered records (their portal is the address the target saw) by ours.
iscsiadm -m node -o delete >/dev/null 2>&1 || true
iscsi_node_new "$TGT_PLAIN" "$TGT_PORT1"

step "login without authentication to $TGT_PLAIN"
iscsi_login "$TGT_PLAIN" "$TGT_PORT1"
dev=$(session_disk "$TGT_PLAIN" "$TGT_PORT1" "$LU0_LUN")
say "LU is $dev"
check_lu0_identity "$dev"
rc=$LU_READCAP bsz=$LU_BSZ
expect_eq "LBPME (thin LU)" "$(sed -n 's/.*lbpme=\([01]\).*/\1/p' <<<"$rc")" 1

step "ext4: mkfs, mount, write, remount, verify, fsck"
ext4_roundtrip "$dev"

step "fio verify crc32c"
fio_verify_pair "$dev"

if [ "$QUICK" != 1 ]; then
	step "thin provisioning: discards free space in the host's backing file"
	disc_max=$(cat "/sys/block/${dev#/dev/}/queue/discard_max_bytes")
	[ "$disc_max" -gt 0 ] || fail "kernel sees no discard support (discard_max_bytes=0)"
	lbp=$(sg_vpd -p lbpv "$dev")
	grep -q "Unmap command supported (LBPU): 1" <<<"$lbp" || { echo "$lbp"; fail "LBPU not 1"; }
	lbprz=$(sed -n 's/.*lbprz=\([01]\).*/\1/p' <<<"$rc")
	mib=$((1024 * 1024))
	# blkdiscard on 32 MiB at 64 MiB, then sg_unmap on 32 MiB at 128 MiB.
	dd if=/dev/urandom of="$dev" bs=1M seek=64 count=32 oflag=direct status=none
	dd if=/dev/urandom of="$dev" bs=1M seek=128 count=32 oflag=direct status=none
	sync
	a0=$(host_alloc_bytes "$LU0_FILE")
	say "host backing file: $((a0 / mib)) MiB allocated after writing 64 MiB of data"
	blkdiscard -o $((64 * mib)) -l $((32 * mib)) "$dev"
	a1=$(host_alloc_bytes "$LU0_FILE")
	say "after blkdiscard of 32 MiB: $((a1 / mib)) MiB allocated"
	[ $((a0 - a1)) -ge $((31 * mib)) ] || fail "blkdiscard freed only $(((a0 - a1) / mib)) MiB"
	ok "blkdiscard freed $(((a0 - a1) / mib)) MiB on the host"
	lba=$((128 * mib / bsz)) n=$((32 * mib / bsz))
	# One UNMAP per 4 MiB: the LU's per-command limit (VPD B0) may be below 32 MiB.
	sg_unmap --force --all="$lba,$((4 * mib / bsz)),$((lba + n - 1))" "$dev" ||
		fail "sg_unmap failed"
	a2=$(host_alloc_bytes "$LU0_FILE")
	say "after sg_unmap of 32 MiB: $((a2 / mib)) MiB allocated"
	[ $((a1 - a2)) -ge $((31 * mib)) ] || fail "sg_unmap freed only $(((a1 - a2) / mib)) MiB"
	ok "sg_unmap freed $(((a1 - a2) / mib)) MiB on the host"
	if [ "$lbprz" = 1 ]; then
		blockdev --flushbufs "$dev"
		cmp -n $((32 * mib)) <(dd if="$dev" bs=1M skip=64 count=32 iflag=direct status=none) \
			/dev/zero || fail "LBPRZ=1 but unmapped blocks do not read back as zeros"
		ok "unmapped blocks read back as zeros (LBPRZ=1)"
	fi
fi

step "logout"
iscsi_logout "$TGT_PLAIN" "$TGT_PORT1"
wait_until 60 "device gone" test ! -b "$dev"
ok "session closed, $dev gone"

if [ "$QUICK" != 1 ]; then
	step "CHAP on $TGT_CHAP"
	iscsi_node_new "$TGT_CHAP" "$TGT_PORT1"
	try_login() { iscsi_login "$TGT_CHAP" "$TGT_PORT1" >/tmp/login.log 2>&1; }
	try_login && fail "login without credentials succeeded on a CHAP target"
	ok "login without credentials refused: $(grep -o 'iscsiadm: .*' /tmp/login.log | tail -1)"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.authmethod CHAP
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.username "$CHAP_USER"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.password "wrong-secret-123"
	try_login && fail "login with a wrong CHAP secret succeeded"
	ok "wrong CHAP secret refused"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.password "$CHAP_SECRET"
	try_login || { cat /tmp/login.log; fail "one-way CHAP login failed"; }
	dev=$(session_disk "$TGT_CHAP" "$TGT_PORT1" "$LU1_LUN")
	expect_eq "CHAP LU size" "$(blockdev --getsize64 "$dev")" "$LU1_BYTES"
	expect_eq "CHAP LU serial" "$(sg_vpd -p sn "$dev" | sed -n 's/^ *Unit serial number: *//p')" \
		"$LU1_SERIAL"
	head -c $((4 * 1024 * 1024)) /dev/urandom >/tmp/blob
	dd if=/tmp/blob of="$dev" bs=1M oflag=direct status=none
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/blob ||
		fail "data read back through the CHAP session differs"
	ok "one-way CHAP: login, 4 MiB written and read back"
	iscsi_logout "$TGT_CHAP" "$TGT_PORT1"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.username_in "$MUTUAL_USER"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.password_in "wrong-mutual-99"
	try_login && fail "mutual CHAP accepted a target that answered with the wrong secret"
	ok "mutual CHAP: initiator refuses a target proving the wrong secret"
	iscsi_node_set "$TGT_CHAP" "$TGT_PORT1" node.session.auth.password_in "$MUTUAL_SECRET"
	try_login || { cat /tmp/login.log; fail "mutual CHAP login failed"; }
	dev=$(session_disk "$TGT_CHAP" "$TGT_PORT1" "$LU1_LUN")
	cmp <(dd if="$dev" bs=1M count=4 iflag=direct status=none) /tmp/blob ||
		fail "data read back through the mutual-CHAP session differs"
	ok "mutual CHAP: login, data intact"
	iscsi_logout "$TGT_CHAP" "$TGT_PORT1"
fi

n=$({ iscsiadm -m session 2>/dev/null || true; } | wc -l) # exit 21 = no session
expect_eq "sessions left" "$n" 0
say "PASS iscsi_login"
