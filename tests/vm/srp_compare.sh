#!/bin/bash
# vm-timeout: 1200
# vm-target: none
# utgtd's SRP target against the kernel's LIO ib_srpt, in one guest, on one soft-RoCE link
# (rxe0 loopback), one initiator (Linux ib_srp, 2 channels, immediate data), one backing
# file (vdisk_fileio / target_core_file with fd_buffered_io=1: both write back through the
# page cache; LIO's default is O_DSYNC), read once first so both serve it from the page cache:
# the SRP and RDMA path is measured, not the virtio disk.  Both targets are logged in at once;
# every job runs on each in turn (utgtd, LIO, utgtd, LIO, ...; the order flips every round),
# ROUNDS rounds, and the table gives medians with their spread:
#   1 MiB sequential read QD8 and write QD8 (MB/s), 4 KiB random read QD16 (IOPS) and QD1
#   (mean completion latency, µs)
# plus the guest's CPU per I/O in each run (/proc/stat: every non-idle tick of both vCPUs,
# which covers fio, ib_srp, rxe and the target; and the kernel's share of it: system, irq,
# softirq, where LIO does its work), utgtd's own (its threads' run time, schedstat), the
# guest's context switches per I/O, what went over the link per I/O (rxe's packets, the
# packets sent again after a loss or an RNR NAK, and backlog drops: lib/rdma.sh
# rxe_wire_stat), and perftest's ib_write_bw / ib_read_bw on the same link as the ceiling.  Under TCG the guest
# is CPU bound: only ratios within one run mean something.  Table in /out/srp-compare.txt.
# After the rounds, where utgtd's threads are (state, system call, CPU, allowed CPUs: what
# pin auto chose) during a QD1 and a 1 MiB read job.
# Arguments: quick (2 rounds of 4 s jobs), rounds=N (default 5), secs=N (seconds per job,
# default 8), build=DIR, base=DIR: a third target, the utgtd of another build (/src/DIR/utgtd,
# e.g. before a change) on its own copy of the file, in the same rounds; opt=KEY:VALUE and
# base_opt=KEY:VALUE (repeatable) add a driver attribute to utgtd's or the base's ib_srpt
# (e.g. opt=threads:2); jobs=A+B only those of sr, sw, rr, lat (short development runs; `,` or `+`
# between them, `+` inside UTGT_VM_ARGS, which splits at commas), or sr2 and sw2: the 1 MiB jobs
# from one fio job per vCPU at QD4 each (the same QD8 in all, over both channels: one fio job
# submits from one CPU, and ib_srp picks the channel by CPU); perf=0 skips perftest;
# profile=A+B (jobs as for jobs=) ends with, for each of those jobs on each target, the
# guest's threads by run time and switches per I/O (lib/cpustat.sh task_profile) and a perf
# profile (profile_job: µs of CPU per I/O by command, module and symbol, idle included as
# swapper's halt), into /out/srp-profile.txt.
. /src/tests/vm/lib/common.sh
. /src/tests/vm/lib/srp.sh
. /src/tests/vm/lib/compare.sh
. /src/tests/vm/lib/cpustat.sh
on_fail() { srp_on_fail; }
BASE_PID=
trap 'for p in $UTGTD_PID $BASE_PID; do kill -KILL "$p" 2>/dev/null || true; done; jobs -p | xargs -r kill 2>/dev/null || true' EXIT
ROUNDS=$([ "$QUICK" = 1 ] && echo 2 || echo 5)
RUNTIME=$([ "$QUICK" = 1 ] && echo 4 || echo 8)
BASE= OPT= BASE_OPT= ONLY_JOBS= PERF=1 PROFILE=
for a in "$@"; do
	case $a in
	rounds=*) ROUNDS=${a#rounds=} ;;
	secs=*) RUNTIME=${a#secs=} ;;
	base=*) BASE=${a#base=} ;;
	opt=*) OPT+="${a#opt=} " ;;
	base_opt=*) BASE_OPT+="${a#base_opt=} " ;;
	jobs=*) ONLY_JOBS=${a#jobs=} ;;
	perf=0) PERF=0 ;;
	profile=*) PROFILE=${a#profile=} ;;
	esac
done
[ "$ROUNDS" -ge 1 ] && [ "$RUNTIME" -ge 1 ] || fail "rounds=$ROUNDS secs=$RUNTIME"
for j in ${ONLY_JOBS//[,+]/ }; do
	case $j in sr | sw | rr | lat | sr2 | sw2) ;; *) fail "jobs=$ONLY_JOBS: no job $j (sr sw rr lat sr2 sw2)" ;; esac
