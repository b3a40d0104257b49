#!/usr/bin/env bash
# suite-timeout: 120
# Two daemons must not serve the same backing file nor share a state dir:
# with another port and --admin-socket none a second utgtd started and split
# persistent-reservation state with the first.  The second must exit 1 naming the first's PID,
# and the first keep serving; once the first is gone, the state dir is free again.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
start_utgtd "
HANDLER vdisk_fileio {
	DEVICE f0 {
		filename @DIR@/f0.img
		size_mb 16
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	TARGET iqn.2026-12.org.utgt:single {
		enabled 1
		LUN 0 f0
	}
}"
pick_port P2
sed "s/127.0.0.1:$UT_PORT/127.0.0.1:$P2/" "$UT_DIR/utgtd.conf" >"$UT_DIR/second.conf"
# foreground: the second one returns as soon as it gave up (bounded at 60 s)
timeout 60 "$UTGTD" -f -c "$UT_DIR/second.conf" --admin-socket none \
	--state-dir "$UT_DIR/state2" >"$UT_DIR/second.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "second daemon on the same file exits 1" || bad "second daemon: exit $rc"
grep -q "f0.img is in use by process $UT_PID" "$UT_DIR/second.log" &&
	ok "its message names the first daemon's pid $UT_PID" ||
	bad "no 'in use by process $UT_PID': $(cat "$UT_DIR/second.log")"

# the same state dir, another backing file, port and no admin socket: only the state dir
# is shared
sed "s|$UT_DIR/f0.img|$UT_DIR/other.img|; s/127.0.0.1:$UT_PORT/127.0.0.1:$P2/" "$UT_DIR/utgtd.conf" \
	>"$UT_DIR/third.conf"
timeout 60 "$UTGTD" -f -c "$UT_DIR/third.conf" --admin-socket none \
	--state-dir "$UT_STATE" >"$UT_DIR/third.log" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "second daemon on the same state dir exits 1" || bad "same state dir: exit $rc"
grep -q "state dir $UT_STATE is in use by process $UT_PID" "$UT_DIR/third.log" &&
	ok "its message names the first daemon's pid: $(grep -o 'state dir.*' "$UT_DIR/third.log")" ||
	bad "no 'state dir ... in use by process $UT_PID': $(cat "$UT_DIR/third.log")"
[ -e "$UT_DIR/other.img" ] && bad "it opened its backing file before giving up" ||
	ok "it gave up before opening its backing file"

if kill -0 "$UT_PID" 2>/dev/null; then ok "the first still runs"; else bad "the first died"; fi
timeout 60 iscsi-inq "iscsi://127.0.0.1:$UT_PORT/iqn.2026-12.org.utgt:single/0" >/dev/null 2>&1 &&
	ok "and serves its LU" || bad "the first does not answer INQUIRY"
if stop_utgtd; then ok "utgtd stopped on SIGTERM"; else bad "utgtd did not stop"; fi

# the lock goes with the daemon: the state dir serves the next one
"$UTGTD" -f -c "$UT_DIR/third.conf" --admin-socket none --state-dir "$UT_STATE" \
	>"$UT_DIR/fourth.log" 2>&1 &
UT_PID=$!
ILIB_PIDS+=("$UT_PID")
for _ in $(seq 600); do
	grep -q "serving" "$UT_DIR/fourth.log" && break
	kill -0 "$UT_PID" 2>/dev/null || break
	sleep 0.1
done
grep -q serving "$UT_DIR/fourth.log" && ok "after the first exited, a daemon on its state dir serves" ||
	bad "state dir still locked: $(cat "$UT_DIR/fourth.log")"
if stop_utgtd; then ok "that daemon stopped on SIGTERM"; else bad "it did not stop"; fi
[ $FAILS -eq 0 ]
