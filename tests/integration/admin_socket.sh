#!/usr/bin/env bash
# utgtd's admin socket and utgtadm (docs/admin.md): sessions with exact counters for a known
# workload, device counters for utgt-bench and libiscsi tools, bad and hostile requests
# answered (or cut off) while the daemon keeps serving, a second daemon on the same socket
# refused, a stale socket file replaced, the socket removed at a clean exit.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
UTGTADM=${UTGTADM:-$(dirname "$UTGTD")/utgtadm}
BENCH=${BENCH:-$(dirname "$UTGTD")/utgt-bench}
for c in jq iscsi-inq iscsi-readcapacity16 python3; do
	command -v $c >/dev/null || { echo "$c missing"; exit 1; }
done
[ -x "$UTGTADM" ] || { echo "$UTGTADM not built"; exit 1; }
T=iqn.2026-12.org.utgt:admin
MiB=1048576

CONF="
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb 32
	}
	DEVICE rd1 {
		size_mb 8
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	TARGET $T {
		enabled 1
		LUN 0 rd0
		GROUP backup {
			INITIATOR iqn.2026-12.org.utgt:backup
			LUN 0 rd1
		}
	}
}"
start_utgtd "$CONF"
U=iscsi://127.0.0.1:$UT_PORT/$T/0
adm() { "$UTGTADM" -s "$UT_SOCK" "$@"; }
dev() { adm show devices --json | jq -r ".devices[] | select(.name == \"$1\") | $2"; }

echo "-- the socket"
[ "$(stat -c %a "$UT_SOCK" 2>/dev/null)" = 600 ] && ok "socket mode 0600" || bad "socket mode: $(stat -c %a "$UT_SOCK" 2>&1)"
grep -q "admin socket $UT_SOCK" "$UT_LOG" && ok "its path is logged" || bad "no 'admin socket' log line"
out=$(adm version --json)
[ "$(echo "$out" | jq -r '.ok, .version, .pid' | tr '\n' ' ')" = "true $("$UTGTD" -V | cut -d' ' -f2) $UT_PID " ] && ok "version: $out" || bad "version: $out"
out=$(adm show targets --json)
if [ "$(echo "$out" | jq -r ".drivers[0].name, .drivers[0].running, .drivers[0].portals[0], (.drivers[0].targets[0] | .name, .luns[0].device, .groups[0].luns[0].device)" | tr '\n' ' ')" = \
	"iscsi true 127.0.0.1:$UT_PORT $T rd0 rd1 " ]; then ok "show targets: driver, portal, target, LUN 0 -> rd0, GROUP backup LUN 0 -> rd1"; else bad "show targets: $out"; fi
adm show targets | grep -q "iscsi.*$T.*backup.*rd1" && ok "show targets table" || bad "show targets table: $(adm show targets)"
[ "$(adm show sessions --json | jq '.sessions | length')" = 0 ] && ok "no sessions yet" || bad "sessions before any login"
[ "$(dev rd0 '.size, .block_size, .sessions, .counters.commands' | tr '\n' ' ')" = "33554432 512 0 0 " ] && ok "show devices: rd0 32 MiB, 512-byte blocks, idle" || bad "show devices: $(adm show devices --json)"