done
for j in ${PROFILE//[,+]/ }; do
	case $j in sr | sw | rr | lat | sr2 | sw2) ;; *) fail "profile=$PROFILE: no job $j (sr sw rr lat sr2 sw2)" ;; esac
done
RAMP=1
KEEP_CACHE=1
SRP_MB=128
LIO_PORT=5557
BASE_PORT=5565
BASE_IMG=/var/tmp/srp-base.img
OUT=/out/srp-compare.txt
TG=(utgtd lio)
[ -n "$BASE" ] && TG=(utgtd base lio)
declare -A DEV PIDOF NAME=([utgtd]="utgtd ib_srpt" [base]="utgtd ($BASE)" [lio]="LIO ib_srpt")

rxe_up ch_count=2
GUID=${RXE_GID#fe80:0000:0000:0000:}
: >"$SRP_LOG"
rm -f "$SRP_IMG" "$BASE_IMG"
dd if=/dev/urandom of="$SRP_IMG" bs=1M count="$SRP_MB" status=none # real data to read
[ -n "$BASE" ] && cp "$SRP_IMG" "$BASE_IMG" # utgtd locks its file: the base gets a copy
sync

step "utgtd ib_srpt (build: $BUILD_DIR)"
# driver_attrs KEY:VALUE...: those attributes as lines of the TARGET_DRIVER block
driver_attrs() { local o; for o in "$@"; do printf '\t%s %s\n' "${o%%:*}" "${o#*:}"; done; }
# shellcheck disable=SC2034,SC2086 # write_conf reads it; OPT splits at blanks
SRPT_EXTRA=$(driver_attrs $OPT)
write_conf
utgtd_start
srp_add "$(srp_line "$GUEST_IP:$SRP_PORT")" 0000000000000001
DEV[utgtd]=$(srp_disk "$(srp_hosts | tail -1)")
PIDOF[utgtd]=$UTGTD_PID

if [ -n "$BASE" ]; then
	step "base utgtd ($BASE) on :$BASE_PORT"
	[ -x "/src/$BASE/utgtd" ] || fail "no /src/$BASE/utgtd"
	(SRP_CONF=$SRP_DIR/base.conf SRP_IMG=$BASE_IMG SRP_PORT=$BASE_PORT SRP_PORT2=$((BASE_PORT + 1)) \
		SRPT_EXTRA=$(driver_attrs $BASE_OPT) && write_conf)
	mkdir -p /tmp/srp-base-state
	"/src/$BASE/utgtd" -f -c "$SRP_DIR/base.conf" --state-dir /tmp/srp-base-state \
		>/out/utgtd-base.log 2>&1 &
	BASE_PID=$!
	wait_until 60 "base utgtd listening on :$BASE_PORT" listening "$BASE_PORT"
	srp_add "$("/src/$BASE/utgtd" --show-srp-login -c "$SRP_DIR/base.conf" | grep -v '^#' |
		grep "dest=$GUEST_IP:$BASE_PORT\$" | head -1)" 0000000000000003
	DEV[base]=$(srp_disk "$(srp_hosts | tail -1)")
	PIDOF[base]=$BASE_PID
fi

step "LIO ib_srpt on the same file (fd_buffered_io=1)"
modprobe -q configfs || true
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe -a target_core_mod target_core_file
modprobe ib_srpt srp_max_req_size=8260 rdma_cm_port=$LIO_PORT
T=/sys/kernel/config/target
mkdir -p $T/core/fileio_0/lio0
echo "fd_dev_name=$SRP_IMG,fd_dev_size=$((SRP_MB << 20)),fd_buffered_io=1" \
	>$T/core/fileio_0/lio0/control
echo 1 >$T/core/fileio_0/lio0/enable
lio_srpt_lun0 $LIO_PORT fileio_0/lio0
tpg=$LIO_TPG
# another initiator_ext: ib_srp refuses a second login to the same target port identity
srp_add "id_ext=${GUID//:/},ioc_guid=${GUID//:/},dest=$GUEST_IP:$LIO_PORT" 0000000000000002
DEV[lio]=$(srp_disk "$(srp_hosts | tail -1)")

