#!/usr/bin/env bash
# A path killed mid-run: two paths, the second through a TCP forwarder that the test kills
# while a verify=crc32c randrw job runs, then restarts.  The job sees no error, verify passes,
# the report shows the failure and the reconnect with their times, and both paths carried
# I/O (so the kill really hit a working path).
. "$(dirname "$0")/lib/bench_env.sh"
forwarded_paths
proxy=tests/integration/lib/tcp_proxy.py
echo "bench_failover: $UB_TARGET on 127.0.0.1:$p1,$p2; forwarder $pp -> $p2"

# The run lasts 20 s.  Reconnects back off 200, 400, 800, 1600, 3200, then 4000 ms, so the path
# is back at most ~4 s after the forwarder listens again; with 8 s (as this had) a loaded
# machine, slow to connect the paths and to start the forwarder again, could leave the
# reconnect for after the end of the run.  20 s leaves more than 10 s for those delays.
"$BENCH" --paths="${URL[0]},$purl" --rr-iops=1 --reconnect-delay=200ms --name=fo \
	--rw=randrw --bs=4k --iodepth=16 --size=8m --verify=crc32c --time_based --runtime=20 \
	--output-format=json >"$TMPD/fo.json" 2>"$TMPD/fo.err" &
bench=$!
# Kill the forwarder once it has carried I/O (the bytes it received on the session's
# connection, not a delay), keep it away a second, start it again.
established() { ss -Htn state established "( sport = :$pp )" | grep -q .; }
carried() { received_more "$pp" 1048575; } # 1 MiB from utgt-bench through the forwarder
wait_for established || bad "utgt-bench never connected through the forwarder"
wait_for carried || bad "no I/O went through the forwarder"
kill -KILL "$fwd"
wait "$fwd" 2>/dev/null
sleep 1 # the path stays away a while (what is tested does not depend on how long)
python3 "$proxy" "$pp" 127.0.0.1 "$p2" &
PIDS+=($!)
wait_for port_listening "$pp" || bad "forwarder did not restart"
wait "$bench"
rc=$?

check "job finished without error (rc $rc)" test $rc -eq 0
check "job error field is 0" test "$(jget "$TMPD/fo.json" '.jobs[0].error')" = 0
check "verify passed: $(jget "$TMPD/fo.json" '.jobs[0].verify.blocks') blocks, 0 errors" \
	test "$(jget "$TMPD/fo.json" '.jobs[0].verify.errors')" = 0 -a \
	"$(jget "$TMPD/fo.json" '.jobs[0].verify.blocks')" -gt 0
check "path 1 failed once" test "$(jget "$TMPD/fo.json" '.jobs[0].paths[1].failures')" = 1
check "path 1 reconnected" test "$(jget "$TMPD/fo.json" '.jobs[0].paths[1].reconnects')" = 1
check "both paths carried I/O" test "$(jget "$TMPD/fo.json" \
	'[.jobs[0].paths[] | (.read_ios + .write_ios) > 0] | all')" = true
t_fail=$(jget "$TMPD/fo.json" '[.jobs[0].events[] | select(.message | test("path 1 failed")) | .time_s][0]')
t_back=$(jget "$TMPD/fo.json" '[.jobs[0].events[] | select(.message | test("path 1 restored")) | .time_s][0]')
check "failure event at ${t_fail}s and restore at ${t_back}s, in order, within the run" \
	awk -v f="$t_fail" -v b="$t_back" 'BEGIN { exit !(f > 0 && b > f && b < 21) }'
# every reconnect attempt is listed with its backoff, and each but the last with its failure
n_try=$(jget "$TMPD/fo.json" '[.jobs[0].events[] | select(.message | test("path 1 reconnect attempt [0-9]+ \\(after [0-9]+ ms backoff\\)"))] | length')
n_fail=$(jget "$TMPD/fo.json" '[.jobs[0].events[] | select(.message | test("path 1 reconnect attempt [0-9]+ failed: .* \\(next in [0-9]+ ms\\)"))] | length')
check "reconnect events: $n_try attempts, $n_fail failed, then restored" \
	test "$n_try" -ge 1 -a "$n_fail" = $((n_try - 1)) -a \
	"$(jget "$TMPD/fo.json" '[.jobs[0].events[] | select(.message | test("path 1 restored .*\\('"$n_try"' attempts\\)"))] | length')" = 1
check "path 1 is up at the end" test "$(jget "$TMPD/fo.json" '.jobs[0].paths[1].state')" = up
finish
