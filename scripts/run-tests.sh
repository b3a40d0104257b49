#!/usr/bin/env bash
# `make test`: build, then every suite under a time limit of its own, then one summary table
# (suite, result, seconds).  A suite that fails does not stop the others (a build that fails
# does): one run shows every red suite.  Exit status 0 only when every suite passed.
#
# Limits (seconds; each overridable by the environment variable in brackets):
#   build 1200 [LIMIT_BUILD]   unit 1200 [LIMIT_UNIT]   asan-unit 2400 [LIMIT_ASAN]
#   integration 1800 [LIMIT_INTEGRATION]   conformance 1200 [LIMIT_CONFORMANCE]
#   vmtest-quick 7200 [LIMIT_VMTEST]: it may first wait for the guest image (build-image.sh
#   waits up to 30 min for another checkout's build) and for another checkout's guest
#   (run-guest.sh: up to an hour); the guests themselves have their own limits
# These are the outer limits of whole suites, well above their normal run times (docs/testing.md);
# the runners inside give every test its own, shorter limit and name it when it runs out:
# run-unit.sh per test binary, run-suite.sh per script, run-iscsi-test-cu.sh per
# iscsi-test-cu run, vmtest.sh per guest.  When an outer limit fires the message names the
# suite, the test it was running (the runners write it to $UTGT_CURRENT) and the last lines of
# its output.
#
# Logs: build/test-logs/<suite>.log.  UTGT_SUMMARY is the file the runners add their own rows
# to (one per integration script, one per guest test).
set -u
cd "$(dirname "$0")/.." || exit 1
MAKE=${MAKE:-make}
LOGS=build/test-logs
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log
export UTGT_SUMMARY=$LOGS/summary.rows
export UTGT_CURRENT=$LOGS/current
: >"$UTGT_SUMMARY"
T0=$SECONDS
failed=0
. scripts/lib/limit.sh

# suite NAME LIMIT CMD...: run CMD with its output on the terminal and in the suite's log; a
# row for the table unless ROWS=own (the runner adds its own rows).
suite() {
	local name=$1 limit=$2 rc t0=$SECONDS log="$LOGS/${1//\//_}.log" res
	shift 2
	echo
	echo "===== $name (limit ${limit}s) $(date '+%H:%M:%S')"
	: >"$UTGT_CURRENT"
	run_limited "$limit" "$log" "$@"
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		res=TIMEOUT
		echo
		echo "TIMEOUT: suite $name did not finish in ${limit}s" \
			"(test running: $(cat "$UTGT_CURRENT" 2>/dev/null || true))"
		echo "  last lines of its output ($log):"
		tail -25 "$log" | awk '{ print "  | " $0 }'
	elif [ $rc = 0 ]; then
		res=pass
	else
		res=FAIL
	fi
	[ "$res" = pass ] || failed=1
	[ "${ROWS:-}" = own ] || printf '%s|%s|%s\n' "$name" "$res" $((SECONDS - t0)) >>"$UTGT_SUMMARY"
	# a runner that adds its own rows but ran out of time or died before it could: a row too
	if [ "${ROWS:-}" = own ] && { [ "$res" = TIMEOUT ] ||
		{ [ "$res" != pass ] && ! grep -q "^$name/" "$UTGT_SUMMARY"; }; }; then
		printf '%s|%s|%s\n' "$name" "$res" $((SECONDS - t0)) >>"$UTGT_SUMMARY"
	fi
	return $rc
}

summary() {
	echo
	echo "===== make test summary"
	printf '%-40s %-8s %8s\n' suite result seconds
	awk -F'|' '{ printf "%-40s %-8s %8s\n", $1, $2, $3 }' "$UTGT_SUMMARY"
	printf '%-40s %-8s %8s\n' total "$([ $failed = 0 ] && echo pass || echo FAIL)" $((SECONDS - T0))
}

# Builds use every CPU unless the caller chose (make -jN test passes its jobserver down).
J=
case " ${MAKEFLAGS:-} " in *" -j"* | *" --jobserver"*) ;; *) J=-j$(nproc) ;; esac
if ! suite build "${LIMIT_BUILD:-1200}" "$MAKE" --no-print-directory $J all; then
	summary
	echo "make test: the build failed; no suite ran"
	exit 1
fi
suite unit "${LIMIT_UNIT:-1200}" "$MAKE" --no-print-directory $J unit
suite asan-unit "${LIMIT_ASAN:-2400}" "$MAKE" --no-print-directory $J asan-unit
ROWS=own suite integration "${LIMIT_INTEGRATION:-1800}" scripts/run-suite.sh integration
ROWS=own suite conformance "${LIMIT_CONFORMANCE:-1200}" scripts/run-suite.sh conformance
ROWS=own suite vmtest-quick "${LIMIT_VMTEST:-7200}" "$MAKE" --no-print-directory vmtest-quick
summary
if [ $failed = 0 ]; then
	echo "make test: all suites passed"
else
	echo "make test: FAILED (see the table above; logs in $LOGS/)"
	exit 1
fi