step "the same bytes through every target; the file read once into the page cache"
sums=$(for t in "${TG[@]}"; do
	dd if="${DEV[$t]}" of=/dev/null bs=1M iflag=direct status=none || fail "$t: first read"
	dd if="${DEV[$t]}" bs=1M count=4 skip=17 iflag=direct status=none | md5sum
done | sort -u | wc -l)
expect_eq "distinct checksums of MiB 17-20 across the targets" "$sums" 1
for t in "${TG[@]}"; do say "$t: ${DEV[$t]}"; done
# an idle daemon must not burn CPU (it would slow every other target's runs too)
for t in "${TG[@]}"; do
	[ -n "${PIDOF[$t]:-}" ] || continue
	read -r r0 _ c0 < <(proc_sched "${PIDOF[$t]}")
	sleep 3
	read -r r1 _ c1 < <(proc_sched "${PIDOF[$t]}")
	say "$t idle, logged in: $((r1 - r0)) us of CPU in 3 s, $((c1 - c0)) context switches"
done

JOBS=(sr sw rr lat)
# sr2 and sw2: one fio job per vCPU, each pinned to its own (fio_bw reads the group's figures)
SPLIT="--numjobs=$(nproc) --cpus_allowed=0-$(($(nproc) - 1)) --cpus_allowed_policy=split --group_reporting"
if [ -n "$ONLY_JOBS" ]; then read -ra JOBS <<<"${ONLY_JOBS//[,+]/ }"; fi
declare -A ARGS=(
	[sr]="--rw=read --bs=1M --iodepth=8"
	[sw]="--rw=write --bs=1M --iodepth=8"
	[rr]="--rw=randread --bs=4k --iodepth=16"
	[lat]="--rw=randread --bs=4k --iodepth=1"
	[sr2]="--rw=read --bs=1M --iodepth=4 $SPLIT"
	[sw2]="--rw=write --bs=1M --iodepth=4 $SPLIT"
) SIZE=([sr]=1048576 [sw]=1048576 [rr]=4096 [lat]=4096 [sr2]=1048576 [sw2]=1048576) V=() CPU=() KCPU=() OWN=() WAIT=() CSW=()
declare -A PKT=() RESENT=() DROP=() GCSW=()
last() { if [ $# -gt 0 ]; then echo "${*: -1}"; else echo -; fi; }
step "$ROUNDS rounds of ${#JOBS[@]} jobs x ${#TG[@]} targets, ${RUNTIME}+${RAMP} s each, alternating"
t0=$SECONDS
n=${#TG[@]}
for r in $(seq 1 "$ROUNDS"); do
	for j in "${JOBS[@]}"; do
		for i in $(seq 0 $((n - 1))); do
			# round 1: utgtd first; round 2: LIO first; ...
			t=${TG[$(((r % 2 ? i : n - 1 - i)))]}
			p=${PIDOF[$t]:-}
			read -r s0 k0 < <(cpu_stat)
			read -r x0 y0 z0 < <(rxe_wire_stat)
			g0=$(ctxt_count)
			b0=$(blk_bytes "${DEV[$t]}")
			if [ -n "$p" ]; then read -r r0 w0 c0 < <(proc_sched "$p"); fi
			# shellcheck disable=SC2086
			v=$(fio_bw "$t-$j-$r" "${DEV[$t]}" ${ARGS[$j]}) || fail "$t $j"
			read -r s1 k1 < <(cpu_stat)
			read -r x1 y1 z1 < <(rxe_wire_stat)
			g1=$(ctxt_count)
			b=$(($(blk_bytes "${DEV[$t]}") - b0))
			PKT[$t,$j]+="$(per_io $((x1 - x0)) "$b" "${SIZE[$j]}") "
			RESENT[$t,$j]+="$(per_io $((y1 - y0)) "$b" "${SIZE[$j]}") "
			DROP[$t,$j]+="$(per_io $((z1 - z0)) "$b" "${SIZE[$j]}") "
			GCSW[$t,$j]+="$(per_io $((g1 - g0)) "$b" "${SIZE[$j]}") "
			case $j in
			sr | sw | sr2 | sw2) V[$t,$j]+="${v% *} " ;;
			rr) V[$t,$j]+="${v#* } " ;;
			lat) V[$t,$j]+="$(fio_lat_us "$t-$j-$r") " ;;
			esac
			CPU[$t,$j]+="$(cpu_us_per $((s1 - s0)) "$b" "${SIZE[$j]}") "
			KCPU[$t,$j]+="$(cpu_us_per $((k1 - k0)) "$b" "${SIZE[$j]}") "
			if [ -n "$p" ]; then
				read -r r1 w1 c1 < <(proc_sched "$p")
				OWN[$t,$j]+="$(per_io $((r1 - r0)) "$b" "${SIZE[$j]}") "
				WAIT[$t,$j]+="$(per_io $((w1 - w0)) "$b" "${SIZE[$j]}") "
				CSW[$t,$j]+="$(per_io $((c1 - c0)) "$b" "${SIZE[$j]}") "
			fi
			# written back outside the next job's window
			case $j in sw | sw2) sync ;; esac
		done
	done
	for t in "${TG[@]}"; do
		# shellcheck disable=SC2086
		say "round $r, $t: $(last ${V[$t,sr]:-}) MB/s read, $(last ${V[$t,sw]:-}) MB/s write," \
			"$(last ${V[$t,rr]:-}) IOPS, $(last ${V[$t,lat]:-}) us QD1"
	done
