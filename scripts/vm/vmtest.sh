#!/usr/bin/env bash
# Run guest tests: for each tests/vm/NAME*.sh, start the host-side target fixture, boot one
# guest that runs the script, stop the fixture.  Logs in build/vm-logs/NAME/ (console.log,
# guest.log, target.log, scst.conf, result).
#
#   scripts/vm/vmtest.sh [--quick] [NAME ...]    NAME is a prefix of a script in tests/vm/,
#                                                 or NAME.sh that one script alone
#
# A script's header may say "# vm-timeout: SECONDS" (default 600), "# vm-cdrom: 1" (the
# fixture also serves a CD-ROM LU), "# vm-target: none" (no fixture) and "# vm-image: systemd"
# (boot the guest with systemd as PID 1, scripts/vm/build-image-systemd.sh, built here when
# needed).  "# vm-run: host" runs the script on the host instead (with no fixture and the
# arguments OUTDIR [ARGS]): it boots its own guests through run-guest.sh, as
# tests/vm/powerloss.sh does to crash one.  "# vm-peer: 1" boots two guests joined by two
# links (run-guest.sh -p).  --quick passes the argument "quick" to each script (the make-test
# subset).
# UTGT_VM_TARGET=tgtd runs against Debian's tgtd instead of build/utgtd.
# UTGT_VM_ARGS=A,B passes more arguments to each script (e.g. target=lio for tests/vm/iser_*).
# UTGT_VM_TRACE=1 runs each script under bash -x (the trace lands in console.log).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
cd "$SRC"

quick=
if [ "${1:-}" = --quick ]; then
	quick=quick
	shift
fi
shopt -s nullglob
tests=()
if [ $# -eq 0 ]; then
	tests=(tests/vm/*.sh)
else
	for n in "$@"; do
		case $n in
		*.sh) m=(tests/vm/"$n") && [ -f "${m[0]}" ] || m=() ;;
		*) m=(tests/vm/"$n"*.sh) ;;
		esac
		[ ${#m[@]} -gt 0 ] || { echo "vmtest: no tests/vm/$n*.sh" >&2; exit 2; }
		tests+=("${m[@]}")
	done
fi

# One run at a time: hold the guest lock across every boot and host fixture of this run, so
# another checkout's guest cannot slip in between two of ours.
. scripts/vm/guest-lock.sh
vm_guest_lock 9 vmtest || exit 125

header() { sed -n "s/^# $2: *//p" "$1" | head -1; }

# The fixture's utgtd runs in a session of its own (setsid): stop it even when we are stopped
# (Ctrl-C, an outer time limit), or it outlives the run.
fixture_out=
stop_fixture() {
	[ -n "$fixture_out" ] && scripts/vm/host-target.sh stop "$fixture_out" >/dev/null 2>&1
	fixture_out=
}
trap 'stop_fixture; exit 130' INT
trap 'stop_fixture; exit 143' TERM
trap stop_fixture EXIT

pass=0 failn=0 failed=() summary=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	out=build/vm-logs/$name
	mkdir -p "$out"
	rm -f "$out"/*.img "$out/result" "$out/target.env"
	limit=$(header "$t" vm-timeout)
	limit=${limit:-600}
	echo "== vmtest $name (timeout ${limit}s${quick:+, quick}${UTGT_VM_ARGS:+, $UTGT_VM_ARGS})"
	fixture=1
	[ "$(header "$t" vm-target)" = none ] && fixture=0
	on_host=0
	[ "$(header "$t" vm-run)" = host ] && on_host=1 fixture=0
	rc=0
	[ -n "${UTGT_CURRENT:-}" ] && echo "vmtest $name" >"$UTGT_CURRENT"
	[ $fixture = 1 ] && fixture_out=$out
	# "# vm-cdrom: 1": the fixture also serves an ISO image as a vcdrom LU (tests/vm/vcdrom.sh)
	cdrom=$(header "$t" vm-cdrom)
	if [ $fixture = 1 ] && ! UTGT_VM_CDROM=${cdrom:-0} scripts/vm/host-target.sh start "$out" 9>&-; then
		echo "vmtest: $name: target fixture failed to start (see $out/target.log)"
		tail -5 "$out/target.log" 2>/dev/null
		rc=99
	fi
	start=$SECONDS
	args=$quick
	[ -n "${UTGT_VM_ARGS:-}" ] && args=${args:+$args,}$UTGT_VM_ARGS
	cache=${UTGT_VM_CACHE:-/var/cache/utgt-vm}
	if [ $rc = 0 ] && [ "$(header "$t" vm-image)" = systemd ]; then
		cache=${UTGT_VM_SYSTEMD_CACHE:-/var/cache/utgt-vm-systemd}
		scripts/vm/build-image-systemd.sh || rc=99
	fi
	peer=
	[ "$(header "$t" vm-peer)" = 1 ] && peer=-p
	if [ $rc = 0 ] && [ $on_host = 1 ]; then
		UTGT_VM_CACHE=$cache timeout -k 10 "$limit" bash "$t" "$out" ${args:+"$args"} 2>&1 |
			sed -u 's/^/  | /'
		rc=${PIPESTATUS[0]}
	elif [ $rc = 0 ]; then
		UTGT_VM_CACHE=$cache scripts/vm/run-guest.sh -o "$out" -t "$limit" ${args:+-a "$args"} $peer "$t" |
			sed -u 's/^/  | /'
		rc=${PIPESTATUS[0]}
	fi
	stop_fixture
	# Backing files are big and only meaningful during the run.
	rm -f "$out"/lu*.img
	secs=$((SECONDS - start))
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		summary+=("PASS $name ${secs}s")
		res=pass
	else
		failn=$((failn + 1))
		failed+=("$name")
		res=FAIL
		if [ "$rc" = 124 ]; then
			res=TIMEOUT
			echo "TIMEOUT: suite vmtest, test $name: no result within its limit (${limit}s in" \
				"the guest, $((limit + 120))s around qemu); last lines of $out/console.log:"
			tail -25 "$out/console.log" 2>/dev/null | awk '{ print "  | " $0 }'
		fi
		# the step that failed, in the summary: a run of several scripts names its culprit
		why=$(grep -a -m1 -o 'FAIL: .*' "$out/console.log" 2>/dev/null | tr -d '\r' | cut -c1-160)
		summary+=("$res $name ${secs}s (exit $rc; logs in $out/)${why:+: $why}")
	fi
	[ -n "${UTGT_SUMMARY:-}" ] &&
		printf '%s/%s|%s|%s\n' "vmtest${quick:+-quick}" "$name" "$res" "$secs" >>"$UTGT_SUMMARY"
done
printf '%s\n' "${summary[@]}"
echo "vmtest: $pass passed, $failn failed"
[ $failn -eq 0 ] || { echo "failing: ${failed[*]}"; exit 1; }
