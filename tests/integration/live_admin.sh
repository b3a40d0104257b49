#!/usr/bin/env bash
# suite-timeout: 180
# Live administration (docs/admin.md) while initiators work.  utgt-bench runs verified random
# I/O (crc32c) on a target the changes never touch, from the first verb to the last; a
# long-lived raw session (live_admin.py) on the target that does change checks the exact
# UNIT ATTENTIONs and answers after each step.  Every verb of utgtadm, the scstadmin commands,
# `utgtadm reload`, SIGHUP (a good file and one with an error), write-config and its round
# trip through a second daemon, refusals, and 200 add/remove cycles for memory.  At the end
# the bench job has no error, its verify passed, and utgtd counted no CHECK CONDITION on the
# bench's session.
# Every wait is for a condition, bounded at 60 s (the bound only says how long a real failure
# takes to show; an observer answer 90 s, above live_admin.py's 60 s wait for a close); it
# runs in ~20 s, its limit in run-suite.sh is 180 s.
set -u
cd "$(dirname "$0")/../.."
. tests/integration/iscsi_lib.sh
UTGTADM=${UTGTADM:-$(dirname "$UTGTD")/utgtadm}
BENCH=${BENCH:-$(dirname "$UTGTD")/utgt-bench}
for c in jq python3 iscsi-inq; do command -v $c >/dev/null || { echo "$c missing"; exit 1; }; done
P=iqn.2026-12.org.utgt:live
TB=$P-bench # bench's target: never changed
TA=$P-a	    # the one that changes
OBS=iqn.2026-12.org.utgt:observer

