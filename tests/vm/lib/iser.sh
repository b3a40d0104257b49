# Helpers for the iSER guest tests (tests/vm/iser_*.sh): soft-RoCE rxe0 on the guest's eth0,
# one iSER target run INSIDE the guest -- utgtd, the kernel's LIO (ib_isert) or Debian's tgtd
# (its iser driver) -- and Linux's open-iscsi logging in through an iface whose transport is
# iser (ib_iser).  Source after common.sh.
#
# Arguments (scripts/vm/run-guest.sh -a A,B ...; make vmtest T=iser UTGT_VM_ARGS=A,B):
#   target=utgtd|lio|tgtd  the target under test (default utgtd; lio and tgtd are the
#                          references the tests were proven against)
#   build=DIR              run /src/DIR/utgtd (and DIR's utgtadm, utgt-bench)
#   transport=tcp          utgtd only, for checking the tests themselves while utgtd has no
#                          iSER: the same steps over iSCSI/TCP (default iface, no listen_iser);
#                          the "this session is iSER" checks are reported as skipped
#   quick                  shorter runs
#
# What utgtd is given (utgtd_conf): one TARGET_DRIVER iscsi block with a TCP `listen` and a
# `listen_iser` (RDMA CM) per portal, two targets with RDMAExtensions Yes, the second with
# IncomingUser for CHAP.  Its log is /out/target.log; its admin socket $ISER_DIR/state/utgtd.sock.
. /src/tests/vm/lib/rdma.sh

ISER_KIND=utgtd
BUILD_DIR=build
ISER_TCP=0
for _a in "$@"; do
	case $_a in
	target=*) ISER_KIND=${_a#target=} ;;
	build=*) BUILD_DIR=${_a#build=} ;;
	transport=tcp) ISER_TCP=1 ;;
	esac
done
case $ISER_KIND in
utgtd | lio | tgtd) ;;
*) fail "target=$ISER_KIND: expected target=utgtd, target=lio or target=tgtd" ;;
esac
[ "$ISER_TCP" = 0 ] || [ "$ISER_KIND" = utgtd ] || fail "transport=tcp is for target=utgtd only"

UTGTD=/src/$BUILD_DIR/utgtd
UTGTADM=/src/$BUILD_DIR/utgtadm
BENCH=/src/$BUILD_DIR/utgt-bench
ISER_DIR=/tmp/iser
ISER_LOG=/out/target.log
ISER_SOCK=$ISER_DIR/state/utgtd.sock
ISER_PORT=3260
ISER_IFACE=iser0
[ "$ISER_TCP" = 1 ] && ISER_IFACE=default
IQN_PLAIN=iqn.2026-12.org.utgt:iser
IQN_CHAP=iqn.2026-12.org.utgt:iser-chap
CHAP_USER=user1
CHAP_SECRET=secret123456
BENCH_INITIATOR=iqn.2024-01.org.utgt:bench # utgt-bench's default initiator name
# The LUs: backing files on the guest's ext4 root (fileio wants a real filesystem).
LU0_FILE=/var/tmp/iser-lu0.img LU0_MB=256
LU0_VENDOR=UTGT LU0_PRODUCT=ISERDISK0 LU0_SERIAL=UTGTISER00000001
LU1_FILE=/var/tmp/iser-lu1.img LU1_MB=64
LU1_VENDOR=UTGT LU1_PRODUCT=ISERDISK1 LU1_SERIAL=UTGTISER00000002
# LUN numbers and the text VPD page 83 must carry (the configured designator) per target:
# utgtd's t10_dev_id and tgtd's scsi_id become the T10 vendor id designator; LIO builds it from
# the product id and the unit serial number.
case $ISER_KIND in
utgtd) LU0_LUN=0 LU1_LUN=0 LU0_DEVID=iser0-t10 LU1_DEVID=iser1-t10 ;;
lio) LU0_LUN=0 LU1_LUN=0 LU0_DEVID=$LU0_PRODUCT:$LU0_SERIAL LU1_DEVID=$LU1_PRODUCT:$LU1_SERIAL ;;
tgtd) LU0_LUN=1 LU1_LUN=1 LU0_DEVID=iser0-t10 LU1_DEVID=iser1-t10 ;;
esac
LU0_BYTES=$((LU0_MB << 20))
LU1_BYTES=$((LU1_MB << 20))
UTGTD_PID=
TGTD_PID=
LIO_TIQNS=()
mkdir -p "$ISER_DIR"

