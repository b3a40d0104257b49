#!/usr/bin/env bash
# The systemd flavour of the test guest, for tests that need a real systemd as PID 1
# (tests/vm/systemd_*.sh: utgt's Debian package and its unit).  Derived from the ordinary
# guest, which it leaves untouched: its rootfs is copied, systemd + systemd-sysv are added,
# /sbin/utgt-init (what the shared initramfs hands over to) becomes systemd itself, and one
# unit, utgt-test.service, runs the test named on the kernel command line with the ordinary
# guest's runner (/sbin/utgt-run, scripts/vm/guest-run.sh) and powers off.  Its cache is a folder of its own
# ($UTGT_VM_SYSTEMD_CACHE, default /var/cache/utgt-vm-systemd), rebuilt only when the
# ordinary image or these scripts change; the kernel and initramfs are the ordinary ones.
#   UTGT_VM_CACHE=/var/cache/utgt-vm-systemd scripts/vm/run-guest.sh tests/vm/systemd_deb.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${UTGT_VM_CACHE_BASE:-/var/cache/utgt-vm}
CACHE=${UTGT_VM_SYSTEMD_CACHE:-/var/cache/utgt-vm-systemd}
EXTRA_PKGS=(systemd systemd-sysv)

log() { printf '[vm-image-systemd %(%T)T] %s\n' -1 "$*"; }
die() { log "ERROR: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root"

UTGT_VM_CACHE=$BASE "$HERE/build-image.sh"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || die "another build holds $CACHE/.lock"

stamp=$({
	cat "$BASE/image.stamp"
	echo "${EXTRA_PKGS[*]}"
	cat "$HERE/build-image-systemd.sh"
} | sha256sum | cut -d' ' -f1)
if [ "$(cat "$CACHE/image.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$CACHE/root.img" ]; then
	log "image current ($CACHE)"
	exit 0
fi

t0=$SECONDS
KVER=$(cat "$BASE/kver")
ROOTFS=$CACHE/rootfs
rm -rf "$ROOTFS"
# the base's lock: its rootfs must not change while it is copied
(flock -w 1800 8 && cp -a "$BASE/rootfs" "$ROOTFS") 8>"$BASE/.lock"
log "rootfs copied; installing ${EXTRA_PKGS[*]}"
printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d" # no service starts in chroot
chmod +x "$ROOTFS/usr/sbin/policy-rc.d"
mount -t proc proc "$ROOTFS/proc"
trap 'umount "$ROOTFS/proc" 2>/dev/null || true' EXIT
nice -n 10 chroot "$ROOTFS" sh -c "export DEBIAN_FRONTEND=noninteractive;
	apt-get update -qq && apt-get install -y -qq --no-install-recommends ${EXTRA_PKGS[*]} &&
	apt-get clean" >"$CACHE/install.log" 2>&1 || { tail -20 "$CACHE/install.log"; die "apt-get install failed"; }
umount "$ROOTFS/proc"
trap - EXIT
rm -rf "$ROOTFS/var/lib/apt/lists"/* "$ROOTFS/var/cache/apt"/*.bin "$ROOTFS/usr/sbin/policy-rc.d"

# PID 1 is systemd: the shared initramfs execs /sbin/utgt-init.
ln -sf /lib/systemd/systemd "$ROOTFS/sbin/utgt-init"
cat >"$ROOTFS/etc/systemd/system/utgt-test.service" <<'UNIT'
[Unit]
Description=utgt guest test (the script named by utgt.test= on the kernel command line)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/sbin/utgt-run
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/utgt-test.service "$ROOTFS/etc/systemd/system/multi-user.target.wants/utgt-test.service"
# Nothing on the console but the test: no login prompts, no waiting for a network manager.
ln -sf /dev/null "$ROOTFS/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$ROOTFS/etc/systemd/system/getty@tty1.service"
ln -sf /dev/null "$ROOTFS/etc/systemd/system/systemd-networkd-wait-online.service"
# The image's other targets (the ordinary guest never starts them): tgtd would hold port 3260.
for u in tgt tcmu-runner rtslib-fb-targetctl; do
	ln -sf /dev/null "$ROOTFS/etc/systemd/system/$u.service"
done
echo utgt-vm-systemd >"$ROOTFS/etc/hostname"
: >"$ROOTFS/etc/machine-id"

used_mb=$(du -sm "$ROOTFS" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 512))
rm -f "$CACHE/root.img.new"
nice -n 10 mke2fs -q -t ext4 -L utgt-root -E root_owner=0:0 -d "$ROOTFS" "$CACHE/root.img.new" "${size_mb}M"
mv "$CACHE/root.img.new" "$CACHE/root.img"
rm -rf "$ROOTFS" # the image is what boots; the copy is 0.5 GB
ln -sfn "$BASE/kernel-$KVER" "$CACHE/kernel-$KVER"
cp "$BASE/initramfs.cpio.gz" "$CACHE/initramfs.cpio.gz"
echo "$KVER" >"$CACHE/kver"
echo "$stamp" >"$CACHE/image.stamp"
log "image ready in $((SECONDS - t0)) s: root.img ${size_mb} MiB"
