#!/usr/bin/env bash
# libiscsi's whole iscsi-test-cu (--test=ALL, --dataloss --allow-sanitize) against utgtd, once
# per kind of LU: thin fileio (512- and 4096-byte blocks), fully provisioned fileio, ramdisk,
# removable ramdisk, read-only fileio, and a thin ramdisk exported through a read-only LUN; then SCSI.Sanitize.Reset on a
# ramdisk whose sanitize is paced (sanitize_rate_mb) so that it lasts as long as the test
# needs, and ALL.MultipathIO through two portals.
#
# Every test must pass, except the ones listed in expected_failures() below, each with the
# reason it cannot pass against a correct target.  Those must fail exactly as described (the
# same assertion), so a new failure hiding behind a known one is caught too.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
UTGTD=$BUILD/utgtd
PORT=$((20000 + $$ % 20000))
PORT2=$((PORT + 1))
IQN=iqn.2026-12.org.utgt:conformance-luns
DIR=$(mktemp -d /tmp/utgt-conf-luns.XXXXXX)
PID=

cleanup() {
	[ -n "${KEEP:-}" ] && cp -r "$DIR" "$KEEP"
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT

command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu missing (libiscsi-bin)"; exit 1; }
[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }

truncate -s 64M "$DIR/ro.img"
cat >"$DIR/utgt.conf" <<EOF
HANDLER vdisk_fileio {
	DEVICE thin0 {
		filename $DIR/thin0.img
		size_mb 64
		thin_provisioned 1
	}
	DEVICE thin4k {
		filename $DIR/thin4k.img
		size_mb 256
		blocksize 4096
		thin_provisioned 1
	}
	DEVICE thick0 {
		filename $DIR/thick0.img
		size_mb 64
	}
	DEVICE ro0 {
		filename $DIR/ro.img
		read_only 1
	}
}
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb 64
	}
	DEVICE rem0 {
		size_mb 64
		removable 1
	}
	DEVICE ramro0 {
		size_mb 64
	}
	DEVICE slowsan0 {
		size_mb 32
		sanitize_rate_mb 4
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$PORT
	listen 127.0.0.1:$PORT2
	TARGET $IQN {
		enabled 1
		LUN 0 thin0
		LUN 1 thick0
		LUN 2 ram0
		LUN 3 rem0
		LUN 4 ro0
		LUN 5 slowsan0
		LUN 6 ramro0 {
			read_only 1
		}
		LUN 7 thin4k
	}
}
EOF

"$UTGTD" -f -c "$DIR/utgt.conf" >"$DIR/utgtd.log" 2>&1 &
PID=$!
for _ in $(seq 100); do # up to 10 s for the portal
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	kill -0 "$PID" 2>/dev/null || { echo "utgtd died:"; cat "$DIR/utgtd.log"; exit 1; }
	sleep 0.1
done

URL=iscsi://127.0.0.1:$PORT/$IQN
URL2=iscsi://127.0.0.1:$PORT2/$IQN

# "<Suite.Test> <file:line of an assertion that fails>" per LU kind, and why.
expected_failures() {
	case "$1" in
	thin | thin4k | thick | ram | rem)
		# It sleeps 3 s after sending SANITIZE OVERWRITE and then expects it to be still
		# running; on these LUs (64 MiB, unpaced) it is over in milliseconds.  The test is
		# run below on a LU whose sanitize is paced to last long enough, and passes there.
		echo "Sanitize.Reset test_sanitize_reset.c:97"  # TUR: sanitize in progress
		echo "Sanitize.Reset test_sanitize_reset.c:102" # START STOP UNIT: the same
		echo "Sanitize.Reset test_sanitize_reset.c:107" # READ(16): the same
		echo "Sanitize.Reset test_sanitize_reset.c:165" # TUR after a new login: the same
		;;&
	thick)
		# CRYPTOGRAPHIC ERASE without BLOCK ERASE (a fully provisioned LU cannot leave
		# blocks deallocated): VPD B1 says WACEREQ 01b, WABEREQ 00b, as Sanitize.BlockErase
		# requires when BLOCK ERASE is not offered.  Sanitize.CryptoErase, though, tests
		# WABEREQ where it means WACEREQ (libiscsi test_sanitize_crypto_erase.c: the check
		# reads inq_bdc->wabereq and reports "WACEREQ is 0"), so no answer satisfies both.
		echo "Sanitize.CryptoErase test_sanitize_crypto_erase.c:48"
		;;
	ro)
		# A write-protected LU answers every write-class command DATA PROTECT 07/27/00
		# before looking at the CDB (as LIO does: the LUN's write protection is checked
		# before the command is decoded).  These tests write (--dataloss) or expect an
		# ILLEGAL REQUEST for a bad field of a write-class CDB; ReadOnly.ReadOnlySBC, the
		# suite for write-protected LUs, passes.  The list is checked in check_ro().
		;;
	esac
}

