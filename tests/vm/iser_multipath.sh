#!/bin/bash
# vm-timeout: 1200
# vm-target: none
# dm-multipath over two iSER portals of one target inside the guest (tests/vm/lib/iser.sh;
# target=utgtd by default, target=lio|tgtd for the references): portals on two extra addresses
# of eth0 (10.0.2.16 and 10.0.2.17; the initiator's own 10.0.2.15 is its source), one session
# through each, one map, round-robin switching every request (rr_min_io_rq 1), both paths
# carrying I/O; then a portal cut while verified fio runs: no I/O error on the map,
# verification passes, the portal comes back, the path is logged in again and used again.
#
# How a portal is cut (iser_cut in tests/vm/lib/iser.sh): its address is removed from eth0.
# soft-RoCE loops traffic between local addresses back inside rxe, below netfilter, so an nft
# rule never sees it; without the address the portal's GID is gone and rxe drops the path's
# packets both ways ("rdma_rxe: qp#N Failed allocating skb").  open-iscsi's NOP-Out times out
# (2 s + 3 s), the session fails after replacement_timeout (5 s), dm-multipath fails the path.
# The failed session is then logged out and, once the address is back, a new one logged in
# through that portal (the target sees a new session with the same ISID: reinstatement); its
# device joins the map and carries I/O.  Why not let iscsid log in again by itself: Debian 12's
# ib_iser then comes out, in about one failover in four (LIO and tgtd alike), with a
# connection it believes logged in but cannot send on ("iscsi_iser_task_init: Failed to init
# task ... -19", "Could not send nopout" every second, the path never reinstated), and logging
# that one out once crashed the guest (NULL dereference in iscsi_complete_pdu from
# iser_task_rsp).  The target and its listener are not touched.
# Argument "quick": one failover (portal 2); otherwise each portal in turn.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
. /src/tests/vm/lib/mpath.sh
on_fail() {
	iser_on_fail
	echo "---- multipathd show paths / multipath -ll"
	multipathd show paths 2>/dev/null || true
	multipath -ll 2>/dev/null || true
}
trap iser_cleanup EXIT
IP1=10.0.2.16 IP2=10.0.2.17
P1=$IP1:$ISER_PORT P2=$IP2:$ISER_PORT
: >"$ISER_LOG"

step "soft-RoCE, portals $P1 and $P2 served by $ISER_KIND"
iser_env_up
iser_addr_add "$IP1"
iser_addr_add "$IP2"
iser_start "$ISER_KIND" "$P1" "$P2"
modprobe -a dm_multipath dm_round_robin
start_udev

step "one session through each portal"
for p in "$P1" "$P2"; do
	iser_node_new "$IQN_PLAIN" "$p"
	iser_login "$IQN_PLAIN" "$p" >/dev/null || fail "login via $p failed"
	iser_check_transport "$IQN_PLAIN" "$p"
