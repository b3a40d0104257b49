#!/bin/bash
# vm-timeout: 600
# vm-target: none
# LIO's SRP fabric over a utgtd TCMU backstore, all inside the guest: an LIO user backstore
# dev_config=utgt/file0 served by utgtd, LIO's ib_srpt on soft-RoCE (rxe0) exporting it as LUN
# 0, and the guest's own ib_srp logging in through RDMA/CM over rxe.  Then LIO's
# RECONFIG_DEVICE through utgtd's netlink listener, on that device and on devices whose
# reconfiguration the kernel waits for.  Checks:
#  * login; INQUIRY from utgtd; the nexus's protocol identifier is SRP (VPD 83's relative
#    target port designator, `utgtadm show devices` protocol/fabric); 16 MiB written with a
#    pattern and read back identical, 4 KiB writes too;
#  * attrib/dev_size grows the DEVICE (vdisk_fileio): the initiator sees CAPACITY DATA HAS
#    CHANGED and the new size; attrib/emulate_write_cache 0/1 moves the caching page's WCE;
#    attrib/dev_config to another DEVICE keeps the device on its own (data still reads back);
#  * with netlink replies switched on (TCMU_CMD_SET_FEATURES, as tcmu-runner does): enabling a
#    utgt/ram0 device waits for utgtd's ADDED_DEVICE answer; a dev_size a ramdisk cannot take
#    fails the configfs write with utgtd's status (EOPNOTSUPP) and LIO keeps the old size;
#    emulate_write_cache is accepted; enabling utgt/nosuch fails (ENODEV);
#  * logout, LIO objects removed while utgtd runs, clean stop.
# Arguments: build=DIR (run /src/DIR/utgtd; default build).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/tcmu.sh
LIO_PORT=5557
FILE_IMG=/var/tmp/tcmu-srp0.img
FILE_MB=64
NLMOD=/sys/module/target_core_user/parameters
on_fail() {
	echo "--- utgtd log (tail)"
	tail -40 "$LOG" 2>/dev/null
	echo "--- dmesg (tail)"
	dmesg | grep -iE 'tcmu|srp|rxe|target|sd ' | tail -30
}
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

# nl_features 0|1: TCMU_CMD_SET_FEATURES with SUPP_KERN_CMD_REPLY (what tcmu-runner sends at
# start): devices enabled afterwards wait for a handler's reply to each netlink event.
nl_features() {
	python3 - "$1" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
s.bind((0, 0))
def attr(t, v):
    n = 4 + len(v)
    return struct.pack('=HH', n, t) + v + b'\0' * (-n % 4)
def msg(typ, flags, cmd, ver, body):
    return struct.pack('=IHHII', 20 + len(body), typ, flags, 1, 0) + struct.pack('=BBH', cmd, ver, 0) + body
s.sendto(msg(0x10, 1, 3, 1, attr(2, b'TCM-USER\0')), (0, 0))  # CTRL_CMD_GETFAMILY
r, off, fam = s.recv(65536), 20, None
while off + 4 <= len(r):
    n, t = struct.unpack_from('=HH', r, off)
    if n < 4:
        break
    if t & 0x3fff == 1:  # CTRL_ATTR_FAMILY_ID
        fam = struct.unpack_from('=H', r, off + 4)[0]
    off += (n + 3) & ~3
if fam is None:
    sys.exit("no TCM-USER family")
s.sendto(msg(fam, 1 | 4, 7, 2, attr(9, bytes([int(sys.argv[1])]))), (0, 0))  # SET_FEATURES, ACK
err = struct.unpack_from('=i', s.recv(65536), 16)[0]
sys.exit(0 if err == 0 else "SET_FEATURES: error %d" % err)
PY
}

# cfs_write VALUE FILE: write a configfs attribute whose store may wait for utgtd's netlink
# reply (uninterruptibly); bounded: a reply that never comes is failed through the module's
# reset_netlink and reported.  The write's exit status is returned (its stderr in /tmp/cfsw).
cfs_write() {
	local pid _
	(echo "$1" >"$2") 2>/tmp/cfsw &
	pid=$!
	for _ in $(seq 1 100); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		echo 1 >$NLMOD/block_netlink
		echo 1 >$NLMOD/reset_netlink
		echo 0 >$NLMOD/block_netlink
		fail "writing $1 to $2: no netlink reply from utgtd within 20 s"
	fi
	wait $pid
}

# wce DEV: the caching page's WCE bit (MODE SENSE(6), DBD, page 08, raw).
wce() {
	local b
	b=$(sg_modes -6 -d -r -p 8 "$1" 2>/dev/null | od -An -tu1 -j6 -N1 | tr -d ' ')
	[ -n "$b" ] || fail "MODE SENSE caching page of $1"
	echo $(((b >> 2) & 1))
}

