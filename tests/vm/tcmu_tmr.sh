#!/bin/bash
# vm-timeout: 600
# vm-target: none
# Task management through the TCMU ring, and TCMU devices under live administration.  LIO
# user backstores served by utgtd with attrib/tmr_notification=1 under tcm_loop (/dev/sdX):
#   * an initiator command timeout: a READ held by the hang_lba fault injection
#     (dev_config utgt/ram0;hang_lba=N) times out in sd (device/timeout 4 s), Linux's error
#     handler sends ABORT TASK, LIO queues the TMR entry, utgtd aborts the command and
#     completes it as aborted; sd retries and the retry (not held) succeeds;
#   * sg_reset -d on a held READ: LIO's LUN reset names it, utgtd aborts it, the reset
#     succeeds and data written before reads back identical;
#   * sg_reset -d under fio on a vdisk_fileio DEVICE (commands in the core when the TMR
#     arrives);
#   * for every device: each command completed once (utgtadm show devices: completions =
#     commands, 0 refused second completions, nothing in flight);
#   * a dev_config naming a DEVICE that does not exist yet is served once `utgtadm add
#     device` creates it, and `remove device` is refused while LIO uses it.
# Arguments: build=DIR (run /src/DIR/utgtd; default build).
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/tcmu.sh
FILE_IMG=/var/tmp/tcmu-file0.img
HANG_LBA=65536 # 32 MiB into the disk: nothing but this test reads there
on_fail() {
	echo "--- utgtd log (tail)"
	tail -40 "$LOG" 2>/dev/null
	echo "--- dmesg (tail)"
	dmesg | tail -40
}
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

# once_each LIO-DEVICE: every command taken was completed exactly once
once_each() {
	local c n r f
	c=$(tcmu_counter "$1" commands) || fail "no $1 in utgtadm show devices"
	n=$(tcmu_counter "$1" completions)
	r=$(tcmu_counter "$1" refused_completions)
	f=$(tcmu_counter "$1" in_flight)
	say "$1: $c commands, $n completions, $(tcmu_counter "$1" aborted) aborted," \
		"$(tcmu_counter "$1" tmr_entries) TMR entries, $(tcmu_counter "$1" held) held, $r refused"
	expect_eq "$1 refused (second) completions" "$r" 0
	expect_eq "$1 in flight" "$f" 0
	expect_eq "$1 completions" "$n" "$c"
}

step "modules, configfs, utgtd ($UTGTD)"
[ -x "$UTGTD" ] || fail "no $UTGTD (build it first)"
tcmu_modules
mkdir -p "$DIR" /var/target/pr
rm -f "$FILE_IMG"
cat >"$CONF" <<CONF
HANDLER ramdisk {
	DEVICE ram0 {
		size_mb 64
	}
}

HANDLER vdisk_fileio {
	DEVICE file0 {
		filename $FILE_IMG
		size_mb 64
	}
}

TARGET_DRIVER tcmu {
	enabled 1
}
CONF
: >"$LOG"
utgtd_start
user_backstore tcmuh "utgt/ram0;hang_lba=$HANG_LBA" 64 nl_reply_supported=-1
user_backstore tcmuf utgt/file0 64 nl_reply_supported=-1
for d in tcmuh tcmuf; do
	echo 1 >"$CORE/$d/attrib/tmr_notification"
	expect_eq "$d tmr_notification" "$(cat "$CORE/$d/attrib/tmr_notification")" 1
done
wait_until 60 "utgtd serves tcmuh" grep -q "'tcmuh' served by DEVICE ram0" "$LOG"
wait_until 60 "utgtd serves tcmuf" grep -q "'tcmuf' served by DEVICE file0" "$LOG"
grep -q "fault injection: READ/WRITE at LBA $HANG_LBA" "$LOG" || fail "hang_lba not taken"
loop_lun 0 "$CORE/tcmuh"
loop_lun 1 "$CORE/tcmuf"
wait_until 60 "LUN 0 disk" loop_disk 0
wait_until 60 "LUN 1 disk" loop_disk 1
dev=$(loop_disk 0)
fdev=$(loop_disk 1)
ok "held-capable disk $dev, fileio disk $fdev"
$UTGTADM show devices | sed 's/^/    /'

dd if=/dev/urandom of=/tmp/pat bs=1M count=4 status=none
dd if=/tmp/pat of="$dev" bs=1M seek=8 oflag=direct status=none

step "initiator timeout: a held READ, sd's ABORT TASK, the retry succeeds"
sysdev=/sys/block/$(basename "$dev")/device
echo 4 >"$sysdev/timeout"
t0=$SECONDS
dd if="$dev" of=/tmp/a bs=4k count=1 skip=$((HANG_LBA / 8)) iflag=direct status=none ||
	fail "the READ failed instead of being retried after the abort"
say "the READ took $((SECONDS - t0)) s (4 s timeout, abort, retry)"
cmp /tmp/a <(head -c 4096 /dev/zero) || fail "the retried READ returned wrong data"
grep -q "held cmd_id [0-9]* aborted" "$LOG" || fail "utgtd did not abort the held command"
grep -E "held|ABORT TASK" "$LOG" | sed 's/^/    /'
grep -q "task management notification: ABORT TASK, [1-9][0-9]* command(s) aborted by LIO, [1-9]" "$LOG" ||
	fail "no ABORT TASK naming our command"
