#!/bin/bash
# The guest's half of tests/vm/rbd_multipath.sh (which says what is proven): open-iscsi to the
# two RBD gateways on the host, one dm-multipath map grouped by ALUA priority, verified fio on
# it while the host kills the lock owner and restarts it.  Steps are handed to the host through
# files in /out/ctl: this side writes kill, restart and done; the host writes killed and
# restarted.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/mpath.sh
load_target_env
CTL=/out/ctl
modprobe -a dm_multipath scsi_dh_alua
start_udev
start_iscsid

on_fail() {
	echo "---- multipathd show topology / paths / sessions / access states"
	multipathd show topology || true
	multipathd show paths raw format "%d %t %T %p" || true
	iscsiadm -m session -P 1 || true
	grep -H . /sys/block/sd*/device/access_state 2>/dev/null || true
}

# host_step NAME SECONDS: wait for the host to write /out/ctl/NAME
host_step() { wait_until "$2" "the host's '$1' (/out/ctl/$1)" test -e "$CTL/$1"; }
# the path group of DEV in multipathd's topology: "PRIO STATUS", e.g. "50 active"
pg_of() {
	multipathd show topology 2>/dev/null | awk -v d="$1" '
		/policy=/ { match($0, /prio=[0-9-]+/); p = substr($0, RSTART + 5, RLENGTH - 5)
			    match($0, /status=[a-z]+/); s = substr($0, RSTART + 7, RLENGTH - 7) }
		$0 ~ " " d " " { print p, s }'
}
access_state() { cat "/sys/block/$1/device/access_state" 2>/dev/null; }
writes_done() { # DEV: writes completed (/sys/block/DEV/stat field 5)
	local f
	read -r -a f <"/sys/block/$1/stat"
	echo "${f[4]}"
}
# is_path DEV STATE PRIO GROUP-STATUS ACCESS-STATE: multipathd and the alua handler agree
is_path() {
	[ "$(path_state "$1")" = "$2" ] && [ "$(pg_of "$1")" = "$3 $4" ] &&
		[ "$(access_state "$1")" = "$5" ]
}
show_path() { echo "$1: $(path_state "$1"), group $(pg_of "$1"), $(access_state "$1")"; }

