# Helpers for the SRP guest tests (tests/vm/srp*.sh): soft-RoCE on eth0, utgtd run INSIDE the
# guest as an ib_srpt target on rxe0, Linux's ib_srp logged in through RDMA/CM with the line
# `utgtd --show-srp-login` prints.  Source after common.sh.
#
# Arguments understood by the scripts (scripts/vm/run-guest.sh -a ...): quick, and
# build=DIR to run /src/DIR/utgtd instead of /src/build/utgtd.
. /src/tests/vm/lib/rdma.sh

SRP_PORT=5555
SRP_PORT2=5556
BUILD_DIR=build
for a in "$@"; do
	case $a in build=*) BUILD_DIR=${a#build=} ;; esac
done
UTGTD=/src/$BUILD_DIR/utgtd
SRP_DIR=/tmp/srp
SRP_CONF=$SRP_DIR/scst.conf
SRP_LOG=/out/utgtd.log
SRP_IMG=/var/tmp/srp0.img # ext4 root: fileio wants a real filesystem
SRP_MB=256
UTGTD_PID=

# rxe0 on eth0, the RDMA/CM user-space interface and the SRP initiator (ib_srp with the
# module parameters given).
rxe_up() {
	modprobe ib_srp "$@"
	rxe_link_up
	wait_until 60 "srp-rxe0-1" test -e /sys/class/infiniband_srp/srp-rxe0-1/add_target
}

# The scst.conf the seed's users write, with rxe0's GID as the TARGET name.  write_conf nullio:
# the same LU on vdisk_nullio (no file, no backstore threads).
write_conf() {
	local handler=vdisk_fileio file="filename $SRP_IMG"
	if [ "${1:-}" = nullio ]; then
		handler=vdisk_nullio file="# no file"
	fi
	mkdir -p "$SRP_DIR"
	cat >"$SRP_CONF" <<EOF
HANDLER $handler {
	DEVICE dev-srp0 {
		$file
		size_mb $SRP_MB
		t10_vend_id UTGT
		prod_id SRPDISK0
		usn UTGTSRP000000001
	}
}

TARGET_DRIVER copy_manager {
	TARGET copy_manager_tgt {
		LUN 0 dev-srp0
	}
}

TARGET_DRIVER ib_srpt {
	enabled 1
	listen 0.0.0.0:$SRP_PORT
	listen 0.0.0.0:$SRP_PORT2
	${SRPT_EXTRA:-}
	TARGET $RXE_GID {
		enabled 1
		rel_tgt_id 1
		LUN 0 dev-srp0
	}
}
EOF
}

utgtd_start() {
	"$UTGTD" --check -c "$SRP_CONF" >/dev/null || fail "utgtd --check refused $SRP_CONF"
	"$UTGTD" -f -c "$SRP_CONF" >>"$SRP_LOG" 2>&1 &
	UTGTD_PID=$!
	wait_until 60 "utgtd listening on RDMA/CM :$SRP_PORT" listening "$SRP_PORT"
	say "utgtd (pid $UTGTD_PID) listening on :$SRP_PORT and :$SRP_PORT2"
}

# utgtd_stop: SIGTERM, bounded wait; the exit status in UTGTD_RC.
UTGTD_RC=
utgtd_stop() {
	local i
	UTGTD_RC=
	[ -n "$UTGTD_PID" ] || return 0
	kill -TERM "$UTGTD_PID" 2>/dev/null || true
	for i in $(seq 1 150); do
		kill -0 "$UTGTD_PID" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$UTGTD_PID" 2>/dev/null; then
		kill -KILL "$UTGTD_PID"
		UTGTD_PID=
		fail "utgtd did not exit within 30 s of SIGTERM"
	fi
	UTGTD_RC=0
	wait "$UTGTD_PID" || UTGTD_RC=$?
	UTGTD_PID=
}

# The add_target line for DEST (ADDR:PORT) from --show-srp-login.
srp_line() {
	"$UTGTD" --show-srp-login -c "$SRP_CONF" | grep -v '^#' | grep "dest=$1\$" | head -1
}

# srp_add LINE INITIATOR_EXT [MORE]: log in.
srp_add() {
	echo "$1,initiator_ext=$2${3:+,$3}" >/sys/class/infiniband_srp/srp-rxe0-1/add_target
}

# SCSI hosts of ib_srp, newest last.
srp_hosts() {
	local h
	for h in /sys/class/scsi_host/host*; do
		if [ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ]; then basename "$h"; fi
	done | sort -V
}

# srp_disk HOST: its LUN 0 block device, waiting for the scan (bounded).
srp_disk() {
	local end=$((SECONDS + 30)) dev
	while :; do
		dev=$(ls /sys/class/scsi_host/"$1"/device/target*/*:*:*:0/block/ 2>/dev/null |
			head -1) || true # not scanned yet
		[ -n "$dev" ] && [ -b "/dev/$dev" ] && { echo "/dev/$dev"; return 0; }
		[ $SECONDS -lt $end ] || fail "no disk on $1 after 30 s"
		sleep 0.2
	done
}

# Remote port of a SCSI host (for delete): /sys/class/srp_remote_ports/port-<host_no>:<n>.
srp_rport() {
	local p
	for p in /sys/class/srp_remote_ports/port-"${1#host}":*; do
		[ -e "$p" ] && { echo "$p"; return 0; }
	done
	return 0
}

srp_on_fail() {
	echo "---- utgtd log (last 40 lines)"
	tail -40 "$SRP_LOG" 2>/dev/null || true
	echo "---- rdma resources"
	rdma resource show cm_id 2>/dev/null | head -20 || true
	echo "---- dmesg (ib_srp, rxe)"
	dmesg | grep -iE 'srp|rxe|scsi' | tail -30 || true
}

# lio_srpt_lun0 PORT HBA/DEV: LIO's ib_srpt target on rxe0's port ($GUID, the port GID's
# interface id; ib_srpt names the TPG after the port too) with configfs core/HBA/DEV as LUN 0,
# open to the guest's own initiator, listening on RDMA/CM PORT.  Sets LIO_TPG.
lio_srpt_lun0() {
	local T=/sys/kernel/config/target ini
	mkdir -p $T/srpt
	[ -e $T/srpt/discovery_auth/rdma_cm_port ] && echo "$1" >$T/srpt/discovery_auth/rdma_cm_port
	LIO_TPG=$T/srpt/$GUID/$GUID
	mkdir -p "$LIO_TPG/lun/lun_0"
	# configfs resolves a symlink's target from the current directory
	(cd "$LIO_TPG/lun/lun_0" && ln -s "../../../../../core/$2" .)
	# ib_srpt names an RDMA/CM initiator by its address, an IB one by its port GUID or id
	for ini in "$GUEST_IP" "$GUID" "0x0000000000000002${GUID//:/}"; do
		mkdir "$LIO_TPG/acls/$ini" 2>/dev/null || continue
		mkdir "$LIO_TPG/acls/$ini/lun_0"
		(cd "$LIO_TPG/acls/$ini/lun_0" && ln -s ../../../lun/lun_0 .)
	done
	echo 1 >"$LIO_TPG/enable"
	wait_until 20 "LIO listening on :$1" listening "$1"
}
