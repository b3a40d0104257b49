# dm-multipath helpers shared by tests/vm/multipath.sh (iSCSI), tests/vm/srp_multipath.sh and
# tests/vm/rbd_multipath.sh (ALUA).  Sourced after common.sh.  The map is one round-robin group
# switching every request, unless mpath_conf is given "alua".

# mpath_conf VENDOR PRODUCT [alua]: multipath.conf for our LU, then multipathd.  With "alua"
# the paths are grouped by their ALUA priority (prio alua: 50 active/optimized, 10
# active/non-optimized) through the kernel's alua handler, and I/O goes to the best group only
# (tests/vm/rbd_multipath.sh); without, one round-robin group over every path.
mpath_conf() {
	local policy='path_grouping_policy multibus
		path_selector "round-robin 0"
		rr_min_io_rq 1
		rr_weight uniform'
	[ "${3:-}" = alua ] && policy='path_grouping_policy group_by_prio
		prio alua
		hardware_handler "1 alua"
		path_selector "service-time 0"'
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
		vendor "$1"
		product "$2"
		$policy
		path_checker tur
		failback immediate
		no_path_retry 30
	}
}
EOF
	multipathd
}

path_state() { # DEV -> "dm-state checker-state", e.g. "active ready"
	multipathd show paths raw format "%d %t %T" 2>/dev/null | awk -v d="$1" '$1 == d {print $2, $3}'
}
dm_state() { path_state "$1" | awk '{print $1}'; } # active | failed

# mpath_one_map DEV1 DEV2: wait for both paths, check there is one map of one round-robin group
# of the two with a repeat count of 1; sets MAP and MP (/dev/mapper/MAP).
mpath_one_map() {
	local table
	both_active() {
		[ "$(path_state "$1")" = "active ready" ] && [ "$(path_state "$2")" = "active ready" ]
	}
	wait_until 60 "both paths active in multipathd" both_active "$1" "$2"
	MAP=$(multipathd show maps raw format "%n")
	expect_eq "number of maps" "$(wc -l <<<"$MAP")" 1
	MP=/dev/mapper/$MAP
	multipath -ll
	table=$(dmsetup table "$MAP")
	echo "$table"
	# "... round-robin 0 2 1 MAJ:MIN 1 MAJ:MIN 1": one group, two paths, repeat count 1 each.
	grep -Eq 'round-robin 0 2 1 [0-9]+:[0-9]+ 1 [0-9]+:[0-9]+ 1 *$' <<<"$table" ||
		fail "map is not one round-robin group of two paths with rr_min_io 1"
	ok "one map $MAP, round-robin over $1 and $2, one request per path switch"
}

# balance NAME DEV1 DEV2 [FIO-ARGS]: a short verified fio on the map (4 KiB random writes over
# 8 MiB unless FIO-ARGS say otherwise); each path gets >= 20% of the requests (counted by the
# guest's per-device completions).
balance() {
	local a1 a2 b1 b2 t name=$1 p1=$2 p2=$3
	shift 3
	a1=$(blk_ios "$p1") a2=$(blk_ios "$p2")
	fio_run "$name" --filename="$MP" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
		--bs=4k --size=8M --verify=crc32c --do_verify=1 --verify_fatal=1 "$@"
	b1=$(($(blk_ios "$p1") - a1)) b2=$(($(blk_ios "$p2") - a2))
	t=$((b1 + b2))
	say "requests: $p1 $b1, $p2 $b2"
	[ $((b1 * 5)) -ge "$t" ] && [ $((b2 * 5)) -ge "$t" ] ||
		fail "round-robin not spreading I/O: $p1 $b1, $p2 $b2"
	ok "both paths carried I/O ($b1 / $b2)"
}

# fio_loop_start FIO-ARGS...: verified fio runs on the map back to back, in the background,
# until fio_loop_finish: however fast or slow the guest, I/O is in flight while a path dies and
# comes back.  Each run writes 16 MiB with crc32c and verifies it (inline every 256 writes and
# at the end); its exit status goes to /tmp/fio-loop/N.rc.  Sets FIO_LOOP_PID.
fio_loop_start() {
	rm -rf /tmp/fio-loop /tmp/fio-stop
	mkdir -p /tmp/fio-loop
	(
		n=0
		until [ -e /tmp/fio-stop ]; do
			n=$((n + 1)) rc=0
			fio --name=loop$n --filename="$MP" --direct=1 --ioengine=libaio --iodepth=16 \
				--rw=randwrite --size=16M --verify=crc32c --verify_backlog=256 \
				--do_verify=1 --verify_fatal=1 --output-format=json \
				--output=/tmp/fio-loop/$n.json "$@" >/dev/null 2>&1 || rc=$?
			echo $rc >/tmp/fio-loop/$n.rc
		done
	) &
	FIO_LOOP_PID=$!
}

# fio_loop_finish WHAT: stop the loop; fail unless every run exited 0 having written and
# verified data.
fio_loop_finish() {
	local runs bad f
	touch /tmp/fio-stop
	wait "$FIO_LOOP_PID"
	runs=$(ls /tmp/fio-loop/*.rc | wc -l)
	bad=$(grep -Lx 0 /tmp/fio-loop/*.rc || true)
	for f in $bad; do tail -20 "${f%.rc}.json" 2>/dev/null; done
	[ -z "$bad" ] || fail "fio runs failed across $1: $bad"
	python3 - "$1" /tmp/fio-loop/*.json <<'PY' || fail "fio across $1 reported an error"
import json, sys
w = r = 0
for f in sys.argv[2:]:
    j = json.load(open(f))["jobs"][0]
    if j["error"] or j["write"]["io_kbytes"] == 0 or j["read"]["io_kbytes"] == 0:
        print(f"{f}: err={j['error']} write {j['write']['io_kbytes']} read {j['read']['io_kbytes']}")
        sys.exit(1)
    w += j["write"]["io_kbytes"]; r += j["read"]["io_kbytes"]
print(f"fio across {sys.argv[1]}: {len(sys.argv) - 2} runs, wrote {w} KiB, verified {r} KiB, no error")
PY
	ok "fio across $1: $runs runs, no error, crc32c verification passed"
}

# mpath_flush_all: remove every map, waiting while one is still in use.  Right after fio exits,
# udev's probe of the map (blkid, triggered by the close of a writer) can still hold it open
# for a moment, and `multipath -F` then fails with "map in use".
mpath_flush_all() {
	udevadm settle -t 60 2>/dev/null || true
	wait_until 60 "multipath -F (maps no longer in use)" multipath -F
	ok "multipath maps removed"
}
