#!/usr/bin/env bash
# Two utgtd gateways serving one RBD image, ALUA following the image's exclusive lock
# (docs/rbd.md, "Several gateways").  Run by tests/rbd/run-rbdtest.sh against its cluster
# (CEPH_CONF and CEPH_ARGS in the environment); prints "ok: ..." per check passed and
# "FAIL: ..." per check failed, and exits non-zero when one failed.
#
#   1. gateways A (target port 1, group 1) and B (port 2, group 2) on one image: A, first,
#      owns the lock; REPORT TARGET PORT GROUPS from each gateway says 1 active/optimized,
#      2 active/non-optimized; INQUIRY TPGS 11b; a write to B (the non-owner) ends in
#      04/0A (transitioning), a read on B is served.
#   2. utgt-bench --policy=alua --verify=crc32c over both; A killed (SIGKILL) a quarter into
#      the writes; B fences A and takes the lock after the grace period (alua_lock_grace 4);
#      the run ends on B with 0 errors and every block verified.  The failover time (SIGKILL
#      to B's first write) is printed.
#   3. A restarted: it comes back active/non-optimized, B stays the owner for 3 grace periods
#      (no lock stolen), RTPG from each says 1 non-optimized, 2 active/optimized.
#   4. SET TARGET PORT GROUPS through A for its own group (alua_explicit 1): A fences B and
#      takes the lock (2A/06 on A's session); B, blocklisted, answers writes 04/0C,
#      reconnects with a new client and comes back active/non-optimized without taking the
#      lock back.
#   5. B's persistent reservation store reconnected with it: PR IN and OUT through B work,
#      B lists keys registered through A before and after its fence, and enforces an
#      Exclusive Access reservation A takes afterwards (its watch armed again).
#
# usage: suite_gateways.sh WORKDIR   (UTGTD, UTGTADM, BENCH: the binaries; default build/)
set -u
cd "$(dirname "$0")/../.."
WORK=${1:?usage: $0 WORKDIR}
UTGTD=${UTGTD:-build/utgtd}
UTGTADM=${UTGTADM:-build/utgtadm}
BENCH=${BENCH:-build/utgt-bench}
IQN=iqn.2026-12.org.utgt:gw
GRACE=4
IMAGE=rbd/gateways
fails=0
PIDA= PIDB=
mkdir -p "$WORK"
. tests/integration/lib/ports.sh
. tests/rbd/lib/gateways.sh
# alua_explicit: step 4 moves the lock with SET TARGET PORT GROUPS
GW_IQN=$IQN GW_IMAGE=$IMAGE GW_GRACE=$GRACE GW_DEVICE_EXTRA="alua_explicit 1"