done
say "measured in $((SECONDS - t0)) s"
# which of rxe0's error counters moved (the resent column sums four of them)
say "rxe0 counters that are not zero: $(cd /sys/class/infiniband/rxe0/ports/1/hw_counters &&
	grep -v '^0$' -- * 2>/dev/null | tr '\n' ' ')"

# where_threads JOB: what utgtd's threads do while JOB runs on it alone (20 samples 0.2 s apart:
# name, state, system call number, the CPU it ran on last and the CPUs it may run on: pin
# auto's choice), then each thread's CPU time so far.
where_threads() {
	step "where utgtd's threads are during $1 (20 samples: state, system call, CPU, allowed CPUs)"
	# shellcheck disable=SC2086
	fio --name=diag --filename="${DEV[utgtd]}" --direct=1 --ioengine=libaio ${ARGS[$1]} \
		--time_based --runtime=6 >/dev/null 2>&1 &
	local diag=$! i th
	sleep 1
	for i in $(seq 1 20); do
		for th in /proc/"$UTGTD_PID"/task/*; do
			echo "$(cat "$th/comm" 2>/dev/null) $(awk '{ print $3 }' "$th/stat" 2>/dev/null)" \
				"$(awk '{ print $1 }' "$th/syscall" 2>/dev/null)" \
				"cpu$(awk '{ print $39 }' "$th/stat" 2>/dev/null)" \
				"allowed $(awk '/^Cpus_allowed_list/ { print $2 }' "$th/status" 2>/dev/null)"
		done
		sleep 0.2
	done | sort | uniq -c | sort -rn | head -20
	wait "$diag" # not a bare wait: the daemons are this shell's children too
	for th in /proc/"$UTGTD_PID"/task/*; do
		echo "  thread $(cat "$th/comm") $(awk '{ print "utime", $14, "stime", $15 }' "$th/stat")"
	done
}
where_threads lat
where_threads sr

if [ -n "$PROFILE" ]; then
	step "the guest's CPU per I/O by symbol during ${PROFILE//[,+]/ }, each target in turn"
	for j in ${PROFILE//[,+]/ }; do
		for t in "${TG[@]}"; do
			# shellcheck disable=SC2086
			task_profile "$t-$j" "${DEV[$t]}" "${SIZE[$j]}" ${ARGS[$j]}
			case $j in sw | sw2) sync ;; esac
		done
		for t in "${TG[@]}"; do
			# shellcheck disable=SC2086
			profile_job "$t-$j" "${DEV[$t]}" "${SIZE[$j]}" ${ARGS[$j]}
			case $j in sw | sw2) sync ;; esac
		done
	done | tee /out/srp-profile.txt
fi

pr=() pw=()
[ "$PERF" = 1 ] && step "perftest on the same link (1 MiB messages, 3 runs each)"
PERF_N=$([ "$QUICK" = 1 ] && echo 100 || echo 200)
for r in $([ "$PERF" = 1 ] && echo 1 2 3); do
	pr+=("$(perf ib_read_bw 1048576 "$PERF_N")")
	pw+=("$(perf ib_write_bw 1048576 "$PERF_N")")
done
say "ib_read_bw ${pr[*]} MB/s; ib_write_bw ${pw[*]} MB/s"

step "logout"
for p in /sys/class/srp_remote_ports/port-*; do [ -e "$p" ] && echo 1 >"$p/delete"; done
wait_until 60 "ib_srp hosts gone" eval '[ -z "$(srp_hosts)" ]'
wait_until 60 "utgtd channels released" eval "[ \$(grep -c 'channel released' $SRP_LOG) -ge 2 ]"
utgtd_stop
expect_eq "utgtd exit status" "$UTGTD_RC" 0
if [ -n "$BASE_PID" ]; then
	kill -TERM "$BASE_PID"
	wait "$BASE_PID" || fail "the base utgtd exited $?"
	BASE_PID=
fi
echo 0 >$tpg/enable

step "table"
# against OTHER: utgtd's medians over OTHER's per job, latency and CPU inverted (above 1: utgtd
# better)
against() {
	local j u o x
	for j in "${JOBS[@]}"; do
		u=$(med V utgtd "$j") o=$(med V "$1" "$j")
		if [ "$j" = lat ]; then x=$(ratio "$o" "$u"); else x=$(ratio "$u" "$o"); fi
		printf '  %-4s %s   guest CPU per I/O %s\n' "$j" "$x" \
			"$(ratio "$(med CPU "$1" "$j")" "$(med CPU utgtd "$j")")"
	done
}
{
	echo "SRP over soft-RoCE (rxe0 loopback), one guest ($(nproc) vCPU, TCG); initiator Linux"
	echo "$(uname -r) ib_srp, ch_count=2, immediate data; fio libaio direct, ${RUNTIME} s (+${RAMP} s ramp)"
	echo "per run; $ROUNDS rounds, targets alternating; medians, [min-max] over the rounds."
	echo "${SRP_MB} MiB file in the page cache; LIO target_core_file fd_buffered_io=1."
	echo
	echo "| job | target | median | [min-max] | guest CPU us/IO | kernel us/IO | daemon us/IO | daemon run-queue wait us/IO | daemon switches/IO | guest switches/IO | rxe packets/IO | resent/IO | backlog drops/IO |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for j in "${JOBS[@]}"; do
		case $j in
		sr) jn="1M seq read QD8, MB/s" ;; sw) jn="1M seq write QD8, MB/s" ;;
		rr) jn="4k rand read QD16, IOPS" ;; lat) jn="4k rand read QD1, mean us" ;;
		sr2) jn="1M seq read $(nproc)x QD4 (a job per vCPU), MB/s" ;;
		sw2) jn="1M seq write $(nproc)x QD4 (a job per vCPU), MB/s" ;;
		esac
		for t in "${TG[@]}"; do
			# shellcheck disable=SC2086
			printf '| %s | %s | %s | [%s] | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$jn" "${NAME[$t]}" \
				"$(med V "$t" "$j")" "$(spread ${V[$t,$j]})" "$(med CPU "$t" "$j")" \
				"$(med KCPU "$t" "$j")" "$(med OWN "$t" "$j")" "$(med WAIT "$t" "$j")" \
				"$(med CSW "$t" "$j")" "$(med GCSW "$t" "$j")" "$(med PKT "$t" "$j")" "$(med RESENT "$t" "$j")" \
				"$(med DROP "$t" "$j")"
		done
	done
	echo
	echo "utgtd against LIO (above 1.00: utgtd better; latency and CPU as LIO / utgtd):"
	against lio
	if [ -n "$BASE" ]; then
		echo "utgtd against the base build:"
		against base
	fi
	echo
	echo "perftest, 1 MiB messages (link ceiling; a SCSI read moves data by RDMA WRITE, a write"
	echo "by RDMA READ): ib_write_bw $(median "${pw[@]}") MB/s [$(spread "${pw[@]}")]," \
		"ib_read_bw $(median "${pr[@]}") MB/s [$(spread "${pr[@]}")]"
	echo "utgtd / link: read $(ratio "$(med V utgtd sr)" "$(median "${pw[@]}")"), write" \
		"$(ratio "$(med V utgtd sw)" "$(median "${pr[@]}")")"
	echo
	echo "Per round:"
	for t in "${TG[@]}"; do
		for j in "${JOBS[@]}"; do
			echo "  $t $j: ${V[$t,$j]}(guest CPU us/IO ${CPU[$t,$j]}; resent/IO ${RESENT[$t,$j]}; drops/IO ${DROP[$t,$j]})"
		done
	done
} | tee "$OUT"
all_measured V
say "PASS srp_compare"