# Backing files: sparse, created when missing.
iser_files() {
	[ -f "$LU0_FILE" ] || truncate -s "${LU0_MB}M" "$LU0_FILE"
	[ -f "$LU1_FILE" ] || truncate -s "${LU1_MB}M" "$LU1_FILE"
}

# iser_env_up: rxe0, ib_iser, iscsid (test timeouts from common.sh) and the iser iface.
iser_env_up() {
	rxe_link_up
	iser_initiator_up
	iser_files
}

# iser_initiator_up: ib_iser, iscsid and the iser iface, on whatever RDMA devices there are.
iser_initiator_up() {
	modprobe ib_iser
	start_iscsid
	if [ "$ISER_TCP" = 0 ]; then
		iscsiadm -m iface -I "$ISER_IFACE" -o new >/dev/null
		iscsiadm -m iface -I "$ISER_IFACE" -o update -n iface.transport_name -v iser >/dev/null
		expect_eq "iface $ISER_IFACE transport" \
			"$(iscsiadm -m iface -I "$ISER_IFACE" | sed -n 's/^iface.transport_name = //p')" iser
	else
		say "transport=tcp: open-iscsi's default iface (iSCSI/TCP), for checking the test itself"
	fi
}

# iser_addr_add IP: an extra address on eth0 (a portal of its own); the RDMA
# GID rxe0 derives from it must appear before anything listens there.
iser_gid_of() { # IP -> the IPv4-mapped GID rxe puts in its table
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}
iser_has_gid() { grep -qx "$(iser_gid_of "$1")" /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null; }
iser_addr_add() {
	ip addr add "$1/24" dev eth0
	wait_until 20 "rxe0 GID for $1" iser_has_gid "$1"
}

# iser_cut IP / iser_uncut IP: the path to a portal dies and comes back: its address leaves
# eth0 and returns.  soft-RoCE loops traffic between two local addresses back inside rxe (same
# MAC), below netfilter, so an nft rule on UDP 4791 never sees it; a policy rule prohibiting the
# address does not work either (rxe routes with an output interface set, and the kernel then
# assumes an on-link destination when the lookup fails).  With the address gone the portal's
# GID leaves rxe0's table and rxe drops what is sent to or from it ("rdma_rxe: qp#N Failed
# allocating skb"); the listener bound to it stays and serves again once the address is back.
iser_cut() { ip addr del "$1/24" dev eth0; }
iser_uncut() { iser_addr_add "$1"; }

# ---- the targets

# listener_up IP:PORT: the target listens there (RDMA CM; TCP in transport=tcp mode).
listener_up() {
	if [ "$ISER_TCP" = 1 ]; then
		ss -ltnH "sport = :${1##*:}" | grep -qE "(${1%:*}|0\.0\.0\.0|\*):${1##*:}"
	else
		listening "${1##*:}" "${1%:*}"
	fi
}

# iser_start KIND PORTAL...: start that target serving IQN_PLAIN (LU0) and IQN_CHAP (LU1, CHAP)
# through every PORTAL (IP:PORT), and wait until each portal listens.  A target that cannot
# fails the test with what it said, never a hang.
iser_start() {
	local kind=$1 p
	shift
	case $kind in
	utgtd) utgtd_start "$@" ;;
	lio) lio_start "$@" ;;
	tgtd) tgtd_start "$@" ;;
	esac
	for p in "$@"; do
		if ! (wait_until 20 "listener on $p" listener_up "$p") 2>/dev/null; then
			[ "$kind" = utgtd ] && tail -20 "$ISER_LOG" >&2
			rdma resource show cm_id >&2 || true
			fail "no iSER listener on $p after 20 s ($kind started, but nothing listens there)"
		fi
	done
	say "$kind listening on $*$([ "$ISER_TCP" = 1 ] && echo " (TCP)")"
}

