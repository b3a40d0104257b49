#!/bin/bash
# vm-timeout: 900
# vm-target: none
# Throughput in one guest, on one soft-RoCE link (rxe0 loopback), of:
#   utgtd's SRP target (ib_srpt driver, vdisk_fileio on /var/tmp/srp0.img)
#   the kernel's LIO ib_srpt serving the same file (target_core_file)
#   perftest ib_read_bw / ib_write_bw (the link itself, no SCSI)
# Same initiator (Linux ib_srp, 2 channels, immediate data), same fio jobs for both targets.
# Under TCG only the ratios mean something.  Table in /out/srp-compare.txt.
# Arguments: quick (shorter runs), build=DIR.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/compare.sh
on_fail() { srp_on_fail; }
trap '[ -n "$UTGTD_PID" ] && kill -KILL "$UTGTD_PID" 2>/dev/null; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
RUNTIME=$([ "$QUICK" = 1 ] && echo 8 || echo 20)
LIO_PORT=5557
OUT=/out/srp-compare.txt

rxe_up ch_count=2
GUID=${RXE_GID#fe80:0000:0000:0000:}
: >"$SRP_LOG"
rm -f "$SRP_IMG"
dd if=/dev/urandom of="$SRP_IMG" bs=1M count="$SRP_MB" status=none # real data to read
sync

step "utgtd ib_srpt (build: $BUILD_DIR)"
write_conf
utgtd_start
srp_add "$(srp_line "$GUEST_IP:$SRP_PORT")" 0000000000000001
DEV=$(srp_disk "$(srp_hosts | tail -1)")
measure utgtd "$DEV"
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 30 "utgtd channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"
utgtd_stop
wait_until 30 "ib_srp hosts gone" eval '[ -z "$(srp_hosts)" ]'

step "LIO ib_srpt on the same file"
modprobe -q configfs || true
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe -a target_core_mod target_core_file
modprobe ib_srpt srp_max_req_size=8260 rdma_cm_port=$LIO_PORT
T=/sys/kernel/config/target
mkdir -p $T/core/fileio_0/lio0
echo "fd_dev_name=$SRP_IMG,fd_dev_size=$((SRP_MB << 20))" >$T/core/fileio_0/lio0/control
echo 1 >$T/core/fileio_0/lio0/enable
mkdir -p $T/srpt
[ -e $T/srpt/discovery_auth/rdma_cm_port ] && echo $LIO_PORT >$T/srpt/discovery_auth/rdma_cm_port
mkdir $T/srpt/"$GUID"
mkdir $T/srpt/"$GUID"/"$GUID"
tpg=$T/srpt/$GUID/$GUID
mkdir $tpg/lun/lun_0
# configfs resolves a symlink's target from the current directory
(cd $tpg/lun/lun_0 && ln -s ../../../../../core/fileio_0/lio0 .)
# ib_srpt names an RDMA/CM initiator by its address, an IB one by its port GUID or id
for ini in "$GUEST_IP" "$GUID" "0x00000000000000010${GUID//:/}" "0x0000000000000001${GUID//:/}"; do
	mkdir "$tpg/acls/$ini" 2>/dev/null || continue
	mkdir "$tpg/acls/$ini/lun_0"
	(cd "$tpg/acls/$ini/lun_0" && ln -s ../../../lun/lun_0 .)
done
echo 1 >$tpg/enable
wait_until 20 "LIO listening on :$LIO_PORT" listening $LIO_PORT
srp_add "id_ext=${GUID//:/},ioc_guid=${GUID//:/},dest=$GUEST_IP:$LIO_PORT" 0000000000000001
DEV=$(srp_disk "$(srp_hosts | tail -1)")
measure lio "$DEV"
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 30 "ib_srp hosts gone" eval '[ -z "$(srp_hosts)" ]'
echo 0 >$tpg/enable

step "perftest on the same link"
PERF_N=$([ "$QUICK" = 1 ] && echo 200 || echo 600)
R[perf,read]=$(perf ib_read_bw 1048576 "$PERF_N")
R[perf,write]=$(perf ib_write_bw 1048576 "$PERF_N")
say "perftest 1 MiB: ib_read_bw ${R[perf,read]} MB/s, ib_write_bw ${R[perf,write]} MB/s"

step "table"
{
	echo "SRP over soft-RoCE (rxe0 loopback), one guest ($(nproc) vCPU, TCG), $RUNTIME s per job"
	echo "initiator: Linux $(uname -r) ib_srp, ch_count=2, immediate data; fio libaio direct"
	echo
	printf '| %-30s | %14s | %15s | %17s |\n' "" "seq read 1M qd8" "seq write 1M qd8" "4k rand read qd16"
	printf '|%s|%s|%s|%s|\n' "--------------------------------" "----------------" "-----------------" "-------------------"
	printf '| %-30s | %9s MB/s | %10s MB/s | %12s IOPS |\n' "utgtd ib_srpt (userspace)" \
		"${R[utgtd,sr]}" "${R[utgtd,sw]}" "${R[utgtd,rr]}"
	printf '| %-30s | %9s MB/s | %10s MB/s | %12s IOPS |\n' "LIO ib_srpt (kernel)" \
		"${R[lio,sr]}" "${R[lio,sw]}" "${R[lio,rr]}"
	printf '| %-30s | %9s MB/s | %10s MB/s | %17s |\n' "perftest (link, 1 MiB msgs)" \
		"${R[perf,write]}" "${R[perf,read]}" "-"
	echo
	echo "perftest columns: a SCSI read moves data by RDMA WRITE (ib_write_bw), a write by"
	echo "RDMA READ (ib_read_bw)."
	echo "utgtd / LIO: read $(ratio "${R[utgtd,sr]}" "${R[lio,sr]}"), write" \
		"$(ratio "${R[utgtd,sw]}" "${R[lio,sw]}"), 4k IOPS $(ratio "${R[utgtd,rr]}" "${R[lio,rr]}")"
	echo "utgtd / link: read $(ratio "${R[utgtd,sr]}" "${R[perf,write]}"), write" \
		"$(ratio "${R[utgtd,sw]}" "${R[perf,read]}")"
} | tee "$OUT"
say "PASS srp_compare"