dmesg | grep -iE "abort|timing out" | tail -4 | sed 's/^/    /'
expect_eq "tcmuh held" "$(tcmu_counter tcmuh held)" 1
expect_eq "tcmuh aborted" "$(tcmu_counter tcmuh aborted)" 1
echo 30 >"$sysdev/timeout"
dd if="$dev" of=/tmp/back bs=1M count=4 skip=8 iflag=direct status=none || fail "I/O after the abort"
cmp /tmp/pat /tmp/back || fail "data differs after the abort"
ok "aborted by ABORT TASK, retried, I/O and data fine afterwards"

step "sg_reset -d on a held READ: LIO's LUN reset names it, utgtd aborts it"
(dd if="$dev" of=/tmp/b bs=4k count=1 skip=$((HANG_LBA / 8)) iflag=direct status=none; echo $? >/tmp/b.rc) &
rd=$!
wait_until 60 "the second READ held" eval '[ "$(tcmu_counter tcmuh held)" = 2 ]'
sg_reset -d "$dev" || fail "sg_reset -d failed"
wait_until 60 "the held READ ends" eval '! kill -0 $rd 2>/dev/null'
say "the READ caught by the reset ended with exit status $(cat /tmp/b.rc)"
grep "LOGICAL UNIT RESET" "$LOG" | tail -1 | sed 's/^/    /'
grep -q "task management notification: LOGICAL UNIT RESET, [1-9][0-9]* command(s) aborted by LIO, [1-9]" "$LOG" ||
	fail "no LUN reset naming our command"
expect_eq "tcmuh aborted" "$(tcmu_counter tcmuh aborted)" 2
dd if="$dev" of=/tmp/back bs=1M count=4 skip=8 iflag=direct status=none || fail "I/O after the reset"
cmp /tmp/pat /tmp/back || fail "data differs after the reset"
ok "LUN reset aborted the held command; I/O and data fine afterwards"
once_each tcmuh

step "sg_reset -d under fio on vdisk_fileio (commands in the core)"
fio --name=tmrload --filename="$fdev" --direct=1 --ioengine=libaio --rw=randread --bs=16k \
	--iodepth=16 --time_based --runtime=8 --output=/tmp/fio-tmr.txt >/dev/null 2>&1 &
fiopid=$!
n0=$(blk_ios "$fdev")
wait_until 60 "reads flowing" eval '[ $(($(blk_ios "$fdev") - n0)) -ge 200 ]'
sg_reset -d "$fdev" || fail "sg_reset -d under load"
frc=0
wait "$fiopid" || frc=$?
say "fio across the reset: exit $frc ($(grep -o 'err= *[0-9]*' /tmp/fio-tmr.txt | head -1))"
grep "tcmuf: task management" "$LOG" | tail -1 | sed 's/^/    /'
grep -q "tcmu tcmuf: task management notification: LOGICAL UNIT RESET" "$LOG" || fail "no TMR entry for tcmuf"
dd if="$fdev" of=/dev/null bs=1M count=8 iflag=direct status=none || fail "I/O after the reset under load"
once_each tcmuf
ok "reset under load: every command completed once"

step "live administration: a DEVICE added at run time serves the LIO device naming it"
user_backstore tcmul utgt/late0 16 nl_reply_supported=-1
wait_until 60 "the refusal" grep -q "has no DEVICE 'late0'" "$LOG"
$UTGTADM add device late0 handler=ramdisk size_mb=16 || fail "utgtadm add device"
wait_until 60 "late0 served" grep -q "'tcmul' served by DEVICE late0" "$LOG"
loop_lun 2 "$CORE/tcmul"
wait_until 60 "LUN 2 disk" loop_disk 2
ldev=$(loop_disk 2)
expect_eq "late0 size" "$(blockdev --getsize64 "$ldev")" $((16 << 20))
dd if=/tmp/pat of="$ldev" bs=1M count=2 oflag=direct status=none
cmp <(head -c 2M /tmp/pat) <(dd if="$ldev" bs=1M count=2 iflag=direct status=none) || fail "late0 data"
if $UTGTADM remove device late0 >/tmp/rm.out 2>&1; then fail "late0 removed while LIO uses it"; fi
sed 's/^/    /' /tmp/rm.out
$UTGTADM show devices | sed 's/^/    /'
once_each tcmul
loop_unmap 2
rmdir "$CORE/tcmul"
wait_until 60 "tcmul closed" eval '[ "$(grep -c "uio[0-9]*: closed" "$LOG")" -ge 1 ]'
$UTGTADM remove device late0 || fail "remove device late0 after LIO let go"
ok "added live, served, refused removal while used, removed after"

step "stop"
loop_unmap 0
loop_unmap 1
rmdir "$LOOP/tpgt_1" "$LOOP" "$CORE/tcmuh" "$CORE/tcmuf"
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
grep -q "refused: not in flight" "$LOG" && fail "a second completion was attempted"
grep -qE "AddressSanitizer|runtime error" "$LOG" && fail "sanitizer report in utgtd's log"
say "PASS tcmu_tmr"