# iser_stop KIND: stop it (sessions should be logged out first).
iser_stop() {
	case $1 in
	utgtd) utgtd_stop ;;
	lio) lio_stop ;;
	tgtd) tgtd_stop ;;
	esac
}

# utgtd_conf PORTAL...: the scst.conf utgtd gets (see the header).
utgtd_conf() {
	local p listen="" nl=$'\n' iser_attr="RDMAExtensions Yes"
	for p in "$@"; do
		listen+="	listen $p$nl"
		[ "$ISER_TCP" = 1 ] || listen+="	listen_iser $p$nl"
	done
	[ "$ISER_TCP" = 1 ] && iser_attr="# (transport=tcp: no RDMAExtensions)"
	cat <<EOF
HANDLER vdisk_fileio {
	DEVICE iser0 {
		filename $LU0_FILE
		size_mb $LU0_MB
		t10_vend_id $LU0_VENDOR
		prod_id $LU0_PRODUCT
		usn $LU0_SERIAL
		t10_dev_id iser0-t10
	}
	DEVICE iser1 {
		filename $LU1_FILE
		size_mb $LU1_MB
		t10_vend_id $LU1_VENDOR
		prod_id $LU1_PRODUCT
		usn $LU1_SERIAL
		t10_dev_id iser1-t10
	}
}

TARGET_DRIVER iscsi {
	enabled 1
${listen}	TARGET $IQN_PLAIN {
		enabled 1
		rel_tgt_id 1
		$iser_attr
		LUN 0 iser0
	}
	TARGET $IQN_CHAP {
		enabled 1
		rel_tgt_id 2
		$iser_attr
		IncomingUser "$CHAP_USER $CHAP_SECRET"
		LUN 0 iser1
	}
}
EOF
}

utgtd_start() {
	local out
	utgtd_conf "$@" >"$ISER_DIR/utgtd.conf"
	cp "$ISER_DIR/utgtd.conf" /out/scst.conf
	if ! out=$("$UTGTD" --check -c "$ISER_DIR/utgtd.conf" 2>&1); then
		echo "$out" | grep -v '^#' | head -20 >&2
		fail "utgtd --check refused the iSER configuration (/out/scst.conf): $(grep -m1 error <<<"$out")"
	fi
	mkdir -p "$ISER_DIR/state"
	"$UTGTD" -f -c "$ISER_DIR/utgtd.conf" --state-dir "$ISER_DIR/state" >>"$ISER_LOG" 2>&1 &
	UTGTD_PID=$!
	# It either listens or exits: wait for the first portal or its death, whichever comes
	# (iser_start then says which portal has no listener).
	utgtd_up_or_dead() { listener_up "$1" || ! kill -0 "$UTGTD_PID" 2>/dev/null; }
	(wait_until 20 "utgtd listening on $1 or exiting" utgtd_up_or_dead "$1") 2>/dev/null || true
	if ! kill -0 "$UTGTD_PID" 2>/dev/null; then
		tail -20 "$ISER_LOG" >&2
		UTGTD_PID=
		fail "utgtd exited at start instead of listening on $1 (log above)"
	fi
	say "utgtd pid $UTGTD_PID (build $BUILD_DIR), config /out/scst.conf"
}

# utgtd_stop: SIGTERM, bounded wait; the exit status in UTGTD_RC.
UTGTD_RC=
utgtd_stop() {
	UTGTD_RC=
	[ -n "$UTGTD_PID" ] || return 0
	kill -TERM "$UTGTD_PID" 2>/dev/null || true
	if ! (wait_until 60 "utgtd to exit after SIGTERM" eval "! kill -0 $UTGTD_PID 2>/dev/null") \
		2>/dev/null; then
		kill -KILL "$UTGTD_PID" 2>/dev/null
		UTGTD_PID=
		fail "utgtd did not exit within 60 s of SIGTERM"
	fi
	UTGTD_RC=0
	wait "$UTGTD_PID" || UTGTD_RC=$?
	UTGTD_PID=
}

