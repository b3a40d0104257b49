#!/usr/bin/env bash
# ALUA-aware path choice against utgtd's implicit ALUA: one LU behind two targets (two paths),
# one port group active/optimized, the other active/non-optimized, then standby.  The default
# rr policy sends everything to the optimized path (as dm-multipath's group_by_prio + alua and
# ESXi's PSP_RR over an ALUA SATP do); rr-all shares the active ones but avoids the standby one.
# The per-path ALUA states come from REPORT TARGET PORT GROUPS.  A state changed live through
# utgtadm (UA 2A/06, then a fresh REPORT TARGET PORT GROUPS) moves I/O: with the optimized
# group in standby, the non-optimized path, idle until then, carries it.
. "$(dirname "$0")/lib/bench_env.sh"
[ "$UB_TARGET" = utgtd ] || { echo "bench_alua: utgtd only (needs its ALUA config)"; exit 0; }
pick_port p1
pick_port p2

serve() { # serve STATE_OF_SECOND_GROUP
	cat >"$TMPD/alua.conf" <<CONF
HANDLER ramdisk {
	DEVICE lu0 {
		size_mb 32
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$p1
	listen 127.0.0.1:$p2
	TARGET $IQN-a {
		enabled 1
		rel_tgt_id 1
		LUN 0 lu0
	}
	TARGET $IQN-b {
		enabled 1
		rel_tgt_id 2
		LUN 0 lu0
	}
}
DEVICE_GROUP dg0 {
	DEVICE lu0
	TARGET_GROUP fast {
		group_id 1
		state active
		preferred 1
		TARGET $IQN-a
	}
	TARGET_GROUP slow {
		group_id 2
		state $1
		TARGET $IQN-b
	}
}
CONF
	start_utgtd_conf "$TMPD/alua.conf" "$p1" "$p2"
}

stop() {
	local p=${PIDS[-1]}
	kill -TERM "$p"
	wait "$p" 2>/dev/null
	unset 'PIDS[-1]'
}

run() { # run POLICY OUT (POLICY "" for the default)
	"$BENCH" --paths="iscsi://127.0.0.1:$p2/$IQN-b/0,iscsi://127.0.0.1:$p1/$IQN-a/0" \
		${1:+--policy="$1"} --name=a --rw=randwrite --bs=4k --iodepth=8 --size=2m \
		--output-format=json >"$TMPD/$2.json" 2>"$TMPD/$2.err"
}

echo "bench_alua: utgtd on 127.0.0.1:$p1 (group 1) and :$p2 (group 2)"
serve nonoptimized
run "" ano
check "states read: path 0 $(jget "$TMPD/ano.json" '.jobs[0].paths[0].alua'), path 1 $(jget \
	"$TMPD/ano.json" '.jobs[0].paths[1].alua')" test "$(jget "$TMPD/ano.json" \
	'[.jobs[0].paths[].alua] | join(",")')" = "active/non-optimized,active/optimized"
check "default policy is rr" test "$(jget "$TMPD/ano.json" '."global options".policy')" = rr
check "rr (default): all 512 writes on the optimized path" test "$(jget "$TMPD/ano.json" \
	'[.jobs[0].paths[].write_ios] | join(",")')" = 0,512
run alua alua
check "--policy=alua (the old name) is rr: 0/512" test "$(jget "$TMPD/alua.json" \
	'[.jobs[0].paths[].write_ios] | join(",")')" = 0,512
run rr-all rrall
check "rr-all shares the two active paths 256/256" test "$(jget "$TMPD/rrall.json" \
	'[.jobs[0].paths[].write_ios] | join(",")')" = 256,256

# Live change: a job runs (until stopped) on the optimized path; its group goes standby.
"$BENCH" --paths="iscsi://127.0.0.1:$p2/$IQN-b/0,iscsi://127.0.0.1:$p1/$IQN-a/0" --name=live \
	--rw=randwrite --bs=4k --iodepth=4 --size=2m --time_based --runtime=120 \
	--output-format=json >"$TMPD/live.json" 2>"$TMPD/live.err" &
bench=$!
KILL_NOW+=("$bench")
base=$(port_received "$p1")
wait_for received_more "$p1" $((base + 262144)) || bad "no I/O on the optimized path"
idle=$(port_received "$p2")
"$(dirname "$UTGTD")/utgtadm" -s "$TMPD/utgtd.sock" set tgroup fast dgroup=dg0 state=standby \
	>"$TMPD/adm.out" 2>&1 || bad "utgtadm set tgroup: $(cat "$TMPD/adm.out")"
wait_for received_more "$p2" $((idle + 262144)) || bad "no I/O moved to the non-optimized path"
kill -INT "$bench"
wait "$bench"
rc=$?
check "live change: the job ended cleanly when stopped (rc $rc, error $(jget "$TMPD/live.json" \
	'.jobs[0].error'))" test $rc = 0 -a "$(jget "$TMPD/live.json" '.jobs[0].error')" = 0
check "  the change is an event: $(jget "$TMPD/live.json" '[.jobs[0].events[] | select(.message |
	test("ALUA")) | .message] | join("; ")')" test "$(jget "$TMPD/live.json" '[.jobs[0].events[] |
	select(.message | test("path 1 ALUA active/optimized -> standby"))] | length')" = 1
check "  both paths carried writes: $(jget "$TMPD/live.json" '[.jobs[0].paths[].write_ios] |
	join(",")') (non-optimized, then optimized)" test "$(jget "$TMPD/live.json" \
	'[.jobs[0].paths[].write_ios > 0] | all')" = true
check "  ALUA states at the end: $(jget "$TMPD/live.json" '[.jobs[0].paths[].alua] | join(",")')" \
	test "$(jget "$TMPD/live.json" '[.jobs[0].paths[].alua] | join(",")')" = \
	"active/non-optimized,standby"
stop
serve standby
run rr-all sb
check "rr-all leaves the standby path alone" test "$(jget "$TMPD/sb.json" \
	'[.jobs[0].paths[].write_ios] | join(",")')" = 0,512
check "  and the job saw no error" test "$(jget "$TMPD/sb.json" '.jobs[0].error')" = 0
finish