step "soft-RoCE, ib_srp, LIO's ib_srpt (RDMA/CM port $LIO_PORT), utgtd"
[ -x "$UTGTD" ] || fail "no $UTGTD (build it first)"
rxe_up
tcmu_modules
modprobe ib_srpt srp_max_req_size=8260 rdma_cm_port=$LIO_PORT
GUID=${RXE_GID#fe80:0000:0000:0000:}
mkdir -p "$DIR"
rm -f "$FILE_IMG"
cat >"$CONF" <<CONF
HANDLER vdisk_fileio {
	DEVICE file0 {
		filename $FILE_IMG
		size_mb $FILE_MB
		t10_vend_id UTGT
		prod_id TCMUSRP
	}
}

HANDLER ramdisk {
	DEVICE ram0 {
		size_mb 32
	}
	DEVICE ram1 {
		size_mb 16
	}
}

TARGET_DRIVER tcmu {
	enabled 1
}
CONF
: >"$LOG"
utgtd_start
grep -q "listening to LIO's TCM-USER netlink events" "$LOG" || fail "utgtd does not listen to netlink"
user_backstore tcmus utgt/file0 "$FILE_MB" nl_reply_supported=-1 hw_max_sectors=1024
wait_until 60 "utgtd serves tcmus" grep -q "'tcmus' served by DEVICE file0" "$LOG"

lio_srpt_lun0 $LIO_PORT user_0/tcmus
TPG=$LIO_TPG
ok "LIO ib_srpt $GUID, LUN 0 = user backstore tcmus"

step "ib_srp logs in over rxe loopback"
srp_add "id_ext=${GUID//:/},ioc_guid=${GUID//:/},dest=$GUEST_IP:$LIO_PORT" 0000000000000002
host=$(srp_hosts | tail -1)
[ -n "$host" ] || fail "no ib_srp SCSI host"
dev=$(srp_disk "$host")
ok "logged in: $host -> $dev"
expect_eq "vendor" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Vendor identification: *//p' | tr -d ' ')" UTGT
expect_eq "product" "$(sg_inq "$dev" 2>/dev/null | sed -n 's/^ *Product identification: *//p' | tr -d ' ')" TCMUSRP
expect_eq "size" "$(blockdev --getsize64 "$dev")" $((FILE_MB << 20))

step "the nexus carries SRP, LIO's fabric"
wait_until 10 "utgtd sees the srpt LUN" grep -q "tcmus): LUNs of fabric(s) 'srpt': protocol identifier srp" "$LOG"
expect_eq "show devices: protocol" "$(tcmu_counter tcmus protocol)" srp
expect_eq "show devices: fabric" "$(tcmu_counter tcmus fabric)" srpt
expect_eq "show devices: uio_name" "$(tcmu_counter tcmus uio_name)" "uio$(tcmu_counter tcmus uio)"
sg_vpd -p di "$dev" >/tmp/vpd83 2>&1 || { cat /tmp/vpd83; fail "VPD 83"; }
sed 's/^/    /' /tmp/vpd83
grep -qi "SCSI RDMA\|SRP" /tmp/vpd83 || fail "VPD 83: no SRP protocol identifier"
ok "VPD 83's target port designators say SRP"

step "data through ib_srp -> LIO ib_srpt -> TCMU ring -> utgtd"
dd if=/dev/urandom of=/tmp/pat bs=1M count=16 status=none
dd if=/tmp/pat of="$dev" bs=1M oflag=direct status=none
dd if=/tmp/pat of="$dev" bs=4k count=1024 seek=8192 oflag=direct status=none # at 32 MiB
dd if="$dev" of=/tmp/back bs=1M count=16 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "1 MiB-write data differs on read back"
dd if="$dev" of=/tmp/back2 bs=4k count=1024 skip=8192 iflag=direct status=none
cmp <(head -c 4M /tmp/pat) /tmp/back2 || fail "4 KiB-write data differs on read back"
cmp -n $((16 << 20)) /tmp/pat "$FILE_IMG" || fail "the backing file does not hold the pattern"
ok "20 MiB written and read back identical (and in utgtd's backing file)"
expect_eq "tcmus refused completions" "$(tcmu_counter tcmus refused_completions)" 0

step "RECONFIG_DEVICE: attrib/dev_size grows the DEVICE"
echo $((96 << 20)) >"$CORE/tcmus/attrib/dev_size" || fail "dev_size write refused"
wait_until 10 "utgtd resizes file0" grep -q "tcmus): dev_size: DEVICE resized from 67108864 to 100663296 bytes" "$LOG"
out=$(sg_turs -v "$dev" 2>&1) || true
echo "$out" | sed 's/^/    /'
grep -qi "capacity data has changed" <<<"$out" || dmesg | grep -qi "capacity data has changed" ||
	fail "the initiator was not told CAPACITY DATA HAS CHANGED"
echo 1 >/sys/block/"${dev#/dev/}"/device/rescan
wait_until 10 "sd to take the new size" eval "[ \$(blockdev --getsize64 $dev) = $((96 << 20)) ]"
expect_eq "backing file" "$(stat -c %s "$FILE_IMG")" $((96 << 20))
ok "96 MiB seen by the initiator after 2A/09"

step "RECONFIG_DEVICE: attrib/emulate_write_cache moves WCE"
expect_eq "WCE before" "$(wce "$dev")" 1
echo 0 >"$CORE/tcmus/attrib/emulate_write_cache" || fail "emulate_write_cache write refused"
wait_until 10 "utgtd takes WCE 0" grep -q "tcmus): emulate_write_cache 0: WCE changed" "$LOG"
sg_turs "$dev" >/dev/null 2>&1 || true # MODE PARAMETERS CHANGED
expect_eq "WCE after emulate_write_cache 0" "$(wce "$dev")" 0
echo 1 >"$CORE/tcmus/attrib/emulate_write_cache"
wait_until 10 "utgtd takes WCE 1" grep -q "tcmus): emulate_write_cache 1: WCE changed" "$LOG"
sg_turs "$dev" >/dev/null 2>&1 || true
expect_eq "WCE after emulate_write_cache 1" "$(wce "$dev")" 1
ok "caching page follows emulate_write_cache"

step "RECONFIG_DEVICE: attrib/dev_config"
echo -n utgt/file0 >"$CORE/tcmus/attrib/dev_config" || fail "the same dev_config refused"
wait_until 10 "utgtd accepts the same dev_config" grep -q "tcmus): dev_config utgt/file0: unchanged" "$LOG"
echo -n utgt/ram1 >"$CORE/tcmus/attrib/dev_config" || fail "dev_config write refused by LIO"
wait_until 10 "utgtd refuses another DEVICE" grep -q "tcmus): dev_config utgt/ram1 refused" "$LOG"
wait_until 10 "utgtd keeps the renamed device" grep -q "tcmus): LIO now says dev_config utgt/ram1; still served as utgt/file0 by DEVICE file0" "$LOG"
dd if="$dev" of=/tmp/back bs=1M count=16 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "data differs after the dev_config rename"
ok "a running LIO device keeps its DEVICE (nl_reply_supported=-1: LIO took the new string anyway)"

step "netlink replies on (SET_FEATURES, as tcmu-runner): the kernel waits for utgtd's status"
nl_features 1 || fail "SET_FEATURES"
mkdir -p "$CORE/tcmur"
echo "dev_config=utgt/ram0" >"$CORE/tcmur/control"
echo "dev_size=$((32 << 20))" >"$CORE/tcmur/control"
cfs_write 1 "$CORE/tcmur/enable" || fail "enable of utgt/ram0 refused: $(cat /tmp/cfsw)"
expect_eq "tcmur nl_reply_supported" "$(cat "$CORE/tcmur/attrib/nl_reply_supported")" 1
grep -q "tcmur): replied 0 to netlink command 1" "$LOG" || fail "no ADDED_DEVICE reply in the log"
if cfs_write $((64 << 20)) "$CORE/tcmur/attrib/dev_size"; then
	fail "a ramdisk's dev_size change was accepted"
fi
say "refused as expected: $(cat /tmp/cfsw)"
grep -q "tcmur): replied -95 to netlink command 3" "$LOG" || fail "no -EOPNOTSUPP reply in the log"
expect_eq "LIO's dev_size after the refusal" "$(cat "$CORE/tcmur/attrib/dev_size")" $((32 << 20))
cfs_write 0 "$CORE/tcmur/attrib/emulate_write_cache" || fail "emulate_write_cache refused: $(cat /tmp/cfsw)"
expect_eq "LIO's emulate_write_cache" "$(cat "$CORE/tcmur/attrib/emulate_write_cache")" 0
mkdir -p "$CORE/tcmun"
echo "dev_config=utgt/nosuch" >"$CORE/tcmun/control"
echo "dev_size=$((16 << 20))" >"$CORE/tcmun/control"
if cfs_write 1 "$CORE/tcmun/enable"; then
	fail "enable of utgt/nosuch succeeded"
fi
say "enable of utgt/nosuch refused: $(cat /tmp/cfsw)"
nl_features 0 || fail "SET_FEATURES 0"
rmdir "$CORE/tcmun"
wait_until 30 "LIO to release tcmur" rmdir "$CORE/tcmur"
ok "utgtd's netlink status decides when the kernel waits for it"

step "logout, LIO objects removed while utgtd runs, stop"
rport=$(srp_rport "$host")
[ -n "$rport" ] || fail "no srp_remote_ports entry"
echo 1 >"$rport/delete"
echo 0 >$TPG/enable
for ini in "$TPG"/acls/*; do
	[ -d "$ini" ] || continue
	rm -f "$ini"/lun_0/lun_0
	rmdir "$ini"/lun_0 "$ini"
done
rm $TPG/lun/lun_0/tcmus
rmdir $TPG/lun/lun_0 $TPG $CFS/srpt/"$GUID"
wait_until 30 "LIO to release tcmus" rmdir "$CORE/tcmus"
wait_until 60 "utgtd closes the devices" eval "[ \$(grep -c 'uio[0-9]*: closed' $LOG) -ge 2 ]"
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -qE "AddressSanitizer|runtime error" "$LOG" && fail "sanitizer report in utgtd's log"
say "PASS tcmu_srp"
