#!/bin/bash
# vm-timeout: 600
# vm-target: none
# The RDMA device goes away under a logged-in initiator doing I/O (`rdma link delete rxe0`):
# utgtd tears the channels down (RDMA/CM device removal), releases everything it held on the
# device (the kernel's removal completes only then), keeps running, and serves again once the
# device is back.  Also: utgtd started before any RDMA device exists waits for one.
# (Deleting the last RDMA device of the machine waits for utgtd to exit: see below.)
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
on_fail() { srp_on_fail; }
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "utgtd started before the RDMA device exists"
modprobe rdma_rxe
modprobe -a rdma_ucm ib_uverbs sd_mod sg
modprobe ib_srp ch_count=2
: >"$SRP_LOG"
rm -f "$SRP_IMG"
# the GID rxe0 will have: link-local EUI-64 of eth0's MAC
mac=$(cat /sys/class/net/eth0/address)
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
RXE_GID=$(printf 'fe80:0000:0000:0000:%02x%s:%sff:fe%s:%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
say "expected port GID $RXE_GID"
write_conf
"$UTGTD" --check -c "$SRP_CONF" >/dev/null || fail "--check"
"$UTGTD" -f -c "$SRP_CONF" >>"$SRP_LOG" 2>&1 &
UTGTD_PID=$!
# the point where it would give up is the RDMA/CM check it logs: wait for that line (not for
# a time), then it must still be running
wait_until 60 "utgtd's 'no RDMA device' line" grep -q "no RDMA device" "$SRP_LOG"
kill -0 "$UTGTD_PID" || fail "utgtd exited without an RDMA device"
ok "utgtd runs without an RDMA device"
rdma link add rxe0 type rxe netdev eth0
wait_until 60 "rxe0 ACTIVE" eval 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
expect_eq "rxe0 GID" "$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)" "$RXE_GID"
wait_until 60 "utgtd listening once rxe0 exists" listening "$SRP_PORT"
ok "listening on :$SRP_PORT after rxe0 appeared"

step "login and I/O"
line=$(srp_line "$GUEST_IP:$SRP_PORT")
wait_until 60 "srp-rxe0-1" test -e /sys/class/infiniband_srp/srp-rxe0-1/add_target
srp_add "$line" 0000000000000001
host=$(srp_hosts | tail -1)
dev=$(srp_disk "$host")
dd if=/dev/urandom of=/tmp/pat bs=1M count=8 status=none
dd if=/tmp/pat of="$dev" bs=1M oflag=direct status=none
ok "8 MiB written through $dev"

# librdmacm (rdma-core 44) lets go of a removed device only when a look at the device list
# still finds some device (sync_devices_list() bails out on an empty list), and rxe has no
# disassociation: with no other RDMA device, deleting the last one waits for every process
# that ever used it to exit.  A second soft-RoCE device on a dummy netdev stands for the other
# HCA a real server has.
ip link add srpdum0 type dummy
ip link set srpdum0 up
ip addr add 192.168.77.1/24 dev srpdum0
rdma link add rxe1 type rxe netdev srpdum0
say "rxe1 on srpdum0 keeps a device in the list"

step "rdma link delete rxe0 with reads in flight"
(while :; do dd if="$dev" of=/dev/null bs=64k count=64 iflag=direct status=none 2>/dev/null ||
	sleep 0.2; done) &
reader=$!
n0=$(blk_ios "$dev")
wait_until 60 "reads in flight" eval '[ $(($(blk_ios "$dev") - n0)) -ge 100 ]'
t0=$SECONDS
timeout 60 rdma link delete rxe0 || fail "rdma link delete rxe0 did not complete in 60 s"
say "device removed in $((SECONDS - t0)) s"
kill "$reader" 2>/dev/null || true
wait_until 60 "both channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"
grep -E "device removed|device rxe0 released|channel released" "$SRP_LOG" | sed 's/^/    /'
kill -0 "$UTGTD_PID" || fail "utgtd died with the device"
ok "channels torn down, device released, utgtd still running"
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 60 "old ib_srp host gone" eval '[ -z "$(srp_hosts)" ]'

step "device back: login and data again"
rdma link add rxe0 type rxe netdev eth0
wait_until 60 "rxe0 ACTIVE" eval 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
wait_until 60 "utgtd listening again" listening "$SRP_PORT"
wait_until 60 "srp-rxe0-1" test -e /sys/class/infiniband_srp/srp-rxe0-1/add_target
srp_add "$line" 0000000000000002
host=$(srp_hosts | tail -1)
dev=$(srp_disk "$host")
dd if="$dev" of=/tmp/back bs=1M count=8 iflag=direct status=none
cmp /tmp/pat /tmp/back || fail "data differs after the device came back"
ok "logged in again on the new rxe0, data intact"
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 60 "channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 4 ]"
utgtd_stop
say "utgtd exit status $UTGTD_RC"
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
say "PASS srp_devremove"