# Run iscsi-test-cu; print "name status" per test and the failing assertions.
run_cu() { # out-file args...
	local out=$1
	shift
	timeout 1200 iscsi-test-cu --dataloss --allow-sanitize "$@" >"$out" 2>&1
	awk '/^Suite: /{s=$2} /^  Test: /{t=$2} /^FAILED/{print "FAIL " s "." t} /^    [0-9]+\. /{print "    " $2}' "$out"
}

summary() { awk '$1 == "tests" && NF >= 6 {print "total " $2 " ran " $3 " passed " $4 " failed " $5}' "$1"; }

rc=0
check_kind() { # kind lun
	local kind=$1 lun=$2 out=$DIR/$1.out fails exp got
	fails=$(run_cu "$out" --test=ALL "$URL/$lun")
	echo "== $kind (LUN $lun): $(summary "$out")"
	got=$(printf '%s\n' "$fails" | awk '/^FAIL/{name=$2} /^    /{print name " " $1}' | sort -u)
	exp=$(expected_failures "$kind" | sort -u)
	if [ "$kind" = ro ] || [ "$kind" = ro-lun ]; then
		check_ro "$kind" "$out" "$fails" || rc=1
		return
	fi
	# every failing test must be expected, failing where expected, and nothing else
	local unexpected
	unexpected=$(comm -23 <(printf '%s\n' "$got" | sed '/^$/d') <(printf '%s\n' "$exp" | sed '/^$/d'))
	if [ -n "$unexpected" ] || ! grep -q '^Run Summary' "$out"; then
		echo "FAIL $kind: unexpected failures:"
		printf '%s\n' "$unexpected" | sed 's/^/    /'
		rc=1
	else
		echo "ok   $kind ($(printf '%s\n' "$exp" | sed '/^$/d' | wc -l) known failure(s), justified above)"
	fi
}

# On the read-only LU every failing assertion must come from a DATA PROTECT answer to a
# write-class command; any other failure is ours.  Sanitize.Reset sends its SANITIZE
# asynchronously, so the DATA PROTECT answer is not in the log: the sanitize never runs, and
# the test's checks that it is running fail.
check_ro() { # kind out fails
	local kind=$1 out=$2 fails=$3
	awk '/^Suite: /{s=$2} /^  Test: /{t=s "." $2; buf=""} {buf=buf "\n" $0}
	     /^FAILED/{ if (buf !~ /WRITE_PROTECTED|DATA PROTECTION|\(0x07\)\/\(0x2700\)/ &&
			    t != "Sanitize.Reset") print t }' "$out" >"$DIR/$kind.bad"
	if grep -q "Test: ReadOnlySBC" "$out" && ! printf '%s\n' "$fails" | grep -q "ReadOnlySBC" &&
		[ ! -s "$DIR/$kind.bad" ]; then
		echo "ok   $kind (every failure is DATA PROTECT 07/27/00 on a write; ReadOnly.ReadOnlySBC passes)"
		return 0
	fi
	echo "FAIL $kind: failures other than DATA PROTECT, or ReadOnlySBC did not pass:"
	sed 's/^/    /' "$DIR/$kind.bad"
	return 1
}

check_kind thin 0
check_kind thin4k 7
check_kind thick 1
check_kind ram 2
check_kind rem 3
check_kind ro 4
check_kind ro-lun 6

# SANITIZE that outlives ABORT TASK, resets and a new login: 32 MiB at 4 MiB/s = 8 s.
fails=$(run_cu "$DIR/san.out" --test=SCSI.Sanitize.Reset "$URL/5")
if [ "$(summary "$DIR/san.out")" = "total 1 ran 1 passed 1 failed 0" ]; then
	echo "ok   Sanitize.Reset on a paced sanitize ($(summary "$DIR/san.out"))"
else
	echo "FAIL Sanitize.Reset:"
	printf '%s\n' "$fails" | sed 's/^/    /'
	rc=1
fi

# Two portals, one LU: MultipathIO (reservations, COMPARE AND WRITE, LU reset seen by both).
fails=$(run_cu "$DIR/mp.out" --test=ALL.MultipathIO "$URL/2" "$URL2/2")
if [ "$(summary "$DIR/mp.out")" = "total 4 ran 4 passed 4 failed 0" ] &&
	! grep -q SKIPPED "$DIR/mp.out"; then
	echo "ok   MultipathIO through two portals ($(summary "$DIR/mp.out"))"
else
	echo "FAIL MultipathIO ($(summary "$DIR/mp.out")):"
	printf '%s\n' "$fails" | sed 's/^/    /'
	grep SKIPPED "$DIR/mp.out" | head -3
	rc=1
fi
exit $rc