ok() { echo "ok: $*"; }
bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# Every step waits for a condition, bounded, and names what never came.
wait_until() { # SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
stop_gw() { # PID: utgtd closes the image (releasing the lock) on SIGTERM
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	wait_until 30 eval "! kill -0 $1 2>/dev/null" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
cleanup() {
	stop_gw "$PIDA"
	stop_gw "$PIDB"
}
trap cleanup EXIT

# the rbd and ceph tools' own warnings (an admin socket name in use) are not ours to print
out=$(rbd create --size 256M "$IMAGE" 2>&1) || { bad "rbd create $IMAGE: $out"; exit 1; }
pick_port PA
pick_port PB

gw_conf a "$PA" 1 1 b 2 2 >"$WORK/a.conf"
gw_conf b "$PB" 2 2 a 1 1 >"$WORK/b.conf"

start_gw() { # NAME: sets PIDA / PIDB
	local n=$1 pid port
	mkdir -p "$WORK/$n"
	"$UTGTD" -f -c "$WORK/$n.conf" --state-dir "$WORK/$n" --admin-socket "$WORK/$n/sock" \
		>>"$WORK/$n.log" 2>&1 &
	pid=$!
	if [ "$n" = a ]; then PIDA=$pid port=$PA; else PIDB=$pid port=$PB; fi
	wait_until 60 port_listening "$port" || { bad "gateway $n did not start: $(tail -3 "$WORK/$n.log")"; exit 1; }
}
show() { gw_show "$WORK/$1/sock" "$2"; } # NAME JQ
role_is() { [ "$(show "$1" .rbd_lock.role)" = "$2" ]; }
ask() { # NAME QUESTION...: tests/rbd/rbd_alua.py to that gateway
	local port=$PA
	[ "$1" = b ] && port=$PB
	timeout 60 python3 tests/rbd/rbd_alua.py 127.0.0.1 "$port" "$IQN-$1" "${@:2}" 2>&1
}
expect() { # DESCRIPTION GOT WANTED
	if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: got '$2', expected '$3'"; fi
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# 1. A first (takes the free lock), then B
start_gw a
wait_until 10 role_is a owner || bad "A did not take the free lock (role: $(show a .rbd_lock.role))"
start_gw b
wait_until 10 role_is b peer || bad "B is not a peer (role: $(show b .rbd_lock.role))"
expect "A: show devices: role, ALUA state, owner's group, cluster health" \
	"$(show a '[.rbd_lock.role, .alua_state, .rbd_lock.owner_group] | join(" ")')" "owner active 1"
expect "B: show devices: role, ALUA state, owner's group" \
	"$(show b '[.rbd_lock.role, .alua_state, .rbd_lock.owner_group] | join(" ")')" "peer nonoptimized 1"
expect "B names A's client as the lock owner" "$(show b .rbd_lock.owner)" "$(show a .rbd_lock.client)"
wait_until 15 eval '[ "$(show a .cluster_health)" = HEALTH_OK ]'
expect "A: cluster health" "$(show a .cluster_health)" HEALTH_OK
expect "RTPG through A" "$(ask a rtpg)" "1:active 2:nonoptimized"
expect "RTPG through B" "$(ask b rtpg)" "1:active 2:nonoptimized"
expect "INQUIRY TPGS through B (implicit and explicit)" "$(ask b tpgs)" 3
expect "a write to B, not the owner" "$(ask b write 7)" "sense 2/04/0a"
expect "a write to A, the owner" "$(ask a write 7)" good

# 2. A killed under a verified run over both gateways
BLOCKS=65536 # 256 MiB of 4 KiB writes
"$BENCH" --name=gateways --paths="iscsi://127.0.0.1:$PA/$IQN-a/0,iscsi://127.0.0.1:$PB/$IQN-b/0" \
	--policy=alua --rw=randwrite --bs=4k --iodepth=16 --size=256M --verify=crc32c \
	--max-retries=600 --output-format=json >"$WORK/bench.json" 2>"$WORK/bench.err" &
BENCHPID=$!
written_a() { [ "$(show a .counters.write_commands)" -ge $((BLOCKS / 4)) ] 2>/dev/null; }
if ! wait_until 120 written_a; then
	bad "the run never reached a quarter of its writes on A ($(show a .counters.write_commands))"
fi
b_before=$(show b .counters.bytes_written)
a_client=$(show a .rbd_lock.client)
t_kill=$(now)
kill -KILL "$PIDA"
wait "$PIDA" 2>/dev/null
PIDA=
wait_until $((GRACE + 30)) role_is b owner || bad "B did not take over (role: $(show b .rbd_lock.role))"
t_owner=$(now)
b_writing() { [ "$(show b .counters.bytes_written)" -gt "$b_before" ] 2>/dev/null; }
wait_until 30 b_writing || bad "no write reached B after the takeover"
t_io=$(now)
echo "failover: SIGKILL of A -> B owns the lock in $(secs "$t_kill" "$t_owner") s, -> first write on B in $(secs "$t_kill" "$t_io") s (alua_lock_grace $GRACE)"
wait "$BENCHPID"
rc=$?
read -r verr vblocks berr < <(jq -r '.jobs[0] | "\(.verify.errors) \(.verify.blocks) \(.error)"' "$WORK/bench.json" 2>/dev/null)
if [ $rc = 0 ] && [ "${verr:-x}" = 0 ] && [ "${berr:-x}" = 0 ] && [ "${vblocks:-0}" -gt 0 ]; then
	ok "utgt-bench --policy=alua --verify=crc32c across the kill of A: finished on B, $vblocks blocks verified, 0 errors"
else
	bad "utgt-bench across the kill: exit $rc, verify errors ${verr:-?}, errors ${berr:-?}: $(tail -3 "$WORK/bench.err")"
fi
expect "RTPG through B after the takeover" "$(ask b rtpg)" "1:nonoptimized 2:active"
expect "B's takeovers" "$(show b .rbd_lock.takeovers)" 1
if ceph osd blocklist ls 2>/dev/null | grep -qF "$a_client"; then
	ok "A's client $a_client is blocklisted (fenced before B took the lock)"
else
	bad "A's client $a_client is not in the blocklist: $(ceph osd blocklist ls 2>&1 | head -3)"
fi

# 3. A restarted: back as a non-owner, and it stays one while B announces
start_gw a
wait_until 10 role_is a peer || bad "restarted A is not a peer (role: $(show a .rbd_lock.role))"
expect "RTPG through restarted A" "$(ask a rtpg)" "1:nonoptimized 2:active"
expect "restarted A: ALUA state" "$(show a .alua_state)" nonoptimized
end=$((SECONDS + 3 * GRACE))
stolen=0
while [ $SECONDS -lt $end ]; do
	role_is b owner && role_is a peer || stolen=1
	sleep 0.5
done
if [ $stolen = 0 ] && [ "$(show a .rbd_lock.takeovers)" = 0 ]; then
	ok "restarted A did not take the lock from healthy B in $((3 * GRACE)) s (3 grace periods)"
else
	bad "restarted A took the lock (A: $(show a .rbd_lock.role), B: $(show b .rbd_lock.role))"
fi
expect "a write to restarted A" "$(ask a write 9)" "sense 2/04/0a"
expect "a write to B" "$(ask b write 9)" good

# 4. SET TARGET PORT GROUPS through A: A fences B and takes over; B comes back a non-owner
expect "a registration through B before it is fenced" "$(ask b register b1)" good
expect "STPG group 1 active through A, then 2A/06 on that session" "$(ask a ua-after 1 $((GRACE + 20)))" "2a/06"
wait_until 20 role_is a owner || bad "A did not take over on STPG (role: $(show a .rbd_lock.role))"
expect "RTPG through A after STPG" "$(ask a rtpg)" "1:active 2:nonoptimized"
expect "a write to A after STPG" "$(ask a write 11)" good
if wait_until 30 eval '[ "$(show b .rbd_lock.role)" = peer ]' && [ "$(show b .rbd_lock.fenced)" = 1 ]; then
	ok "fenced B reconnected with a new client and is a peer again ($(show b .rbd_lock.client))"
else
	bad "B after being fenced: $(show b '.rbd_lock | tostring')"
fi
expect "RTPG through B after it came back" "$(ask b rtpg)" "1:active 2:nonoptimized"
# 5. its reservation store came back with it (the same reconnect as the I/O path): PR IN and
#    OUT through B work, and B enforces what A changes from now on (its watch is armed again)
expect "a registration through A after B came back" "$(ask a register a1)" good
expect "PR IN through B after it came back: READ KEYS" "$(ask b keys)" "a1 b1"
expect "an Exclusive Access reservation through A" "$(ask a reserve-ea a2)" good
expect "a READ through B from an unregistered nexus: B has A's reservation in force" \
	"$(ask b read 3)" conflict
expect "PR OUT through B after it came back: REGISTER" "$(ask b register b2)" good
expect "READ KEYS through A: B's registration is in the cluster" "$(ask a keys)" "a1 a2 b1 b2"
expect "CLEAR through B" "$(ask b clear b2)" good
expect "a READ through B once the reservation is cleared" "$(ask b read 3)" good
expect "a write to B after it came back" "$(ask b write 11)" "sense 2/04/0a"
sleep_end=$((SECONDS + 2 * GRACE))
while [ $SECONDS -lt $sleep_end ] && role_is a owner && role_is b peer; do sleep 0.5; done
if role_is a owner && role_is b peer; then
	ok "B did not take the lock back in $((2 * GRACE)) s"
else
	bad "after STPG: A $(show a .rbd_lock.role), B $(show b .rbd_lock.role)"
fi

for n in a b; do
	pid=$PIDA
	[ $n = b ] && pid=$PIDB
	kill -0 "$pid" 2>/dev/null || bad "gateway $n died: $(tail -5 "$WORK/$n.log")"
done
[ $fails = 0 ]
