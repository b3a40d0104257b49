#!/bin/bash
# vm-timeout: 400
# SPC-4 persistent reservations driven from Linux (sg_persist, sg_raw) through two iSCSI
# sessions to the same LU: two I_T nexuses (same initiator name, two portals, two ISIDs).
# Each step states what SPC-4 requires; generation numbers are tracked and compared.
. /src/tests/vm/lib/common.sh
load_target_env
start_iscsid

step "two sessions to $TGT_PLAIN (ports $TGT_PORT1, $TGT_PORT2)"
for p in "$TGT_PORT1" "$TGT_PORT2"; do
	iscsi_node_new "$TGT_PLAIN" "$p"
	iscsi_login "$TGT_PLAIN" "$p" >/dev/null
done
A=$(session_disk "$TGT_PLAIN" "$TGT_PORT1" "$LU0_LUN")
B=$(session_disk "$TGT_PLAIN" "$TGT_PORT2" "$LU0_LUN")
say "nexus A: $A, nexus B: $B"
expect_eq "same LU on both (serial)" "$(sg_vpd -p sn "$A" | sed -n 's/^ *Unit serial number: *//p')" \
	"$(sg_vpd -p sn "$B" | sed -n 's/^ *Unit serial number: *//p')"

# sg3_utils exit codes (sg_lib.h): 5 ILLEGAL REQUEST, 6 UNIT ATTENTION, 24 RESERVATION CONFLICT.
# A unit attention is reported once per nexus; these helpers retry past it and remember it.
UA_SEEN=
sgp() { # DEV ARGS... -> OUT, RC (retried past unit attentions)
	local dev=$1 i
	shift
	for i in 1 2 3; do
		RC=0
		OUT=$(sg_persist -n "$@" "$dev" 2>&1) || RC=$?
		[ $RC = 6 ] || return 0
		UA_SEEN+="$dev "
	done
}
# prout WANT DEV ARGS...: PERSISTENT RESERVE OUT; WANT ok | conflict | illegal
prout() {
	local want=$1 dev=$2 code
	shift 2
	sgp "$dev" --out "$@"
	case $want in ok) code=0 ;; conflict) code=24 ;; illegal) code=5 ;; esac
	[ "$RC" = "$code" ] || fail "PROUT $* on $dev: exit $RC, want $want ($code): $OUT"
	ok "PROUT $* on ${dev#/dev/} -> $want"
}
keys() { # DEV -> "gen=N k1 k2 ..." (keys sorted)
	sgp "$1" --in --read-keys
	[ "$RC" = 0 ] || fail "READ KEYS on $1: exit $RC: $OUT"
	local g k
	g=$(sed -n 's/.*PR generation=0x\([0-9a-fA-F]*\).*/\1/p' <<<"$OUT")
	k=$(grep -Eo '^ +0x[0-9a-fA-F]+ *$' <<<"$OUT" | tr -d ' ' | sort | tr '\n' ' ')
	k=${k% }
	echo "gen=$((16#$g))${k:+ $k}"
}
resv() { # DEV -> "none" or "KEY TYPE"
	sgp "$1" --in --read-reservation
	[ "$RC" = 0 ] || fail "READ RESERVATION on $1: exit $RC: $OUT"
	if grep -q "NO reservation" <<<"$OUT"; then
		echo none
	else
		echo "$(sed -n 's/^ *Key=\(0x[0-9a-fA-F]*\).*/\1/p' <<<"$OUT")" \
			"$(sed -n 's/.*type: *\(.*\)$/\1/p' <<<"$OUT" | sed 's/ *$//')"
	fi
}
# io WANT DEV read|write: one block at LBA 4096 with sg_raw; WANT good | conflict
io() {
	local want=$1 dev=$2 op=$3 out rc got i
	for i in 1 2 3; do
		rc=0
		if [ "$op" = write ]; then
			out=$(sg_raw -s 512 -i /tmp/blk "$dev" 2a 00 00 00 10 00 00 00 01 00 2>&1) || rc=$?
		else
			out=$(sg_raw -r 512 -o /dev/null "$dev" 28 00 00 00 10 00 00 00 01 00 2>&1) || rc=$?
		fi
		grep -qi "unit attention" <<<"$out" || break
		UA_SEEN+="$dev "
		UA_TEXT+="$dev: $out"$'\n'
	done
	if grep -qi "reservation conflict" <<<"$out"; then
		got=conflict
	elif [ $rc = 0 ] && ! grep -qi "sense information" <<<"$out"; then
		got=good
	else
		got="other (exit $rc): $out"
	fi
	[ "$got" = "$want" ] || fail "$op on $dev: got $got, want $want"
	ok "$op on ${dev#/dev/} -> $want"
}
head -c 512 /dev/urandom >/tmp/blk
gen=0
expect_keys() { # DEV "k1 k2..." : also checks the generation against our count
	expect_eq "keys seen from ${1#/dev/}" "$(keys "$1")" "gen=$gen${2:+ $2}"
}

