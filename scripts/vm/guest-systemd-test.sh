#!/bin/bash
# utgt-test.service in the systemd flavour of the guest (scripts/vm/build-image-systemd.sh):
# what guest-init.sh does as PID 1 in the ordinary guest, here as a unit once systemd has
# reached multi-user.target: network, the 9p shares, the test named on the kernel command
# line under a timeout, the "UTGT-VM-EXIT: N" marker, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

marker() {
	sync
	echo "UTGT-VM-EXIT: $1"
	echo o >/proc/sysrq-trigger
	sleep 10
}

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
mkdir -p /src /out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro src /src || marker 124
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out || marker 124
[ -n "$test" ] && [ -f "/src/$test" ] || { echo "utgt-systemd-test: no test '$test'"; marker 126; }
IFS=, read -r -a argv <<<"$args"
bashflags=()
[ "$trace" = 1 ] && bashflags=(-x)
echo "utgt-systemd-test: running $test (timeout ${timeout}s) on $(uname -r), systemd $(systemctl --version | awk 'NR==1 {print $2}')"
cd /src
PS4='+ [$SECONDS] ${BASH_SOURCE##*/}:$LINENO: ' \
	timeout -k 10 "$timeout" bash "${bashflags[@]}" "/src/$test" "${argv[@]}" 2>&1 |
	tee /out/guest.log
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "utgt-systemd-test: $test timed out after ${timeout}s"
if [ "$rc" != 0 ]; then
	echo "---- journal (last 60 lines)"
	journalctl -b --no-pager | tail -60
fi
marker "$rc"