# utgtadm_sessions: utgtd's `show sessions` answer (one JSON object).
utgtadm_sessions() { "$UTGTADM" -s "$ISER_SOCK" --json show sessions; }

# LIO: configfs, target_core_file backstores with our identity, one iSCSI target per IQN,
# a network portal per PORTAL with iser enabled on it, demo mode (dynamic ACLs), TPG CHAP.
LIO=/sys/kernel/config/target
lio_start() {
	local p tiqn
	modprobe configfs
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	modprobe -a target_core_mod target_core_file iscsi_target_mod ib_isert
	lio_lu iser0 "$LU0_FILE" "$LU0_MB" "$LU0_VENDOR" "$LU0_PRODUCT" "$LU0_SERIAL"
	lio_lu iser1 "$LU1_FILE" "$LU1_MB" "$LU1_VENDOR" "$LU1_PRODUCT" "$LU1_SERIAL"
	lio_tpg "$IQN_PLAIN" iser0 "$@"
	lio_tpg "$IQN_CHAP" iser1 "$@"
	tiqn=$LIO/iscsi/$IQN_CHAP/tpgt_1
	# no newline: LIO compares CHAP_N with what it stored, byte for byte
	printf %s "$CHAP_USER" >"$tiqn/auth/userid"
	printf %s "$CHAP_SECRET" >"$tiqn/auth/password"
	echo 1 >"$tiqn/attrib/authentication"
	for tiqn in "$IQN_PLAIN" "$IQN_CHAP"; do echo 1 >"$LIO/iscsi/$tiqn/tpgt_1/enable"; done
}
lio_lu() { # NAME FILE MB VENDOR PRODUCT SERIAL
	local d=$LIO/core/fileio_0/$1
	mkdir -p "$d"
	# write-back through the page cache with SYNCHRONIZE CACHE, as utgtd's vdisk_fileio and
	# tgtd default to: fd_buffered_io=1 (without it target_core_file opens the file O_DSYNC,
	# whatever emulate_write_cache says, and every write is several times slower here)
	echo "fd_dev_name=$2,fd_dev_size=$(($3 << 20)),fd_buffered_io=1" >"$d/control"
	echo 1 >"$d/enable"
	echo 1 >"$d/attrib/emulate_write_cache"
	printf %s "$4" >"$d/wwn/vendor_id"
	printf %s "$5" >"$d/wwn/product_id"
	printf %s "$6" >"$d/wwn/vpd_unit_serial"
}
lio_tpg() { # IQN LU PORTAL...
	local iqn=$1 tpg=$LIO/iscsi/$1/tpgt_1 lu=$2 p
	shift 2
	mkdir -p "$tpg/lun/lun_0"
	# configfs resolves a symlink's target from the current directory
	(cd "$tpg/lun/lun_0" && ln -s "../../../../../core/fileio_0/$lu" .)
	for p in "$@"; do
		mkdir "$tpg/np/$p"
		echo 1 >"$tpg/np/$p/iser"
	done
	echo 1 >"$tpg/attrib/generate_node_acls"
	echo 1 >"$tpg/attrib/cache_dynamic_acls"
	echo 0 >"$tpg/attrib/demo_mode_write_protect"
	echo 0 >"$tpg/attrib/authentication"
	LIO_TIQNS+=("$iqn")
}
# lio_relisten: LIO drops an iSER portal's listener when its RDMA device goes away and does
# not listen again by itself; turning iser off and on on each portal does.
# Targets sharing a portal share its listener: off on every one first, then on again.
lio_relisten() {
	local np nps=()
	for np in "$LIO"/iscsi/*/tpgt_1/np/*; do
		[ "$(cat "$np/iser" 2>/dev/null)" = 1 ] && nps+=("$np")
	done
	for np in "${nps[@]}"; do echo 0 >"$np/iser"; done
	for np in "${nps[@]}"; do echo 1 >"$np/iser"; done
}
lio_stop() {
	local t tpg l
	for t in "${LIO_TIQNS[@]}"; do
		tpg=$LIO/iscsi/$t/tpgt_1
		[ -d "$tpg" ] || continue
		echo 0 >"$tpg/enable"
		for l in "$tpg"/np/*; do [ -d "$l" ] && rmdir "$l"; done
		for l in "$tpg"/lun/lun_0/*; do [ -L "$l" ] && rm "$l"; done
		rmdir "$tpg/lun/lun_0" "$tpg" "$LIO/iscsi/$t"
	done
	LIO_TIQNS=()
	# a logged-out session lets go of its LUNs a little later (a workqueue)
	for l in "$LIO"/core/fileio_0/iser*; do
		[ -d "$l" ] && wait_until 20 "LIO to release $l" rmdir "$l"
	done
	return 0
}

# tgtd (Debian 1.0.85): its iser driver listens on RDMA CM port 3260 of every address (its
# `--iser port=N` option reads a stale errno and is refused), so PORTALs must be on 3260.  Its
# iSER logins fail (class 2 detail 3) unless an initiator-name ACL is bound; it ignores SIGTERM
# in -f mode.  Its TCP portal is kept off the guest's address.
tgtd_start() {
	local p adm="tgtadm --lld iser" ini
	for p in "$@"; do
		[ "${p##*:}" = 3260 ] || fail "tgtd's iSER port is 3260 whatever it is told; portal $p"
	done
	mkdir -p /var/run/tgtd
	tgtd -f --iscsi portal=127.0.0.1:3263 >>"$ISER_LOG" 2>&1 &
	TGTD_PID=$!
	wait_until 20 "tgtd's control socket" tgtadm --op show --mode sys
	ini=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
	$adm --op new --mode target --tid 1 -T "$IQN_PLAIN"
	$adm --op new --mode target --tid 2 -T "$IQN_CHAP"
	$adm --op new --mode logicalunit --tid 1 --lun 1 -b "$LU0_FILE"
	$adm --op new --mode logicalunit --tid 2 --lun 1 -b "$LU1_FILE"
	$adm --op update --mode logicalunit --tid 1 --lun 1 --params \
		"vendor_id=$LU0_VENDOR,product_id=$LU0_PRODUCT,scsi_sn=$LU0_SERIAL,scsi_id=iser0-t10"
	$adm --op update --mode logicalunit --tid 2 --lun 1 --params \
		"vendor_id=$LU1_VENDOR,product_id=$LU1_PRODUCT,scsi_sn=$LU1_SERIAL,scsi_id=iser1-t10"
	for p in 1 2; do
		$adm --op bind --mode target --tid $p -I ALL
		$adm --op bind --mode target --tid $p -Q "$ini"
		$adm --op bind --mode target --tid $p -Q "$BENCH_INITIATOR"
	done
	$adm --op new --mode account --user "$CHAP_USER" --password "$CHAP_SECRET"
	$adm --op bind --mode account --tid 2 --user "$CHAP_USER"
}
tgtd_stop() {
	[ -n "$TGTD_PID" ] || return 0
	kill -TERM "$TGTD_PID" 2>/dev/null || true
	(wait_until 3 "tgtd to exit" eval "! kill -0 $TGTD_PID 2>/dev/null") 2>/dev/null ||
		kill -KILL "$TGTD_PID" 2>/dev/null || true
	wait "$TGTD_PID" 2>/dev/null || true
	TGTD_PID=
}

# ---- the initiator (open-iscsi through $ISER_IFACE)

iser_discover() { iscsiadm -m discovery -t st -p "$1" -I "$ISER_IFACE"; }
# iser_node_new IQN PORTAL: a node record, unless discovery made one (a second record for the
# same target and portal would make every login try both).
iser_node_new() {
	iscsiadm -m node -T "$1" -p "$2" -I "$ISER_IFACE" >/dev/null 2>&1 ||
		iscsiadm -m node -o new -T "$1" -p "$2" -I "$ISER_IFACE" >/dev/null
}
iser_node_set() { iscsiadm -m node -T "$1" -p "$2" -I "$ISER_IFACE" -o update -n "$3" -v "$4"; }
iser_login() { iscsiadm -m node -T "$1" -p "$2" -I "$ISER_IFACE" --login; }
iser_logout() { iscsiadm -m node -T "$1" -p "$2" -I "$ISER_IFACE" --logout; }

# iser_session IQN IP:PORT: the sysfs name (sessionN) of the session to IQN through that portal.
iser_session() {
	local s c
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] || continue
		[ "$(cat "$s/targetname")" = "$1" ] || continue
		for c in /sys/class/iscsi_connection/connection"${s##*session}":*; do
			[ "$(cat "$c/persistent_address" 2>/dev/null):$(cat "$c/persistent_port" \
				2>/dev/null)" = "$2" ] && { basename "$s"; return 0; }
		done
	done
	return 1
}

# iser_disk IQN IP:PORT LUN: /dev/sdX of LUN in that session, waiting for the scan (bounded).
iser_disk() {
	local sess end dev
	end=$((SECONDS + 30))
	while :; do
		if sess=$(iser_session "$1" "$2"); then
			dev=$(ls /sys/class/iscsi_session/"$sess"/device/target*/*:*:*:"$3"/block/ \
				2>/dev/null | awk 'NR == 1')
			[ -n "$dev" ] && [ -b "/dev/$dev" ] && { echo "/dev/$dev"; return 0; }
		fi
		[ $SECONDS -lt $end ] || fail "no disk for $1 via $2 LUN $3 after 30 s"
		sleep 0.2
	done
}

