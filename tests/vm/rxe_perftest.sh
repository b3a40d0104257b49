#!/bin/bash
# vm-timeout: 400
# vm-target: none
# Soft-RoCE baseline: rxe0 on the guest's eth0, perftest in loopback on that one device
# (server and client in the guest, RDMA/CM on 10.0.2.15).  The figures are the reference the
# RDMA transports (SRP, iSER) are compared with on the same guest; under TCG only ratios on
# the same guest mean anything.  Written to /out/perftest.txt (host: build/vm-logs/rxe_perftest/).
. /src/tests/vm/lib/common.sh
IP=10.0.2.15
SIZE=65536
ITERS=$([ "$QUICK" = 1 ] && echo 500 || echo 2000)
LAT_ITERS=$([ "$QUICK" = 1 ] && echo 500 || echo 2000)

step "rxe0 on eth0"
modprobe rdma_rxe
modprobe -a rdma_ucm ib_uverbs
rdma link add rxe0 type rxe netdev eth0
wait_until 60 "rxe0 ACTIVE" eval 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
rdma link show rxe0/1
ibv_devinfo -d rxe0 | grep -E 'hca_id|transport|state|active_mtu|link_layer'
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || fail "rxe0 port not active"
ok "rxe0 active"

: >/out/perftest.txt
port=18515
# run TOOL ARGS...: server and client of one perftest tool, each under a timeout, a distinct
# TCP port for the out-of-band exchange per run; prints the client's result lines.
run() {
	local tool=$1 out srv rc=0
	shift
	port=$((port + 1))
	timeout -k 5 120 "$tool" -d rxe0 -R -p "$port" "$@" >"/tmp/$tool.srv" 2>&1 &
	srv=$!
	# The server listens through RDMA/CM on port -p: poll the CM ids until it does.
	if ! (wait_until 60 "$tool server" eval \
		"rdma resource show cm_id | grep LISTEN | grep -q ':$port\\b'"); then
		rdma resource show cm_id
		cat "/tmp/$tool.srv"
		fail "$tool server not listening"
	fi
	out=$(timeout -k 5 120 "$tool" -d rxe0 -R -p "$port" "$@" "$IP" 2>&1) || rc=$?
	wait $srv || true
	[ $rc = 0 ] || { echo "$out"; cat "/tmp/$tool.srv"; fail "$tool client exited $rc"; }
	LAST=$out
}

bw() { # TOOL: one size, bandwidth in MB/s
	local tool=$1 line mbs
	run "$tool" -s "$SIZE" -n "$ITERS" -F
	# Columns: #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
	line=$(awk -v s="$SIZE" '$1 == s && NF >= 5' <<<"$LAST" | tail -1)
	[ -n "$line" ] || { echo "$LAST"; fail "$tool printed no result line"; }
	mbs=$(awk '{print $4}' <<<"$line")
	awk -v m="$mbs" 'BEGIN { exit !(m > 0) }' || fail "$tool: average bandwidth $mbs"
	printf '%-12s size=%d iters=%d  BW_avg=%s MB/s  msg_rate=%s Mpps\n' "$tool" "$SIZE" "$ITERS" \
		"$mbs" "$(awk '{print $5}' <<<"$line")" | tee -a /out/perftest.txt
}

step "perftest bandwidth, ${SIZE}-byte messages, $ITERS iterations"
bw ib_send_bw
bw ib_write_bw
bw ib_read_bw

step "perftest latency"
run ib_read_lat -s 8 -n "$LAT_ITERS" -F
# Columns: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% (usec)
line=$(awk '$1 == 8 && NF >= 7' <<<"$LAST" | tail -1)
[ -n "$line" ] || { echo "$LAST"; fail "ib_read_lat printed no result line"; }
read -r _ _ tmin tmax ttyp tavg _ p99 _ <<<"$line"
awk -v m="$ttyp" 'BEGIN { exit !(m > 0) }' || fail "ib_read_lat: typical latency $ttyp"
printf '%-12s size=8 iters=%d  t_min=%s t_typical=%s t_avg=%s t_99%%=%s t_max=%s usec\n' \
	ib_read_lat "$LAT_ITERS" "$tmin" "$ttyp" "$tavg" "$p99" "$tmax" | tee -a /out/perftest.txt

step "summary"
cat /out/perftest.txt
rdma link delete rxe0
say "PASS rxe_perftest"
