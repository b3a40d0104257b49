#!/usr/bin/env bash
# suite-timeout: 60
# WRITEs whose iSCSI Expected Data Transfer Length differs from the CDB (docs/scsi-core.md
# "Residuals"): one that ends inside a logical block was answered GOOD with the block not
# written; now it is refused with
# INVALID FIELD IN COMMAND INFORMATION UNIT and writes nothing, on a 512-byte and a 4096-byte
# LU.  The client is tests/integration/iscsi_write_edtl.py.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
T=iqn.2026-12.org.utgt:write-edtl
start_utgtd "
HANDLER ramdisk {
	DEVICE rd512 {
		size_mb 4
	}
	DEVICE rd4k {
		size_mb 4
		blocksize 4096
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	TARGET $T {
		enabled 1
		LUN 0 rd512
		LUN 1 rd4k
	}
}"
timeout --foreground 50 python3 tests/integration/iscsi_write_edtl.py 127.0.0.1 "$UT_PORT" "$T"
rc=$?
if stop_utgtd; then ok "utgtd stopped on SIGTERM"; else bad "utgtd did not stop"; rc=1; fi
[ $rc -eq 0 ] && [ $FAILS -eq 0 ]
