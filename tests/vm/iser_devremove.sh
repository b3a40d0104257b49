#!/bin/bash
# vm-timeout: 900
# vm-target: none
# The RDMA device goes away under a logged-in open-iscsi/iSER session doing verified I/O
# (`rdma link delete rxe0`) and comes back (`rdma link add`): the target lets go of the device
# (the deletion completes), keeps running, listens again on the new rxe0, the initiator logs in
# again by itself and the I/O that waited meanwhile completes and verifies.  Also, for utgtd:
# started before any RDMA device exists, it waits for one and then listens.
# The initiator's replacement_timeout is raised to 120 s so I/O is queued, not failed, while
# the device is away.  target=lio: LIO drops an iSER portal's listener with the device and
# never listens again by itself; the test turns iser off and on on its portals (lio_relisten)
# so the rest can be checked -- utgtd must do that itself.  target=tgtd is skipped: tgtd 1.0.85
# never releases a removed device, so `rdma link delete` blocks for ever.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
. /src/tests/vm/lib/mpath.sh # fio_loop_start / fio_loop_finish
on_fail() { iser_on_fail; }
trap iser_cleanup EXIT
PORTAL=$GUEST_IP:$ISER_PORT
: >"$ISER_LOG"

if [ "$ISER_KIND" = tgtd ]; then
	say "skip: tgtd 1.0.85 never releases a removed RDMA device (rdma link delete blocks)"
	say "PASS iser_devremove (tgtd: skipped)"
	exit 0
fi

if [ "$ISER_KIND" = utgtd ]; then
	step "utgtd started before the RDMA device exists"
	modprobe rdma_rxe
	modprobe -a rdma_ucm ib_uverbs
	iser_files
	utgtd_conf "$PORTAL" >"$ISER_DIR/utgtd.conf"
	cp "$ISER_DIR/utgtd.conf" /out/scst.conf
	out=$("$UTGTD" --check -c "$ISER_DIR/utgtd.conf" 2>&1) ||
		fail "utgtd --check refused the iSER configuration: $(grep -m1 error <<<"$out")"
	mkdir -p "$ISER_DIR/state"
	"$UTGTD" -f -c "$ISER_DIR/utgtd.conf" --state-dir "$ISER_DIR/state" >>"$ISER_LOG" 2>&1 &
	UTGTD_PID=$!
	wait_until 20 "utgtd's admin socket" test -S "$ISER_SOCK"
	kill -0 "$UTGTD_PID" || fail "utgtd exited without an RDMA device"
	ok "utgtd runs without an RDMA device"
fi

step "soft-RoCE, iser iface, $ISER_KIND on $PORTAL"
iser_env_up
if [ "$ISER_KIND" = utgtd ]; then
	wait_until 20 "utgtd listening on $PORTAL once rxe0 exists" listener_up "$PORTAL"
	ok "utgtd listens on $PORTAL after rxe0 appeared"
else
	iser_start "$ISER_KIND" "$PORTAL"
fi
# librdmacm (rdma-core 44) lets go of a removed device only when a look at the device list
# still finds some device, and rxe has no disassociation: with no other RDMA device, deleting
# the last one waits for every process that used it (utgtd) to exit.  A second soft-RoCE
# device on a dummy netdev stands for the other HCA a real server has.
ip link add iserdum0 type dummy
ip link set iserdum0 up
ip addr add 192.168.77.1/24 dev iserdum0
rdma link add rxe1 type rxe netdev iserdum0
say "rxe1 on iserdum0 keeps a device in the list"

step "login, data, verified I/O running"
iser_node_new "$IQN_PLAIN" "$PORTAL"
iser_node_set "$IQN_PLAIN" "$PORTAL" node.session.timeo.replacement_timeout 120 >/dev/null
iser_login "$IQN_PLAIN" "$PORTAL" >/dev/null || fail "login failed"
dev=$(iser_disk "$IQN_PLAIN" "$PORTAL" "$LU0_LUN")
iser_check_transport "$IQN_PLAIN" "$PORTAL"
dd if=/dev/urandom of=/tmp/pat bs=1M count=16 status=none
dd if=/tmp/pat of="$dev" bs=1M seek=100 oflag=direct status=none
MP=$dev
a0=$(blk_ios "$dev")
fio_loop_start --bs=4k
wait_until 60 "fio I/O on $dev" eval '[ $(($(blk_ios "$dev") - a0)) -ge 300 ]'
ok "$dev ($(iser_session "$IQN_PLAIN" "$PORTAL")), 16 MiB pattern written, fio running"

step "rdma link delete rxe0 with I/O in flight"
t0=$SECONDS
# Its output to a file: a deletion stuck in the kernel must not hold the console pipe.
rdma link delete rxe0 >/tmp/rdma-del.log 2>&1 &
dpid=$!
if ! (wait_until 60 "rdma link delete rxe0" eval "! kill -0 $dpid 2>/dev/null") 2>/dev/null; then
	rdma resource show 2>&1 | head -20
	fail "rdma link delete rxe0 still blocked after 60 s: $ISER_KIND does not let go of the device"
fi
wait "$dpid" || { cat /tmp/rdma-del.log; fail "rdma link delete rxe0 failed"; }
ok "device deleted in $((SECONDS - t0)) s"
wait_until 60 "the session to notice" eval '[ "$(iser_state "$IQN_PLAIN" "$PORTAL")" != LOGGED_IN ]'
say "session state: $(iser_state "$IQN_PLAIN" "$PORTAL")"
if [ "$ISER_KIND" = utgtd ]; then
	sleep 1 # let it log what it did with the device
	kill -0 "$UTGTD_PID" 2>/dev/null || { tail -20 "$ISER_LOG"; fail "utgtd died with the device"; }
	grep -iE "rxe0|device" "$ISER_LOG" | tail -8 | sed 's/^/    /'
	ok "utgtd still running"
fi

step "rxe0 back"
t0=$SECONDS
rdma link add rxe0 type rxe netdev eth0
wait_until 20 "rxe0 ACTIVE" eval 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
if [ "$ISER_KIND" = lio ]; then
	lio_relisten
	say "LIO: iser turned off and on on its portals (it does not listen again by itself)"
fi
(wait_until 30 "listener on $PORTAL" listener_up "$PORTAL") 2>/dev/null ||
	fail "no iSER listener on $PORTAL 30 s after rxe0 came back: $ISER_KIND did not listen again"
ok "$ISER_KIND listens on $PORTAL again ($((SECONDS - t0)) s)"
wait_until 120 "the initiator to log in again" eval \
	'[ "$(iser_state "$IQN_PLAIN" "$PORTAL")" = LOGGED_IN ]'
ok "session LOGGED_IN again $((SECONDS - t0)) s after the device came back"
iser_check_transport "$IQN_PLAIN" "$PORTAL"
fio_loop_finish "the device removal"
cmp <(dd if="$dev" bs=1M skip=100 count=16 iflag=direct status=none) /tmp/pat ||
	fail "data written before the removal differs"
ok "16 MiB written before the removal read back identical"

step "teardown"
iser_logout "$IQN_PLAIN" "$PORTAL" >/dev/null
iser_stop "$ISER_KIND"
if [ "$ISER_KIND" = utgtd ]; then
	expect_eq "utgtd exit status" "$UTGTD_RC" 0
	grep -qE "AddressSanitizer|runtime error" "$ISER_LOG" && fail "sanitizer report in utgtd's log"
fi
say "PASS iser_devremove ($ISER_KIND)"
