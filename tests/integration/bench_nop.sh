#!/usr/bin/env bash
# A path that goes silent: two paths, the second through a TCP forwarder that the test stops
# (SIGSTOP: its connections stay open, nothing is forwarded, no FIN or RST, as with a cut
# link or a dropping firewall) while a low-rate verify=crc32c job runs.  NOP-Out pings
# (--nop-interval=500ms --nop-timeout=1s) must declare the path dead long before the I/O
# timeout (30 s, longer than the whole run, so only the ping can have noticed), list that as
# an event, and move its I/O to the other path: the job ends without error and with zero
# verify errors.  The path is silenced within the first second of I/O and the ping fails it
# about 1.5 s later: the 6 s run leaves some 4 s to spare on a loaded machine.
. "$(dirname "$0")/lib/bench_env.sh"
forwarded_paths
echo "bench_nop: $UB_TARGET on 127.0.0.1:$p1,$p2; forwarder $pp -> $p2 (to be silenced)"

RUNTIME=6
"$BENCH" --paths="${URL[0]},$purl" --rr-iops=1 --io-timeout=30 --nop-interval=500ms \
	--nop-timeout=1s --reconnect-delay=200ms --name=nop --rw=randrw --bs=4k --iodepth=2 \
	--rate_iops=100,100 --size=4m --verify=crc32c --time_based --runtime=$RUNTIME \
	--output-format=json >"$TMPD/nop.json" 2>"$TMPD/nop.err" &
bench=$!
wait_for received_more "$pp" 32767 || bad "no I/O went through the forwarder"
kill -STOP "$fwd"
wait "$bench"
rc=$?
kill -KILL "$fwd" 2>/dev/null
[ $rc = 0 ] || { cat "$TMPD/nop.err"; jq -c '.jobs[0] | .error, .verify, .events' "$TMPD/nop.json"; }

check "job finished without error (rc $rc)" test $rc -eq 0
check "verify passed: $(jget "$TMPD/nop.json" '.jobs[0].verify.blocks') blocks, 0 errors" \
	test "$(jget "$TMPD/nop.json" '.jobs[0].verify.errors')" = 0 -a \
	"$(jget "$TMPD/nop.json" '.jobs[0].verify.blocks')" -gt 0
ev=$(jget "$TMPD/nop.json" '[.jobs[0].events[] | select(.message | test("path 1 failed: .*no NOP-In answer"))][0]')
check "the ping declared path 1 dead: $(echo "$ev" | jq -r .message 2>/dev/null)" \
	test "$(echo "$ev" | jq -r '.message // empty' 2>/dev/null)" != ""
t_fail=$(echo "$ev" | jq -r '.time_s // 99' 2>/dev/null)
check "at ${t_fail}s, within the ${RUNTIME}s run, long before the 30 s I/O timeout" \
	awk -v f="$t_fail" -v r=$RUNTIME 'BEGIN { exit !(f > 0 && f < r) }'
check "path 1 failed once" test "$(jget "$TMPD/nop.json" '.jobs[0].paths[1].failures')" = 1
check "path 0 carried I/O" test "$(jget "$TMPD/nop.json" \
	'.jobs[0].paths[0] | (.read_ios + .write_ios) > 0')" = true

# An idle session that answers is never failed by its pings: pinged every 100 ms for 3 s,
# each answer due within 1.5 s (utgtd answers in well under a millisecond; the margin is for
# a descheduled process on a loaded machine, and an answer already in the socket is read
# before a ping counts as lost).
"$BENCH" --filename="${URL[0]}" --nop-interval=100ms --nop-timeout=1500ms --name=idle --rw=read \
	--bs=4k --iodepth=1 --rate_iops=2 --time_based --runtime=3 --output-format=json \
	>"$TMPD/idle.json" 2>"$TMPD/idle.err"
check "an idle path that answers its pings stays up (no failure events)" \
	test "$(jget "$TMPD/idle.json" '[.jobs[0].events[] | select(.message | test("failed"))] | length')" = 0 -a \
	"$(jget "$TMPD/idle.json" '.jobs[0].error')" = 0
check "--nop-timeout=0 is refused" bash -c "! '$BENCH' --nop-timeout=0 --parse-only --name=x \
	--filename='${URL[0]}' 2>/dev/null"
finish
