# Two-guest tests ("# vm-peer: 1", scripts/vm/run-guest.sh -p): the same script runs in a target
# guest and an initiator guest joined by two point-to-point links.  Soft-RoCE between two
# devices of one kernel never reaches the wire (rxe hands such packets over inside the kernel,
# so tc on the netdev shapes nothing), hence two guests.  Source after common.sh.
#
# Link L (1, 2): target 10.88.L.1/24 (MAC 52:54:00:88:0L:01), initiator 10.88.L.2/24
# (52:54:00:88:0L:02), soft-RoCE device rxeL on it.  The guests hand each other files through
# /peer (the host's OUTDIR/peer, 9p): peer_put NAME [TEXT] and peer_wait NAME.

ROLE=
for _a in "$@"; do
	case $_a in role=*) ROLE=${_a#role=} ;; esac
done
[ "$ROLE" = target ] || [ "$ROLE" = initiator ] ||
	fail "no role=target|initiator argument: run with run-guest.sh -p (header # vm-peer: 1)"
PEER=/peer
LINKS="1 2"

# peer_ip L ROLE: the address of ROLE on link L.
peer_ip() { echo "10.88.$1.$([ "$2" = target ] && echo 1 || echo 2)"; }

# peer_dev L: this guest's netdev of link L, found by its MAC.
peer_dev() {
	local mac
	mac=52:54:00:88:0$1:0$([ "$ROLE" = target ] && echo 1 || echo 2)
	ip -o link | awk -v m="$mac" '$0 ~ "link/ether " m { sub(":$", "", $2); print $2 }'
}

# peer_up: /peer mounted, both links addressed and up, rxe1 and rxe2 ACTIVE on them.
peer_up() {
	local l dev
	mkdir -p "$PEER"
	mountpoint -q "$PEER" ||
		mount -t 9p -o trans=virtio,version=9p2000.L peer "$PEER" || fail "cannot mount /peer"
	modprobe rdma_rxe
	modprobe -a rdma_ucm ib_uverbs
	for l in $LINKS; do
		dev=$(peer_dev "$l")
		[ -n "$dev" ] || fail "no NIC for link $l (run-guest.sh -p gives each guest two)"
		ip addr add "$(peer_ip "$l" "$ROLE")/24" dev "$dev"
		ip link set "$dev" up
		rdma link add "rxe$l" type rxe netdev "$dev"
		wait_until 60 "rxe$l ACTIVE" eval "rdma link show rxe$l/1 | grep -q 'state ACTIVE'"
		say "link $l: $dev $(peer_ip "$l" "$ROLE"), rxe$l ACTIVE"
	done
}

# peer_put NAME [TEXT]: publish a file for the other guest (written whole, then renamed).
peer_put() {
	printf '%s\n' "${2:-}" >"$PEER/.$1.tmp"
	mv "$PEER/.$1.tmp" "$PEER/$1"
}

# peer_wait SECONDS NAME: wait until the other guest published NAME (or gave up: "failed").
peer_wait() {
	local end=$((SECONDS + $1))
	until [ -e "$PEER/$2" ]; do
		[ -e "$PEER/failed" ] && fail "the other guest failed while we waited for $2"
		[ $SECONDS -lt $end ] || fail "timed out after $1 s waiting for the other guest's $2"
		sleep 0.2
	done
}

# peer_shape L RATE: this guest's side of link L sends at most RATE (tc syntax, e.g. 24mbit).
# tbf with a queue deep enough that nothing is dropped: rxe keeps at most a few dozen packets
# per QP in flight and waits for the qdisc, while a drop would cost an RC retransmit timeout.
peer_shape() {
	local dev
	dev=$(peer_dev "$1")
	tc qdisc replace dev "$dev" root tbf rate "$2" burst 16kb limit 4mb
	say "link $1: $dev egress shaped to $2 ($(tc -s qdisc show dev "$dev" | head -1))"
}

# The initiator guest drives; the target guest runs what it is asked (peer_serve), so one
# script reads in order.  Commands are shell text evaluated in the target's own shell (its
# functions and variables persist from one command to the next); each one's output and exit
# status come back through /peer.

# peer_serve: (target) run cmd.1, cmd.2, ... as they arrive, until the initiator says "done".
peer_serve() {
	local n=1 rc
	peer_put ready
	while :; do
		if [ -e "$PEER/cmd.$n" ]; then
			rc=0
			eval "$(cat "$PEER/cmd.$n")" >"$PEER/.out.$n" 2>&1 </dev/null || rc=$?
			mv "$PEER/.out.$n" "$PEER/out.$n"
			peer_put "rc.$n" "$rc"
			n=$((n + 1))
			continue
		fi
		[ -e "$PEER/done" ] && return 0
		sleep 0.1
	done
}

# remote [-t SECONDS] CMD: (initiator) run CMD in the target guest; prints its output, returns
# its exit status.  The default bound is 300 s.
remote() {
	local limit=300 n end
	if [ "$1" = -t ]; then
		limit=$2
		shift 2
	fi
	n=$(($(cat /tmp/peer-cmd 2>/dev/null || echo 0) + 1))
	echo "$n" >/tmp/peer-cmd
	printf '%s\n' "$*" >"$PEER/.cmd.$n"
	mv "$PEER/.cmd.$n" "$PEER/cmd.$n"
	end=$((SECONDS + limit))
	until [ -e "$PEER/rc.$n" ]; do
		[ -e "$PEER/failed" ] && fail "the target guest failed while running: $*"
		[ $SECONDS -lt $end ] || fail "the target guest did not answer within ${limit}s: $*"
		sleep 0.1
	done
	cat "$PEER/out.$n"
	return "$(cat "$PEER/rc.$n")"
}

# peer_start: both roles' common start.  The target then serves the initiator until it is done
# and exits (a failure of its own is published as "failed"); the initiator returns and tells
# the target "done" whenever it exits.
peer_start() {
	if [ "$ROLE" = target ]; then
		trap 'rc=$?; [ $rc = 0 ] || peer_put failed "$rc"; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
		peer_up
		peer_serve
		say "the initiator is done"
		exit 0
	fi
	trap 'peer_put done; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
	peer_up
	peer_wait 120 ready
}
