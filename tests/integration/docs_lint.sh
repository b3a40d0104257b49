#!/usr/bin/env bash
# suite-timeout: 60
# Docs are code (scripts/lint-docs.py): the tree passes the lint, and the lint fails on a
# document that names a function, a file, a flag and scst.conf attributes that do not exist,
# and on a tree whose scsi/ includes target/ or whose transports write to stderr, naming
# each offender with FILE:LINE.
set -u
cd "$(dirname "$0")/../.."
LINT=scripts/lint-docs.py
T=$(mktemp -d /tmp/utgt-docs-lint.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# 1. the tree as it is
t0=$(date +%s%N)
if python3 "$LINT" >"$T/tree.out" 2>&1; then
	ok "the tree: $(tail -1 "$T/tree.out") ($((($(date +%s%N) - t0) / 1000000)) ms)"
else
	bad "the tree has offenders:"
	sed 's/^/  | /' "$T/tree.out"
fi

# 2. a document with one bogus name of each kind (line numbers matter: they are checked)
cat >"$T/bogus.md" <<'EOF'
# A doc that drifted
Completion goes through `@FN@()` in scsi/scsi_exec.c.
The SRP codec is transports/srp/srp_codec.c, see also `srp_nothere.h`.
Run `utgtd --foreground --no-such-flag -c FILE` or `utgt-bench --iodepth=4 --bogus-bench=1`.

```
HANDLER vdisk_fileio {
	DEVICE d0 {
		filename /srv/d0.img
		nv_cahce 1
	}
}
```

| attribute | meaning |
|-----------|---------|
| `write_through` | real |
| `made_up_attr` | bogus |
EOF
# the function's name is built here, so this script's own text does not define it
fn=scsi_task_$(echo fin)sh
sed -i "s/@FN@/$fn/" "$T/bogus.md"
if python3 "$LINT" "$T/bogus.md" >"$T/bogus.out" 2>&1; then
	bad "the lint passed a document with bogus names"
else
	ok "a bogus document fails the lint"
fi
for want in "bogus.md:2: function '$fn()'" \
	"bogus.md:3: file 'transports/srp/srp_codec.c'" \
	"bogus.md:3: file 'srp_nothere.h'" \
	"bogus.md:4: flag '--no-such-flag' is not an option of utgtd" \
	"bogus.md:4: flag '--bogus-bench' is not an option of utgt-bench" \
	"bogus.md:10: attribute 'nv_cahce'" \
	"bogus.md:18: attribute 'made_up_attr'"; do
	grep -qF "$want" "$T/bogus.out" && ok "reported: $want" || bad "not reported: $want"
done
n=$(grep -c "bogus.md:" "$T/bogus.out")
[ "$n" = 7 ] && ok "and nothing else in it (7 offenders)" ||
	{ bad "$n offenders in the bogus document, 7 expected:"; sed 's/^/  | /' "$T/bogus.out"; }

# 3. the layering rule on a small tree of its own
R=$T/tree
mkdir -p "$R/common" "$R/scsi" "$R/transports/x" "$R/target"
echo '#include "common/a.h"' >"$R/scsi/ok.c"
printf '#include <stdio.h>\n#include "target/run.h"\n' >"$R/scsi/up.c"
printf 'void f(void)\n{\n\tfprintf(stderr, "x");\n}\n' >"$R/transports/x/say.c"
printf '#include "scsi/ok.h"\n#include "transports/x/x.h"\n' >"$R/target/fine.c"
touch "$R/common/a.h" "$R/target/run.h"
git -C "$R" init -q && git -C "$R" add -A
if python3 "$LINT" --root "$R" >"$T/layers.out" 2>&1; then
	bad "the lint passed scsi/ including target/"
else
	grep -q "scsi/up.c:2: include 'target/'" "$T/layers.out" &&
		ok "scsi/ including target/ is reported" || bad "no report of scsi/up.c:2"
	grep -q "transports/x/say.c:3: stderr" "$T/layers.out" &&
		ok "fprintf(stderr) in transports/ is reported" || bad "no report of say.c:3"
	[ "$(grep -c ': include\|: stderr' "$T/layers.out")" = 2 ] && ok "target/ including lower layers is not" ||
		{ bad "unexpected reports:"; sed 's/^/  | /' "$T/layers.out"; }
fi

[ $fails = 0 ] && echo "docs_lint: all passed" || { echo "docs_lint: $fails failed"; exit 1; }
