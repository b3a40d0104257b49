#!/usr/bin/env bash
# Copy a finished campaign's report into docs/: lab-results/report.md -> docs/lab-report.md
# (image links pointing at docs/lab/), its PNGs and the failover CSV -> docs/lab/.
#   scripts/lab/publish.sh [RESULTS_DIR]     (lab-results)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:-lab-results}
[ -f "$src/report.md" ] || { echo "publish.sh: $src/report.md not found (make lab first)" >&2; exit 1; }
grep -q '^# utgt multipath lab: ' "$src/report.md" ||
	{ echo "publish.sh: $src/report.md is not a full campaign's report" >&2; exit 1; }
mkdir -p docs/lab
# The RDMA section comes from the guest test (tests/vm/rdma_scaling.sh), not from the campaign:
# keep it, at the end, across a republish.
rdma=$(sed -n '/^## Seed 001 over RDMA/,$p' docs/lab-report.md 2>/dev/null || true)
cp "$src"/*.png docs/lab/
cp "$src/failover.csv" docs/lab/
# shellcheck disable=SC2016 # backquotes are Markdown here
sed -e 's#](\([a-z_]*\.png\))#](lab/\1)#g' \
	-e 's#`failover.csv`#`failover.csv` (docs/lab/failover.csv)#' \
	"$src/report.md" >docs/lab-report.md
[ -z "$rdma" ] || printf '\n%s\n' "$rdma" >>docs/lab-report.md
echo "publish.sh: wrote docs/lab-report.md and docs/lab/"
