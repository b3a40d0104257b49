#!/bin/bash
# vm-timeout: 1800
# vm-target: none
# vm-peer: 1
# Seed 001 over RDMA: SRP multipath scaling across two shaped soft-RoCE links.  Two guests
# (scripts/vm/run-guest.sh -p), each with rxe1 and rxe2 on two point-to-point links: utgtd's
# ib_srpt in the target guest, one TARGET per port GID (the seed's scst.conf, one RAM LU); in
# the initiator guest Linux ib_srp logs in over each link and dm-multipath makes one map,
# round-robin switching every request (rr_min_io_rq 1, the Linux counterpart of ESXi's
# VMW_PSP_RR iops=1).  The experiment is tests/vm/lib/scaling.sh's: unshaped ceilings with
# both links loaded, each link shaped so the two together need a third of that, perftest on
# the shaped links, fio 1 MiB read and write at QD8 and 4 KiB random read at QD32 on the map
# with 1 path, then 2; the same workloads through utgt-bench's srp engine (--rr-iops=1
# --sweep-paths=1,2).  Prints the table (also /out/rdma_scaling.txt).
#
# Checks: every run ends without error; at 2 paths each path carries >= 30% of the commands;
# a crc32c-verified write run on the 2-path map; 1 MiB read and write over 2 paths reach
# min_speedup (1.3) x 1 path for both initiators (the aim, as in the seed, is 1.8-2.0; the
# bound only catches a map or engine that does not spread I/O, the machine being shared).
# Arguments: quick (short runs), rate=MBIT (skip the choice from the ceiling),
# runtime=SECONDS, min_speedup=X, build=DIR.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/mpath.sh
. /src/tests/vm/lib/compare.sh
. /src/tests/vm/lib/peer.sh
. /src/tests/vm/lib/scaling.sh
PROTO=SRP MP_VENDOR=UTGT MP_PRODUCT=SRPDISK0 BENCH_SEQ_BS=1m BENCH_EXTRA=
KERNEL_NAME="Linux ib_srp + dm-multipath" BENCH_NAME="utgt-bench srp engine"

# ---- run in the target guest (through remote)

# tgt_start: utgtd serving one RAM LU through two TARGETs, one per link's port GID (seed 001's
# layout: rel_tgt_id 1 and 2); prints utgtd --show-srp-login.
tgt_start() {
	local g1 g2
	g1=$(cat /sys/class/infiniband/rxe1/ports/1/gids/0)
	g2=$(cat /sys/class/infiniband/rxe2/ports/1/gids/0)
	mkdir -p "$SRP_DIR"
	cat >"$SRP_CONF" <<EOC
HANDLER ramdisk {
	DEVICE dev-srp0 {
		size_mb $SRP_MB
		t10_vend_id UTGT
		prod_id SRPDISK0
		usn UTGTSRP000000001
	}
}

TARGET_DRIVER ib_srpt {
	enabled 1
	listen 0.0.0.0:$SRP_PORT
	TARGET $g1 {
		enabled 1
		rel_tgt_id 1
		LUN 0 dev-srp0
	}
	TARGET $g2 {
		enabled 1
		rel_tgt_id 2
		LUN 0 dev-srp0
	}
}
EOC
	cp "$SRP_CONF" /out/scst.conf
	: >"$SRP_LOG"
	utgtd_start >&2
	"$UTGTD" --show-srp-login -c "$SRP_CONF"
}

tgt_stop() {
	utgtd_stop
	utgtd_exit_check "$SRP_LOG"
}

peer_start # the target guest serves from here on and never returns

# ---- the initiator guest
on_fail() {
	remote -t 30 "tail -30 $SRP_LOG" 2>/dev/null || true
	multipath -ll 2>/dev/null || true
	dmesg | grep -iE 'srp|rxe|scsi|device-mapper' | tail -30 || true
}
modprobe ib_srp ch_count=1
modprobe -a sd_mod sg dm_multipath dm_round_robin

# login_line L: the --show-srp-login line for link L's TARGET.
login_line() {
	local line
	line=$(grep -v '^#' <<<"$LOGIN" | grep "dest=$(peer_ip "$1" target):$SRP_PORT\$" | head -1)
	[ -n "$line" ] || fail "--show-srp-login has no line for link $1"
	echo "$line"
}

# path_login L: ib_srp logs in over link L to that link's TARGET, with an initiator_ext of its
# own (a new I_T nexus each time, so a login after a logout never meets the old channel).
path_login() {
	local ext
	ext=$(($(cat /tmp/srp-ext 2>/dev/null || echo 0) + 1))
	echo "$ext" >/tmp/srp-ext
	echo "$(login_line "$1"),initiator_ext=$ext,src=$(peer_ip "$1" initiator)" \
		>"/sys/class/infiniband_srp/srp-rxe$1-1/add_target"
	srp_disk "$(srp_hosts | tail -1)"
}

# path_logout L DEV: its remote port deleted, DEV gone.
path_logout() {
	local d=${2#/dev/} h p
	h=$(basename "$(readlink -f "/sys/block/$d/device/../..")")
	p=$(srp_rport "$h")
	[ -n "$p" ] || fail "no SRP remote port for $d ($h)"
	echo 1 >"$p/delete"
	wait_until 60 "$d gone after deleting $p" eval "[ ! -e /sys/block/$d ]"
	say "path $1 ($d) logged out"
}

# bench_path L: utgt-bench's target string for link L (commas as ';').
bench_path() {
	local line
	line=$(login_line "$1")
	echo "srp:${line//,/;};initiator_ext=$((20 + $1))"
}

teardown() {
	multipath -F >/dev/null 2>&1 || true
	for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
	remote tgt_stop || fail "utgtd did not stop cleanly"
}

step "utgtd in the target guest"
LOGIN=$(remote tgt_start) || { echo "$LOGIN"; fail "utgtd did not start"; }
echo "$LOGIN"
scaling_run
say "PASS rdma_scaling"
