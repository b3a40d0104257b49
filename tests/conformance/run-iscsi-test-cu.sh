#!/usr/bin/env bash
# suite-timeout: 900
# libiscsi's conformance suite (iscsi-test-cu) against utgtd's iSCSI target.
#
# Starts build/utgtd -f with a generated config on 127.0.0.1 (two portals on free ports) and
# one target of one LU per run, so that every test finds a LU it applies to:
#   :thin       vdisk_fileio, thin provisioned, paced SANITIZE  -> ALL but Sanitize.Reset and
#                                                                  Sanitize.Reservations, --allow-sanitize
#   :sanreset   vdisk_fileio, thin provisioned, slow SANITIZE   -> Sanitize.Reset, then
#                                                                  Sanitize.Reservations, --allow-sanitize
#   :ram        ramdisk                                          -> ALL
#   :removable  ramdisk, removable (START STOP UNIT LOEJ, PREVENT ALLOW, no media) -> ALL
#   :thin4k     vdisk_fileio, thin provisioned, 4096-byte blocks -> ALL but ProutReserve.Access*
#   :thick      vdisk_fileio, fully provisioned (512e, the vdisk default) -> ALL
#   :thin512e   vdisk_fileio, thin, 512-byte blocks in 4096-byte physical blocks (lb_per_pb_exp)
#                                                                -> ALL but GetLBAStatus.UnmapSingle
#   :ro         vdisk_fileio, read_only                          -> ReadOnly suite
#   :ramro      ramdisk, thin, exported through a read-only LUN  -> ReadOnly suite
#   :ram through both portals (two I_T nexuses)                  -> MultipathIO
# then merges the results: a test fails if it failed in any run, passes if it passed (not
# skipped) in at least one, and is skipped only if every run skipped it.  Any failure and any
# skip fails the script.  It prints one line per run (LU) with its passed/failed/skipped
# counts and the tests that passed on no LU, and writes the whole test x LU matrix to
# build/conformance-matrix.txt.  tests/conformance/README.md explains the layout.
#
# Every iscsi-test-cu run has its own time limit; one that runs out is reported with the test
# it was in and the last lines of its log.
#
# Environment: UTGTD (default build/utgtd), CU_TESTS (default ALL; e.g. SCSI.Read10 to narrow
# the ALL runs; the skip check and the sanreset run are then off), KEEP=1 keeps the work
# directory (logs, config), CU_TIMEOUT (seconds per ALL run, default 400), MATRIX (where the
# test x LU matrix goes, default build/conformance-matrix.txt).
set -u
cd "$(dirname "$0")/../.."
UTGTD=${UTGTD:-build/utgtd}
CU_TESTS=${CU_TESTS:-ALL}
CU_TIMEOUT=${CU_TIMEOUT:-400}
MATRIX=${MATRIX:-build/conformance-matrix.txt}
IQN=iqn.2026-12.org.utgt:conformance

command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu missing (apt install libiscsi-bin)"; exit 1; }
[ -x "$UTGTD" ] || { echo "$UTGTD not built"; exit 1; }

WORK=$(mktemp -d /tmp/utgt-conformance.XXXXXX)
PID=
cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill "$PID"
		for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PID" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
# EXIT only: bash runs it on INT and TERM too, and then stops (a trap on INT or TERM itself
# would let the script carry on after cleaning up)
trap cleanup EXIT

# Two free TCP ports on 127.0.0.1
. tests/integration/lib/ports.sh
pick_port P1
pick_port P2

