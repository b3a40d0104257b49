#!/bin/bash
# vm-timeout: 1800
# vm-target: none
# vm-peer: 1
# Seed 001 over iSER: the experiment of tests/vm/rdma_scaling.sh (tests/vm/lib/scaling.sh)
# with iSCSI over RDMA.  Two guests on two point-to-point soft-RoCE links; the target guest
# runs utgtd's iSCSI target with one iSER portal per link (listen_iser 10.88.L.1:3260), one
# TARGET, one RAM LU; in the initiator guest open-iscsi logs in through an iface whose
# transport is iser (ib_iser), once per portal, and dm-multipath makes one round-robin map
# (rr_min_io_rq 1).  fio 1 MiB read and write at QD8 and 4 KiB random read at QD32 on the map
# with 1 path, then 2; then utgt-bench's iser:// engine (--paths, --rr-iops=1
# --sweep-paths=1,2) at 256 KiB for the sequential rows, the most libiscsi 1.19's iSER
# transport moves in one command (docs/utgt-bench.md).  No path is cut: scaling needs no
# failover, and failover over iser:// is not dependable.  Prints the table (also
# /out/rdma_scaling_iser.txt).
#
# Checks as in rdma_scaling.sh: every run ends without error, each path carries >= 30% of the
# commands at 2 paths, a crc32c-verified write run on the 2-path map, sequential reads and
# writes over 2 paths reach min_speedup (1.3) x 1 path for both initiators.
# Arguments: quick, rate=MBIT, runtime=SECONDS, min_speedup=X, build=DIR.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/iser.sh
. /src/tests/vm/lib/mpath.sh
. /src/tests/vm/lib/compare.sh
. /src/tests/vm/lib/peer.sh
. /src/tests/vm/lib/scaling.sh
[ "$ISER_KIND" = utgtd ] && [ "$ISER_TCP" = 0 ] ||
	fail "rdma_scaling_iser measures utgtd over iSER: no target= or transport= argument"
PROTO=iSER MP_VENDOR=UTGT MP_PRODUCT=ISERSCALE BENCH_SEQ_BS=256k
BENCH_EXTRA=--connect-timeout=30s # an iSER login under TCG can take longer than 5 s
KERNEL_NAME="Linux ib_iser + dm-multipath" BENCH_NAME="utgt-bench iser engine"
IQN=$IQN_PLAIN
portal() { echo "$(peer_ip "$1" target):$ISER_PORT"; }

# ---- run in the target guest (through remote)

# utgtd_conf PORTAL... (iser.sh's utgtd_start writes it): one TARGET on every portal, one RAM
# LU, as the SRP run serves.
utgtd_conf() {
	local p
	cat <<EOC
HANDLER ramdisk {
	DEVICE iser-scale0 {
		size_mb 256
		t10_vend_id $MP_VENDOR
		prod_id $MP_PRODUCT
		usn UTGTISERSCALE001
	}
}

TARGET_DRIVER iscsi {
	enabled 1
$(for p in "$@"; do printf '\tlisten %s\n\tlisten_iser %s\n' "$p" "$p"; done)
	TARGET $IQN {
		enabled 1
		rel_tgt_id 1
		RDMAExtensions Yes
		LUN 0 iser-scale0
	}
}
EOC
}

tgt_start() {
	: >"$ISER_LOG"
	iser_start utgtd "$(portal 1)" "$(portal 2)"
}

tgt_stop() {
	iser_stop utgtd
	utgtd_exit_check "$ISER_LOG"
}

peer_start # the target guest serves from here on and never returns

# ---- the initiator guest
on_fail() {
	remote -t 30 "tail -30 $ISER_LOG" 2>/dev/null || true
	iscsiadm -m session -P 1 2>/dev/null || true
	multipath -ll 2>/dev/null || true
	dmesg | grep -iE 'iser|iscsi|rxe|scsi|device-mapper' | tail -30 || true
}
modprobe -a sd_mod sg dm_multipath dm_round_robin
iser_initiator_up

# path_login L: open-iscsi logs in through link L's portal over iSER; prints the disk.  No
# NOP-Out: on a slow shaped link it waits behind megabytes of data (8 MiB at 1 MB/s) and would
# time out a healthy path; nothing here needs a dead path noticed.
path_login() {
	iser_node_new "$IQN" "$(portal "$1")"
	iser_node_set "$IQN" "$(portal "$1")" "node.conn[0].timeo.noop_out_interval" 0
	iser_node_set "$IQN" "$(portal "$1")" "node.conn[0].timeo.noop_out_timeout" 0
	iser_login "$IQN" "$(portal "$1")" >/dev/null || fail "iSER login via $(portal "$1") failed"
	iser_check_transport "$IQN" "$(portal "$1")" >&2
	iser_disk "$IQN" "$(portal "$1")" 0
}

path_logout() {
	iser_logout "$IQN" "$(portal "$1")" >/dev/null || fail "logout via $(portal "$1") failed"
	wait_until 60 "$2 gone after the logout" eval "[ ! -e /sys/block/${2#/dev/} ]"
	say "path $1 (${2#/dev/}) logged out"
}

bench_path() { echo "iser://$(portal "$1")/$IQN/0"; }

teardown() {
	mpath_flush_all
	iser_logout "$IQN" "$(portal 1)" >/dev/null || fail "logout via $(portal 1) failed"
	iser_logout "$IQN" "$(portal 2)" >/dev/null || fail "logout via $(portal 2) failed"
	remote tgt_stop || fail "utgtd did not stop cleanly"
}

step "utgtd's iSER target in the target guest"
remote tgt_start || fail "utgtd did not start"
scaling_run
say "PASS rdma_scaling_iser"
