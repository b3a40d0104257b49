# Soft-RoCE helpers shared by the RDMA guest tests (tests/vm/srp*.sh, tests/vm/iser*.sh): rxe0
# on the guest's eth0 and RDMA CM listeners.  Source after common.sh.

GUEST_IP=10.0.2.15

# rxe_link_up: the RDMA/CM user-space interface and rxe0 on eth0, ACTIVE; sets RXE_GID.
rxe_link_up() {
	modprobe rdma_rxe
	modprobe -a rdma_ucm ib_uverbs sd_mod sg
	rdma link add rxe0 type rxe netdev eth0
	wait_until 20 "rxe0 ACTIVE" eval 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
	RXE_GID=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
	say "rxe0 active, port GID $RXE_GID"
}

# listening PORT [ADDR]: some RDMA CM id listens on PORT (bound to ADDR when given; a
# wildcard listener on PORT counts for any ADDR).
listening() {
	local ids
	ids=$(rdma resource show cm_id 2>/dev/null | grep LISTEN) || return 1
	if [ -n "${2:-}" ]; then
		grep -qE "src-addr ($2|0\.0\.0\.0):$1( |$)" <<<"$ids"
	else
		grep -q ":$1\b" <<<"$ids"
	fi
}

# rxe_wire_stat: rxe0's packet counters and the kernel's backlog drops so far, as "sent
# resent drops": packets rxe sent; resend events (a responder's duplicate and
# out-of-sequence requests, a requester's sequence-error and RNR NAKs: each one a go-back-N
# resend by one of the QPs, both of which are on rxe0 in a loopback test); packets the
# network stack dropped because a CPU's input backlog was full (/proc/net/softnet_stat,
# column 2: with rxe on loopback a tasklet can queue more than netdev_max_backlog at once).
rxe_wire_stat() {
	local h=/sys/class/infiniband/rxe0/ports/1/hw_counters s r=0 f d
	s=$(cat "$h/sent_pkts" 2>/dev/null || echo 0)
	for f in duplicate_request out_of_seq_request rcvd_seq_err rcvd_rnr_err; do
		r=$((r + $(cat "$h/$f" 2>/dev/null || echo 0)))
	done
	d=0
	while read -r _ f _; do d=$((d + 16#$f)); done </proc/net/softnet_stat
	echo "$s $r $d"
}