CONF="
HANDLER ramdisk {
	DEVICE bench {
		size_mb 64
	}
	DEVICE rd0 {
		size_mb 8
	}
	DEVICE rd1 {
		size_mb 4
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:@PORT@
	TARGET $TB {
		enabled 1
		NopInInterval 0
		LUN 0 bench
	}
	TARGET $TA {
		enabled 1
		NopInInterval 0
		LUN 0 rd0
	}
}
DEVICE_GROUP dg {
	DEVICE rd0
	TARGET_GROUP local {
		group_id 1
		state active
		TARGET $TA
	}
}"
start_utgtd "$CONF"
CONFIG=$UT_DIR/utgtd.conf
adm() { "$UTGTADM" -s "$UT_SOCK" "$@"; }
# adm_ok "description" ARGS...: utgtadm succeeds and prints what changed
adm_ok() {
	local d=$1 out
	shift
	if out=$(adm "$@" 2>&1); then ok "$d: $out"; else bad "$d: $out"; fi
}
# adm_err "exact message" ARGS...: utgtadm fails (exit 1) with the daemon's message
adm_err() {
	local want=$1 out rc
	shift
	out=$(adm "$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$out" = "utgtadm: utgtd: $want" ]; then ok "refused: $want"; else bad "rc $rc: $out (wanted: $want)"; fi
}

# ---- raw sessions that stay logged in (live_admin.py behind two fifos each) ----
declare -A OBS_W OBS_R
obs_start() { # obs_start NAME TARGET INITIATOR ISID_BYTE: logs in, the login's answer in R
	local n=$1 w r
	[ -n "${OBS_W[$n]:-}" ] && eval "exec ${OBS_W[$n]}>&- ${OBS_R[$n]}<&-"
	rm -f "$UT_DIR/$n.in" "$UT_DIR/$n.out"
	mkfifo "$UT_DIR/$n.in" "$UT_DIR/$n.out"
	python3 tests/integration/live_admin.py 127.0.0.1 "$UT_PORT" "$2" "$3" "$4" \
		<"$UT_DIR/$n.in" >"$UT_DIR/$n.out" 2>>"$UT_DIR/$n.err" &
	ILIB_PIDS+=($!)
	exec {w}>"$UT_DIR/$n.in" {r}<"$UT_DIR/$n.out"
	OBS_W[$n]=$w
	OBS_R[$n]=$r
	IFS= read -r -t 90 R <&"$r" || R='{"timeout":true}'
}
# q NAME COMMAND: one command, its JSON answer into R
q() {
	echo "$2" >&"${OBS_W[$1]}"
	IFS= read -r -t 90 R <&"${OBS_R[$1]}" || R='{"timeout":true}'
}
# expect_json NAME COMMAND JQ_FILTER EXPECTED DESCRIPTION
expect_json() {
	q "$1" "$2"
	local got
	got=$(echo "$R" | jq -c "$3")
	if [ "$got" = "$4" ]; then ok "$5 ($2: $got)"; else bad "$5: $2 gave $R, wanted $3 = $4"; fi
}
sense() { expect_json "$1" "tur $2" .sense "\"$3\"" "$4"; }
clear_uas() { for _ in 1 2 3 4 5 6; do q "$1" "tur $2"; [ "$(echo "$R" | jq .status)" = 0 ] && return; done; }

echo "-- verified I/O on $TB/0 for the whole test"
"$BENCH" --name=steady --filename="iscsi://127.0.0.1:$UT_PORT/$TB/0" --rw=randrw --bs=4k \
	--iodepth=8 --size=32m --verify=crc32c --time_based --runtime=3600 --output-format=json \
	>"$UT_DIR/bench.json" 2>"$UT_DIR/bench.err" &
BENCH_PID=$!
ILIB_PIDS+=("$BENCH_PID")
for _ in $(seq 600); do
	[ "$(adm show sessions --json | jq "[.sessions[] | select(.target == \"$TB\")] | length")" = 1 ] && break
	sleep 0.1
done
BENCH_NX=$(adm show sessions --json | jq ".sessions[] | select(.target == \"$TB\") | .nexus_id")
[ -n "$BENCH_NX" ] && ok "utgt-bench is logged in (nexus $BENCH_NX)" || bad "utgt-bench did not log in: $(cat "$UT_DIR/bench.err")"
# its I/O is under way before the first change
for _ in $(seq 600); do
	[ "$(adm show devices --json | jq '.devices[] | select(.name == "bench") | .counters.write_commands')" -gt 100 ] && break
	sleep 0.1
done

# utgt-bench took its session's power-on UNIT ATTENTION at login: the baseline of its errors
bench_errors() { adm show sessions --json | jq ".sessions[] | select(.nexus_id == $BENCH_NX) | .counters.$1"; }
BENCH_ERR0=$(bench_errors errors)
obs_start OA "$TA" "$OBS" 1
[ "$(echo "$R" | jq .login)" = 0 ] && ok "observer logged in to $TA" || bad "observer login: $R"
clear_uas OA 0

echo "-- add device, add LUN"
adm_ok "add device" add device n1 handler=vdisk_nullio size_mb=32
adm_ok "add lun" add lun 1 driver=iscsi target="$TA" device=n1
sense OA 0 "6/3f/0e" "REPORTED LUNS DATA HAS CHANGED on the LU the observer had"
expect_json OA luns .luns "[0,1]" "REPORT LUNS has the new LUN"
sense OA 1 "6/29/00" "the new LU: power on first"
sense OA 1 "6/3f/0e" "then the map change"
expect_json OA "blocks 1" .blocks 65536 "READ CAPACITY(16) of the new LU: 32 MiB"

echo "-- device attributes live: identity, size"
adm_ok "set device identity" set device n1 t10_vend_id=LIVEVEND
sense OA 1 "6/3f/03" "INQUIRY DATA HAS CHANGED"
expect_json OA "vendor 1" .vendor '"LIVEVEND"' "INQUIRY shows it"
adm_ok "resize" resize device n1 size=64M
sense OA 1 "6/2a/09" "CAPACITY DATA HAS CHANGED"
expect_json OA "blocks 1" .blocks 131072 "READ CAPACITY(16): 64 MiB"
adm_err "DEVICE n1 is used by LUN 1 of TARGET $TA (driver iscsi); remove the LUN first" remove device n1
adm_err "DEVICE rd0: 'blocksize' cannot change while the device is in use (LUN 0 of TARGET $TA (driver iscsi)): remove its LUNs first, or restart utgtd" set device rd0 blocksize=4096
expect_json OA "tur 0" .status 0 "refusals raise nothing"

echo "-- remove LUN, remove device"
q OA "write 1 7 170"
adm_ok "remove lun" remove lun 1 driver=iscsi target="$TA"
sense OA 0 "6/3f/0e" "REPORTED LUNS DATA HAS CHANGED"
sense OA 1 "5/25/00" "the removed LUN: LOGICAL UNIT NOT SUPPORTED"
expect_json OA "read 1 7" '[.status, .sense, .bytes]' '[2,"5/25/00",0]' "a READ of it: no data from any LU"
expect_json OA luns .luns "[0]" "REPORT LUNS without it"
adm_ok "remove device" remove device n1
adm_err "no DEVICE 'n1'" remove device n1

echo "-- ALUA state of a target port group"
adm_ok "standby" set tgroup local dgroup=dg state=standby
sense OA 0 "6/2a/06" "ASYMMETRIC ACCESS STATE CHANGED"
expect_json OA "read 0 0" .sense '"2/04/0b"' "standby: LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN STANDBY STATE"
adm_ok "active again" set tgroup local dgroup=dg state=active
sense OA 0 "6/2a/06" "ASYMMETRIC ACCESS STATE CHANGED"
expect_json OA "read 0 0" .status 0 "reads again"

echo "-- groups and initiators: new logins, and removed access closes sessions"
adm_ok "add group" add group g driver=iscsi target="$TA"
adm_ok "group LUN" add lun 0 driver=iscsi target="$TA" group=g device=rd1
adm_ok "add initiator" add initiator "$OBS-2" driver=iscsi target="$TA" group=g
obs_start OB "$TA" "$OBS-2" 2
[ "$(echo "$R" | jq .login)" = 0 ] && ok "a new login matching the group" || bad "group login: $R"
clear_uas OB 0
expect_json OB "blocks 0" .blocks 8192 "it sees the group's LUN 0 (rd1, 4 MiB)"
expect_json OA "tur 0" .status 0 "the observer (not in the group) saw nothing"
adm_ok "group LUN removed" remove lun 0 driver=iscsi target="$TA" group=g
expect_json OB closed .closed true "the session that lost every LUN is closed"
adm_ok "remove initiator" remove initiator "$OBS-2" driver=iscsi target="$TA" group=g
adm_ok "remove group" remove group g driver=iscsi target="$TA"
expect_json OA "tur 0" .status 0 "the observer still saw nothing"

echo "-- targets: add, attributes, disable, enable, remove; close session"
adm_ok "add target" add target "$P-c" driver=iscsi enabled=1 NopInInterval=0
adm_ok "its LUN" add lun 0 driver=iscsi target="$P-c" device=rd1
iscsi-inq "iscsi://127.0.0.1:$UT_PORT/$P-c/0" >/dev/null 2>&1 && ok "the new target serves" || bad "iscsi-inq on the new target"
adm_ok "set target attribute" set target "$P-c" driver=iscsi alias=third
adm_ok "disable target" disable target "$TA" driver=iscsi
expect_json OA closed .closed true "the disabled target's session is closed"
iscsi-inq "iscsi://127.0.0.1:$UT_PORT/$TA/0" >/dev/null 2>&1 && bad "a disabled target took a login" || ok "a disabled target takes no login"
adm_ok "enable target" enable target "$TA" driver=iscsi
obs_start OA "$TA" "$OBS" 1
[ "$(echo "$R" | jq .login)" = 0 ] && ok "logged in again after enable" || bad "login after enable: $R"
clear_uas OA 0
nx=$(adm show sessions --json | jq ".sessions[] | select(.initiator == \"$OBS\") | .nexus_id")
adm_ok "close session" close session "$nx"
expect_json OA closed .closed true "closed by the administrator"
adm_err "no session with nexus id 999999" close session 999999
adm_ok "remove target" remove target "$P-c" driver=iscsi
iscsi-inq "iscsi://127.0.0.1:$UT_PORT/$P-c/0" >/dev/null 2>&1 && bad "a removed target answered" || ok "the removed target is gone"
adm_err "TARGET_DRIVER iscsi: 'listen' cannot change while the driver runs; disable the driver first (enabled 0), or restart utgtd" set driver iscsi listen=127.0.0.1:1

echo "-- scstadmin's commands"
adm_ok "-open_dev" -open_dev s0 -handler vdisk_nullio -attributes size_mb=16
adm_ok "-add_lun" -add_lun 5 -driver iscsi -target "$TA" -device s0 -attributes read_only=1
adm -list_target "$TA" | grep -Eq " 5 +s0 +ro$" && ok "-list_target shows LUN 5 read-only" || bad "-list_target: $(adm -list_target "$TA")"
adm -list_device | grep -Eq "^vdisk_nullio +s0$" && ok "-list_device lists s0" || bad "-list_device: $(adm -list_device)"
adm_ok "-set_dev_attr" -set_dev_attr s0 -attributes prod_id=SCSTADM,usn=4242
adm_ok "-resync_dev" -resync_dev s0
adm_ok "-set_tgt_attr" -set_tgt_attr "$TA" -driver iscsi -attributes MaxSessions=8
adm_ok "-add_group" -add_group h -driver iscsi -target "$TA"
adm_ok "-add_init" -add_init "$OBS-3" -driver iscsi -target "$TA" -group h
adm -list_group h -driver iscsi -target "$TA" | grep -q "initiators: $OBS-3" && ok "-list_group shows it" || bad "-list_group: $(adm -list_group)"
adm_ok "-rem_init" -rem_init "$OBS-3" -driver iscsi -target "$TA" -group h
adm_ok "-rem_lun" -rem_lun 5 -driver iscsi -target "$TA"
adm_ok "-disable_target" -disable_target "$TA" -driver iscsi
adm_ok "-enable_target" -enable_target "$TA" -driver iscsi
adm -list_sessions | grep -q "$TB" && ok "-list_sessions lists the bench session" || bad "-list_sessions: $(adm -list_sessions)"
adm_ok "-write_config" -write_config "$UT_DIR/scstadm.conf"
grep -q "# Non-key attributes" "$UT_DIR/scstadm.conf" && ok "written with non-key attributes" || bad "no non-key section"
adm_ok "-config (what was written: nothing changes)" -config "$UT_DIR/scstadm.conf"

echo "-- reload and SIGHUP"
obs_start OA "$TA" "$OBS" 1
clear_uas OA 0
# the file as it was, plus LUN 3: the engine takes the difference (s0 and group h go, LUN 3)
sed "s|\tLUN 0 rd0|\tLUN 0 rd0\n\t\tLUN 3 rd1|" "$CONFIG" >"$CONFIG.new" && cp "$CONFIG.new" "$CONFIG"
kill -HUP "$UT_PID"
for _ in $(seq 600); do grep -q "SIGHUP: .*TARGET $TA" "$UT_LOG" && break; sleep 0.1; done
grep -q "SIGHUP: .*TARGET $TA: LUNs, groups" "$UT_LOG" && ok "SIGHUP applied: $(grep "SIGHUP: " "$UT_LOG" | tail -1 | sed 's/.*SIGHUP: //')" || bad "SIGHUP: $(tail -3 "$UT_LOG")"
sense OA 0 "6/3f/0e" "REPORTED LUNS DATA HAS CHANGED after SIGHUP"
expect_json OA luns .luns "[0,3]" "LUN 3 is there"
cp "$CONFIG" "$CONFIG.good"
printf '\nHANDLER dev_disk {\n\tDEVICE sda\n}\n' >>"$CONFIG"
nline=$(grep -n "HANDLER dev_disk" "$CONFIG" | cut -d: -f1)
kill -HUP "$UT_PID"
for _ in $(seq 600); do grep -q "reload of $CONFIG refused" "$UT_LOG" && break; sleep 0.1; done
grep -q "reload of $CONFIG refused: $CONFIG:$nline: handler 'dev_disk' passes commands" "$UT_LOG" &&
	ok "a file with errors is refused, its first error with FILE:LINE: $(grep "refused" "$UT_LOG" | tail -1 | sed 's/.*refused: //' | cut -c1-100)..." ||
	bad "no refusal logged: $(tail -3 "$UT_LOG")"
expect_json OA "tur 0" .status 0 "and nothing changed for the session"
out=$(adm reload 2>&1)
case $out in
"utgtadm: utgtd: $CONFIG:$nline: handler 'dev_disk' passes"*"(1 error(s); the running configuration is unchanged)")
	ok "utgtadm reload refuses it too" ;;
*) bad "utgtadm reload: $out" ;;
esac
cp "$CONFIG.good" "$CONFIG"
adm_ok "utgtadm reload (the good file: nothing to do)" reload
[ "$(adm reload)" = "no change" ] && ok "reload again: no change" || bad "reload: $(adm reload)"

echo "-- write-config round trip through a second daemon"
adm_ok "write-config" write-config "$UT_DIR/written.conf"
FIRST=("$UT_DIR" "$UT_PID" "$UT_PORT" "$UT_LOG" "$UT_SOCK")
start_utgtd "$(sed "s|127.0.0.1:$UT_PORT|127.0.0.1:@PORT@|" "${FIRST[0]}/written.conf")"
SOCK2=$UT_SOCK
UT_DIR=${FIRST[0]} UT_PID=${FIRST[1]} UT_PORT=${FIRST[2]} UT_LOG=${FIRST[3]} UT_SOCK=${FIRST[4]}
norm() { jq -S '[.devices[] | {name, handler, size, block_size}]'; }
normt() { jq -S '[.drivers[] | {name, targets: [.targets[] | {name, enabled, rel_tgt_id, luns, groups}]}]'; }
if [ "$("$UTGTADM" -s "$SOCK2" show devices --json | norm)" = "$(adm show devices --json | norm)" ] &&
	[ "$("$UTGTADM" -s "$SOCK2" show targets --json | normt)" = "$(adm show targets --json | normt)" ]; then
	ok "a daemon started from the written file serves the same devices, targets, LUNs and groups"
else
	bad "the written file gives another state"
fi

echo "-- hostile requests and memory over 200 changes"
adm_err "expected KEY=VALUE, got 'frob'" add lun 9 frob
adm_err "unknown object 'add spaceship' (device, target, driver, group, lun, initiator, tgroup)" add spaceship x
adm_err "DEVICE rd0: 'lb_per_pb_exp' cannot change while the device is in use (LUN 0 of TARGET $TA (driver iscsi)): remove its LUNs first, or restart utgtd" set device rd0 lb_per_pb_exp=1
# malformed or impossible changes: each refused by the daemon (exit 1, its message), none
# applied, the daemon still serving the same state
state0=$(adm show devices --json | norm; adm show targets --json | normt)
changes0=$(adm version | grep -o '[0-9]* change(s)')
bad_reqs=0
while IFS= read -r req; do
	eval "set -- $req"
	out=$(adm "$@" 2>&1)
	rc=$?
	case $rc:$out in
	"1:utgtadm: utgtd: "*) ;;
	*) bad "'$req': rc $rc: $out"; bad_reqs=$((bad_reqs + 1)) ;;
	esac
