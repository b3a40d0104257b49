#!/usr/bin/env bash
# Run each libFuzzer binary for SECONDS from build-fuzz/corpus/<name>, seeded with
# tests/fuzz/seeds/<name>/ (and conf/ for the config loader).  Crashes are kept as
# build-fuzz/crash-* and fail the run.  Usage: run-fuzz.sh SECONDS BIN...
set -u
secs=$1; shift
cd "$(dirname "$0")/.."
fail=0
for bin in "$@"; do
	name=$(basename "$bin")
	corpus=build-fuzz/corpus/$name
	mkdir -p "$corpus"
	seeds=()
	[ -d "tests/fuzz/seeds/$name" ] && seeds+=("tests/fuzz/seeds/$name")
	[ "$name" = fuzz_conf ] && seeds+=(conf)
	printf '%-24s %3ss ... ' "$name" "$secs"
	if "$bin" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix=build-fuzz/ \
		"$corpus" "${seeds[@]}" >"build-fuzz/$name.log" 2>&1; then
		echo "ok ($(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$name.log" | awk '{print $2}') runs)"
	else
		echo "FAILED (see build-fuzz/$name.log)"; tail -20 "build-fuzz/$name.log"; fail=1
	fi
done
exit $fail