# iser_check_transport IQN IP:PORT: the session really runs over iSER: iscsiadm reports the
# iface transport iser and its SCSI host belongs to ib_iser (proc_name iscsi_iser).
iser_check_transport() {
	local sess sid host
	sess=$(iser_session "$1" "$2") || fail "no session to $1 via $2"
	if [ "$ISER_TCP" = 1 ]; then
		say "skip: $sess transport check (transport=tcp validation run)"
		return 0
	fi
	sid=${sess#session}
	iscsiadm -m session -r "$sid" -P 1 | grep -q "Iface Transport: iser" ||
		{ iscsiadm -m session -r "$sid" -P 1; fail "$sess ($2) is not an iSER session"; }
	host=$(basename "$(readlink -f "/sys/class/iscsi_session/$sess/device/..")")
	expect_eq "$sess SCSI host driver" "$(cat "/sys/class/scsi_host/$host/proc_name")" iscsi_iser
}

# iser_state IQN IP:PORT: LOGGED_IN, FAILED, FREE... of that session.
iser_state() {
	local sess
	sess=$(iser_session "$1" "$2") || { echo none; return 0; }
	cat "/sys/class/iscsi_session/$sess/state"
}

iser_on_fail() {
	echo "---- target ($ISER_KIND) log, last 40 lines"
	tail -40 "$ISER_LOG" 2>/dev/null || true
	echo "---- RDMA CM ids"
	rdma resource show cm_id 2>/dev/null | head -20 || true
	echo "---- sessions"
	iscsiadm -m session -P 1 2>/dev/null || true
	echo "---- dmesg (iser, iscsi, rxe, sd)"
	dmesg | grep -iE 'iser|iscsi|rxe|sd |connection|session' | tail -30 || true
}

# At exit: no daemon of ours outlives the test (LIO goes with the guest).
iser_cleanup() {
	[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null
	[ -n "$TGTD_PID" ] && kill -KILL "$TGTD_PID" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null || true
}
