#!/bin/bash
# Runs one guest test, in both flavours of the guest (installed as /sbin/utgt-run):
# the ordinary guest's PID 1 (scripts/vm/guest-init.sh) execs it after mounting the kernel's
# file systems; the systemd flavour's utgt-test.service (scripts/vm/build-image-systemd.sh)
# starts it once multi-user.target is reached.  It brings up the network and the 9p shares,
# runs the test named on the kernel command line under a timeout, prints its exit status as
# the marker line "UTGT-VM-EXIT: N" on the console and powers off.
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

systemd=
[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] &&
	systemd=", systemd $(systemctl --version | awk 'NR==1 {print $2}')"

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

[ -n "$test" ] && [ -f "/src/$test" ] || { echo "utgt-run: no test '$test'"; marker 126; }
IFS=, read -r -a argv <<<"$args"
bashflags=()
[ "$trace" = 1 ] && bashflags=(-x)
echo "utgt-run: running $test (timeout ${timeout}s) on $(uname -r)$systemd"
cd /src
# The script's output goes to the console (the host's log) and to /out/guest.log.
PS4='+ [$SECONDS] ${BASH_SOURCE##*/}:$LINENO: ' \
	timeout -k 10 "$timeout" bash "${bashflags[@]}" "/src/$test" "${argv[@]}" 2>&1 |
	tee /out/guest.log
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "utgt-run: $test timed out after ${timeout}s"
if [ "$rc" != 0 ] && [ -n "$systemd" ]; then
	echo "---- journal (last 60 lines)"
	journalctl -b --no-pager | tail -60
elif [ "$rc" != 0 ]; then
	echo "---- dmesg (last 60 lines)"
	dmesg | tail -60
fi
marker "$rc"