done
sd1=$(iser_disk "$IQN_PLAIN" "$P1" "$LU0_LUN")
sd2=$(iser_disk "$IQN_PLAIN" "$P2" "$LU0_LUN")
d1=${sd1#/dev/} d2=${sd2#/dev/}
say "path 1: $d1 ($P1), path 2: $d2 ($P2)"
udevadm settle -t 30

step "multipathd builds one round-robin map"
mpath_conf "$LU0_VENDOR" "$LU0_PRODUCT"
mpath_one_map "$d1" "$d2"
expect_eq "map WWID = path WWID" "$(multipathd show maps raw format "%w")" \
	"$(/lib/udev/scsi_id -g -u "$sd1")"

step "both paths carry I/O"
balance rr1 "$d1" "$d2"

# relogin IP:PORT: log in through the portal again once RDMA CM reaches it.  Debian 12's ib_iser
# sometimes brings a fresh login up with a connection it cannot send on (every command fails in
# iscsi_iser_task_init with -19, the target sees a healthy connection with nothing on it; seen
# with LIO and tgtd as with utgtd): when the new disk cannot read its first block and the
# kernel says so, that login is logged out and tried again, at most three times.
relogin() {
	local portal=$1 try bad0 dev
	for try in 1 2 3; do
		bad0=$(dmesg | grep -c "iscsi_iser_task_init: Failed to init task" || true)
		# the first attempts may come before RDMA CM resolves the address again
		wait_until 60 "a login via $portal" iser_login "$IQN_PLAIN" "$portal"
		dev=$(iser_disk "$IQN_PLAIN" "$portal" "$LU0_LUN")
		timeout 30 dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null && return 0
		[ "$(dmesg | grep -c "iscsi_iser_task_init: Failed to init task" || true)" -gt "$bad0" ] ||
			fail "the new login via $portal cannot read $dev (and ib_iser did not say why)"
		say "ib_iser's new connection via $portal is dead (iscsi_iser_task_init -19): log in again"
		timeout 90 iscsiadm -m node -T "$IQN_PLAIN" -p "$portal" -I "$ISER_IFACE" --logout \
			>/dev/null || fail "logout of the dead login via $portal failed"
	done
	fail "three logins via $portal came up dead in ib_iser"
}

# failover CUT-VAR CUT-IP KEEP-VAR: the variables (d1, d2) name the paths' devices; the cut
# path comes back as a new device, written back.
failover() {
	local -n dc=$1 dk=$3
	local ip=$2 k0 c0 k1 c1 t0 old
	step "portal $ip:$ISER_PORT cut in the middle of verified fio runs"
	a_k=$(blk_ios "$dk") a_c=$(blk_ios "$dc")
	fio_loop_start --bs=4k
	progress() { [ $(($(blk_ios "$dk") - a_k)) -ge 200 ] && [ $(($(blk_ios "$dc") - a_c)) -ge 200 ]; }
	wait_until 60 "fio I/O on both paths" progress
	t0=$SECONDS
	iser_cut "$ip"
	say "portal $ip:$ISER_PORT cut: address removed (fio running)"
	wait_until 90 "$dc failed in multipathd" eval '[ "$(dm_state "$dc")" = failed ]'
	say "$dc: $(path_state "$dc") after $((SECONDS - t0)) s"
	k0=$(blk_ios "$dk") c0=$(blk_ios "$dc")
	wait_until 60 "I/O on $dk after the failure" eval '[ $(($(blk_ios "$dk") - k0)) -ge 200 ]'
	k1=$(blk_ios "$dk") c1=$(blk_ios "$dc")
	ok "while $dc is failed, $dk completed $((k1 - k0)) requests, $dc $((c1 - c0))"
	old=$dc
	timeout 90 iscsiadm -m node -T "$IQN_PLAIN" -p "$ip:$ISER_PORT" -I "$ISER_IFACE" --logout \
		>/dev/null || fail "logout of the failed session via $ip failed"
	wait_until 30 "$old gone from multipathd" eval \
		'! multipathd show paths raw format "%d" 2>/dev/null | grep -qx "$old"'
	say "failed session via $ip logged out, $old gone from the map"
	t0=$SECONDS
	iser_uncut "$ip"
	relogin "$ip:$ISER_PORT"
	dc=$(iser_disk "$IQN_PLAIN" "$ip:$ISER_PORT" "$LU0_LUN")
	dc=${dc#/dev/}
	iser_check_transport "$IQN_PLAIN" "$ip:$ISER_PORT"
	wait_until 60 "$dc active in the map" eval '[ "$(path_state "$dc")" = "active ready" ]'
	ok "portal back: logged in again in $((SECONDS - t0)) s, $dc (was $old) $(path_state "$dc") in the map"
	fio_loop_finish "the failover"
	balance "after-$dc" "$d1" "$d2"
}

failover d2 "$IP2" d1
[ "$QUICK" = 1 ] || failover d1 "$IP1" d2

# (grep -q on a pipe from dmesg would fail the pipeline through SIGPIPE under pipefail)
grep -q "I/O error, dev dm-" <(dmesg) && fail "I/O error on the multipath device"
ok "no I/O error on the multipath device"

if [ "$ISER_KIND" = utgtd ]; then
	step "utgtd's own counters: a session per portal, both carried commands"
	utgtadm_sessions | python3 -c '
import json, sys
want = sys.argv[1:]
seen = {}
for s in json.load(sys.stdin)["sessions"]:
    for c in s["connections"]:
        seen[c.get("local", c.get("portal"))] = (s["counters"]["commands"], c.get("transport", "?"))
print(seen)
for p in want:
    n, t = seen.get(p, (0, "?"))
    if n < 200:
        sys.exit(f"utgtd: only {n} commands through {p}")
    print(f"ok: utgtd counted {n} commands through {p} (transport {t})")
' "$P1" "$P2" || fail "utgtd's session counters do not show both portals carrying I/O"
fi

step "teardown"
mpath_flush_all
for p in "$P1" "$P2"; do iser_logout "$IQN_PLAIN" "$p" >/dev/null; done
iser_stop "$ISER_KIND"
[ "$ISER_KIND" = utgtd ] && expect_eq "utgtd exit status" "$UTGTD_RC" 0
say "PASS iser_multipath ($ISER_KIND)"
