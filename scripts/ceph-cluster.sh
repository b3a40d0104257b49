#!/usr/bin/env bash
# A throwaway one-host Ceph cluster for the RBD tests and benchmarks: 1 monitor, 1 manager and
# 1 OSD on 127.0.0.1, every file under DIR, daemons started by hand (no systemd, no containers).
#
#   scripts/ceph-cluster.sh start DIR   bring it up; waits for HEALTH_OK (TIMEOUT s per step)
#   scripts/ceph-cluster.sh stop DIR [--purge]   stop the daemons it started (--purge: rm DIR)
#   scripts/ceph-cluster.sh status DIR  `ceph -s` of that cluster
#
# start writes DIR/env (source it: CEPH_CONF, CEPH_ARGS) and DIR/ceph.conf.  Knobs, from the
# environment: OBJECTSTORE=memstore|bluestore (memstore: data in the OSD's memory, lost when it
# stops; bluestore: a sparse file DIR/osd/ceph-0/block), STORE_BYTES (default 4 GiB),
# AUTH=none|cephx (cephx also makes client.gw, `profile rbd` on POOL), MON_PORT (v2; v1 is the
# next port; default: a free port), POOL (default rbd, created with `rbd pool init`),
# TIMEOUT (default 120).  Needs scripts/deps.sh rbd (the ceph-mon, ceph-mgr, ceph-osd and
# ceph-common packages).  Only PIDs it recorded, still naming DIR/ceph.conf, are ever signalled.
set -euo pipefail

die() {
	echo "ceph-cluster: $*" >&2
	exit 1
}
usage() { die "usage: $0 start|stop|status DIR [--purge]"; }

[ $# -ge 2 ] || usage
CMD=$1
DIR=$2
case "$DIR" in /?*) ;; *) die "DIR must be an absolute path: $DIR" ;; esac
DIR=${DIR%/}
CONF=$DIR/ceph.conf
MARK=$DIR/.utgt-ceph-cluster
DAEMONS=(osd.0 mgr.x mon.a) # stop order: clients of the monitor first

