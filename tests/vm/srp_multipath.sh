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
		vendor "UTGT"
		product "SRPDISK0"
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
multipathd
path_state() {
	multipathd show paths raw format "%d %t %T" 2>/dev/null | awk -v d="$1" '$1 == d {print $2, $3}'
}
both_active() {
	[ "$(path_state "$d1")" = "active ready" ] && [ "$(path_state "$d2")" = "active ready" ]
}
wait_until 60 "both paths active" both_active
map=$(multipathd show maps raw format "%n")
expect_eq "number of maps" "$(wc -l <<<"$map")" 1
mp=/dev/mapper/$map
table=$(dmsetup table "$map")
echo "$table"
grep -Eq 'round-robin 0 2 1 [0-9]+:[0-9]+ 1 [0-9]+:[0-9]+ 1 *$' <<<"$table" ||
	fail "map is not one round-robin group of two paths with rr_min_io 1"
ok "one map $map, round-robin over $d1 and $d2"

balance() { # NAME A B: a verified fio on the map; each path gets >= 20% of the requests
	local a1 a2 b1 b2 t
	a1=$(blk_ios "$2") a2=$(blk_ios "$3")
	fio_run "$1" --filename="$mp" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
		--bs=4k --size=8M --verify=crc32c --do_verify=1 --verify_fatal=1
	b1=$(($(blk_ios "$2") - a1)) b2=$(($(blk_ios "$3") - a2))
	t=$((b1 + b2))
	say "requests: $2 $b1, $3 $b2"
	[ $((b1 * 5)) -ge "$t" ] && [ $((b2 * 5)) -ge "$t" ] ||
		fail "round-robin not spreading I/O: $2 $b1, $3 $b2"
	ok "both paths carried I/O ($b1 / $b2)"
}
step "both paths carry I/O"
balance rr1 "$d1" "$d2"

step "path 2 dropped in the middle of verified fio runs"
fio_loop() {
	local n=0 rc
	rm -rf /tmp/fio-loop /tmp/fio-stop
	mkdir -p /tmp/fio-loop
	until [ -e /tmp/fio-stop ]; do
		n=$((n + 1)) rc=0
		fio --name=loop$n --filename="$mp" --direct=1 --ioengine=libaio --iodepth=16 \
			--rw=randwrite --bsrange=4k-64k --size=16M --verify=crc32c \
			--verify_backlog=256 --do_verify=1 --verify_fatal=1 --output-format=json \
			--output=/tmp/fio-loop/$n.json >/dev/null 2>&1 || rc=$?
		echo $rc >/tmp/fio-loop/$n.rc
	done
}
a1=$(blk_ios "$d1") a2=$(blk_ios "$d2")
fio_loop &
fpid=$!
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
wait_until 20 "target released path 2's channels" \
	eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"

step "path 2 logged in again"
srp_add "$line2" 0000000000000002
h3=$(srp_hosts | tail -1)
sd3=$(srp_disk "$h3")
d3=${sd3#/dev/}
wait_until 60 "$d3 active in the map" eval '[ "$(path_state "$d3")" = "active ready" ]'
ok "$d3 back in the map"
touch /tmp/fio-stop
wait $fpid
runs=$(ls /tmp/fio-loop/*.rc | wc -l)
bad=$(grep -Lx 0 /tmp/fio-loop/*.rc || true)
for f in $bad; do tail -20 "${f%.rc}.json" 2>/dev/null; done
[ -z "$bad" ] || fail "fio runs failed across the drop: $bad"
python3 - /tmp/fio-loop/*.json <<'PY' || fail "fio across the drop reported an error"
import json, sys
w = r = 0
for f in sys.argv[1:]:
    j = json.load(open(f))["jobs"][0]
    if j["error"] or j["write"]["io_kbytes"] == 0 or j["read"]["io_kbytes"] == 0:
        print(f"{f}: err={j['error']} write {j['write']['io_kbytes']} read {j['read']['io_kbytes']}")
        sys.exit(1)
    w += j["write"]["io_kbytes"]; r += j["read"]["io_kbytes"]
print(f"fio across the drop: {len(sys.argv) - 1} runs, wrote {w} KiB, verified {r} KiB, no error")
PY
ok "fio across the drop: $runs runs, no error, crc32c verification passed"
balance rr2 "$d1" "$d3"
dmesg | grep -q "I/O error, dev dm-" && fail "I/O error on the multipath device"
ok "no I/O error on the multipath device"

step "teardown"
multipath -F
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 30 "all channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 6 ]"
utgtd_stop
say "utgtd exit status $UTGTD_RC"
grep -qE "AddressSanitizer|runtime error" "$SRP_LOG" && fail "sanitizer report in utgtd's log"
say "PASS srp_multipath"
