#!/bin/bash
# vm-timeout: 600
# dm-multipath over two iSCSI portals of the same target: one map, round-robin switching every
# request (rr_min_io_rq 1), both paths carrying I/O; then a portal cut while fio writes with
# crc32c verification: no I/O error, verification passes, the path comes back and is used again.
#
# How a portal is "stopped": from the guest, every packet to that portal's port is answered by a
# TCP reset (nft reject in the output hook) and nothing from it is accepted (input hook), which
# is what the initiator sees when a target's portal goes away.  Removing the rule is the portal
# coming back.  The target itself is not touched, so this checks the initiator-visible failover
# and the target's handling of the reconnect (session reinstatement, task cleanup).
# Argument "quick": one failover (portal 2); otherwise both portals in turn.
. /src/tests/vm/lib/common.sh
load_target_env
modprobe -a dm_multipath dm_round_robin
start_udev
start_iscsid

cat >/etc/multipath.conf <<EOF
defaults {
	user_friendly_names no
	find_multipaths no
	polling_interval 1
}
blacklist {
	devnode "^(vd|loop|ram|zram|sr)"
}
devices {
	device {
		vendor "$LU0_VENDOR"
		product "$LU0_PRODUCT"
		path_grouping_policy multibus
		path_selector "round-robin 0"
		rr_min_io_rq 1
		rr_weight uniform
		path_checker tur
		failback immediate
		no_path_retry 30
	}
}
EOF

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
multipathd
path_state() { # DEV -> "dm-state checker-state", e.g. "active ready"
	multipathd show paths raw format "%d %t %T" 2>/dev/null | awk -v d="$1" '$1 == d {print $2, $3}'
}
dm_state() { path_state "$1" | awk '{print $1}'; } # active | failed
both_active() {
	[ "$(path_state "$d1")" = "active ready" ] && [ "$(path_state "$d2")" = "active ready" ]
}
wait_until 60 "both paths active in multipathd" both_active
maps=$(multipathd show maps raw format "%n")
expect_eq "number of maps" "$(wc -l <<<"$maps")" 1
map=$maps
mp=/dev/mapper/$map
multipath -ll
table=$(dmsetup table "$map")
echo "$table"
# "... round-robin 0 2 1 MAJ:MIN 1 MAJ:MIN 1": one group, two paths, repeat count 1 each.
grep -Eq 'round-robin 0 2 1 [0-9]+:[0-9]+ 1 [0-9]+:[0-9]+ 1 *$' <<<"$table" ||
	fail "map is not one round-robin group of two paths with rr_min_io 1"
ok "one map $map, round-robin, two paths, one request per path switch"
expect_eq "map WWID = path WWID" "$(multipathd show maps raw format "%w")" \
	"$(/lib/udev/scsi_id -g -u "$sd1")"

# Both paths must carry I/O; counters are the guest's per-device completions.
balance() { # NAME: a short verified fio on the map; each path gets >= 20% of the requests
	local a1 a2 b1 b2 t
	a1=$(blk_ios "$d1") a2=$(blk_ios "$d2")
	fio_run "$1" --filename="$mp" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
		--bs=4k --size=8M --verify=crc32c --do_verify=1 --verify_fatal=1
	b1=$(($(blk_ios "$d1") - a1)) b2=$(($(blk_ios "$d2") - a2))
	t=$((b1 + b2))
	say "requests: $d1 $b1, $d2 $b2"
	[ $((b1 * 5)) -ge "$t" ] && [ $((b2 * 5)) -ge "$t" ] ||
		fail "round-robin not spreading I/O: $d1 $b1, $d2 $b2"
	ok "both paths carried I/O ($b1 / $b2)"
}
step "both paths carry I/O"
balance rr1

portal_stop() { # PORT: the portal stops answering (TCP reset to anything we send, input dropped)
	nft -f - <<EOF
table inet utgt_cut {
	chain out { type filter hook output priority 0; tcp dport $1 ip daddr $TGT_HOST reject with tcp reset; }
	chain in { type filter hook input priority 0; tcp sport $1 ip saddr $TGT_HOST drop; }
}
EOF
}
portal_start() { nft delete table inet utgt_cut; }

# Verified fio runs back to back until /tmp/fio-stop appears: however fast or slow the guest,
# I/O is in flight when the portal stops and while the path is down and comes back.  Each run
# writes 16 MiB of random 4 KiB blocks with crc32c and verifies them (inline every 256 writes
# and at the end); its exit status goes to /tmp/fio-loop/N.rc.
fio_loop() {
	local n=0 rc
	rm -rf /tmp/fio-loop /tmp/fio-stop
	mkdir -p /tmp/fio-loop
	until [ -e /tmp/fio-stop ]; do
		n=$((n + 1)) rc=0
		fio --name=loop$n --filename="$mp" --direct=1 --ioengine=libaio --iodepth=16 \
			--rw=randwrite --bs=4k --size=16M --verify=crc32c --verify_backlog=256 \
			--do_verify=1 --verify_fatal=1 --output-format=json \
			--output=/tmp/fio-loop/$n.json >/dev/null 2>&1 || rc=$?
		echo $rc >/tmp/fio-loop/$n.rc
	done
}

failover() { # CUT-DEV CUT-PORT KEEP-DEV
	local dc=$1 port=$2 dk=$3 fpid k0 c0 k1 c1 runs bad
	step "portal $port stopped in the middle of verified fio runs"
	a_k=$(blk_ios "$dk") a_c=$(blk_ios "$dc")
	fio_loop &
	fpid=$!
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
	touch /tmp/fio-stop
	wait $fpid
	runs=$(ls /tmp/fio-loop/*.rc | wc -l)
	bad=$(grep -Lx 0 /tmp/fio-loop/*.rc || true)
	for f in $bad; do
		cat "${f%.rc}.json" 2>/dev/null | tail -20
	done
	[ -z "$bad" ] || fail "fio runs failed across the failover: $bad"
	python3 - /tmp/fio-loop/*.json <<'PY' || fail "fio across the failover reported an error"
import json, sys
w = r = 0
for f in sys.argv[1:]:
    j = json.load(open(f))["jobs"][0]
    if j["error"] or j["write"]["io_kbytes"] == 0 or j["read"]["io_kbytes"] == 0:
        print(f"{f}: err={j['error']} write {j['write']['io_kbytes']} read {j['read']['io_kbytes']}")
        sys.exit(1)
    w += j["write"]["io_kbytes"]; r += j["read"]["io_kbytes"]
print(f"failover fio: {len(sys.argv) - 1} runs, wrote {w} KiB, verified {r} KiB, no error")
PY
	ok "fio across the failover: $runs runs, no error, crc32c verification passed"
	# The restored path must be used again, and the map must still be one group of two.
	balance "after-$dc"
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
multipath -F
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
	wait_until 10 "both logouts in the target log" eval '[ "$(per_portal | wc -l)" -ge 2 ]'
	per_portal
	for p in "$TGT_PORT1" "$TGT_PORT2"; do
		n=$(per_portal | awk -v p="$p" '$1 == p {print $2}')
		[ "${n:-0}" -ge 4000 ] || fail "target saw only ${n:-0} PDUs on portal $p"
		ok "target: portal $p received $n PDUs"
	done
fi
say "PASS multipath"