echo "-- two sessions with a known workload (tests/integration/admin_sessions.py)"
mkfifo "$UT_DIR/hold"
python3 tests/integration/admin_sessions.py 127.0.0.1 "$UT_PORT" "$T" <"$UT_DIR/hold" >"$UT_DIR/expected" 2>"$UT_DIR/py.err" &
py=$!
exec 9>"$UT_DIR/hold"
# waits for conditions below are bounded at 30-60 s: milliseconds here, seconds on a loaded machine
for _ in $(seq 600); do [ -s "$UT_DIR/expected" ] && break; kill -0 $py 2>/dev/null || break; sleep 0.1; done
adm show sessions --json >"$UT_DIR/sessions.json"
rc=$?
[ $rc -eq 0 ] && [ "$(jq '.sessions | length' "$UT_DIR/sessions.json")" = 2 ] && ok "show sessions: two sessions" || bad "show sessions rc $rc: $(cat "$UT_DIR/sessions.json" "$UT_DIR/py.err")"
for who in alpha beta; do
	want=$(jq -c ".$who" "$UT_DIR/expected")
	iname=$(echo "$want" | jq -r .initiator)
	got=$(jq -c --arg i "$iname" '.sessions[] | select(.initiator == $i) |
		{initiator, isid, commands: .counters.commands, bytes_read: .counters.bytes_read,
		 bytes_written: .counters.bytes_written, errors: .counters.errors,
		 task_mgmt: .counters.task_mgmt}' "$UT_DIR/sessions.json")
	if [ -n "$want" ] && [ "$(echo "$got" | jq -S .)" = "$(echo "$want" | jq -S .)" ]; then
		ok "$who: $got"
	else
		bad "$who: want $want got $got"
	fi
done
s=$(jq -c '.sessions[] | select(.initiator | endswith("alpha"))' "$UT_DIR/sessions.json")
if echo "$s" | jq -e --arg t "$T" --arg p "127.0.0.1:$UT_PORT" '.driver == "iscsi" and .target == $t and
	.initiator_port == "iqn.2026-12.org.utgt:admin-alpha,i,0x800000110001" and
	(.connections | length) == 1 and .connections[0].local == $p and
	(.connections[0].peer | startswith("127.0.0.1:")) and (.connections[0].worker | type) == "number" and
	.params.MaxRecvDataSegmentLength_initiator == 262144 and .params.MaxBurstLength == 262144 and
	.params.FirstBurstLength == 65536 and .params.InitialR2T == false and
	.params.ImmediateData == true and .params.HeaderDigest == "None" and .params.DataDigest == "None"' >/dev/null; then
	ok "alpha: port name, connection (local, peer, worker), negotiated keys"
else
	bad "alpha details: $s"
fi
peer=$(echo "$s" | jq -r '.connections[0].peer')
w=$(echo "$s" | jq -r '.connections[0].worker')
# the log names the worker that accepted the connection, or the one placement moved it to
grep -q -E "$peer -> .*served by worker $w |$peer moved to worker $w " "$UT_LOG" && ok "worker $w is the one the log names for $peer" || bad "worker $w for $peer not in the log: $(grep "$peer" "$UT_LOG")"
ws=$(jq -r '[.sessions[].connections[0].worker] | unique | length' "$UT_DIR/sessions.json")
[ "$ws" = 1 ] && ok "alpha and beta, two sessions to one target, share one worker (placement)" || bad "alpha and beta on $ws workers: $(jq -c '[.sessions[].connections[0].worker]' "$UT_DIR/sessions.json")"
tot=$(jq -c '.totals | [.commands, .bytes_read, .bytes_written]' "$UT_DIR/sessions.json")
wtot=$(jq -c '[.alpha.commands + .beta.commands, .alpha.bytes_read + .beta.bytes_read, .alpha.bytes_written + .beta.bytes_written]' "$UT_DIR/expected")
[ "$tot" = "$wtot" ] && ok "totals: $tot" || bad "totals $tot, want $wtot"
table=$(adm show sessions)
echo "$table" | grep -q "admin-alpha .*800000110001 .*127.0.0.1:$UT_PORT <- $peer .*1.0 MiB" && ok "table: alpha's row" || bad "table: $table"
echo "$table" | grep -q "InitialR2T No, ImmediateData Yes" && ok "table: negotiated keys line" || bad "table keys: $table"
# rd0 saw exactly alpha's and beta's media I/O; READ past the end is alpha's only error there
d=$(adm show devices --json | jq -c '.devices[] | select(.name == "rd0") | [.sessions, .counters.read_commands, .counters.bytes_read, .counters.write_commands, .counters.bytes_written]')
[ "$d" = "[2,13,786432,16,1048576]" ] && ok "rd0: 2 sessions, 13 reads 768 KiB, 16 writes 1 MiB" || bad "rd0 counters: $d"
echo >&9
exec 9>&-
wait $py && ok "sessions logged out" || bad "admin_sessions.py: $(cat "$UT_DIR/py.err")"
for _ in $(seq 300); do [ "$(adm show sessions --json | jq '.sessions | length')" = 0 ] && break; sleep 0.1; done
[ "$(adm show sessions --json | jq '.sessions | length')" = 0 ] && ok "sessions gone after logout" || bad "sessions left: $(adm show sessions --json)"
[ "$(dev rd0 .sessions)" = 0 ] && ok "rd0: 0 sessions after logout" || bad "rd0 sessions: $(dev rd0 .sessions)"

echo "-- libiscsi tools and utgt-bench: device counters"
before=$(dev rd0 '[.counters.write_commands, .counters.bytes_written, .counters.read_commands, .counters.bytes_read] | @tsv')
expect "iscsi-inq" iscsi-inq "$U"
expect "iscsi-readcapacity16" iscsi-readcapacity16 "$U"
after=$(dev rd0 '[.counters.write_commands, .counters.bytes_written, .counters.read_commands, .counters.bytes_read] | @tsv')
[ "$before" = "$after" ] && ok "INQUIRY and READ CAPACITY are not medium reads" || bad "rd0 counters moved: $before -> $after"
if [ -x "$BENCH" ]; then
	read -r w0 wb0 r0 rb0 <<<"$after"
	"$BENCH" --name=w --filename="$U" --rw=write --bs=64k --iodepth=4 --size=16m \
		--initiator-name=iqn.2026-12.org.utgt:bench >"$UT_DIR/bench-w" 2>&1 || bad "utgt-bench write: $(cat "$UT_DIR/bench-w")"
	"$BENCH" --name=r --filename="$U" --rw=read --bs=64k --iodepth=4 --size=8m \
		--initiator-name=iqn.2026-12.org.utgt:bench >"$UT_DIR/bench-r" 2>&1 || bad "utgt-bench read: $(cat "$UT_DIR/bench-r")"
	read -r w1 wb1 r1 rb1 <<<"$(dev rd0 '[.counters.write_commands, .counters.bytes_written, .counters.read_commands, .counters.bytes_read] | @tsv')"
	[ $((wb1 - wb0)) = $((16 * MiB)) ] && [ $((w1 - w0)) = 256 ] && ok "utgt-bench write 16m bs 64k: rd0 +256 writes, +16 MiB written" || bad "write: +$((w1 - w0)) cmds +$((wb1 - wb0)) bytes"
	[ $((rb1 - rb0)) = $((8 * MiB)) ] && [ $((r1 - r0)) = 128 ] && ok "utgt-bench read 8m bs 64k: rd0 +128 reads, +8 MiB read" || bad "read: +$((r1 - r0)) cmds +$((rb1 - rb0)) bytes"
	# a live session seen while it runs: its counters only grow.  Both looks wait for their
	# condition instead of sleeping (60 s each at most), and the run (120 s, stopped as soon as
	# both are seen) outlasts them by far even on a loaded
	# machine, where the 3 s run this had was a race: seen late, it could end between them.
	"$BENCH" --name=t --filename="$U" --rw=randwrite --bs=4k --iodepth=4 --time_based --runtime=120 \
		--initiator-name=iqn.2026-12.org.utgt:live >"$UT_DIR/bench-t" 2>&1 &
	b=$!
	sel='.sessions[] | select(.initiator == "iqn.2026-12.org.utgt:live") | .counters.bytes_written'
	for _ in $(seq 600); do v1=$(adm show sessions --json | jq "$sel"); [ -n "$v1" ] && [ "$v1" -gt 0 ] && break; sleep 0.1; done
	for _ in $(seq 600); do v2=$(adm show sessions --json | jq "$sel"); [ -n "$v2" ] && [ -n "$v1" ] && [ "$v2" -gt "$v1" ] && break; sleep 0.1; done
	# it has shown what it was started for: stop it (utgt-bench ends a run cleanly on SIGINT)
	kill -INT $b 2>/dev/null
	[ -n "$v1" ] && [ -n "$v2" ] && [ "$v2" -gt "$v1" ] && ok "a running utgt-bench session: bytes_written $v1 -> $v2" || bad "live session: '$v1' -> '$v2'"
	wait $b || bad "utgt-bench time based: $(cat "$UT_DIR/bench-t")"
else
	bad "$BENCH not built"
fi

echo "-- bad requests: error answers, the daemon keeps serving"
adm show nonsense >/dev/null 2>"$UT_DIR/err"; rc=$?
[ $rc = 1 ] && grep -q "unknown object" "$UT_DIR/err" && ok "unknown object: exit 1, $(cat "$UT_DIR/err")" || bad "unknown object: rc $rc $(cat "$UT_DIR/err")"
out=$(adm frobnicate --json); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | jq -r .ok)" = false ] && ok "unknown command: $out" || bad "unknown command: rc $rc $out"
python3 - "$UT_SOCK" >"$UT_DIR/raw.out" 2>&1 <<'PY'
import json, socket, sys, time
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path); return s
def answer(s):
    buf = b""
    while True:
        d = s.recv(65536)
        if not d: return buf
        buf += d
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
# a line over the limit, without a newline: an error, then the connection closes
s = conn(); s.sendall(b"x" * 5000)
a = answer(s); j = json.loads(a)
check(j["ok"] is False and "longer than" in j["error"], "5000-byte line: " + a.decode().strip())
# control bytes, an empty line
for req, what in ((b"show\x01sessions\n", "control byte"), (b"\n", "empty line"), (b"show\n", "show alone")):
    s = conn(); s.sendall(req); j = json.loads(answer(s))
    check(j["ok"] is False and j["error"], what + ": " + j["error"])
