#!/usr/bin/env bash
# utgtd's configuration front door and lifecycle:
#  - `utgtd --check` accepts every documented example in conf/ (exit 0, prints the resolved
#    configuration) and rejects broken files with FILE:LINE messages (exit 1);
#  - `--check=full` opens backing stores (a missing one is an error naming its line);
#  - `utgtd -f` starts on a free port, is reachable when the iSCSI transport is built, logs
#    reloads its unchanged file on SIGHUP (no change, still serving), and exits 0 within a
#    bounded time on SIGTERM;
#  - daemon mode returns once serving, writes and removes its pid file, refuses a second copy.
set -u
cd "$(dirname "$0")/../.."
UTGTD=${UTGTD:-build/utgtd}
tmp=$(mktemp -d /tmp/utgt-config-check.XXXXXX)
pid=""
load=""
fails=0

cleanup() {
	[ -n "$load" ] && kill -KILL "$load" 2>/dev/null
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; fails=$((fails + 1)); }

# wait_for CMD...: poll every 0.1 s until CMD succeeds, for up to 60 s.  For readiness this is
# a wait for the condition (milliseconds on a quiet machine); for "exits after SIGTERM" it is
# the bound the check asserts, 12 times the 5 s logout_wait the busy case waits out, so a
# loaded machine's delays cannot turn it red.
wait_for() {
	for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
	return 1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
. tests/integration/lib/ports.sh

[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }

echo "-- every conf/*.conf passes --check"
for f in conf/*.conf; do
	if "$UTGTD" --check -c "$f" >"$tmp/out" 2>"$tmp/err" &&
	   head -1 "$tmp/out" | grep -q "^# resolved configuration of $f" &&
	   grep -q "configuration OK" "$tmp/err"; then
		ok "$f"
	else
		bad "$f: $(cat "$tmp/err")"
	fi
done

echo "-- broken files: exit 1 and FILE:LINE: error"
expect_error() { # name line text
	local f="$tmp/$1.conf" line=$2 text=$3
	if "$UTGTD" --check -c "$f" >/dev/null 2>"$tmp/err"; then
		bad "$1: accepted"
	elif grep -qF "$f:$line: error: $text" "$tmp/err"; then
		ok "$1 ($f:$line)"
	else
		bad "$1: $(cat "$tmp/err")"
	fi
}
printf 'HANDLER ramdisk {\n\tDEVICE d0 { size_mb 1 }\n}\nTARGET_DRIVER iscsi {\n\tTARGET t {\n\t\tLUN 0 nodev\n\t}\n}\n' >"$tmp/undefined-device.conf"
expect_error undefined-device 6 "LUN 0: device 'nodev' is not defined"
printf '# SCST 1.x\n[HANDLER vdisk]\nDEVICE disk01,/vdisks/disk01.dsk\n' >"$tmp/legacy.conf"
expect_error legacy 2 "this is the old SCST 1.x configuration format"
printf 'TARGET_DRIVER iscsi {\n\tIncomingUser "joe secret\n}\n' >"$tmp/quote.conf"
expect_error quote 2 "unterminated quoted string"
printf 'HANDLER ramdisk {\n\tDEVICE d0 { size_mb 1 }\n}\nTARGET_DRIVER copy_manager {\n\tTARGET c {\n\t\tLUN 16384 d0\n\t}\n}\n' >"$tmp/bad-lun.conf"
expect_error bad-lun 6 "invalid LUN number '16384'"
printf 'HANDLER vdisk_foo {\n}\n' >"$tmp/handler.conf"
expect_error handler 1 "unknown handler 'vdisk_foo'"
printf 'HANDLER ramdisk {\r\n\tDEVICE d0 { size_mb 1 }\r\n}\r\n}\r\n' >"$tmp/crlf-brace.conf"
expect_error crlf-brace 4 "unexpected '}'"
if "$UTGTD" --check -c "$tmp/does-not-exist.conf" >/dev/null 2>"$tmp/err" ||
   ! grep -q "cannot open" "$tmp/err"; then bad "missing file"; else ok "missing file"; fi

echo "-- conf/scstadmin-written.conf: what scstadmin -write_config -nonkey writes loads"
f=conf/scstadmin-written.conf
if "$UTGTD" --check -c "$f" >"$tmp/out" 2>"$tmp/err"; then
	ok "$f: exit 0"
else
	bad "$f: exit 1: $(grep error "$tmp/err")"
fi
[ "$(grep -c ': error: ' "$tmp/err")" = 0 ] && ok "$f: no error" || bad "$f: errors"
[ "$(grep -c ': warning: ' "$tmp/err")" = 51 ] && ok "$f: 51 warnings" ||
	bad "$f: $(grep -c ': warning: ' "$tmp/err") warnings, want 51"
expect_warning() { # line text: exactly that warning at that line
	if grep -qxF "$f:$1: warning: $2" "$tmp/err"; then ok "$f:$1 warns"; else bad "$f:$1: no warning '$2'"; fi
}
expect_warning 10 "attribute 'async_lun_replace' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 51 "attribute block is SCST-kernel only; ignored"
expect_warning 54 "attribute dif_filename is SCST-kernel only; ignored"
expect_warning 57 "attribute pr_state is read-only state of SCST; ignored"
expect_warning 86 "attribute gen_tp_soft_threshold_reached_UA is SCST-kernel only; ignored"
expect_warning 128 "attribute 'comp_v_mask' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 133 "attribute 'device' is read-only in SCST ('scstadmin -write_config -nonkey' writes it); kept, not used"
expect_warning 135 "attribute 'hw_target' is read-only in SCST ('scstadmin -write_config -nonkey' writes it); kept, not used"
expect_warning 136 "attribute 'link_layer' is read-only in SCST ('scstadmin -write_config -nonkey' writes it); kept, not used"
expect_warning 138 "attribute 'port_id' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 146 "attribute 'isns_entity_name' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 169 "attribute 'per_sess_dedicated_tgt_threads' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 176 "attribute 'IFMarker' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 179 "attribute 'MaxAHSLength' only means something to SCST's kernel; kept, not used by utgt"
expect_warning 197 "attribute 'read_cmd_count' is read-only in SCST ('scstadmin -write_config -nonkey' writes it); kept, not used"
# honoured, so silent: alias, per_portal_acl, the identity attributes, lb_per_pb_exp, vcdrom's
# devices
for w in "'alias'" per_portal_acl eui64_id vend_specific_id scsi_device_name lb_per_pb_exp "vcdrom"; do
	grep -q "$w" "$tmp/err" && bad "$f: '$w' drew a message" || ok "$f: $w accepted quietly"
done
grep -q 'INITIATOR "iqn.1993-08.org.debian:01:db1#10.0.0.10"' "$tmp/out" &&
	ok "$f: per-portal initiator kept with its portal" || bad "$f: per-portal initiator lost"
# a vcdrom size that disagrees with its image is a warning naming both
head -c 4096 /dev/zero >"$tmp/cd.iso"
printf 'HANDLER vcdrom {\n\tDEVICE cd {\n\t\tfilename %s/cd.iso\n\n\t\t# Non-key attributes\n\t\tsize 8192\n\t}\n}\n' "$tmp" >"$tmp/cd.conf"
"$UTGTD" --check -c "$tmp/cd.conf" >/dev/null 2>"$tmp/err" && ok "vcdrom with a stale size loads" || bad "vcdrom stale size: $(cat "$tmp/err")"
grep -qxF "$tmp/cd.conf:6: warning: DEVICE cd: size 8192 disagrees with $tmp/cd.iso (4096 bytes); a CD-ROM is the size of its image" "$tmp/err" &&
	ok "vcdrom size warning names both" || bad "vcdrom size warning: $(cat "$tmp/err")"
printf 'HANDLER dev_disk {\n\tDEVICE 2:0:0:0\n}\n' >"$tmp/dev-disk.conf"
expect_error dev-disk 1 "handler 'dev_disk' passes commands through to a SCSI device of the host (/dev/sg*), which needs a SCSI host in the kernel"

echo "-- --check=full opens backing stores"
if [ -e /vdisk/srp0.img ]; then
	echo "  skip seed --check=full (/vdisk/srp0.img exists here)"
elif "$UTGTD" --check=full -c conf/seed-001-srp.conf >/dev/null 2>"$tmp/err"; then
	bad "seed --check=full accepted a missing /vdisk/srp0.img"
elif grep -q "^conf/seed-001-srp.conf:3: error: DEVICE dev-srp0: " "$tmp/err"; then
	ok "seed: missing backing file reported at its filename line"
else
	bad "seed --check=full: $(cat "$tmp/err")"
fi
printf 'HANDLER vdisk_fileio {\n\tDEVICE f0 {\n\t\tfilename %s/f0.img\n\t\tsize 4M\n\t}\n}\n' "$tmp" >"$tmp/fileio.conf"
if "$UTGTD" --check=full -c "$tmp/fileio.conf" >/dev/null 2>"$tmp/err"; then
	ok "fileio --check=full"
else
	bad "fileio --check=full: $(cat "$tmp/err")"
fi

echo "-- options"
"$UTGTD" --version | grep -q '^utgtd ' && ok "--version" || bad "--version"
"$UTGTD" --help | grep -q -- '--check' && ok "--help" || bad "--help"
if "$UTGTD" --check=fast -c conf/demo-ramdisk.conf >/dev/null 2>&1; then bad "--check=fast accepted"; else ok "--check=fast refused"; fi
# the SCSI core pool: --core-threads, with --workers (its old spelling) still accepted
for o in --core-threads --workers -w; do
	if "$UTGTD" $o 2 --check -c conf/demo-ramdisk.conf >/dev/null 2>&1; then ok "$o 2"; else bad "$o 2 refused"; fi
done
if out=$("$UTGTD" --workers 0 --check -c conf/demo-ramdisk.conf 2>&1); then
	bad "--workers 0 accepted"
else
	[[ $out == *"--core-threads wants 1..256"* ]] && ok "--workers 0 refused by its new name" || bad "--workers 0: $out"
fi

echo "-- foreground run: start, SIGHUP, SIGTERM"
pick_port port || { bad "no free port"; exit 1; }
sed "s/127.0.0.1:3260/127.0.0.1:$port/" conf/demo-ramdisk.conf | sed 's/size_mb 128/size_mb 16/' >"$tmp/demo.conf"
"$UTGTD" -f -c "$tmp/demo.conf" --admin-socket "$tmp/fg.sock" --state-dir "$tmp/state" >"$tmp/log" 2>&1 &
pid=$!
if wait_for grep -q "serving" "$tmp/log"; then ok "started (port $port)"; else bad "no 'serving' line: $(cat "$tmp/log")"; fi
if grep -q "driver iscsi: not served by this build" "$tmp/log"; then
	echo "  skip portal check: the iSCSI transport is not in this build"
elif wait_for port_listening "$port"; then
	ok "listening on 127.0.0.1:$port"
	if command -v iscsi-inq >/dev/null; then
		if timeout --foreground 20 iscsi-inq "iscsi://127.0.0.1:$port/iqn.2026-12.org.utgt:demo/0" >"$tmp/inq" 2>&1; then
			ok "iscsi-inq answered"
		else
			bad "iscsi-inq: $(cat "$tmp/inq")"
		fi
	fi
else
	bad "nothing listening on $port: $(cat "$tmp/log")"
fi
kill -HUP "$pid"
# The file did not change: the reload must find nothing to apply (live_admin.sh covers real diffs).
if wait_for grep -q "SIGHUP: no change" "$tmp/log" && kill -0 "$pid"; then
	ok "SIGHUP: reloaded, no change, still running"
else
	bad "SIGHUP: $(grep -i sighup "$tmp/log")"
fi
start=$(date +%s)
kill -TERM "$pid"
if wait_for sh -c "! kill -0 $pid 2>/dev/null"; then
	wait "$pid"; rc=$?
	[ "$rc" -eq 0 ] && ok "SIGTERM: exit 0 in $(( $(date +%s) - start ))s" || bad "SIGTERM: exit $rc: $(cat "$tmp/log")"
	grep -q "exited cleanly" "$tmp/log" && ok "clean shutdown logged" || bad "no clean shutdown line"
else
	bad "still running 60 s after SIGTERM"
fi
pid=""
port_free "$port" && ok "port $port released" || bad "port $port still open"

echo "-- SIGTERM with I/O in flight: the transport drains, utgtd exits 0"
if grep -q "driver iscsi: not served by this build" "$tmp/log" || ! command -v iscsi-perf >/dev/null; then
	echo "  skip: needs the iSCSI transport and iscsi-perf"
else
	pick_port port || { bad "no free port"; exit 1; }
	sed "s/127.0.0.1:3260/127.0.0.1:$port/; s/size_mb 128/size_mb 16/; s/^\tlisten/\tlogout_wait 5\n\tlisten/" \
		conf/demo-ramdisk.conf >"$tmp/busy.conf"
	"$UTGTD" -f -c "$tmp/busy.conf" --admin-socket "$tmp/busy.sock" --state-dir "$tmp/busy-state" \
		>"$tmp/busylog" 2>&1 &
	pid=$!
	wait_for port_listening "$port" || bad "busy: not listening"
	# -t: iscsi-perf stops by itself; -x 0: no reconnect after the target goes away
	iscsi-perf -m 16 -t 30 -x 0 "iscsi://127.0.0.1:$port/iqn.2026-12.org.utgt:demo/0" >"$tmp/perf" 2>&1 &
	load=$!
	if wait_for grep -q "normal session" "$tmp/busylog"; then ok "load running"; else bad "no session: $(cat "$tmp/busylog")"; fi
	sleep 1 # let commands pile up; the assertion below does not depend on this
	start=$(date +%s)
	kill -TERM "$pid"
	if wait_for sh -c "! kill -0 $pid 2>/dev/null"; then
		wait "$pid"; rc=$?
		[ "$rc" -eq 0 ] && ok "busy SIGTERM: exit 0 in $(( $(date +%s) - start ))s" || bad "busy SIGTERM: exit $rc: $(tail -5 "$tmp/busylog")"
	else
		bad "busy: still running 60 s after SIGTERM"
	fi
	pid=""
	kill -KILL "$load" 2>/dev/null; wait "$load" 2>/dev/null; load=""
fi

echo "-- daemon mode with a pid file"
if "$UTGTD" -c "$tmp/demo.conf" --pid-file "$tmp/utgtd.pid" --admin-socket "$tmp/d.sock" -s "$tmp/d-state" 2>"$tmp/dlog"; then
	pid=$(cat "$tmp/utgtd.pid" 2>/dev/null)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then ok "daemon running as $pid"; else bad "no daemon"; fi
	if "$UTGTD" -c "$tmp/demo.conf" --pid-file "$tmp/utgtd.pid" --admin-socket "$tmp/d.sock" -s "$tmp/d-state" 2>"$tmp/dlog2"; then
		bad "second daemon on the same pid file started"
	else
		grep -q "another utgtd is running" "$tmp/dlog2" && ok "second copy refused" || bad "second copy: $(cat "$tmp/dlog2")"
	fi
	kill -TERM "$pid"
	if wait_for sh -c "! kill -0 $pid 2>/dev/null"; then ok "daemon stopped"; else bad "daemon still running"; fi
	pid=""
	[ -e "$tmp/utgtd.pid" ] && bad "pid file left behind" || ok "pid file removed"
else
	bad "daemon start: $(cat "$tmp/dlog")"
fi
if "$UTGTD" -c "$tmp/undefined-device.conf" --admin-socket none -s "$tmp/u-state" 2>"$tmp/dlog3"; then
	bad "daemon started on a broken config"
else
	grep -q "undefined-device.conf:6: error:" "$tmp/dlog3" && ok "daemon: broken config exits 1 with FILE:LINE" || bad "daemon broken config: $(cat "$tmp/dlog3")"
fi

echo "config_check: $fails failure(s)"
[ "$fails" -eq 0 ]
