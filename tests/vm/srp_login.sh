#!/bin/bash
# vm-timeout: 900
# vm-target: none
# utgtd as an SRP target inside the guest (ib_srpt driver on soft-RoCE rxe0), Linux's ib_srp as
# the initiator through RDMA/CM, logged in with the add_target line `utgtd --show-srp-login`
# prints.  Two channels per login (ib_srp ch_count=2: multichannel), immediate data on (Linux's
# default for small writes), so all three data paths run: RDMA WRITE (reads), RDMA READ (large
# writes), immediate data (writes up to 8 KiB).  Checks: identity and INQUIRY, data written and
# read back byte for byte, mkfs.ext4 + fsck, fio verify, a LUN reset, logout, and utgtd's
# shutdown.  Argument "quick": smaller fio runs.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
on_fail() { srp_on_fail; }
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
FIO_SIZE=$([ "$QUICK" = 1 ] && echo 64M || echo 192M)

step "soft-RoCE and the SRP initiator"
rxe_up ch_count=2
rm -f "$SRP_IMG"
: >"$SRP_LOG"

step "utgtd in the guest, TARGET = rxe0's port GID"
write_conf
utgtd_start
guid=$(echo "$RXE_GID" | awk -F: '{print $5 $6 $7 $8}')
line=$(srp_line "$GUEST_IP:$SRP_PORT")
expect_eq "--show-srp-login line" "$line" "id_ext=$guid,ioc_guid=$guid,dest=$GUEST_IP:$SRP_PORT"
grep -q "no RDMA device" "$SRP_LOG" && fail "utgtd says there is no RDMA device"

step "login: echo '$line,initiator_ext=1' > add_target"
t0=$SECONDS
srp_add "$line" 0000000000000001
host=$(srp_hosts | tail -1)
[ -n "$host" ] || fail "no ib_srp SCSI host after add_target"
dev=$(srp_disk "$host")
say "login + scan: $((SECONDS - t0)) s; $host -> $dev"
expect_eq "ib_srp id_ext" "$(cat /sys/class/scsi_host/"$host"/id_ext)" "0x$guid"
expect_eq "ib_srp ioc_guid" "$(cat /sys/class/scsi_host/"$host"/ioc_guid)" "0x$guid"
expect_eq "channels" "$(cat /sys/class/scsi_host/"$host"/ch_count)" 2
wait_until 60 "two channels logged in" eval "[ \$(grep -c 'login to .* accepted' $SRP_LOG) -ge 2 ]"
grep -q "immediate data yes" "$SRP_LOG" || fail "immediate data not negotiated"
grep -q "multichannel, channel 2 of the nexus" "$SRP_LOG" || fail "second channel did not join"
ok "two channels in one I_T nexus, immediate data negotiated"

step "INQUIRY, VPD and capacity"
expect_eq "vendor" "$(sg_inq -o "$dev" 2>/dev/null | sed -n 's/^ *Vendor identification: *//p' | tr -d ' ')" UTGT
expect_eq "product" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Product identification: *//p' | tr -d ' ')" SRPDISK0
expect_eq "size" "$(blockdev --getsize64 "$dev")" $((SRP_MB << 20))
sg_vpd -p di "$dev" >/tmp/vpd83 2>&1 || { cat /tmp/vpd83; fail "VPD 83"; }
grep -qi "relative target port" /tmp/vpd83 || { cat /tmp/vpd83; fail "no relative port id"; }
grep -q "SCSI RDMA\|SRP" /tmp/vpd83 || say "(VPD 83 protocol identifier not decoded by sg_vpd)"
ok "VPD 83 carries the relative target port"

step "data: 32 MiB in 1 MiB writes (RDMA READ), 4 KiB writes (immediate data), read back"
t0=$SECONDS
dd if=/dev/urandom of=/tmp/pat bs=1M count=32 status=none
dd if=/tmp/pat of="$dev" bs=1M oflag=direct status=none
dd if=/tmp/pat of="$dev" bs=4k count=2048 seek=16384 oflag=direct status=none # at 64 MiB
dd if="$dev" of=/tmp/back bs=1M count=32 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "1 MiB-write data differs on read back"
dd if="$dev" of=/tmp/back2 bs=4k count=2048 skip=16384 iflag=direct status=none
cmp <(head -c 8M /tmp/pat) /tmp/back2 || fail "4 KiB-write data differs on read back"
ok "40 MiB written and read back identical ($((SECONDS - t0)) s)"

