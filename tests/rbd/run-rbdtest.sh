#!/usr/bin/env bash
# make rbdtest: vdisk_rbd against a real Ceph cluster brought up here (scripts/ceph-cluster.sh,
# 1 mon + 1 mgr + 1 memstore OSD on 127.0.0.1), served by build/utgtd over iSCSI.
#
#   0. utgtadm show devices names the image and its size (and, after step 2, the lock owner
#      and the cluster's health).
#   1. iscsi-test-cu --dataloss ALL on an RBD LU and, side by side in the same run, on a
#      vdisk_fileio LU of the same geometry (thin, 64 MiB, 512n); MultipathIO over two portals
#      on the RBD LU.  Every test must end on the RBD LU as on the fileio LU, except the ones in
#      RBD_KNOWN below, each with its reason; a test that fails on fileio fails this run too.
#   2. utgt-bench --verify=crc32c on a second RBD LU: 4 KiB random writes at QD 16 and 1 MiB
#      sequential writes at QD 16, each read back and checked (0 errors).
#   3. tests/rbd/rbd_faults.py on a third RBD LU: COMPARE AND WRITE done by the cluster
#      (miscompare offset), `rbd resize` -> UNIT ATTENTION 2A/09 and the new capacity, the OSD
#      stopped past the LU's 4 s op timeout -> ABORTED COMMAND 3E/02, then GOOD again, the
#      gateway's client blocklisted -> writes end NOT READY 04/0C (never GOOD).
#   4. tests/rbd/rbd_pr.py: two more utgtd gateways (rel_tgt_id 1 and 2) on a fourth image:
#      persistent reservations made through one are seen and enforced through the other,
#      concurrent REGISTERs through both lose none, APTPL and restarts, iscsi-test-cu's PR
#      tests with one initiator on each gateway, a silent gateway fenced; PR OUT cost.
#   5. every tests/rbd/suite_*.sh, on the same cluster: suite_gateways.sh runs two gateways
#      on one image with ALUA following its exclusive lock, one killed under a verified run.
#
# About 3 minutes once the packages are there (scripts/deps.sh rbd: ~80 s more on a fresh
# machine).  Environment: UTGTD (default build/utgtd), KEEP=1 keeps the work directory.
set -u
cd "$(dirname "$0")/../.."
UTGTD=${UTGTD:-build/utgtd}
BENCH=${BENCH:-build/utgt-bench}
IQN=iqn.2026-12.org.utgt:rbdtest
CU_TIMEOUT=${CU_TIMEOUT:-400}

# Tests that end differently on an RBD LU than on a fileio LU, and why.
# None today: on Ceph 16.2.15 the RBD LU passes every test the fileio LU passes.
declare -A RBD_KNOWN=()

for t in iscsi-test-cu python3 jq; do
	command -v $t >/dev/null || { echo "rbdtest: $t missing (scripts/deps.sh)"; exit 1; }
done
[ -x "$UTGTD" ] && [ -x "$BENCH" ] || { echo "rbdtest: build utgtd and utgt-bench first (make)"; exit 1; }
WORK=$(mktemp -d /tmp/utgt-rbdtest.XXXXXX)
printf 'HANDLER vdisk_rbd {\n\tDEVICE p {\n\t\tpool p\n\t\timage i\n\t}\n}\n' >"$WORK/probe.conf"
if ! "$UTGTD" --check -c "$WORK/probe.conf" >"$WORK/probe.log" 2>&1; then
	echo "rbdtest: $UTGTD cannot serve vdisk_rbd:"
	cat "$WORK/probe.log"
	rm -rf "$WORK"
	exit 1
fi
CEPHDIR=$WORK/ceph
PID=
# utgtd first (bench_env.sh's ub_cleanup stops what PIDS lists): it closes its images while
# the cluster still answers
cleanup() {
	ub_cleanup
	[ -e "$CEPHDIR/.utgt-ceph-cluster" ] && scripts/ceph-cluster.sh stop "$CEPHDIR" >/dev/null 2>&1
	if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}

