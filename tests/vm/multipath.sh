#!/bin/bash
# vm-timeout: 600
# dm-multipath over two iSCSI portals of the same target: one map, round-robin switching every
# request (rr_min_io_rq 1), both paths carrying I/O; then a portal cut while fio writes with
# crc32c verification: no I/O error, verification passes, the path comes back and is used again.
#
# How a portal is "stopped": from the guest, every packet to that portal's port is answered by a
# TCP reset (nft reject in the output hook) and nothing from it is accepted (eth0 ingress), which
# is what the initiator sees when a target's portal goes away.  Removing the rule is the portal
# coming back.  The target itself is not touched, so this checks the initiator-visible failover
# and the target's handling of the reconnect (session reinstatement, task cleanup).
# Argument "quick": one failover (portal 2); otherwise both portals in turn.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/mpath.sh
load_target_env
modprobe -a dm_multipath dm_round_robin
start_udev
start_iscsid

on_fail() {
	echo "---- multipathd show paths / multipath -ll / sessions"
	multipathd show paths || true
	multipath -ll || true
	iscsiadm -m session -P 1 || true
}

step "two sessions: $TGT_PLAIN via ports $TGT_PORT1 and $TGT_PORT2"
for p in "$TGT_PORT1" "$TGT_PORT2"; do
	iscsi_node_new "$TGT_PLAIN" "$p"
	iscsi_login "$TGT_PLAIN" "$p" >/dev/null
done
sd1=$(session_disk "$TGT_PLAIN" "$TGT_PORT1" "$LU0_LUN")
sd2=$(session_disk "$TGT_PLAIN" "$TGT_PORT2" "$LU0_LUN")
d1=${sd1#/dev/} d2=${sd2#/dev/}
say "path 1: $d1 (port $TGT_PORT1), path 2: $d2 (port $TGT_PORT2)"
udevadm settle -t 30

step "multipathd builds one round-robin map"
mpath_conf "$LU0_VENDOR" "$LU0_PRODUCT"
mpath_one_map "$d1" "$d2"
expect_eq "map WWID = path WWID" "$(multipathd show maps raw format "%w")" \
	"$(/lib/udev/scsi_id -g -u "$sd1")"

step "both paths carry I/O"
balance rr1 "$d1" "$d2"

# portal_stop PORT: the portal stops answering.  Whatever we send to it is answered by a TCP
# reset (output hook: the reset reaches our socket through loopback), and whatever it sends
# is dropped at eth0's ingress, before the IP stack.  (Dropping it in the inet input hook
# instead once left the guest's CPU looping in ip_sublist_rcv_finish under TCG: a kernel RCU
# stall that hung the test; the ingress hook keeps those packets out of that path.)
portal_stop() {
	nft -f - <<EOF
table inet utgt_cut {
	chain out { type filter hook output priority 0; tcp dport $1 ip daddr $TGT_HOST reject with tcp reset; }
}
table netdev utgt_cut_in {
	chain in { type filter hook ingress device "eth0" priority 0; ip saddr $TGT_HOST tcp sport $1 drop; }
}
EOF
}
portal_start() { nft delete table inet utgt_cut && nft delete table netdev utgt_cut_in; }

failover() { # CUT-DEV CUT-PORT KEEP-DEV
	local dc=$1 port=$2 dk=$3 k0 c0 k1 c1
	step "portal $port stopped in the middle of verified fio runs"
	a_k=$(blk_ios "$dk") a_c=$(blk_ios "$dc")
	fio_loop_start --bs=4k
	progress() { [ $(($(blk_ios "$dk") - a_k)) -ge 200 ] && [ $(($(blk_ios "$dc") - a_c)) -ge 200 ]; }
	wait_until 60 "fio I/O on both paths" progress
	portal_stop "$port"
	say "portal $port cut (fio running)"
	wait_until 60 "$dc failed in multipathd" eval '[ "$(dm_state "$dc")" = failed ]'
	say "$dc: $(path_state "$dc")"
	k0=$(blk_ios "$dk") c0=$(blk_ios "$dc")
	wait_until 60 "I/O on $dk after the failure" eval '[ $(($(blk_ios "$dk") - k0)) -ge 200 ]'
	k1=$(blk_ios "$dk") c1=$(blk_ios "$dc")
	ok "while $dc is failed, $dk completed $((k1 - k0)) requests, $dc $((c1 - c0))"
	portal_start
	say "portal $port back"
	wait_until 90 "$dc reinstated" eval '[ "$(path_state "$dc")" = "active ready" ]'
	ok "$dc active again: $(path_state "$dc")"
	fio_loop_finish "the failover"
	# The restored path must be used again, and the map must still be one group of two.
	balance "after-$dc" "$d1" "$d2"
}

if [ "$QUICK" = 1 ]; then
	failover "$d2" "$TGT_PORT2" "$d1"
else
	failover "$d2" "$TGT_PORT2" "$d1"
	failover "$d1" "$TGT_PORT1" "$d2"
fi

if dmesg | grep -E "I/O error, dev (dm-|$d1|$d2)|Buffer I/O error"; then
	# Path-level errors are expected while a path dies; an error on the map is not.
	dmesg | grep -q "I/O error, dev dm-" && fail "I/O error on the multipath device"
fi
ok "no I/O error on the multipath device"

step "teardown"
mpath_flush_all
for p in "$TGT_PORT1" "$TGT_PORT2"; do iscsi_logout "$TGT_PLAIN" "$p" >/dev/null; done

# The target's own per-path counters: utgtd logs each connection's PDU counts when it closes
# ("conn N: A -> B (portal P) ..." then "conn N: ... closed: ... (rx N PDUs/...").  Summed per
# portal, both must have carried thousands of commands.
if [ "$TGT_KIND" = utgtd ] && [ -f /out/target.log ]; then
	step "target-side counters per portal (utgtd's log)"
	per_portal() {
		awk '
		match($0, /conn [0-9]+: [^ ]+ -> [^ ]+ \(portal [^)]+\)/) {
			split(substr($0, RSTART, RLENGTH), f, /[ :)]+/); portal[f[2]] = f[length(f) - 1] }
		match($0, /conn [0-9]+: .* closed: .*\(rx [0-9]+ PDUs/) {
			split(substr($0, RSTART, RLENGTH), f, /[ :]+/); c = f[2]
			n = substr($0, RSTART, RLENGTH); sub(/.*\(rx /, "", n); sub(/ PDUs/, "", n)
			rx[portal[c]] += n }
		END { for (p in rx) print p, rx[p] }' /out/target.log | sort
	}
	wait_until 60 "both logouts in the target log" eval '[ "$(per_portal | wc -l)" -ge 2 ]'
	per_portal
	for p in "$TGT_PORT1" "$TGT_PORT2"; do
		n=$(per_portal | awk -v p="$p" '$1 == p {print $2}')
		[ "${n:-0}" -ge 4000 ] || fail "target saw only ${n:-0} PDUs on portal $p"
		ok "target: portal $p received $n PDUs"
	done
fi
say "PASS multipath"