step "fresh LU: no registrations, no reservation"
expect_keys "$A" ""
expect_eq "reservation" "$(resv "$B")" none

step "REGISTER from both nexuses"
prout ok "$A" --register --param-sark=0xa1
gen=$((gen + 1))
prout ok "$B" --register --param-sark=0xb2
gen=$((gen + 1))
expect_keys "$B" "0xa1 0xb2"
# A registered nexus presenting the wrong key gets RESERVATION CONFLICT and changes nothing.
prout conflict "$B" --register --param-rk=0x99 --param-sark=0xbb
# An unregistered nexus may not name a non-zero key... checked below once A is unregistered.
expect_keys "$A" "0xa1 0xb2"

step "RESERVE Write Exclusive by A"
prout ok "$A" --reserve --param-rk=0xa1 --prout-type=1
expect_eq "reservation" "$(resv "$B")" "0xa1 Write Exclusive"
prout ok "$A" --reserve --param-rk=0xa1 --prout-type=1 # same holder, same type: no-op
prout conflict "$B" --reserve --param-rk=0xb2 --prout-type=1
expect_keys "$A" "0xa1 0xb2" # RESERVE does not bump the generation
io good "$A" write
io conflict "$B" write
io good "$B" read

step "RELEASE rules"
prout illegal "$A" --release --param-rk=0xa1 --prout-type=3 # holder, wrong type: 26/04
expect_eq "reservation kept" "$(resv "$A")" "0xa1 Write Exclusive"
prout ok "$B" --release --param-rk=0xb2 --prout-type=1 # not the holder: GOOD, no effect
expect_eq "reservation kept" "$(resv "$A")" "0xa1 Write Exclusive"

step "PREEMPT: B takes the reservation and removes A's registration"
UA_SEEN= UA_TEXT=
prout ok "$B" --preempt --param-rk=0xb2 --param-sark=0xa1 --prout-type=1
gen=$((gen + 1))
expect_eq "reservation" "$(resv "$B")" "0xb2 Write Exclusive"
expect_keys "$B" "0xb2"
io conflict "$A" write
io good "$A" read
# The first command of the preempted nexus (a sg_raw above) gets 2A/05.
echo "$UA_TEXT"
grep -q "^$A: " <<<"$UA_TEXT" || fail "no unit attention reported to the preempted nexus A"
grep -qi "registrations preempted" <<<"$UA_TEXT" ||
	fail "A's unit attention is not REGISTRATIONS PREEMPTED (2A/05)"
ok "A got unit attention REGISTRATIONS PREEMPTED"

step "REGISTER from an unregistered nexus"
prout conflict "$A" --register --param-rk=0x1234 --param-sark=0xa3 # SPC-4: non-zero key
prout ok "$A" --register --param-sark=0xa3
gen=$((gen + 1))
expect_keys "$A" "0xa3 0xb2"
io conflict "$A" write # Write Exclusive: registered is not enough

step "Write Exclusive - Registrants Only"
prout ok "$B" --release --param-rk=0xb2 --prout-type=1
expect_eq "reservation" "$(resv "$A")" none
prout ok "$B" --reserve --param-rk=0xb2 --prout-type=5
expect_eq "reservation" "$(resv "$A")" "0xb2 Write Exclusive, registrants only"
io good "$A" write # a registrant may write
prout ok "$A" --register --param-rk=0xa3 --param-sark=0 # unregister
gen=$((gen + 1))
expect_keys "$B" "0xb2"
io conflict "$A" write
io good "$A" read

step "REGISTER AND IGNORE EXISTING KEY"
prout ok "$B" --register-ignore --param-sark=0xb7
gen=$((gen + 1))
expect_keys "$A" "0xb7"
expect_eq "reservation follows the new key" "$(resv "$A")" "0xb7 Write Exclusive, registrants only"

step "CLEAR"
prout conflict "$B" --clear --param-rk=0xb2 # old key
prout ok "$B" --clear --param-rk=0xb7
gen=$((gen + 1))
expect_keys "$A" ""
expect_eq "reservation" "$(resv "$A")" none
io good "$A" write
io good "$B" write

step "Exclusive Access: others may not even read"
prout ok "$A" --register --param-sark=0xa5
gen=$((gen + 1))
prout ok "$A" --reserve --param-rk=0xa5 --prout-type=3
expect_eq "reservation" "$(resv "$B")" "0xa5 Exclusive Access"
io conflict "$B" read
io conflict "$B" write
io good "$A" read
prout conflict "$B" --reserve --param-rk=0 --prout-type=3 # unregistered nexus
prout ok "$A" --clear --param-rk=0xa5
gen=$((gen + 1))
expect_keys "$B" ""

step "logout"
for p in "$TGT_PORT1" "$TGT_PORT2"; do iscsi_logout "$TGT_PLAIN" "$p" >/dev/null; done
say "PASS pr"
