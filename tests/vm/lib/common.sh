# Helpers for the scripts in tests/vm/, which run INSIDE the qemu guest as root
# (scripts/vm/guest-run.sh starts them; /src is the source tree, /out this run's folder on the
# host, /out/target.env the host-side target fixture from scripts/vm/host-target.sh).
# Source it: . /src/tests/vm/lib/common.sh

set -euo pipefail
cd /tmp # /src is read-only; tools drop state files in the working directory
T0=$SECONDS
QUICK=0
for _a in "$@"; do if [ "$_a" = quick ]; then QUICK=1; fi; done

say() { printf '[%4ds] %s\n' $((SECONDS - T0)) "$*"; }
step() { printf '\n[%4ds] == %s\n' $((SECONDS - T0)) "$*"; }
# To stderr: fail is often called inside $(...), whose stdout is captured.
# A test may define on_fail (a function printing its own diagnostics).
fail() {
	printf '[%4ds] FAIL: %s\n' $((SECONDS - T0)) "$*" >&2
	if declare -F on_fail >/dev/null; then on_fail >&2 || true; fi
	exit 1
}
# Background jobs (fio...) hold the console pipe open: end them with the script.
trap 'jobs -p | xargs -r kill 2>/dev/null || true' EXIT
ok() { printf '[%4ds] ok: %s\n' $((SECONDS - T0)) "$*"; }
# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	ok "$1 = $3"
}

# wait_until SECONDS DESCRIPTION CMD...: poll CMD every 0.2 s until it succeeds, bounded.
# A wait for a condition, never a delay: the bound only says how long a real failure takes to
# report, so it is at least 60 s everywhere (a TCG guest on a loaded host can stall for
# seconds: see run-guest.sh's watchdog_thresh).
wait_until() {
	local limit=$1 what=$2 end
	shift 2
	end=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || fail "timed out after ${limit}s waiting for: $what"
		sleep 0.2
	done
}

load_target_env() {
	[ -f /out/target.env ] || fail "/out/target.env missing: no host-side target fixture"
	# shellcheck disable=SC1091
	. /out/target.env
	say "target: $TGT_KIND at $TGT_HOST ports $TGT_PORT1,$TGT_PORT2"
}

start_udev() {
	/lib/systemd/systemd-udevd --daemon
	udevadm trigger --action=add --type=subsystems
	udevadm trigger --action=add --type=devices
	udevadm settle -t 60
}

# iscsid with timeouts fit for tests: a lost path is declared dead after a few seconds (the
# defaults wait 120 s before failing I/O up to dm-multipath).  A cut portal is seen at once
# (tests/vm/multipath.sh answers what is sent to it with a TCP reset; a NOP-Out every 2 s
# makes sure something is sent), so the NOP-Out timeout only decides when a slow but healthy
# path is taken for dead: 15 s, not 3 s, so that a guest vCPU stalled for a few seconds on a
# loaded host does not fail the path that is supposed to carry the I/O.
start_iscsid() {
	# No udevd loading drivers by modalias: sd and sg by hand.
	modprobe -a iscsi_tcp sd_mod sg
	modprobe -q crc32c_generic || true
	local conf=/etc/iscsi/iscsid.conf
	sed -i -e 's/^node.startup = .*/node.startup = manual/' \
		-e 's/^node.session.timeo.replacement_timeout = .*/node.session.timeo.replacement_timeout = 5/' \
		-e 's/^node.conn\[0\].timeo.noop_out_interval = .*/node.conn[0].timeo.noop_out_interval = 2/' \
		-e 's/^node.conn\[0\].timeo.noop_out_timeout = .*/node.conn[0].timeo.noop_out_timeout = 15/' \
		-e 's/^node.session.initial_login_retry_max = .*/node.session.initial_login_retry_max = 2/' \
		"$conf"
	iscsid
	wait_until 60 "iscsid" iscsiadm -m iface
}

