#!/usr/bin/env bash
# suite-timeout: 60
# utgt-bench shares no protocol code with the target it measures: every global function in
# the binary is its own (ub_ prefix) or one of the generic helpers listed here (common/diag.c,
# common/parse.c, the RDMA address parser).  A call into the SCSI core, an iSCSI or SRP
# encoder or any other target module would make a layout mistake symmetric and invisible, so
# it fails here with the symbol's name.
set -u
BENCH=${BUILD:-build}/utgt-bench
ALLOWED="diag_error diag_warn parse_bool parse_hex_digit parse_size parse_u64 rdma_format_addr rdma_parse_addr"
[ -x "$BENCH" ] || { echo "bench_independent: $BENCH is not built"; exit 1; }
mapfile -t syms < <(nm --defined-only "$BENCH" | awk '$2 == "T" { print $3 }' |
	grep -v -E '^(ub_|_|main$)' | sort)
[ ${#syms[@]} -gt 0 ] || { echo "bench_independent: nm found no functions in $BENCH"; exit 1; }
bad=()
for s in "${syms[@]}"; do
	case " $ALLOWED " in *" $s "*) ;; *) bad+=("$s") ;; esac
done
own=$(nm --defined-only "$BENCH" | awk '$2 == "T" && $3 ~ /^ub_srp_/' | wc -l)
if [ "$own" -lt 5 ]; then
	echo "FAIL bench_independent: only $own ub_srp_* functions: the SRP engine's own codec is missing"
	exit 1
fi
if [ ${#bad[@]} -gt 0 ]; then
	echo "FAIL bench_independent: utgt-bench links target code: ${bad[*]}"
	exit 1
fi
echo "ok   utgt-bench: ${#syms[@]} shared helpers (${syms[*]}), $own own SRP codec functions"
echo "bench_independent: all passed"