step "sessions to gateway A ($IQN_A, port $TGT_PORT1) and B ($IQN_B, port $TGT_PORT2)"
iscsi_node_new "$IQN_A" "$TGT_PORT1"
iscsi_node_new "$IQN_B" "$TGT_PORT2"
iscsi_login "$IQN_A" "$TGT_PORT1" >/dev/null
iscsi_login "$IQN_B" "$TGT_PORT2" >/dev/null
sa=$(session_disk "$IQN_A" "$TGT_PORT1" 0) sb=$(session_disk "$IQN_B" "$TGT_PORT2" 0)
da=${sa#/dev/} db=${sb#/dev/}
udevadm settle -t 30
expect_eq "size of the LU through A" "$(blockdev --getsize64 "$sa")" "$LU_BYTES"
expect_eq "one LU through both gateways (WWID through B)" "$(cat /sys/block/"$db"/device/wwid)" \
	"$(cat /sys/block/"$da"/device/wwid)"
vendor=$(sed 's/ *$//' /sys/block/"$da"/device/vendor)
product=$(sed 's/ *$//' /sys/block/"$da"/device/model)
say "path A: $da, path B: $db ($vendor $product)"

step "one map, grouped by ALUA priority: A (the lock owner) optimized, B non-optimized"
mpath_conf "$vendor" "$product" alua
# A group is "active" once I/O has chosen it: before the first I/O both can read "enabled".
prio_is() { [ "$(path_state "$1")" = "active ready" ] && [ "$(pg_of "$1" | cut -d" " -f1)" = "$2" ]; }
wait_until 60 "both paths active, A prio 50, B prio 10 in multipathd" \
	eval 'prio_is "$da" 50 && prio_is "$db" 10'
expect_eq "number of maps" "$(multipathd show maps raw format "%n" | wc -l)" 1
MP=/dev/mapper/$(multipathd show maps raw format "%n")
grep -q "hwhandler='1 alua'" <(multipathd show topology) || fail "the map has no alua hardware handler"
expect_eq "A's access state (the lock owner)" "$(access_state "$da")" active/optimized
expect_eq "B's access state" "$(access_state "$db")" active/non-optimized
multipathd show topology

step "verified fio on the map; the host kills the lock owner (A) mid-run"
wa0=$(writes_done "$da") wb0=$(writes_done "$db")
fio_loop_start --bs=4k
wait_until 120 "500 writes through A" eval '[ $(($(writes_done "$da") - wa0)) -ge 500 ]'
wa1=$(writes_done "$da") wb1=$(writes_done "$db")
multipathd show topology
wait_until 60 "A optimized in the active path group" \
	is_path "$da" "active ready" 50 active active/optimized
wait_until 60 "B non-optimized in the enabled path group" \
	is_path "$db" "active ready" 10 enabled active/non-optimized
ok "one map $MP: A prio 50 (the active group), B prio 10 (enabled), hardware handler alua"
expect_eq "writes through B (the non-owner) before the kill" "$((wb1 - wb0))" 0
ok "writes through A (the owner) before the kill: $((wa1 - wa0))"
t_req=$(date +%s.%N)
touch "$CTL/kill"
host_step killed 60
say "host: $(cat "$CTL/killed")"
# Timed by a cheap poll (a sysfs counter every 0.2 s); the write through B implies dm-multipath
# failed A's path and switched groups, which are checked after.
wait_until 120 "a write completed through B" eval '[ "$(writes_done "$db")" -gt "$wb1" ]'
t_write=$(date +%s.%N)
wait_until 60 "A's path failed in multipathd" eval '[ "$(dm_state "$da")" = failed ]'
wait_until 60 "B active/optimized in the active path group" \
	is_path "$db" "active ready" 50 active active/optimized
secs=$(awk -v a="$t_req" -v b="$t_write" 'BEGIN { printf "%.1f", b - a }')
echo "guest: asking for the kill -> first write completed through B: $secs s" >/out/failover-guest.txt
ok "after the kill: A's path failed, B active/optimized in the active group, first write" \
	"through B $secs s after asking for the kill"
show_path "$da"
show_path "$db"
wb2=$(writes_done "$db")
wait_until 60 "500 writes through B" eval '[ $(($(writes_done "$db") - wb2)) -ge 500 ]'
ok "writes go on through B: $(($(writes_done "$db") - wb1)) since the kill"

step "A restarted comes back non-optimized, B keeps the I/O"
touch "$CTL/restart"
host_step restarted 90
wait_until 90 "A reinstated, active/non-optimized in the enabled group" \
	is_path "$da" "active ready" 10 enabled active/non-optimized
is_path "$db" "active ready" 50 active active/optimized || fail "B is no longer optimized: $(show_path "$db")"
multipathd show topology
wa3=$(writes_done "$da") wb3=$(writes_done "$db")
wait_until 60 "300 more writes through B" eval '[ $(($(writes_done "$db") - wb3)) -ge 300 ]'
expect_eq "writes through restarted A while B owns the lock" "$(($(writes_done "$da") - wa3))" 0
ok "B carried $(($(writes_done "$db") - wb3)) writes, A 0, since A came back"
fio_loop_finish "the kill of the lock owner and its restart"
show_path "$da"
show_path "$db"
touch "$CTL/done"

if dmesg | grep -q "I/O error, dev dm-"; then
	dmesg | grep "I/O error" | tail -5
	fail "I/O error on the multipath device"
fi
ok "no I/O error on the multipath device ($(dmesg | grep -c "I/O error, dev sd" || true) on the killed path)"

step "teardown"
mpath_flush_all
iscsi_logout "$IQN_A" "$TGT_PORT1" >/dev/null
iscsi_logout "$IQN_B" "$TGT_PORT2" >/dev/null
say "PASS rbd_multipath (guest)"