# The daemon gives a client ADMIN_TIMEOUT_MS (5 s) for its line.  The bounds below tell
# "answered at once" from "after that deadline" with wide margins: answers taking a loaded
# machine's seconds must not fail, only an answer that waited for the deadline must.
# a client that never sends its newline does not block another one
t_slow = time.time(); slow = conn(); slow.sendall(b"show sess")
t0 = time.time(); s = conn(); s.sendall(b"version\n"); j = json.loads(answer(s))
check(j["ok"] and time.time() - t0 < 4, "answered in %.3f s while a slow client waits" % (time.time() - t0))
# ... and is cut off after the timeout (counted from its connect: never before 5 s)
a = answer(slow); dt = time.time() - t_slow
check(a == b"" and 4 < dt < 60, "the slow client is closed %.1f s after it connected" % dt)
# a client that goes away before reading its (long) answer
for _ in range(20):
    s = conn(); s.sendall(b"show targets\n"); s.close()
# one that sends a request and resets the connection
s = conn(); s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
s.sendall(b"show devices\n"); s.close()
# more at once than the daemon serves at a time: the others wait in the backlog, all answered
socks = [conn() for _ in range(40)]
for s in socks: s.sendall(b"version\n")
res = [json.loads(answer(s)) for s in socks]
check(all(j["ok"] for j in res), "40 clients at once: %d answered" % sum(1 for j in res if j["ok"]))
# sixteen silent clients fill every slot: a 17th is answered once they time out
silent = [conn() for _ in range(16)]
t0 = time.time(); s = conn(); s.sendall(b"version\n"); j = json.loads(answer(s)); dt = time.time() - t0
check(j["ok"] and dt < 60, "16 silent clients: the next one is answered after %.1f s" % dt)
for x in silent: x.close()
PY
while read -r l; do case $l in ok*) ok "${l#ok   }" ;; *) bad "${l#FAIL }" ;; esac; done <"$UT_DIR/raw.out"
[ "$(adm version --json | jq -r .ok)" = true ] && ok "still answering after all that" || bad "admin socket dead"
expect "iSCSI still served" iscsi-inq "$U"
kill -0 "$UT_PID" && ok "daemon alive" || bad "daemon died"

