# utgt-bench in the guest (tests/vm/srp_bench.sh, tests/vm/iser_bench.sh).  Source after
# common.sh; the caller sets BENCH (the utgt-bench binary) and may set BENCH_ARGS (options
# for every run, split at blanks).

# bench NAME ARGS...: one run with JSON output in /tmp/NAME.json; fails the test unless it ended
# without error and without verification errors; prints "read-MB/s write-MB/s".
bench() {
	local name=$1
	shift
	# shellcheck disable=SC2086
	"$BENCH" ${BENCH_ARGS:-} --name="$name" --output-format=json --output="/tmp/$name.json" "$@" ||
		{ tail -30 "/tmp/$name.json" >&2 2>/dev/null; fail "utgt-bench $name exited non-zero"; }
	python3 - "/tmp/$name.json" <<'PY' || fail "utgt-bench $name reported an error"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
if j["error"]:
    print("error:", j.get("error_message"), file=sys.stderr)
    sys.exit(1)
v = j.get("verify", {})
if v.get("enabled") and v.get("errors"):
    print("verify errors:", v, file=sys.stderr)
    sys.exit(1)
print(f"{j['read']['bw_bytes'] / 1e6:.1f} {j['write']['bw_bytes'] / 1e6:.1f}")
PY
}

# bench_json NAME EXPR: a value from /tmp/NAME.json's first job (j), e.g. "j['verify']['blocks']".
bench_json() {
	python3 -c "import json; j = json.load(open('/tmp/$1.json'))['jobs'][0]; print($2)"
}
