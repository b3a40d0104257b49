#!/usr/bin/env bash
# suite-timeout: 120
# Create only on first use: a fileio backing file that vanished while
# utgtd was stopped came back empty, with the same identity and the old reservations, and
# no log line.  Now the state dir remembers the file a DEVICE served: the restart refuses
# that DEVICE with a clear error, unless create_missing 1 asks for a new file.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
D=$(mktemp -d /tmp/utgt-first-use.XXXXXX)
trap 'rm -rf "$D"; ilib_cleanup' EXIT
conf() {
	printf 'HANDLER vdisk_fileio {\n\tDEVICE f0 {\n\t\tfilename %s/f0.img\n\t\tsize_mb 8\n%s\t}\n}\n' \
		"$D" "${1:-}" >"$D/utgtd.conf"
}
# run utgtd until it serves (then SIGTERM) or exits; sets RC (0 served, else its exit code)
run() {
	"$UTGTD" -f -c "$D/utgtd.conf" --admin-socket none --state-dir "$D/state" >"$D/log" 2>&1 &
	local pid=$!
	RC=
	for _ in $(seq 600); do # bounded at 60 s: a loaded machine is slow to start
		if grep -q "serving" "$D/log"; then kill "$pid"; wait "$pid"; RC=0; return; fi
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; RC=$?; return; }
		sleep 0.1
	done
	kill -9 "$pid"; RC=timeout
}
conf
run
[ "$RC" = 0 ] && [ -f "$D/f0.img" ] && ok "first use: f0.img created and served" || bad "first use: rc $RC: $(cat "$D/log")"
grep -q "created $D/f0.img" "$D/log" && ok "the creation is logged" || bad "no 'created' line"
run
[ "$RC" = 0 ] && ok "restart with the file: served" || bad "restart: rc $RC"
rm -f "$D/f0.img"
run
[ "$RC" = 1 ] && ok "file gone: utgtd refuses to start (exit 1)" || bad "file gone: rc $RC: $(tail -3 "$D/log")"
[ ! -e "$D/f0.img" ] && ok "and does not recreate it" || bad "it was recreated"
grep -q "f0.img is missing but was served before" "$D/log" && ok "with a clear message" || bad "message: $(tail -3 "$D/log")"
conf $'\t\tcreate_missing 1\n'
run
[ "$RC" = 0 ] && [ -f "$D/f0.img" ] && ok "create_missing 1: created again" || bad "create_missing: rc $RC: $(tail -3 "$D/log")"
[ $FAILS -eq 0 ]