echo "-- utgtadm usage and exit codes"
"$UTGTADM" --help | grep -q "EXIT STATUS" && ok "--help: manual page" || bad "--help"
"$UTGTADM" >/dev/null 2>&1; [ $? = 2 ] && ok "no request: exit 2" || bad "no request: not 2"
"$UTGTADM" -s "$UT_DIR/nothing.sock" version 2>"$UT_DIR/err"; rc=$?
[ $rc = 2 ] && grep -q "cannot connect" "$UT_DIR/err" && ok "no daemon: exit 2, $(cat "$UT_DIR/err")" || bad "no daemon: rc $rc"

echo "-- one daemon per socket"
pick_port P2
sed "s/127.0.0.1:$UT_PORT/127.0.0.1:$P2/" "$UT_DIR/utgtd.conf" >"$UT_DIR/second.conf"
"$UTGTD" -f -c "$UT_DIR/second.conf" --admin-socket "$UT_SOCK" --state-dir "$UT_DIR/state2" \
	>"$UT_DIR/second.log" 2>&1 &
second=$!
ILIB_PIDS+=("$second")
for _ in $(seq 600); do kill -0 $second 2>/dev/null || break; sleep 0.1; done
if kill -0 $second 2>/dev/null; then
	bad "second daemon on a live socket is running"
