#!/bin/bash
# PID 1 of the test guest (installed as /sbin/utgt-init): set up the few mounts and the network
# the tests need, run the one test named on the kernel command line under a timeout, print its
# exit status as a marker line on the console, power off.  No systemd: devtmpfs makes the
# device nodes; tests start udevd/iscsid/multipathd themselves when they need them.
#
# Kernel command line (set by scripts/vm/run-guest.sh):
#   utgt.test=PATH     test script, relative to the source tree shared at /src
#   utgt.timeout=SEC   limit for the script (the host has its own limit around qemu)
#   utgt.trace=1       run the script with bash -x (trace goes to the console log)
#   utgt.args=A,B      arguments for the script, comma-separated
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

marker() {
	sync
	echo "UTGT-VM-EXIT: $1"
	echo o >/proc/sysrq-trigger
	sleep 10
}

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
# What udev/systemd would add to devtmpfs; bash's <(...) needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/lock /run/lock/iscsi
mount -t tmpfs tmpfs /tmp
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -o remount,rw /
hostname utgt-vm

test= timeout=600 trace=0 args=
for kv in $(cat /proc/cmdline); do
	case $kv in
	utgt.test=*) test=${kv#utgt.test=} ;;
	utgt.timeout=*) timeout=${kv#utgt.timeout=} ;;
	utgt.trace=*) trace=${kv#utgt.trace=} ;;
	utgt.args=*) args=${kv#utgt.args=} ;;
	esac
done

ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2

modprobe -q 9p 2>/dev/null
mkdir -p /src /out
# /src: the source tree (build/ binaries and tests/vm/), read-only.  /out: this run's folder on
# the host (target fixture description, backing files, logs), writable.
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro src /src || marker 124
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out || marker 124

[ -n "$test" ] && [ -f "/src/$test" ] || { echo "utgt-init: no test '$test'"; marker 126; }
IFS=, read -r -a argv <<<"$args"
bashflags=()
[ "$trace" = 1 ] && bashflags=(-x)
echo "utgt-init: running $test (timeout ${timeout}s) on $(uname -r)"
cd /src
# The script's output goes to the console (the host's log) and to /out/guest.log.
PS4='+ [$SECONDS] ${BASH_SOURCE##*/}:$LINENO: ' \
	timeout -k 10 "$timeout" bash "${bashflags[@]}" "/src/$test" "${argv[@]}" 2>&1 |
	tee /out/guest.log
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "utgt-init: $test timed out after ${timeout}s"
if [ "$rc" != 0 ]; then
	echo "---- dmesg (last 60 lines)"
	dmesg | tail -60
fi
marker "$rc"