# the PID in DIR/run/NAME.pid, when that process is alive and still one of this cluster's
live_pid() {
	local f=$DIR/run/$1.pid pid
	[ -e "$f" ] || return 1
	pid=$(cat "$f")
	kill -0 "$pid" 2>/dev/null && grep -qF "$CONF" "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

stop_cluster() {
	local name pid i
	[ -e "$MARK" ] || die "$DIR is not a cluster of this script"
	for name in "${DAEMONS[@]}"; do
		if pid=$(live_pid "$name"); then
			kill -TERM "$pid"
			for ((i = 0; i < 200; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$pid" 2>/dev/null; then
				echo "ceph-cluster: $name ($pid) ignored SIGTERM for 20 s: SIGKILL" >&2
				kill -KILL "$pid"
			fi
		fi
		rm -f "$DIR/run/$name.pid"
	done
	if [ "${1:-}" = --purge ]; then rm -rf "$DIR"; fi
}

# a TCP port on 127.0.0.1 that nothing listens on, with the next one free too (msgr v1)
free_port_pair() {
	# below the ephemeral range (32768 and up): a port there can become some client's source
	# port between this check and the monitor's bind
	local p=$((24000 + ($$ % 400) * 20))
	while ss -Htan "sport = :$p" | grep -q . || ss -Htan "sport = :$((p + 1))" | grep -q .; do
		p=$((p + 2))
	done
	echo "$p"
}

start_cluster() {
	local objectstore=${OBJECTSTORE:-memstore} store_bytes=${STORE_BYTES:-$((4 << 30))}
	local auth=${AUTH:-none} pool=${POOL:-rbd} timeout=${TIMEOUT:-120} mon_port fsid monaddr
	local missing="" p name osd_uuid osd_id t0=$SECONDS

	case "$objectstore" in memstore | bluestore) ;; *) die "OBJECTSTORE: memstore or bluestore" ;; esac
	case "$auth" in none | cephx) ;; *) die "AUTH: none or cephx" ;; esac
	for p in ceph-mon ceph-mgr ceph-osd ceph rbd monmaptool ceph-authtool uuidgen; do
		command -v "$p" >/dev/null || missing+=" $p"
	done
	[ -z "$missing" ] || die "missing:$missing (run scripts/deps.sh rbd)"
	if [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
		[ -e "$MARK" ] || die "$DIR exists, is not empty and is not a cluster of this script"
		for name in "${DAEMONS[@]}"; do
			! live_pid "$name" >/dev/null || die "the cluster in $DIR is running; stop it first"
		done
		rm -rf "$DIR"
	fi
	mon_port=${MON_PORT:-$(free_port_pair)}
	mkdir -p "$DIR"/{mon/ceph-a,mgr/ceph-x,osd/ceph-0,log,run}
	touch "$MARK"
	fsid=$(uuidgen)
	monaddr="[v2:127.0.0.1:$mon_port,v1:127.0.0.1:$((mon_port + 1))]"
	# Health warnings this cluster has by design are switched off, so HEALTH_OK means healthy:
	# one replica (pool size 1), a shared disk that is often fuller than the 30% free the
	# monitor wants, and the global_id reclaim warning Pacific prints even without cephx.
	cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon host = $monaddr
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = $auth
auth service required = $auth
auth client required = $auth
auth allow insecure global id reclaim = false
keyring = $DIR/keyring
run dir = $DIR/run
admin socket = $DIR/run/\$cluster-\$name.asok
log file = $DIR/log/\$cluster-\$name.log
mon data = $DIR/mon/\$cluster-\$id
mgr data = $DIR/mgr/\$cluster-\$id
osd data = $DIR/osd/\$cluster-\$id
osd objectstore = $objectstore
memstore device bytes = $store_bytes
memstore page set = true
bluestore block size = $store_bytes
bluestore block create = true
osd memory target = 1073741824
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 16
osd pool default pgp num = 16
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
EOF
	C=(-c "$CONF")
	if [ "$auth" = cephx ]; then
		local k=$DIR/keyring
		ceph-authtool --create-keyring "$k" --gen-key -n mon. --cap mon 'allow *' >/dev/null
		ceph-authtool "$k" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
			--cap mgr 'allow *' >/dev/null
		ceph-authtool "$k" --gen-key -n mgr.x --cap mon 'allow profile mgr' --cap osd 'allow *' >/dev/null
		ceph-authtool "$k" --gen-key -n osd.0 --cap mon 'allow profile osd' \
			--cap mgr 'allow profile osd' --cap osd 'allow *' >/dev/null
		ceph-authtool "$k" --gen-key -n client.gw --cap mon 'profile rbd' --cap mgr 'profile rbd' \
			--cap osd "profile rbd pool=$pool" >/dev/null
		chmod 600 "$k"
	fi

	monmaptool --create --fsid "$fsid" --addv a "$monaddr" "$DIR/monmap" >/dev/null
	local mkfs=(ceph-mon "${C[@]}" --mkfs -i a --monmap "$DIR/monmap")
	[ "$auth" = cephx ] && mkfs+=(--keyring "$DIR/keyring")
	"${mkfs[@]}" >"$DIR/log/mon.a.mkfs.out" 2>&1 || {
		cat "$DIR/log/mon.a.mkfs.out" >&2
		die "ceph-mon --mkfs failed"
	}
	start_daemon ceph-mon a mon.a
	wait_for "$timeout" "the monitor's quorum" ceph_ quorum_status
	start_daemon ceph-mgr x mgr.x
	osd_uuid=$(uuidgen)
	osd_id=$(ceph_ osd new "$osd_uuid")
	[ "$osd_id" = 0 ] || die "ceph osd new gave id '$osd_id', expected 0"
	ceph-osd "${C[@]}" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$DIR/log/osd.0.mkfs.out" 2>&1 || {
		cat "$DIR/log/osd.0.mkfs.out" >&2
		die "ceph-osd --mkfs failed"
	}
	start_daemon ceph-osd 0 osd.0
	wait_for "$timeout" "osd.0 up" json_true 'd["num_up_osds"] == 1' osd stat
	wait_for "$timeout" "an active manager" json_true 'd["available"]' mgr stat
	ceph_ osd pool create "$pool" >"$DIR/log/pool.out" 2>&1 || {
		cat "$DIR/log/pool.out" >&2
		die "cannot create pool $pool"
	}
	rbd "${C[@]}" pool init "$pool"
	# Pacific nests the PG summary under pg_summary
	wait_for "$timeout" "every PG active+clean" json_true \
		'(lambda s: s["num_pgs"] > 0 and {x["name"]: x["num"] for x in s["num_pg_by_state"]}.get("active+clean") == s["num_pgs"])(d.get("pg_summary", d))' \
		pg stat
	wait_for "$timeout" "HEALTH_OK" health_ok
	cat >"$DIR/env" <<EOF
export CEPH_CONF=$CONF
export CEPH_ARGS="-c $CONF"
export UTGT_CEPH_POOL=$pool
EOF
	echo "ceph-cluster: $DIR up in $((SECONDS - t0)) s (mon 127.0.0.1:$mon_port, $objectstore, auth $auth, pool $pool)"
}

ceph_() { timeout 60 ceph "${C[@]}" --connect-timeout 20 "$@"; }
health_ok() { [ "$(ceph_ health)" = HEALTH_OK ]; }
# json_true PYEXPR CEPH-ARGS...: the ceph command's JSON, as d, makes PYEXPR true
json_true() {
	local expr=$1
	shift
	ceph_ "$@" -f json | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)"
}
start_daemon() { # BINARY ID NAME: foreground (-f) in its own session, output to DIR/log
	setsid "$1" "${C[@]}" -i "$2" -f >"$DIR/log/$3.out" 2>&1 </dev/null &
	echo $! >"$DIR/run/$3.pid"
}
# wait_for SECONDS WHAT CMD...: retry CMD until it succeeds; on timeout say what and show logs
wait_for() {
	local limit=$1 what=$2 end=$((SECONDS + $1))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "ceph-cluster: no $what after ${limit} s; last daemon output:" >&2
			tail -n 15 "$DIR"/log/*.out >&2 || true
			ceph_ health detail >&2 || true
			stop_cluster
			exit 1
		fi
		sleep 0.5
	done
}

case "$CMD" in
start) start_cluster ;;
stop) stop_cluster "${3:-}" ;;
status)
	C=(-c "$CONF")
	ceph_ -s
	;;
*) usage ;;
esac