else
	wait $second; rc=$?
	[ $rc = 1 ] && grep -q "another utgtd is running and answers on it" "$UT_DIR/second.log" && ok "second daemon refused: $(grep -o 'admin socket.*' "$UT_DIR/second.log" | head -1)" || bad "second daemon: rc $rc $(cat "$UT_DIR/second.log")"
fi
[ "$(adm version --json | jq -r .pid)" = "$UT_PID" ] && ok "the first daemon still owns the socket" || bad "socket lost"
stop_utgtd && ok "SIGTERM: exit" || bad "no clean stop"
[ -e "$UT_SOCK" ] && bad "socket left after a clean exit" || ok "socket removed at a clean exit"

echo "-- a stale socket from a dead daemon is replaced; --admin-socket none"
start_utgtd "$CONF"
kill -9 "$UT_PID"; wait "$UT_PID" 2>/dev/null
[ -S "$UT_SOCK" ] && ok "killed daemon left its socket" || bad "no stale socket to test with"
"$UTGTD" -f -c "$UT_DIR/utgtd.conf" --admin-socket "$UT_SOCK" --state-dir "$UT_STATE" \
	>"$UT_DIR/third.log" 2>&1 &
UT_PID=$!
ILIB_PIDS+=("$UT_PID")
for _ in $(seq 600); do adm version >/dev/null 2>&1 && break; sleep 0.1; done
[ "$(adm version --json | jq -r .pid)" = "$UT_PID" ] && ok "new daemon took over the stale socket" || bad "stale socket: $(cat "$UT_DIR/third.log")"
stop_utgtd || bad "third daemon did not stop"
pick_port P3
sed "s/127.0.0.1:$UT_PORT/127.0.0.1:$P3/" "$UT_DIR/utgtd.conf" >"$UT_DIR/none.conf"
"$UTGTD" -f -c "$UT_DIR/none.conf" --admin-socket none --state-dir "$UT_DIR/state" >"$UT_DIR/none.log" 2>&1 &
UT_PID=$!
ILIB_PIDS+=("$UT_PID")
for _ in $(seq 600); do grep -q "serving" "$UT_DIR/none.log" && break; sleep 0.1; done
grep -q serving "$UT_DIR/none.log" && [ ! -e "$UT_DIR/state/utgtd.sock" ] && ! grep -q "admin socket" "$UT_DIR/none.log" && ok "--admin-socket none: serving, no socket" || bad "--admin-socket none: $(cat "$UT_DIR/none.log")"
stop_utgtd || bad "none daemon did not stop"
"$UTGTD" -f -c "$UT_DIR/none.conf" --state-dir "$UT_DIR/state" >"$UT_DIR/dflt.log" 2>&1 &
UT_PID=$!
ILIB_PIDS+=("$UT_PID")
for _ in $(seq 600); do "$UTGTADM" -s "$UT_DIR/state/utgtd.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
"$UTGTADM" -s "$UT_DIR/state/utgtd.sock" version >/dev/null 2>&1 && ok "default socket: <state-dir>/utgtd.sock" || bad "default socket: $(cat "$UT_DIR/dflt.log")"
stop_utgtd || bad "default-socket daemon did not stop"

echo "admin_socket: $FAILS failure(s)"
[ $FAILS -eq 0 ]
