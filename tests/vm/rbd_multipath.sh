#!/bin/bash
# vm-run: host
# vm-timeout: 600
# Two utgtd gateways on the host serve one Ceph RBD image (ALUA following the image's exclusive
# lock, docs/rbd.md "Several gateways"); in the guest, open-iscsi logs in to both and
# dm-multipath (prio alua, group_by_prio, hardware handler alua) makes one map, on which verified
# fio runs while the host SIGKILLs the gateway that owns the lock:
#   1. the guest sees the owner's path active/optimized (prio 50, the active path group) and the
#      peer's active/non-optimized (prio 10), and every write goes through the owner;
#   2. the owner is SIGKILLed in the middle of the writes: its path fails, the peer fences it
#      (blocklist), takes the lock, and its path turns active/optimized in the guest; writes
#      go on through it; SIGKILL -> first guest write on the peer is measured on both sides;
#   3. the killed gateway restarted comes back as a peer: its path is reinstated as
#      active/non-optimized (prio 10, not the active group), gets no writes, and it does not
#      take the lock from the healthy owner (watched for at least 3 grace periods);
#   4. every fio run (16 MiB of 4 KiB random writes, crc32c, verified inline and at its end)
#      exits 0 with 0 errors, the one spanning the kill included, and no I/O error reaches the
#      multipath device.
# The host side (this script) brings up its own Ceph cluster (scripts/ceph-cluster.sh, in a
# mktemp directory), runs the gateways on two free loopback ports (the guest reaches them as
# 10.0.2.2 through qemu's user-mode network) and boots the guest, which runs
# tests/vm/lib/rbd_multipath_guest.sh.  Host and guest hand each other steps through files in
# OUTDIR/ctl (the guest's /out/ctl): kill, killed, restart, restarted, done.
#
#   make vmtest T=rbd_multipath        (needs scripts/deps.sh rbd: the Ceph packages)
#   bash tests/vm/rbd_multipath.sh OUTDIR
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
cd "$SRC"
OUT=${1:-build/vm-logs/rbd_multipath}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
UTGTD=${UTGT_VM_UTGTD:-$SRC/build/utgtd}
UTGTADM=$SRC/build/utgtadm
GRACE=4 # alua_lock_grace: as in tests/rbd/suite_gateways.sh
IMAGE_MB=64
CTL=$OUT/ctl
T0=$SECONDS
say() { printf '[%4ds] host: %s\n' $((SECONDS - T0)) "$*"; }
ok() { printf '[%4ds] host: ok: %s\n' $((SECONDS - T0)) "$*"; }
fail() {
	say "FAIL: $*"
	exit 1
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

for t in ceph-mon ceph-osd rbd jq; do
	command -v $t >/dev/null || fail "$t missing: run scripts/deps.sh rbd"
done
[ -x "$UTGTD" ] && [ -x "$UTGTADM" ] || fail "build utgtd and utgtadm first (make)"

WORK=$(mktemp -d /tmp/utgt-vm-rbd.XXXXXX)
CEPHDIR=$WORK/ceph
PIDS=() # gateway name -> pid, by index: 0 = a, 1 = b
guest_pid=
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		[ -n "$p" ] && wait "$p" 2>/dev/null || true
	done
	[ -n "$guest_pid" ] && { wait "$guest_pid" 2>/dev/null || true; }
	[ -e "$CEPHDIR/.utgt-ceph-cluster" ] && scripts/ceph-cluster.sh stop "$CEPHDIR" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

rm -rf "$CTL" "$OUT"/a.log "$OUT"/b.log "$OUT/target.env"
mkdir -p "$CTL"
scripts/ceph-cluster.sh start "$CEPHDIR" >"$OUT/ceph.log" 2>&1 || {
	cat "$OUT/ceph.log"
	fail "no Ceph cluster"
}
say "$(tail -1 "$OUT/ceph.log")"
. "$CEPHDIR/env"
GW_IQN=iqn.2026-12.org.utgt:vm.rbd GW_IMAGE=rbd/shared GW_GRACE=$GRACE
. tests/rbd/lib/gateways.sh
. tests/integration/lib/ports.sh
rbd create --size "${IMAGE_MB}M" "$GW_IMAGE" 2>&1 || fail "rbd create $GW_IMAGE"
pick_port PA
pick_port PB
gw_conf a "$PA" 1 1 b 2 2 >"$WORK/a.conf"
gw_conf b "$PB" 2 2 a 1 1 >"$WORK/b.conf"

gw_idx() { [ "$1" = a ] && echo 0 || echo 1; }
gw_port() { [ "$1" = a ] && echo "$PA" || echo "$PB"; }
show() { gw_show "$WORK/$1/sock" "$2"; } # NAME JQ
role_is() { [ "$(show "$1" .rbd_lock.role)" = "$2" ]; }
# wait_until SECONDS WHAT CMD...: poll CMD every 0.1 s, bounded; fail naming WHAT
wait_until() {
	local end=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || fail "timed out waiting for: $what"
		sleep 0.1
	done
}
start_gw() { # NAME
	local n=$1
	mkdir -p "$WORK/$n"
	setsid "$UTGTD" -f -c "$WORK/$n.conf" --state-dir "$WORK/$n" --admin-socket "$WORK/$n/sock" \
		>>"$OUT/$n.log" 2>&1 </dev/null &
	PIDS[$(gw_idx "$n")]=$!
	wait_until 60 "gateway $n listening on $(gw_port "$n") (log: $OUT/$n.log)" port_listening "$(gw_port "$n")"
}
# guest_step NAME SECONDS: wait for the guest to write ctl/NAME (or for the guest to end)
guest_step() {
	local end=$((SECONDS + $2))
	until [ -e "$CTL/$1" ]; do
		kill -0 "$guest_pid" 2>/dev/null || fail "the guest ended before asking for '$1' (console: $OUT/console.log)"
		[ $SECONDS -lt $end ] || fail "the guest did not ask for '$1' within $2 s"
		sleep 0.1
	done
}

# A first: it takes the free lock; then B, a peer
start_gw a
wait_until 20 "A owns the free lock" role_is a owner
start_gw b
wait_until 20 "B a peer" role_is b peer
say "A $(show a '[.rbd_lock.role, .alua_state] | join(" ")') on 127.0.0.1:$PA," \
	"B $(show b '[.rbd_lock.role, .alua_state] | join(" ")') on 127.0.0.1:$PB"

cat >"$OUT/target.env" <<EOF
TGT_KIND=utgtd-rbd
TGT_HOST=10.0.2.2
TGT_PORT1=$PA
TGT_PORT2=$PB
IQN_A=$GW_IQN-a
IQN_B=$GW_IQN-b
LU_BYTES=$((IMAGE_MB << 20))
GRACE=$GRACE
EOF

# One guest at a time on this machine: taken here when run alone, after the cluster is up (so
# no other test waits on our cluster's start); held already under vmtest.sh.
. scripts/vm/guest-lock.sh
vm_guest_lock 7 rbd_multipath || fail "guest lock wait timed out"
${UTGT_RBDMP_GUEST:-scripts/vm/run-guest.sh} -o "$OUT" -t 480 tests/vm/lib/rbd_multipath_guest.sh 2>&1 &
guest_pid=$!

# 2. The guest writes through the owner and asks for the kill
guest_step kill 300
owner=
for n in a b; do role_is "$n" owner && owner=$n; done
[ "$owner" = a ] || fail "the lock owner before the kill is '$owner', expected A"
peer=b
writes_before=$(show $peer .counters.write_commands)
a_writes=$(show a .counters.write_commands)
a_client=$(show a .rbd_lock.client)
say "A (owner) has served $a_writes writes, B $writes_before; SIGKILL A"
t_kill=$(now)
kill -KILL "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
PIDS[0]=
echo "killed=a" >"$CTL/killed"
wait_until $((GRACE + 40)) "B owning the lock after A's death" role_is b owner
t_owner=$(now)
b_writing() { [ "$(show b .counters.write_commands)" -gt "$writes_before" ]; }
wait_until 120 "a guest write served by B" b_writing
t_io=$(now)
FAILOVER="SIGKILL of A -> B owns the lock $(secs "$t_kill" "$t_owner") s, -> first guest write on B $(secs "$t_kill" "$t_io") s"
say "failover: $FAILOVER (alua_lock_grace $GRACE)"
[ "$(show b .rbd_lock.takeovers)" = 1 ] || fail "B's takeovers: $(show b .rbd_lock.takeovers), expected 1"
ceph osd blocklist ls 2>/dev/null | grep -qF "$a_client" ||
	fail "A's client $a_client is not blocklisted: B took the lock without fencing it"
ok "A's client $a_client is blocklisted (fenced before B took the lock); B took over once"

# 3. The guest saw the failover; A restarted comes back as a peer
guest_step restart 180
start_gw a
wait_until 30 "restarted A a peer" role_is a peer
t_restart=$SECONDS
echo "restarted=a" >"$CTL/restarted"
say "A restarted: $(show a '[.rbd_lock.role, .alua_state] | join(" ")'), B $(show b .rbd_lock.role)"
# Until the guest is done, and for at least 3 grace periods: B keeps the lock, A stays a peer.
stolen=
until [ -e "$CTL/done" ] && [ $((SECONDS - t_restart)) -ge $((3 * GRACE)) ]; do
	role_is b owner && role_is a peer || stolen="A $(show a .rbd_lock.role), B $(show b .rbd_lock.role)"
	[ -z "$stolen" ] || fail "the lock moved after A came back: $stolen"
	kill -0 "$guest_pid" 2>/dev/null || [ -e "$CTL/done" ] || fail "the guest ended before it was done (console: $OUT/console.log)"
	[ $((SECONDS - t_restart)) -lt 300 ] || fail "the guest was not done 300 s after A came back"
	sleep 0.5
done
[ "$(show a .rbd_lock.takeovers)" = 0 ] || fail "restarted A took over $(show a .rbd_lock.takeovers) times"
ok "restarted A stayed a peer and B the owner for $((SECONDS - t_restart)) s (grace $GRACE s)"
ok "A's writes before the kill $a_writes, B's writes since the takeover $(($(show b .counters.write_commands) - writes_before)), restarted A's $(show a .counters.write_commands)"

set +e
wait "$guest_pid"
rc=$?
set -e
guest_pid=
[ "$rc" = 0 ] || fail "the guest's part failed (exit $rc; console: $OUT/console.log)"
echo "$FAILOVER" >"$OUT/failover.txt"
say "PASS rbd_multipath: $FAILOVER"
