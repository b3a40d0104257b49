#!/bin/bash
# PID 1 of the ordinary test guest (installed as /sbin/utgt-init): mount what the kernel and
# the tests need, then become the test runner, scripts/vm/guest-run.sh (/sbin/utgt-run), which
# runs the test named on the kernel command line and powers off.  No systemd: devtmpfs makes
# the device nodes; tests start udevd/iscsid/multipathd themselves when they need them.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

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
exec /sbin/utgt-run