# bench_env.sh: pick_port, wait_for, and ok/bad (which count failures in $fails); its EXIT
# trap is replaced by ours, which calls it
. tests/integration/lib/bench_env.sh
trap cleanup EXIT
pass=0 fails=0
passed() {
	ok "$@"
	pass=$((pass + 1))
}

t0=$SECONDS
scripts/ceph-cluster.sh start "$CEPHDIR" || { echo "rbdtest: FAIL: no cluster"; exit 1; }
. "$CEPHDIR/env"
for img in cu:64M bench:256M faults:64M; do
	rbd create --size "${img#*:}" "rbd/${img%%:*}" || { echo "rbdtest: FAIL: rbd create $img"; exit 1; }
done
# the faults LU gives up on a silent OSD after 4 s instead of 30
cp "$CEPH_CONF" "$WORK/faults.conf"
printf '[client]\nrados osd op timeout = 4\n' >>"$WORK/faults.conf"

pick_port P1
pick_port P2
NOP='NopInInterval 0'
cat >"$WORK/utgtd.conf" <<EOF
HANDLER vdisk_rbd {
	DEVICE rcu {
		pool rbd
		image cu
		ceph_conf $CEPH_CONF
		ceph_user admin
		size_mb 64
		lb_per_pb_exp 0
	}
	DEVICE rbench {
		pool rbd
		image bench
		ceph_conf $CEPH_CONF
	}
	DEVICE rfaults {
		pool rbd
		image faults
		ceph_conf $WORK/faults.conf
	}
}
HANDLER vdisk_fileio {
	DEVICE fcu {
		filename $WORK/fcu.img
		size_mb 64
		thin_provisioned 1
		lb_per_pb_exp 0
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$P1
	listen 127.0.0.1:$P2
	TARGET $IQN:rbd {
		enabled 1
		$NOP
		LUN 0 rcu
	}
	TARGET $IQN:fileio {
		enabled 1
		$NOP
		LUN 0 fcu
	}
	TARGET $IQN:bench {
		enabled 1
		LUN 0 rbench
	}
	TARGET $IQN:faults {
		enabled 1
		LUN 0 rfaults
	}
}
EOF
"$UTGTD" -f -c "$WORK/utgtd.conf" --state-dir "$WORK" --admin-socket "$WORK/utgtd.sock" \
	>"$WORK/utgtd.log" 2>&1 &
PID=$!
PIDS+=("$PID")
# bench_env.sh's wait_for: the ports listening (or 60 s); opening three images takes a while
if ! wait_for port_listening "$P1" || ! wait_for port_listening "$P2"; then
	echo "rbdtest: FAIL: utgtd did not start:"
	cat "$WORK/utgtd.log"
	exit 1
fi
url() { echo "iscsi://127.0.0.1:$1/$IQN:$2/0"; }

shown=$("$(dirname "$UTGTD")/utgtadm" -s "$WORK/utgtd.sock" show devices --json |
	jq -c '.devices[] | select(.name == "rcu") | [.rbd_image, .open, .size, .block_size]')
if [ "$shown" = '["rbd/cu",true,67108864,512]' ]; then
	passed "utgtadm show devices: rcu serves rbd/cu, 64 MiB in 512-byte blocks"
else
	bad "utgtadm show devices: rcu is $shown"
fi

# 1. libiscsi's suite, RBD and fileio side by side
run_cu() { # TAG TESTS URL...
	local tag=$1 tests=$2
	shift 2
	timeout --foreground -k 10 "$CU_TIMEOUT" iscsi-test-cu --dataloss --test="$tests" "$@" \
		>"$WORK/cu-$tag.log" 2>&1
	awk -v tag="$tag" -f tests/conformance/cu_results.awk "$WORK/cu-$tag.log" >"$WORK/res-$tag"
}
tc=$SECONDS
run_cu rbd ALL "$(url $P1 rbd)" &
j1=$!
run_cu fileio ALL "$(url $P2 fileio)" &
j2=$!
wait $j1 $j2
run_cu rbd-mp ALL.MultipathIO "$(url $P1 rbd)" "$(url $P2 rbd)"
# the MultipathIO verdicts replace the single-path skips of the ALL run
awk 'NR == FNR { mp[$1] = $2; next } ($1 in mp) { $2 = mp[$1] } { print }' \
	"$WORK/res-rbd-mp" "$WORK/res-rbd" >"$WORK/res-rbd.all"
counts() { awk '{ n[$2]++ } END { printf "%d passed, %d failed, %d skipped", n["passed"], n["failed"], n["skipped"] }' "$1"; }
echo "iscsi-test-cu --dataloss ALL ($((SECONDS - tc)) s):"
echo "  rbd LU    : $(counts "$WORK/res-rbd.all")  (MultipathIO over two portals)"
echo "  fileio LU : $(counts "$WORK/res-fileio")"
cu_bad=0
while read -r name st_rbd _; do
	st_file=$(awk -v n="$name" '$1 == n { print $2 }' "$WORK/res-fileio")
	if [ -n "${RBD_KNOWN[$name]:-}" ]; then
		echo "  known: $name: rbd $st_rbd, fileio $st_file: ${RBD_KNOWN[$name]}"
		[ "$st_file" = failed ] && { bad "$name fails on fileio too"; cu_bad=1; }
		continue
	fi
	if [ "$st_rbd" = failed ]; then
		bad "iscsi-test-cu $name failed on the RBD LU (fileio: ${st_file:-not run})"
		cu_bad=1
	elif [ "$st_file" = failed ]; then
		bad "iscsi-test-cu $name failed on the fileio LU"
		cu_bad=1
	elif [ "$st_rbd" = skipped ] && [ "$st_file" = passed ]; then
		bad "iscsi-test-cu $name passed on fileio but was skipped on RBD"
		cu_bad=1
	fi
done <"$WORK/res-rbd.all"
skipped_both=$(awk 'NR == FNR { if ($2 == "skipped") s[$1] = 1; next } $2 == "skipped" && s[$1] { printf " %s", $1 }' \
	"$WORK/res-fileio" "$WORK/res-rbd.all")
# Skipped on both: they need a removable medium, a read-only LU, --allow-sanitize, or a
# geometry these two LUs do not have; make conformance runs each of them on a fileio or ramdisk
# LU that has it, and none of them depends on the backstore.
[ -n "$skipped_both" ] && echo "  skipped on both LUs (make conformance runs them on LUs built for them):$skipped_both"
[ "$(wc -l <"$WORK/res-rbd.all")" -gt 200 ] || { bad "the RBD run reported only $(wc -l <"$WORK/res-rbd.all") tests"; cu_bad=1; }
[ $cu_bad = 0 ] && passed "iscsi-test-cu: the RBD LU ends every test as the fileio LU does${RBD_KNOWN[*]:+ (but the known ones above)}"

# 2. data through the cluster, verified
for job in "randwrite 4k 64M" "write 1M 256M"; do
	set -- $job
	out=$WORK/bench-$1.json
	if "$BENCH" --name=rbd-$1 --filename="$(url $P1 bench)" --rw=$1 --bs=$2 --iodepth=16 --size=$3 \
		--verify=crc32c --output-format=json >"$out" 2>"$WORK/bench-$1.err"; then
		errs=$(jq '[.jobs[].verify.errors] | add' "$out" 2>/dev/null)
		blocks=$(jq '[.jobs[].verify.blocks] | add' "$out" 2>/dev/null)
		iops=$(jq '[.jobs[].write.iops] | add | floor' "$out" 2>/dev/null)
		if [ "$errs" = 0 ] && [ "${blocks:-0}" -gt 0 ]; then
			passed "utgt-bench $1 bs=$2 QD16 $3 --verify=crc32c: $blocks blocks, 0 errors ($iops IOPS)"
		else
			bad "utgt-bench $1 bs=$2: verify errors: ${errs:-unreadable report}"
		fi
	else
		bad "utgt-bench $1 bs=$2 exited non-zero: $(tail -3 "$WORK/bench-$1.err")"
	fi
done

# every RBD device, not only one following its lock, names the lock owner (the client that
# wrote: this gateway) and the cluster's health in utgtadm show devices
lockshow=$("$(dirname "$UTGTD")/utgtadm" -s "$WORK/utgtd.sock" show devices --json |
	jq -c '.devices[] | select(.name == "rbench") |
		[.rbd_lock.owner == .rbd_lock.client and .rbd_lock.owner != null, .alua_state, .cluster_health]')
if [ "$lockshow" = '[true,null,"HEALTH_OK"]' ]; then
	passed "utgtadm show devices: rbench's lock owner is this gateway's client, no ALUA, HEALTH_OK"
else
	bad "utgtadm show devices: rbench [owner is this client, ALUA state, health] = $lockshow"
fi

# 3. the cluster changes under the LU
if timeout 180 python3 tests/rbd/rbd_faults.py 127.0.0.1 "$P1" "$IQN:faults" rbd/faults \
	"$(cat "$CEPHDIR/run/osd.0.pid")" >"$WORK/faults.log" 2>&1; then
	while read -r l; do passed "${l#ok: }"; done < <(grep '^ok:' "$WORK/faults.log")
else
	grep '^ok:' "$WORK/faults.log" | while read -r l; do echo "$l"; done
	bad "rbd_faults.py: $(tail -5 "$WORK/faults.log")"
fi

# 4. persistent reservations shared by two gateways on their own image (tests/rbd/rbd_pr.py)
pick_port PA
pick_port PB
if rbd create --size 64M rbd/pr &&
	timeout 400 python3 tests/rbd/rbd_pr.py "$UTGTD" "$WORK/pr" "$CEPH_CONF" rbd/pr "$PA" "$PB" \
		>"$WORK/pr.log" 2>&1; then
	while read -r l; do passed "${l#ok: }"; done < <(grep '^ok:' "$WORK/pr.log")
	grep '^figure:' "$WORK/pr.log"
else
	grep -E '^(ok|figure):' "$WORK/pr.log"
	bad "rbd_pr.py: $(grep -A12 '^FAIL' "$WORK/pr.log" | head -15)"
fi

# 5. the suites in files of their own (tests/rbd/suite_*.sh), on this cluster: each gets its
#    environment (CEPH_CONF, CEPH_ARGS) and a work directory, prints "ok: ..." per check
#    passed, "FAIL: ..." per check failed, and anything else as information
for suite in tests/rbd/suite_*.sh; do
	name=$(basename "$suite" .sh)
	ts=$SECONDS
	UTGTD=$UTGTD BENCH=$BENCH UTGTADM="$(dirname "$UTGTD")/utgtadm" timeout -k 10 600 \
		"$suite" "$WORK/$name" >"$WORK/$name.log" 2>&1
	rc=$?
	while read -r l; do
		case "$l" in
		ok:*) passed "$name: ${l#ok: }" ;;
		FAIL:*) bad "$name: ${l#FAIL: }" ;;
		*) echo "  $name: $l" ;;
		esac
	done <"$WORK/$name.log"
	[ $rc = 0 ] || grep -q '^FAIL:' "$WORK/$name.log" || bad "$name exited $rc: $(tail -3 "$WORK/$name.log")"
	echo "  $name: $((SECONDS - ts)) s"
done

if ! kill -0 $PID 2>/dev/null; then
	bad "utgtd died during the run"
	tail -20 "$WORK/utgtd.log"
fi
[ $fails = 0 ] || { KEEP=1; grep -i "error" "$WORK/utgtd.log" | tail -10; }
echo "rbdtest ($((SECONDS - t0)) s):"
echo "$pass passed, $fails failed"
[ $fails = 0 ]