truncate -s 16M "$WORK/ro.img"
# One target per LU, so the ALL runs can go in parallel: a TARGET COLD RESET (PreventAllow,
# Sanitize.Reset) only drops the sessions of its own target.
#
# SANITIZE runs only against the thin LUs; the other runs skip the Sanitize suite.  The thin
# LU is paced by sanitize_rate_mb (64 MiB at 10 MiB/s: 6.4 s per sanitize) so that each test
# of the suite finds its sanitize in progress when it looks.  Sanitize.Reset runs on
# :sanreset (then Sanitize.Reservations, below), paced to 32 s (32 MiB at 1 MiB/s): it checks that the sanitize is still running
# about 5 s after starting it (after a 3 s sleep, four resets, a logout, a 1 s sleep and a new
# login), which at 6.4 s was a race with little margin on a loaded machine; 32 s is a margin
# of more than 25 s, and the test's final 60 s sleep (see NopInInterval below) still covers
# the whole sanitize, so the run takes about 65 s either way.
#
# NopInInterval 0 on every target: no NOP-In pings.  Sanitize.Reset ends in
# "while (testunitready_clear_ua(...)) sleep(60);" on a synchronous libiscsi context, which
# answers nothing while it sleeps; with SCST's NopInInterval 30 / NopInTimeout 30 utgtd
# closed that silent connection after about 59 s, libiscsi reconnected on the next TEST UNIT
# READY, the new nexus got its UNIT ATTENTION, TEST UNIT READY failed, the test slept 60 s
# again, and so on: the run ended only when the client's wake-up won a one-second race
# against the NOP-In timeout.  No conformance test checks NOP-In (unit tests do).
NOP='NopInInterval 0'
cat >"$WORK/utgtd.conf" <<EOF
HANDLER vdisk_fileio {
	DEVICE thin {
		filename $WORK/thin.img
		size_mb 64
		thin_provisioned 1
		sanitize_rate_mb 10
		# 512n (the vdisk default is SCST's 512e): GetLBAStatus.UnmapSingle unmaps single
		# 512-byte blocks and wants each reported deallocated; :thin512e covers 512e
		lb_per_pb_exp 0
	}
	DEVICE sanreset {
		filename $WORK/sanreset.img
		size_mb 32
		thin_provisioned 1
		sanitize_rate_mb 1
	}
	DEVICE ro {
		filename $WORK/ro.img
		read_only 1
		thin_provisioned 1
	}
	DEVICE thin4k {
		filename $WORK/thin4k.img
		size_mb 64
		blocksize 4096
		thin_provisioned 1
	}
	DEVICE thick {
		filename $WORK/thick.img
		size_mb 64
	}
	DEVICE thin512e {
		filename $WORK/thin512e.img
		size_mb 64
		thin_provisioned 1
		lb_per_pb_exp 1
	}
}
HANDLER ramdisk {
	DEVICE ram {
		size_mb 64
	}
	DEVICE rem {
		size_mb 16
		removable 1
	}
	DEVICE ramro {
		size_mb 16
		thin_provisioned 1
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$P1
	listen 127.0.0.1:$P2
	TARGET $IQN:thin {
		enabled 1
		$NOP
		LUN 0 thin
	}
	TARGET $IQN:sanreset {
		enabled 1
		$NOP
		LUN 0 sanreset
	}
	TARGET $IQN:ram {
		enabled 1
		$NOP
		LUN 0 ram
	}
	TARGET $IQN:removable {
		enabled 1
		$NOP
		LUN 0 rem
	}
	TARGET $IQN:ro {
		enabled 1
		$NOP
		LUN 0 ro
	}
	TARGET $IQN:thin4k {
		enabled 1
		$NOP
		LUN 0 thin4k
	}
	TARGET $IQN:thick {
		enabled 1
		$NOP
		LUN 0 thick
	}
	TARGET $IQN:thin512e {
		enabled 1
		$NOP
		LUN 0 thin512e
	}
	TARGET $IQN:ramro {
		enabled 1
		$NOP
		LUN 0 ramro {
			read_only 1
		}
	}
}
EOF

"$UTGTD" -f -c "$WORK/utgtd.conf" --admin-socket "$WORK/utgtd.sock" --state-dir "$WORK/state" \
	>"$WORK/utgtd.log" 2>&1 &
PID=$!
# Wait for the condition (the second portal listening), not for a time; bounded at 30 s.
for _ in $(seq 300); do
	grep -q "listening on 127.0.0.1:$P2" "$WORK/utgtd.log" 2>/dev/null && break
	kill -0 $PID 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "listening on 127.0.0.1:$P2" "$WORK/utgtd.log"; then
	echo "utgtd did not start:"; cat "$WORK/utgtd.log"; exit 1
fi
echo "utgtd pid $PID on 127.0.0.1:$P1 and :$P2 ($WORK)"

url() { echo "iscsi://127.0.0.1:$1/$IQN:$2/0"; }

# tests_but FILE SUITE.TEST...: a test-list file (one FAMILY.SUITE[.TEST] a line, which
# iscsi-test-cu reads when --test names a file) of ALL without those tests: every other suite
# whole, a suite with an excluded test test by test.  Without CU_TESTS=ALL, CU_TESTS as it is.
tests_but() {
	local f=$1
	shift
	if [ "$CU_TESTS" != ALL ]; then
		echo "$CU_TESTS"
		return
	fi
	iscsi-test-cu --list | awk -F. -v ex="$*" '
		BEGIN { n = split(ex, e, " ")
			for (i = 1; i <= n; i++) { x[e[i]] = 1; split(e[i], p, "."); xs[p[1]] = 1 } }
		$1 != "ALL" { next }
		NF == 2 && !($2 in xs) { print }
		NF == 3 && ($2 in xs) && !(($2 "." $3) in x) { print }' >"$f"
	echo "$f"
}
# thin: Sanitize.Reset and Sanitize.Reservations run on :sanreset instead (above, and below).
thin_tests=$(tests_but "$WORK/thin.tests" Sanitize.Reset Sanitize.Reservations)
# thin512e: GetLBAStatus.UnmapSingle asks for the status of LBA i+1 and wants the first
# descriptor to start at i+LBPPB (test_get_lba_status_unmap_single.c, second loop), where
# SBC-4 requires the requested LBA; with one logical block per physical block the two are the
# same, so it runs (and passes) on every other thin LU.
thin512e_tests=$(tests_but "$WORK/thin512e.tests" GetLBAStatus.UnmapSingle)
# thin4k: ProutReserve.Access* check access through WRITE(10)/READ(10) of one block sent with
# an expected length of 512 bytes whatever the LU's block size (verify_write_works() among
# libiscsi's test-tool helpers); on a 4096-byte LU that WRITE ends inside a block and
# is refused with INVALID FIELD IN COMMAND INFORMATION UNIT (docs/scsi-core.md, Residuals), as
# LIO refuses it.  They run (and pass) on every 512-byte LU.
thin4k_tests=$(tests_but "$WORK/thin4k.tests" ProutReserve.AccessEA ProutReserve.AccessWE \
	ProutReserve.AccessEARO ProutReserve.AccessWERO ProutReserve.AccessEAAR ProutReserve.AccessWEAR)

# One iscsi-test-cu run; results appended to $WORK/results as "name status tag".
# SANITIZE=1 in the environment of a run adds --allow-sanitize; LIMIT its time limit.
run_cu() {
	local tag=$1 tests=$2; shift 2
	local log="$WORK/cu-$tag.log" t0=$SECONDS san= limit=${LIMIT:-$CU_TIMEOUT} rc
	[ "${SANITIZE:-0}" = 1 ] && san=--allow-sanitize
	printf '%s\n' $san "$@" >"$WORK/args.$tag" # for a retry of a single test
	# --foreground: no process group of its own, so a limit around this script (make test's)
	# or Ctrl-C reaches iscsi-test-cu too
	timeout --foreground -k 10 "$limit" iscsi-test-cu --dataloss $san --test="$tests" "$@" >"$log" 2>&1
	rc=$?
	awk -v tag="$tag" -f tests/conformance/cu_results.awk "$log" >>"$WORK/results"
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		# the test that never finished: the last one started, with no verdict
		local cur
		cur=$(awk '/^Suite: / { s = $2 } /^  Test: / { t = s "." $2 } END { print t }' "$log")
		echo "${cur:-?} failed $tag" >>"$WORK/results"
		echo "TIMEOUT: conformance run $tag: iscsi-test-cu still in ${cur:-its setup} after ${limit}s ($*)"
		echo "  last lines of $log:"
		tail -15 "$log" | awk '{ print "  | " $0 }'
		echo timeout >"$WORK/timeout.$tag"
	fi
	printf '  %-12s %-28s %3ds  %s\n' "$tag" "${tests##*/}" $((SECONDS - t0)) \
		"$(grep -A2 'Run Summary' "$log" | awk '/tests/ {print "ran " $3 ", passed " $4 ", failed " $5}')"
}

: >"$WORK/results"
echo "iscsi-test-cu runs (the ALL runs and the sanreset run in parallel):"
jobs_=()
SANITIZE=1 run_cu thin "$thin_tests" "$(url $P1 thin)" >"$WORK/sum.thin" &
jobs_+=($!)
if [ "$CU_TESTS" = ALL ]; then
	# Reset, then Reservations (iscsi-test-cu adds a comma list from its end).  Reservations
	# ends by dropping a second connection that holds a RESERVE(6), without a logout; whatever
	# comes next on the first connection can overtake the target's notice of that (they are two
	# TCP connections) and get RESERVATION CONFLICT.  Last in its own run, only the suite's
	# cleanup follows it (a PRIN that then fails harmlessly); in the thin run, the next test
	# (and before, Sanitize.Reset after it in the suite) could fail on that race.
	SANITIZE=1 LIMIT=300 run_cu sanreset ALL.Sanitize.Reservations,ALL.Sanitize.Reset \
		"$(url $P2 sanreset)" >"$WORK/sum.sanreset" &
	jobs_+=($!)
fi
run_cu ram "$CU_TESTS" "$(url $P1 ram)" >"$WORK/sum.ram" &
jobs_+=($!)
run_cu removable "$CU_TESTS" "$(url $P1 removable)" >"$WORK/sum.removable" &
jobs_+=($!)
run_cu thin4k "$thin4k_tests" "$(url $P2 thin4k)" >"$WORK/sum.thin4k" &
jobs_+=($!)
run_cu thick "$CU_TESTS" "$(url $P2 thick)" >"$WORK/sum.thick" &
jobs_+=($!)
run_cu thin512e "$thin512e_tests" "$(url $P2 thin512e)" >"$WORK/sum.thin512e" &
jobs_+=($!)
wait "${jobs_[@]}" # not a bare wait: utgtd is a child too
cat "$WORK"/sum.*
LIMIT=120 run_cu readonly ALL.ReadOnly "$(url $P1 ro)"
LIMIT=120 run_cu readonly-lun ALL.ReadOnly "$(url $P1 ramro)"
LIMIT=120 run_cu multipath ALL.MultipathIO "$(url $P1 ram)" "$(url $P2 ram)"

if ! kill -0 $PID 2>/dev/null; then
	echo "FAIL: utgtd died during the runs"; tail -30 "$WORK/utgtd.log"; KEEP=1; exit 1
fi

# A failed test gets one more try alone, with the same LU and options.  Some tests race with
# the initiator itself (Sanitize.Reservations drops a connection without a logout, and the next
# test's command can overtake the target's notice of that on another connection); a failure
# that repeats is a failure.  Retries are listed, never hidden.  A run that timed out is not
# retried: a hang is reported as it is.
: >"$WORK/retried"
awk '$2 == "failed" {print $1, $3}' "$WORK/results" | sort -u | while read -r name tag; do
	[ -e "$WORK/timeout.$tag" ] && continue
	mapfile -t args <"$WORK/args.$tag"
	if timeout --foreground -k 10 120 iscsi-test-cu --dataloss --test="ALL.$name" "${args[@]}" >"$WORK/retry-$tag-$name.log" 2>&1 &&
		grep -q "passed" "$WORK/retry-$tag-$name.log" && ! grep -q "FAILED" "$WORK/retry-$tag-$name.log"; then
		echo "$name $tag" >>"$WORK/retried"
	fi
done

# Merge: failed anywhere > passed somewhere > skipped everywhere.
awk -v retried="$WORK/retried" '
	BEGIN { while ((getline l < retried) > 0) { split(l, a, " "); ok[a[1] " " a[2]] = 1 } }
	{ n = $1; seen[n] = 1
	  if ($2 == "failed" && !ok[n " " $3]) { f[n] = 1; where[n] = where[n] " " $3 }
	  else if ($2 == "failed") { p[n] = 1; r[n] = r[n] " " $3 }
	  else if ($2 == "passed") p[n] = 1 }
	END {
		for (n in seen) {
			if (f[n]) { nf++; print "FAILED " n " (" substr(where[n], 2) ")" > "/dev/stderr" }
			else if (p[n]) { np++; if (r[n] != "") print "passed on retry: " n " (" substr(r[n], 2) ")" }
			else { ns++; print n > "'"$WORK/skipped"'" }
		}
		printf "conformance: %d passed, %d failed, %d skipped of %d tests\n", np, nf, ns, np + nf + ns
		exit nf > 0
	}
' "$WORK/results"
rc=$?

# The per-LU matrix: one column per run (LU), one row per test: P passed, R passed on retry,
# F failed, S skipped, . not run there; and per run its counts, in the order of RUNS.
RUNS="thin sanreset ram removable thin4k thick thin512e readonly readonly-lun multipath"
mkdir -p "$(dirname "$MATRIX")"
awk -v retried="$WORK/retried" -v out="$MATRIX" -v order="$RUNS" '
	BEGIN { while ((getline l < retried) > 0) { split(l, a, " "); ok[a[1] " " a[2]] = 1 }
		nc = split(order, tags, " ") }
	{ n = $1; t = $3
	  if (!(n in row)) { row[n] = ++nr; names[nr] = n }
	  c = $2 == "passed" ? "P" : $2 == "skipped" ? "S" : ok[n " " t] ? "R" : "F"
	  cell[n, t] = c; cnt[t, c]++; ran[t] = 1
	  if (c == "P" || c == "R") good[n] = 1 }
	END {
		printf "%-44s", "test \\ run" > out
		for (i = 1; i <= nc; i++) printf " %s", tags[i] > out
		printf "\n" > out
		for (j = 1; j <= nr; j++) {
			n = names[j]; printf "%-44s", n > out
			for (i = 1; i <= nc; i++)
				printf " %*s", length(tags[i]), ((n, tags[i]) in cell) ? cell[n, tags[i]] : "." > out
			printf "\n" > out
		}
		print "per LU (run): tests passed / failed / skipped there"
		for (i = 1; i <= nc; i++) {
			t = tags[i]
			if (!ran[t]) continue
			printf "  %-13s %3d passed %3d failed %3d skipped\n", t, cnt[t, "P"] + cnt[t, "R"],
			       cnt[t, "F"], cnt[t, "S"]
		}
		none = 0
		for (j = 1; j <= nr; j++) if (!good[names[j]]) none++
		printf "tests that passed on no LU: %s\n", none ? none : "none"
		for (j = 1; j <= nr; j++) if (!good[names[j]]) print "  " names[j]
	}
' "$WORK/results"
echo "test x LU matrix: $MATRIX"

if [ -s "$WORK/skipped" ]; then
	echo "skipped on every LU (see tests/conformance/README.md):"
	sort "$WORK/skipped" | sed 's/^/  /'
fi
# A skip is a test that checked nothing.  Every test applies to one of the LUs above, so on a
# full run none may be skipped everywhere: a skip fails like a failure (ALLOWED_SKIPS lists
# exceptions, explained in README.md; there are none).
ALLOWED_SKIPS=""
if [ "$CU_TESTS" = ALL ] && [ -s "$WORK/skipped" ]; then
	unexpected=$(sort "$WORK/skipped" | comm -23 - <(printf '%s\n' $ALLOWED_SKIPS | sort))
	if [ -n "$unexpected" ]; then
		echo "FAIL: skipped on every LU and not explained in tests/conformance/README.md:"
		printf '%s\n' "$unexpected" | sed 's/^/  /'
		rc=1
	fi
fi
ls "$WORK"/timeout.* >/dev/null 2>&1 && rc=1
[ $rc -eq 0 ] || { echo "logs: $WORK (kept)"; KEEP=1; }
exit $rc
