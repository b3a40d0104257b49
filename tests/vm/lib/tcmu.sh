# Helpers for the TCMU guest tests (tests/vm/tcmu*.sh): utgtd in the guest serving LIO user
# backstores, LIO objects made through configfs.  Source right after common.sh; it reads the
# script's arguments (build=DIR: run /src/DIR/utgtd and utgtadm; default build).
BUILD_DIR=build
for a in "$@"; do
	case $a in build=*) BUILD_DIR=${a#build=} ;; esac
done
UTGTD=/src/$BUILD_DIR/utgtd
DIR=/tmp/tcmu
CONF=$DIR/scst.conf
LOG=/out/utgtd.log
CFS=/sys/kernel/config/target
CORE=$CFS/core/user_0
LOOP=$CFS/loopback/naa.5001405000000001
TCMU_STATE=/tmp/tcmu-state
TCMU_SOCK=$TCMU_STATE/utgtd.sock
UTGTADM="/src/$BUILD_DIR/utgtadm -s $TCMU_SOCK"
UTGTD_PID=

tcmu_modules() {
	modprobe -a target_core_user tcm_loop sd_mod sg
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	[ -d "$CFS" ] || fail "no $CFS after modprobe"
}

utgtd_start() {
	mkdir -p "$TCMU_STATE"
	"$UTGTD" -f -c "$CONF" --state-dir "$TCMU_STATE" >>"$LOG" 2>&1 &
	UTGTD_PID=$!
	wait_until 60 "utgtd watching for TCMU devices" grep -q "tcmu: watching" "$LOG"
}

utgtd_stop() {
	local i
	UTGTD_RC=
	kill -TERM "$UTGTD_PID" 2>/dev/null || true
	for i in $(seq 1 150); do
		kill -0 "$UTGTD_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$UTGTD_PID" 2>/dev/null && { kill -KILL "$UTGTD_PID"; UTGTD_PID=; fail "utgtd did not exit within 30 s of SIGTERM"; }
	UTGTD_RC=0
	wait "$UTGTD_PID" || UTGTD_RC=$?
	UTGTD_PID=
}

# user_backstore NAME DEV_CONFIG SIZE_MB [CONTROL...]: create and enable an LIO user backstore.
user_backstore() {
	local name=$1 cfg=$2 mb=$3 c
	shift 3
	mkdir -p "$CORE/$name"
	echo "dev_config=$cfg" >"$CORE/$name/control"
	echo "dev_size=$((mb << 20))" >"$CORE/$name/control"
	for c in "$@"; do echo "$c" >"$CORE/$name/control"; done
	enable_backstore "$CORE/$name"
}

# enable_backstore DIR: echo 1 > DIR/enable.  While a handler daemon has LIO's TCM-USER netlink
# interface blocked (tcmu-runner does while it starts up) the kernel fails the enable with
# EAGAIN ("Failing nl cmd 1 on NAME. Interface is blocked."): retry that, and only that, for up
# to 30 s; any other error is the caller's to see.
enable_backstore() {
	local err i
	for i in $(seq 300); do
		err=$({ echo 1 >"$1/enable"; } 2>&1) && return 0
		case $err in
		*"temporarily unavailable"*) sleep 0.1 ;;
		*) echo "$err" >&2; return 1 ;;
		esac
	done
	echo "$err (still blocked after 30 s)" >&2
	return 1
}

# loop_lun LUN BACKSTORE-DIR: map a backstore (core/<hba>/<name>) as tcm_loop LUN.
loop_lun() {
	mkdir -p "$LOOP/tpgt_1/lun/lun_$1"
	[ -n "$(cat "$LOOP/tpgt_1/nexus" 2>/dev/null)" ] || echo naa.5001405000000002 >"$LOOP/tpgt_1/nexus"
	ln -s "$2" "$LOOP/tpgt_1/lun/lun_$1/$(basename "$2")"
}

loop_unmap() { # LUN
	local l
	for l in "$LOOP"/tpgt_1/lun/lun_"$1"/*; do [ -L "$l" ] && rm "$l"; done
	rmdir "$LOOP/tpgt_1/lun/lun_$1"
}

loop_disk() { # LUN: the sd disk behind tcm_loop's LUN
	local h d
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = tcm_loopback ] || continue
		d=$(ls "$h"/device/target*/*:*:*:"${1:-0}"/block/ 2>/dev/null | head -1) || true
		[ -n "$d" ] && [ -b "/dev/$d" ] && { echo "/dev/$d"; return 0; }
	done
	return 1
}

# tcmu_counter LIO-DEVICE NAME: one counter of `utgtadm show devices --json` for that backstore.
tcmu_counter() {
	$UTGTADM --json show devices | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    for t in d.get("tcmu", []):
        if t["lio_device"] == sys.argv[1]:
            print(t[sys.argv[2]]); sys.exit(0)
sys.exit(1)' "$1" "$2"
}