# iscsi_node_new IQN PORT: a node record for IQN at the host's address.  Discovery answers
# carry the address the target sees (127.0.0.1 through qemu's NAT), useless in here.
iscsi_node_new() {
	iscsiadm -m node -o new -T "$1" -p "$TGT_HOST:$2" >/dev/null
}
iscsi_node_set() { # IQN PORT NAME VALUE
	iscsiadm -m node -T "$1" -p "$TGT_HOST:$2" -o update -n "$3" -v "$4"
}
iscsi_login() { iscsiadm -m node -T "$1" -p "$TGT_HOST:$2" --login; }
iscsi_logout() { iscsiadm -m node -T "$1" -p "$TGT_HOST:$2" --logout; }

# session_of IQN PORT: the iscsi_session sysfs name (sessionN) logged in to IQN via PORT.
session_of() {
	local s c
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] || continue
		[ "$(cat "$s/targetname")" = "$1" ] || continue
		for c in /sys/class/iscsi_connection/connection"${s##*session}":*; do
			[ "$(cat "$c/persistent_port" 2>/dev/null)" = "$2" ] && { basename "$s"; return 0; }
		done
	done
	return 1
}

# session_disk IQN PORT LUN: /dev/sdX of LUN in that session, waiting for the scan (bounded).
session_disk() {
	local sess end dev
	end=$((SECONDS + 120))
	while :; do
		if sess=$(session_of "$1" "$2"); then
			dev=$(ls /sys/class/iscsi_session/"$sess"/device/target*/*:*:*:"$3"/block/ 2>/dev/null |
				awk 'NR == 1')
			if [ -n "$dev" ] && [ -b "/dev/$dev" ]; then
				echo "/dev/$dev"
				return 0
			fi
		fi
		[ $SECONDS -lt $end ] || fail "no disk for $1 via port $2 LUN $3 after 120 s"
		sleep 0.2
	done
}

# Allocated bytes of a file on the HOST: /out is the host folder through 9p, whose getattr
# returns the host's own st_blocks (no client cache: cache=none is the 9p default).
host_alloc_bytes() { echo $(($(stat -c %b "$1") * 512)); }

# Read one counter of /sys/block/DEV/stat: 1 = reads completed, 5 = writes completed.
blk_ios() {
	local f
	read -r -a f <"/sys/block/$(basename "$1")/stat"
	echo $((f[0] + f[4]))
}

# fio_run NAME FIO-ARGS...: run one fio job; fail unless it ended without error having moved
# data.  Prints "NAME: err=E read R KiB write W KiB" and leaves the JSON in /tmp/fio-NAME.json.
fio_run() {
	local name=$1
	shift
	if ! fio --name="$name" --output-format=json --output="/tmp/fio-$name.json" "$@"; then
		cat "/tmp/fio-$name.json" 2>/dev/null | tail -30
		fail "fio $name exited non-zero"
	fi
	python3 - "/tmp/fio-$name.json" "$name" <<'PY' || fail "fio $name reported an error"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r, w = j["read"]["io_kbytes"], j["write"]["io_kbytes"]
print(f"{sys.argv[2]}: err={j['error']} read {r} KiB write {w} KiB "
      f"({j['read']['bw']} / {j['write']['bw']} KiB/s)")
sys.exit(1 if j["error"] or r + w == 0 else 0)
PY
}

# check_lu0_identity DEV: the LU of the fixture's LU0_* description as the kernel and
# sg3_utils see it: size (blockdev and READ CAPACITY 16), vendor, product, serial (VPD 80),
# the designator text and an NAA designator in VPD 83, a kernel WWID.  Leaves READ
# CAPACITY's output in LU_READCAP, the block size in LU_BSZ and the WWID in LU_WWID.
check_lu0_identity() {
	local dev=$1 blocks inq vpd83
	expect_eq "size (blockdev)" "$(blockdev --getsize64 "$dev")" "$LU0_BYTES"
	LU_READCAP=$(sg_readcap -l "$dev")
	echo "$LU_READCAP"
	blocks=$(sed -n 's/.*Number of logical blocks=\([0-9]*\).*/\1/p' <<<"$LU_READCAP")
	LU_BSZ=$(sed -n 's/.*Logical block length=\([0-9]*\) bytes.*/\1/p' <<<"$LU_READCAP")
	expect_eq "size (READ CAPACITY 16)" "$((blocks * LU_BSZ))" "$LU0_BYTES"
	inq=$(sg_inq "$dev")
	expect_eq "vendor" "$(sed -n 's/^ *Vendor identification: *//p' <<<"$inq" | sed 's/ *$//')" \
		"$LU0_VENDOR"
	expect_eq "product" "$(sed -n 's/^ *Product identification: *//p' <<<"$inq" | sed 's/ *$//')" \
		"$LU0_PRODUCT"
	expect_eq "serial (VPD 80)" "$(sg_vpd -p sn "$dev" | sed -n 's/^ *Unit serial number: *//p')" \
		"$LU0_SERIAL"
	vpd83=$(sg_vpd -p di "$dev")
	echo "$vpd83"
	# The designator text may be split by sg_vpd (vendor id / vendor specific): look in the
	# raw page.
	grep -qaF "$LU0_DEVID" "/sys/block/${dev#/dev/}/device/vpd_pg83" ||
		fail "VPD 83 has no designator with '$LU0_DEVID'"
	grep -q "designator type: NAA" <<<"$vpd83" || fail "VPD 83 has no NAA designator"
	ok "VPD 83 carries '$LU0_DEVID' and an NAA designator"
	# The kernel builds the device's WWID from VPD 83 too; it must be there and stable.
	LU_WWID=$(cat "/sys/block/${dev#/dev/}/device/wwid")
	[ -n "$LU_WWID" ] || fail "kernel found no WWID"
	ok "kernel WWID: $LU_WWID"
}

# ext4_roundtrip DEV: mkfs.ext4, files of odd sizes (4 quick, else 16) and a small one in a
# subdirectory, unmount, drop every cached page, mount read-only, compare, e2fsck -fn.
ext4_roundtrip() {
	local dev=$1 nfiles t0=$SECONDS
	nfiles=$([ "$QUICK" = 1 ] && echo 4 || echo 16)
	mkfs.ext4 -q -F "$dev"
	mkdir -p /mnt/lu
	mount "$dev" /mnt/lu
	for i in $(seq 1 "$nfiles"); do
		head -c $((1024 * 1024 + i * 4099)) /dev/urandom >"/mnt/lu/f$i"
	done
	mkdir -p /mnt/lu/dir/sub && echo "hello utgt" >/mnt/lu/dir/sub/small
	(cd /mnt/lu && find . -type f -print0 | sort -z | xargs -0 md5sum) >/tmp/sums
	umount /mnt/lu
	# Drop every cached page so the second read comes from the target.
	blockdev --flushbufs "$dev"
	echo 3 >/proc/sys/vm/drop_caches
	mount -o ro "$dev" /mnt/lu
	(cd /mnt/lu && md5sum --quiet -c /tmp/sums) || fail "file contents differ after remount"
	umount /mnt/lu
	e2fsck -fn "$dev" >/tmp/fsck.log 2>&1 || { cat /tmp/fsck.log; fail "e2fsck reports errors"; }
	ok "$((nfiles + 1)) files identical after remount, e2fsck -fn clean ($((SECONDS - t0)) s)"
}

# fio_verify_pair DEV: fio crc32c write + verify, 4 KiB random then 1 MiB sequential
# (8 + 32 MiB quick, else 32 + 128 MiB).
fio_verify_pair() {
	local dev=$1 small=32M large=128M job t0
	[ "$QUICK" = 1 ] && small=8M large=32M
	for job in "rand4k 4k $small randwrite" "seq1m 1M $large write"; do
		set -- $job
		t0=$SECONDS
		fio_run "$1" --filename="$dev" --direct=1 --ioengine=libaio --iodepth=16 --rw="$4" \
			--bs="$2" --size="$3" --verify=crc32c --do_verify=1 --verify_fatal=1
		ok "fio $1 wrote and verified $3 ($((SECONDS - t0)) s)"
	done
}
