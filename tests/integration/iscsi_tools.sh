#!/usr/bin/env bash
# libiscsi's command-line tools against utgtd: iscsi-inq, iscsi-readcapacity16, iscsi-ls
# (discovery with and without CHAP, ACL filtering, allowed_portal), and a clean SIGTERM.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
command -v iscsi-inq >/dev/null || { echo "libiscsi-bin missing"; exit 1; }
T=iqn.2026-12.org.utgt:tools

echo "-- without discovery CHAP"
start_utgtd "
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb 32
		prod_id TOOLDISK
	}
	DEVICE rd1 {
		size_mb 8
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	TARGET $T {
		enabled 1
		LUN 0 rd0
		LUN 1 rd1
	}
	TARGET iqn.2026-12.org.utgt:private {
		enabled 1
		GROUP only-backup {
			INITIATOR iqn.2026-12.org.utgt:backup
			LUN 0 rd1
		}
	}
	TARGET iqn.2026-12.org.utgt:chap {
		enabled 1
		IncomingUser joe joesecret1234
		GROUP everyone-but-backup {
			INITIATOR \"!iqn.2026-12.org.utgt:backup\"
			LUN 0 rd1
		}
	}
}"
U=iscsi://127.0.0.1:$UT_PORT
out=$(iscsi-inq "$U/$T/0" 2>&1)
if echo "$out" | grep -q "Product:TOOLDISK"; then ok "iscsi-inq: standard INQUIRY names the product"; else bad "iscsi-inq: $out"; fi
out=$(iscsi-inq -e 1 -c 0x80 "$U/$T/0" 2>&1)
if echo "$out" | grep -qi "serial"; then ok "iscsi-inq: VPD 80 unit serial number"; else bad "iscsi-inq VPD 80: $out"; fi
out=$(iscsi-readcapacity16 "$U/$T/0" 2>&1)
if echo "$out" | grep -q "Total size:33554432"; then ok "iscsi-readcapacity16: 32 MiB"; else bad "iscsi-readcapacity16: $out"; fi
out=$(iscsi-readcapacity16 "$U/$T/1" 2>&1)
if echo "$out" | grep -q "Total size:8388608"; then ok "iscsi-readcapacity16 LUN 1: 8 MiB"; else bad "iscsi-readcapacity16 LUN 1: $out"; fi
out=$(iscsi-ls "$U" 2>&1)
if echo "$out" | grep -q "Target:$T Portal:127.0.0.1:$UT_PORT,1" &&
	echo "$out" | grep -q "Target:iqn.2026-12.org.utgt:chap Portal"; then
	ok "iscsi-ls: SendTargets lists the targets with their portal and tag"
else
	bad "iscsi-ls: $out"
fi
if echo "$out" | grep -q "private"; then bad "iscsi-ls: a target with no LUN for us is listed"; else ok "iscsi-ls: target without LUNs for this initiator not listed"; fi
out=$(iscsi-ls -s -i iqn.2026-12.org.utgt:backup "$U" 2>&1)
if echo "$out" | grep -q "Lun:0 .*Size:7M" && ! echo "$out" | grep -q ":chap"; then ok "iscsi-ls -s: logs in and lists the LUNs each target gives this initiator"; else bad "iscsi-ls -s: $out"; fi
out=$(iscsi-ls -i iqn.2026-12.org.utgt:backup "$U" 2>&1)
if echo "$out" | grep -q "Target:iqn.2026-12.org.utgt:private"; then ok "iscsi-ls: the GROUP's initiator sees the private target"; else bad "iscsi-ls -i backup: $out"; fi
out=$(iscsi-inq "$U/iqn.2026-12.org.utgt:chap/0" 2>&1)
if [ -n "$out" ] && ! echo "$out" | grep -q "Product"; then ok "login without CHAP to a CHAP target refused"; else bad "CHAP target without CHAP: $out"; fi
expect "login with CHAP to a CHAP target" iscsi-inq "iscsi://joe%joesecret1234@127.0.0.1:$UT_PORT/iqn.2026-12.org.utgt:chap/0"
expect_fail "login with a wrong CHAP secret refused" iscsi-inq "iscsi://joe%wrongsecret12@127.0.0.1:$UT_PORT/iqn.2026-12.org.utgt:chap/0"
if grep -q "refused: 0201" "$UT_LOG"; then ok "wrong secret logged as login status 0201"; else bad "no 0201 in the log"; fi
if grep -q "served by worker" "$UT_LOG"; then ok "the log says which worker serves each connection"; else bad "no worker line in the log"; fi
if stop_utgtd && grep -q "iscsi: stopped" "$UT_LOG"; then ok "SIGTERM: the transport drains and stops"; else bad "utgtd did not stop cleanly"; fi

echo "-- with discovery CHAP (driver-level IncomingUser)"
start_utgtd "
HANDLER ramdisk {
	DEVICE rd0 {
		size_mb 8
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	IncomingUser disco discosecret12
	TARGET $T {
		enabled 1
		LUN 0 rd0
	}
}"
U=127.0.0.1:$UT_PORT
out=$(iscsi-ls "iscsi://$U" 2>&1)
if echo "$out" | grep -q "Target:"; then bad "discovery without CHAP answered: $out"; else ok "discovery without CHAP refused"; fi
out=$(iscsi-ls "iscsi://disco%discosecret12@$U" 2>&1)
if echo "$out" | grep -q "Target:$T Portal:127.0.0.1:$UT_PORT,1"; then ok "discovery with CHAP lists the target"; else bad "discovery with CHAP: $out"; fi
out=$(iscsi-ls "iscsi://disco%nottheright1@$U" 2>&1)
if echo "$out" | grep -q "Target:"; then bad "discovery with a wrong secret answered"; else ok "discovery with a wrong secret refused"; fi
expect "the target itself needs no CHAP" iscsi-inq "iscsi://$U/$T/0"

[ $FAILS -eq 0 ] && echo "iscsi_tools: all passed" || echo "iscsi_tools: $FAILS failed"
[ $FAILS -eq 0 ]
