#!/bin/bash
# vm-timeout: 900
# vm-target: none
# dm-multipath over two SRP logins to the same utgtd target in the guest: one through RDMA/CM
# port 5555 with initiator_ext 1, one through port 5556 with initiator_ext 2 (two initiator
# ports, so two I_T nexuses; each login has two channels).  One round-robin map switching every
# request; both paths carry I/O; then one path is dropped (its SRP remote port deleted) while
# verified fio runs: no I/O error, verification passes; the path is logged in again and used.
# (soft-RoCE loops back inside rxe, below netfilter, so a path is cut at the initiator.)
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/mpath.sh
on_fail() {
	srp_on_fail
	multipathd show paths 2>/dev/null || true
	multipath -ll 2>/dev/null || true
}
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "soft-RoCE, utgtd, two logins"
rxe_up ch_count=2
modprobe -a dm_multipath dm_round_robin
rm -f "$SRP_IMG"
: >"$SRP_LOG"
write_conf
utgtd_start
line1=$(srp_line "$GUEST_IP:$SRP_PORT")
line2=$(srp_line "$GUEST_IP:$SRP_PORT2")
[ -n "$line1" ] && [ -n "$line2" ] || fail "--show-srp-login has no line for both ports"
srp_add "$line1" 0000000000000001
h1=$(srp_hosts | tail -1)
sd1=$(srp_disk "$h1")
srp_add "$line2" 0000000000000002
h2=$(srp_hosts | tail -1)
[ "$h2" != "$h1" ] || fail "second login made no new SCSI host"
sd2=$(srp_disk "$h2")
d1=${sd1#/dev/} d2=${sd2#/dev/}
say "path 1: $d1 ($h1, port $SRP_PORT), path 2: $d2 ($h2, port $SRP_PORT2)"
n=$(grep -c "login to .* accepted" "$SRP_LOG")
expect_eq "channels logged in" "$n" 4
grep -q "0x0000000000000001505400fffe123456" "$SRP_LOG" &&
	grep -q "0x0000000000000002505400fffe123456" "$SRP_LOG" ||
	fail "the two initiator port ids are not both in the log"
ok "two initiator ports (two I_T nexuses), two channels each"

step "multipathd builds one round-robin map"
start_udev
mpath_conf UTGT SRPDISK0
mpath_one_map "$d1" "$d2"

step "both paths carry I/O"
balance rr1 "$d1" "$d2"

step "path 2 dropped in the middle of verified fio runs"
a1=$(blk_ios "$d1") a2=$(blk_ios "$d2")
fio_loop_start --bsrange=4k-64k
progress() { [ $(($(blk_ios "$d1") - a1)) -ge 100 ] && [ $(($(blk_ios "$d2") - a2)) -ge 100 ]; }
wait_until 60 "fio I/O on both paths" progress
rport=$(srp_rport "$h2")
[ -n "$rport" ] || fail "no remote port for $h2"
echo 1 >"$rport/delete"
say "path 2 ($d2) dropped with fio running"
gone() { ! multipathd show paths raw format "%d" 2>/dev/null | grep -qx "$d2"; }
wait_until 60 "$d2 gone from the map" gone
k0=$(blk_ios "$d1")
wait_until 60 "I/O on $d1 after the drop" eval '[ $(($(blk_ios "$d1") - k0)) -ge 100 ]'
ok "after the drop $d1 completed $(($(blk_ios "$d1") - k0)) more requests"
wait_until 60 "target released path 2's channels" \
	eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"

step "path 2 logged in again"
srp_add "$line2" 0000000000000002
h3=$(srp_hosts | tail -1)
sd3=$(srp_disk "$h3")
d3=${sd3#/dev/}
wait_until 60 "$d3 active in the map" eval '[ "$(path_state "$d3")" = "active ready" ]'
ok "$d3 back in the map"
fio_loop_finish "the drop"
balance rr2 "$d1" "$d3"
dmesg | grep -q "I/O error, dev dm-" && fail "I/O error on the multipath device"
ok "no I/O error on the multipath device"

step "teardown"
mpath_flush_all
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 60 "all channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 6 ]"
utgtd_stop
say "utgtd exit status $UTGTD_RC"
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
say "PASS srp_multipath"