done <<REQS
add device x handler=ramdisk size_mb=-1
add device x handler=ramdisk size_mb=99999999999999999999
add device x handler=vcdrom filename=/nonexistent
add device x handler=dev_disk
add device $(printf 'x%.0s' $(seq 300)) handler=ramdisk size_mb=1
add device rd0 handler=ramdisk size_mb=1
set device rd1 HANDLER=x
set device rd1 nosuchattr=1
resize device rd1 size=1
resize device rd1 size=-5
add lun 99999999999999999 driver=iscsi target=$TA device=rd1
add lun 5 driver=iscsi target=$TA device=nosuch
add lun 5 driver=iscsi target=$TA device=rd1 read_only=7
add lun 5 driver=iscsi target=$TA group=nosuch device=rd1
set tgroup local dgroup=dg state=bogus
set target $TA driver=iscsi rel_tgt_id=99999
set target $TA driver=iscsi HeaderDigest=bogus
close session abc
reload /dev/zero
write-config /nonexistent/dir/x.conf
REQS
[ $bad_reqs = 0 ] && ok "20 malformed or impossible requests: each refused with the daemon's message"
[ "$(adm show devices --json | norm; adm show targets --json | normt)" = "$state0" ] &&
	[ "$(adm version | grep -o '[0-9]* change(s)')" = "$changes0" ] &&
	ok "none of them changed anything ($changes0 applied)" || bad "a refused request changed the state"