step "mkfs.ext4 + fsck, files through the filesystem"
t0=$SECONDS
mkfs.ext4 -q -F "$dev"
fsck.ext4 -fn "$dev" >/tmp/fsck.log 2>&1 || { cat /tmp/fsck.log; fail "fsck after mkfs"; }
mkdir -p /mnt/srp
mount "$dev" /mnt/srp
cp /tmp/pat /mnt/srp/pat
# a tree of its own (the shared source tree may change while the test runs)
mkdir -p /tmp/tree
for i in $(seq 1 200); do
	head -c $((RANDOM * 7 % 200000 + 1)) /dev/urandom >/tmp/tree/f$i
done
cp -r /tmp/tree /mnt/srp/tree
sync
umount /mnt/srp
fsck.ext4 -fn "$dev" >/tmp/fsck.log 2>&1 || { cat /tmp/fsck.log; fail "fsck after writes"; }
echo 3 >/proc/sys/vm/drop_caches
mount "$dev" /mnt/srp
cmp /tmp/pat /mnt/srp/pat || fail "file differs after remount"
diff -r /tmp/tree /mnt/srp/tree || fail "tree differs after remount"
umount /mnt/srp
ok "mkfs.ext4, fsck clean twice, files identical after remount ($((SECONDS - t0)) s)"

step "fio verify (crc32c), mixed block sizes, queue depth 16"
t0=$SECONDS
fio_run srp_verify --filename="$dev" --direct=1 --ioengine=libaio --rw=randwrite \
	--bsrange=4k-256k --iodepth=16 --size="$FIO_SIZE" --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --randrepeat=0
ok "fio verify passed ($((SECONDS - t0)) s)"

step "LUN reset (SRP_TSK_MGMT) while idle, then I/O again"
sg_reset -d "$dev" || fail "sg_reset -d failed"
wait_until 60 "TMF answered" grep -q "task management function 0x08 done: code 0" "$SRP_LOG"
dd if="$dev" of=/dev/null bs=1M count=4 iflag=direct status=none || fail "I/O after reset"
ok "LUN reset answered FUNCTION COMPLETE, I/O continues"

step "logout: delete the remote port"
rport=$(srp_rport "$host")
[ -n "$rport" ] || fail "no srp_remote_ports entry"
echo 1 >"$rport/delete"
wait_until 60 "both channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"
grep 'channel released' "$SRP_LOG" | sed 's/^/    /'
ok "target released both channels"

step "second login after logout"
srp_add "$line" 0000000000000002
host=$(srp_hosts | tail -1)
dev=$(srp_disk "$host")
dd if="$dev" of=/dev/null bs=1M count=8 iflag=direct status=none || fail "read after re-login"
ok "logged in again, reads work"
utgtd_stop
say "utgtd exit status $UTGTD_RC"
[ "$UTGTD_RC" = 0 ] || [ "$UTGTD_RC" = 143 ] || fail "utgtd exited $UTGTD_RC"
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
rport=$(srp_rport "$host")
[ -z "$rport" ] || echo 1 >"$rport/delete"

# utgtd's fileio backstore starts threads before the daemon blocks SIGTERM, so SIGTERM may
# kill it outright; with vdisk_nullio the daemon's own shutdown runs: target logout on every
# channel, drain, disconnect, stop.
step "shutdown under I/O: SIGTERM with an initiator logged in and reading (vdisk_nullio)"
write_conf nullio
utgtd_start
srp_add "$line" 0000000000000003
host=$(srp_hosts | tail -1)
dev=$(srp_disk "$host")
(while :; do dd if="$dev" of=/dev/null bs=64k count=256 iflag=direct status=none 2>/dev/null ||
	sleep 0.2; done) &
reader=$!
n0=$(blk_ios "$dev")
wait_until 60 "reads in flight" eval '[ $(($(blk_ios "$dev") - n0)) -ge 100 ]'
t0=$SECONDS
utgtd_stop
kill "$reader" 2>/dev/null || true
say "utgtd exit status $UTGTD_RC after $((SECONDS - t0)) s"
tail -12 "$SRP_LOG" | sed 's/^/    /'
expect_eq "utgtd exit status" "$UTGTD_RC" 0
[ "$(grep -c 'target logout (reason 1)' "$SRP_LOG")" -ge 2 ] ||
	fail "no target logout on both channels"
grep -q "ib_srpt: stopped" "$SRP_LOG" || fail "ib_srpt did not stop cleanly"
grep -q "exited cleanly" "$SRP_LOG" || fail "utgtd did not exit cleanly"
ok "SRP_T_LOGOUT on both channels, drained, stopped, exit 0"
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
rport=$(srp_rport "$host")
[ -z "$rport" ] || echo 1 >"$rport/delete" 2>/dev/null || true
say "PASS srp_login"
