# Sourced, not run.  The one lock that keeps guests from time-sharing this machine's two cores:
# every guest boot (run-guest.sh), every multi-boot run (vmtest.sh, tests/vm/powerloss.sh) and
# every image build takes it.  The outermost taker holds it for its whole run and exports
# UTGT_VM_LOCK_HELD=1, so the boots it starts do not wait on themselves (flock(2) locks belong to
# an open file, and a child opening the file again would block on its parent).
#
#   vm_guest_lock FD WHO     take the lock on descriptor FD (waits up to an hour, printing
#                            once that it waits); returns 125 if the wait times out
VM_GUEST_LOCK=${UTGT_VM_LOCK:-/var/lock/utgt-vm-guest.lock}

vm_guest_lock() {
	local fd=$1 who=$2
	[ "${UTGT_VM_LOCK_HELD:-0}" = 1 ] && return 0
	eval "exec $fd>>\"\$VM_GUEST_LOCK\""
	if ! flock -n "$fd"; then
		echo "$who: waiting for another guest run on this machine to finish ($VM_GUEST_LOCK)"
		flock -w 3600 "$fd" || { echo "$who: lock wait timed out" >&2; return 125; }
	fi
	export UTGT_VM_LOCK_HELD=1
}