rss() { awk '/VmRSS/ { print $2 }' "/proc/$UT_PID/status"; }
for i in $(seq 20); do adm add lun 9 driver=iscsi target="$TA" device=rd1 >/dev/null; adm remove lun 9 driver=iscsi target="$TA" >/dev/null; done
r0=$(rss)
for i in $(seq 200); do
	adm add lun 9 driver=iscsi target="$TA" device=rd1 >/dev/null || bad "cycle $i add"
	adm remove lun 9 driver=iscsi target="$TA" >/dev/null || bad "cycle $i remove"
	adm set device rd1 "t10_dev_id=cycle $i" >/dev/null || bad "cycle $i set"
done
r1=$(rss)
[ $((r1 - r0)) -lt 2048 ] && ok "RSS $r0 -> $r1 KiB over 600 changes (old configurations freed)" || bad "RSS grew $r0 -> $r1 KiB"
adm version | grep -q "change(s) applied" && ok "still answering: $(adm version)" || bad "version"

echo "-- the bench session, untouched"
errs=$(bench_errors errors)
cmds=$(bench_errors commands)
[ "$errs" = "$BENCH_ERR0" ] && ok "no CHECK CONDITION on the bench's session during the changes ($cmds commands; $errs from its login)" || bad "bench session errors: $BENCH_ERR0 -> $errs"
kill -INT "$BENCH_PID"
wait "$BENCH_PID"
rc=$?
[ $rc -eq 0 ] && ok "utgt-bench finished without error" || bad "utgt-bench rc $rc: $(cat "$UT_DIR/bench.err")"
[ "$(jq '.jobs[0].error' "$UT_DIR/bench.json")" = 0 ] && ok "job error 0" || bad "job error: $(jq -c '.jobs[0].error' "$UT_DIR/bench.json")"
[ "$(jq '.jobs[0].verify.errors' "$UT_DIR/bench.json")" = 0 ] && [ "$(jq '.jobs[0].verify.blocks' "$UT_DIR/bench.json")" -gt 0 ] &&
	ok "verify passed: $(jq '.jobs[0].verify.blocks' "$UT_DIR/bench.json") blocks, 0 errors" || bad "verify: $(jq -c '.jobs[0].verify' "$UT_DIR/bench.json")"
echo "utgt-bench: $(jq -c '.jobs[0] | {read_iops: .read.iops, write_iops: .write.iops}' "$UT_DIR/bench.json" 2>/dev/null)"

stop_utgtd
[ $FAILS -eq 0 ] && { echo "live_admin: all checks passed"; exit 0; }
echo "live_admin: $FAILS check(s) failed"
exit 1
