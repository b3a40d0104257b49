#!/bin/bash
# vm-timeout: 600
# vm-target: none
# vm-image: systemd
# utgt's Debian package under a real systemd (the guest of scripts/vm/build-image-systemd.sh,
# systemd as PID 1): dpkg -i of build/deb/utgt_*.deb enables and starts utgtd.service on the
# shipped scst.conf (serving nothing); a configuration with a fileio LU and an iSCSI portal,
# `systemctl restart`, Type=notify reaching "active" only once the portal listens, the log in
# the journal with each line's priority, utgtadm on the default socket; the guest's own
# open-iscsi logs in and writes; `systemctl reload` adds a LU live and refuses a broken file;
# SIGHUP reloads; `systemctl stop` in the middle of
# writes drains and exits 0, and after `systemctl start` the initiator's writes go on and
# read back intact.
. /src/tests/vm/lib/common.sh
TGT_HOST=127.0.0.1
IQN=iqn.2026-12.org.utgt:systemd
on_fail() {
	systemctl status utgtd --no-pager -l || true
	journalctl -u utgtd -b --no-pager | tail -40 || true
}

step "install the package"
[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"
debs=(/src/build/deb/utgt_*_amd64.deb)
[ -f "${debs[0]}" ] || fail "no /src/build/deb/utgt_*.deb: run 'make deb' on the host"
dpkg -i "${debs[0]}" || fail "dpkg -i ${debs[0]}"
ok "dpkg -i $(basename "${debs[0]}")"
expect_eq "unit enabled" "$(systemctl is-enabled utgtd)" enabled
wait_until 60 "utgtd active" systemctl is-active -q utgtd
expect_eq "Type" "$(systemctl show -p Type --value utgtd)" notify
journalctl -u utgtd -b --no-pager | grep -q "serving /etc/utgt/scst.conf: 0 device" ||
	fail "journal: no 'serving ... 0 device(s)' line"
ok "serves the shipped (empty) scst.conf, logged in the journal"

step "a LU: fileio + iSCSI portal, systemctl restart"
mkdir -p /srv/utgt
cat >/etc/utgt/scst.conf <<CONF
HANDLER vdisk_fileio {
	DEVICE disk0 {
		filename /srv/utgt/disk0.img
		size_mb 64
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:3260
	TARGET $IQN {
		enabled 1
		LUN 0 disk0
	}
}
CONF
utgtd --check -c /etc/utgt/scst.conf >/dev/null || fail "utgtd --check"
systemctl restart utgtd || fail "systemctl restart"
# Type=notify: restart returns once READY=1 arrived, which utgtd sends after its portals listen
expect_eq "active after restart" "$(systemctl is-active utgtd)" active
ss -ltn | grep -q '127.0.0.1:3260 ' || fail "nothing listens on 127.0.0.1:3260 although the unit is active"
ok "the portal listens when restart returns"
# created by the service (a missing fileio file): root's alone
expect_eq "backing file mode" "$(stat -c %a /srv/utgt/disk0.img)" 600
systemctl status utgtd --no-pager | tee /tmp/status
grep -q "Active: active (running)" /tmp/status || fail "systemctl status"
journalctl -u utgtd -b --no-pager | grep -q "listening on 127.0.0.1:3260" || fail "journal: no 'listening on'"
ok "journal has the portal line"
utgtadm show targets | grep -q "$IQN" || fail "utgtadm show targets: $(utgtadm show targets 2>&1)"
ok "utgtadm on the default socket"

step "open-iscsi login"
modprobe -a iscsi_tcp sd_mod
# long enough to ride out the utgtd restart below on a slow TCG guest
sed -i -e 's/^node.startup = .*/node.startup = manual/' \
	-e 's/^node.session.timeo.replacement_timeout = .*/node.session.timeo.replacement_timeout = 120/' \
	/etc/iscsi/iscsid.conf
systemctl start iscsid
iscsiadm -m discovery -t st -p 127.0.0.1:3260 | grep -q " $IQN\$" || fail "discovery"
iscsiadm -m node -T "$IQN" -p 127.0.0.1:3260 --login || fail "login"
dev=$(session_disk "$IQN" 3260 0)
expect_eq "size" "$(blockdev --getsize64 "$dev")" $((64 << 20))
utgtadm show sessions | grep -q "$IQN" || fail "utgtadm show sessions"
ok "session visible in utgtadm"

step "systemctl reload (utgtadm reload): a second LU live; a broken file refused"
cp /etc/utgt/scst.conf /tmp/scst.conf.1
sed -i 's|^HANDLER vdisk_fileio {|HANDLER vdisk_fileio {\n\tDEVICE disk1 {\n\t\tfilename /srv/utgt/disk1.img\n\t\tsize_mb 16\n\t}|; s|^\t\tLUN 0 disk0|\t\tLUN 0 disk0\n\t\tLUN 1 disk1|' /etc/utgt/scst.conf
systemctl reload utgtd || fail "systemctl reload"
utgtadm show devices | grep -q disk1 || fail "disk1 not served after reload: $(utgtadm show devices)"
expect_eq "same process after reload" "$(systemctl show -p NRestarts --value utgtd)" 0
ok "reload added disk1 as LUN 1 without a restart"
echo "HANDLER vdisk_fileio {" >>/etc/utgt/scst.conf # unterminated block
systemctl reload utgtd 2>/tmp/reload.err && fail "reload of a broken file succeeded"
expect_eq "active after a refused reload" "$(systemctl is-active utgtd)" active
utgtadm show devices | grep -q disk1 || fail "a refused reload changed what is served"
ok "broken file: systemctl reload failed, nothing changed"
cp /tmp/scst.conf.1 /etc/utgt/scst.conf # back to one LU: removing LUN 1 live is fine
systemctl reload utgtd || fail "systemctl reload back to one LU"

step "SIGHUP: reloads, logged at notice"
systemctl kill -s HUP utgtd
# utgtd gives its journal lines their priority: the SIGHUP lines are notices, "serving" is info
wait_until 60 "SIGHUP line in the journal at priority notice" \
	sh -c 'journalctl -u utgtd -b -p notice --no-pager | grep -q "SIGHUP"'
journalctl -u utgtd -b -p notice --no-pager | grep -q "serving /etc/utgt" &&
	fail "journalctl -p notice shows info lines: priorities not recorded"
ok "journal priorities: SIGHUP at notice, 'serving' below it"
expect_eq "still active" "$(systemctl is-active utgtd)" active

step "systemctl stop during writes drains; start again; the writes go on and read back intact"
head -c $((32 << 20)) /dev/urandom >/tmp/pattern
# Passes of the same 32 MiB, one after another, until told to stop: I/O is in flight whenever
# utgtd is stopped, however fast this guest writes.
rm -f /tmp/w.stop /tmp/w.passes
(
	until [ -e /tmp/w.stop ]; do
		dd if=/tmp/pattern of="$dev" bs=64k oflag=direct status=none || exit 1
		echo pass >>/tmp/w.passes
	done
) &
wpid=$!
passes() { cat /tmp/w.passes 2>/dev/null | wc -l; }
wait_until 120 "a first pass written" sh -c '[ -s /tmp/w.passes ]'
systemctl stop utgtd
kill -0 $wpid 2>/dev/null || fail "the writer ended while utgtd stopped"
n0=$(passes)
expect_eq "stop result" "$(systemctl show -p Result --value utgtd)" success
expect_eq "exit status" "$(systemctl show -p ExecMainStatus --value utgtd)" 0
journalctl -u utgtd -b --no-pager | sed -n '/shutting down/,$p' | sed 's/^/    /'
journalctl -u utgtd -b --no-pager | grep -q "exited cleanly" || fail "journal: no 'exited cleanly'"
ok "utgtd drained and exited 0 with writes in flight ($n0 pass(es) done)"
systemctl start utgtd
wait_until 120 "a pass completed after the restart" sh -c "[ \$(cat /tmp/w.passes | wc -l) -gt $n0 ]"
touch /tmp/w.stop
wait $wpid || fail "a write failed across the stop and start"
ok "writes resumed after the restart ($(passes) passes in all, none failed)"
cmp <(dd if="$dev" bs=1M count=32 iflag=direct status=none) /tmp/pattern || fail "read back differs"
ok "32 MiB read back intact"
iscsiadm -m node -T "$IQN" -p 127.0.0.1:3260 --logout >/dev/null
systemctl stop utgtd
say "systemd_deb: all checks passed"
