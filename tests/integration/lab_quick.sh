#!/usr/bin/env bash
# The multipath lab's short campaign (`make lab-quick`) as part of `make test`: two network
# namespaces joined by two shaped veth paths, utgtd and then Debian's tgtd in one, utgt-bench in
# the other.  It asserts (and prints) only what holds on a busy 2-core machine:
#  - two 200 Mbit/s paths give at least 1.3x one path for 1 MiB reads, utgtd and tgtd alike;
#  - rr iops=1 puts 40-60% of the commands on each path;
#  - a path taken down for 9 s mid-run costs no application error and verify passes, and
#    the failure and the path's return are both reported;
#  - the iSCSI values utgtd negotiated are the ones the lab asked for.
# Skips (exit 0) only when network namespaces cannot be made here (not root, no netns).
# Uses its own namespace names and results directory, so it can run beside `make lab`, and
# leaves nothing behind (campaign.sh's trap removes the namespaces and stops every daemon).
set -u
cd "$(dirname "$0")/../.." || exit 1

probe=utgt-lab-probe$$
if [ "$(id -u)" -ne 0 ] || ! ip netns add "$probe" 2>/dev/null; then
	echo "SKIP: cannot create network namespaces here (needs root and netns support)"
	exit 0
fi
ip netns del "$probe"

out=$(mktemp -d /tmp/utgt-lab-quick.XXXXXX)
trap 'rm -rf "$out"' EXIT
# The Makefile's BUILD (set by an outer make through MAKEFLAGS, or build) is used as is.
LAB_NAME=utgt-lab-q$$ LAB_OUT="$out" make --no-print-directory lab-quick >"$out.log" 2>&1
rc=$?
# the campaign's own assertions and where it stopped, whatever happened
grep -E '^  (ok  |FAIL) |^lab: |^report:' "$out.log"
if [ $rc -ne 0 ]; then
	echo "FAIL: make lab-quick exited $rc; its last lines:"
	tail -25 "$out.log"
	rm -f "$out.log"
	exit 1
fi
rm -f "$out.log"
if ip netns list | grep -q "^utgt-lab-q$$-"; then
	echo "FAIL: the lab's namespaces are still there"
	exit 1
fi
echo "lab-quick: passed"
