#!/usr/bin/env bash
# Build (or reuse) the qemu test guest from Debian's packages, in a cache folder outside the
# source tree ($UTGT_VM_CACHE, default /var/cache/utgt-vm):
#   kernel-<ver>/vmlinux   raw ELF of Debian's kernel (booted via PVH: no per-boot XZ unpack)
#   initramfs.cpio.gz      static busybox + the modules needed to mount root and the 9p share
#   root.img               ext4 image of a debootstrap'd bookworm with the initiator-side tools
# Three layers, each with a stamp; a layer is rebuilt only when what it is made from changed:
#   kernel  <- the candidate version of the package linux-image-amd64 depends on
#   rootfs  <- the package list below and the candidate version of every installed package
#   image   <- the two stamps above plus these scripts (guest init, module list)
# The kernel is downloaded and unpacked, never installed on the host.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${UTGT_VM_CACHE:-/var/cache/utgt-vm}
SUITE=bookworm
FORCE=${UTGT_VM_REBUILD:-0} # 1: rebuild every layer

# What the guest tests use (issue 6), plus udev (multipathd needs its database) and nftables
# (tests/vm/multipath.sh cuts one path with a reject rule).
ROOT_PKGS=(
	kmod iproute2 procps util-linux iputils-ping dbus udev nftables
	open-iscsi multipath-tools sg3-utils lsscsi e2fsprogs fio
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest infiniband-diags srptools
	tcmu-runner targetcli-fb tgt
	liburing2 libisal2 libiscsi7 # build/utgtd and utgt-bench run in the guest (RDMA tests)
	linux-perf strace # profiling the daemons and the guest kernel where the time goes
	iperf3 # the one-stream TCP floor tests/vm/iscsi_compare.sh holds 1 MiB transfers against
)
# All of Debian's modules go into the root but for hardware this guest never has: modules asked
# for by name at run time (rdma_rxe requests "crc32", nft rules load nft_reject_*, sd_mod needs
# block/t10-pi) are easy to miss with a list of wanted ones.
MOD_EXCLUDE=(
	kernel/sound kernel/drivers/gpu kernel/drivers/media kernel/drivers/net/wireless
	kernel/drivers/net/ethernet kernel/drivers/usb kernel/drivers/iio kernel/drivers/staging
	kernel/drivers/hid kernel/drivers/input kernel/drivers/video kernel/drivers/bluetooth
	kernel/drivers/platform kernel/drivers/hwmon kernel/net/bluetooth kernel/net/mac80211
	kernel/net/wireless
)
# Loaded by the initramfs, in dependency order, before root is mounted.
INITRD_MODS=(virtio_pci virtio_blk virtio_net ext4 crc32c_generic 9p 9pnet_virtio)

log() { printf '[vm-image %(%T)T] %s\n' -1 "$*"; }
die() { log "ERROR: $*"; exit 1; }
trap 'log "ERROR: failed at line $LINENO: $BASH_COMMAND"' ERR

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mke2fs -d with owners)"
"$HERE/../deps.sh" vm
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || die "another build holds $CACHE/.lock"

# The apt mirror this machine uses (deb822 first, then one-line sources).
mirror() {
	local m
	m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources \
		2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '$1=="deb" && $0 !~ /security/ {print $2; exit}' \
		/etc/apt/sources.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

# "name version" for each package name on stdin, from the host's apt lists (same mirror).
candidates() {
	xargs -r apt-cache policy 2>/dev/null | awk '
		/^[^ ].*:$/ { name = substr($0, 1, length($0) - 1) }
		/^  Candidate:/ { print name, $2 }' | sort
}

have_candidates() { apt-cache policy linux-image-amd64 2>/dev/null | grep -c 'Candidate: [0-9]' >/dev/null; }
have_candidates || { log "apt lists empty: apt-get update"; apt-get update -qq; }

# ---- kernel layer -----------------------------------------------------------------------
KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$KPKG" ] || die "cannot resolve linux-image-amd64's kernel package"
KPKG_VER=$(echo "$KPKG" | candidates | awk '{print $2}')
KVER=${KPKG#linux-image-}
KDIR=$CACHE/kernel-$KVER
kernel_stamp="$KPKG $KPKG_VER"

# Raw vmlinux out of the bzImage: XZ-decompress from the first XZ stream magic.
extract_vmlinux() {
	local img=$1 out=$2 off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$img" | awk -F: 'NR == 1 {print $1}')
	[ -n "$off" ] || die "no XZ stream in $img"
	tail -c +$((off + 1)) "$img" | xz -dc --single-stream >"$out" 2>/dev/null || true
	[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" = '177ELF' ] || die "vmlinux not ELF"
}

if [ "$FORCE" = 1 ] || [ "$(cat "$KDIR/stamp" 2>/dev/null)" != "$kernel_stamp" ]; then
	t0=$SECONDS
	log "kernel: $kernel_stamp"
	rm -rf "$KDIR" "$KDIR.new"
	mkdir -p "$KDIR.new/pkg"
	# _apt cannot write into a root-only cache: download as root, quietly.
	(cd "$KDIR.new" && apt-get download -q -o APT::Sandbox::User=root "$KPKG=$KPKG_VER" >/dev/null)
	dpkg -x "$KDIR.new"/*.deb "$KDIR.new/pkg"
	rm -f "$KDIR.new"/*.deb
	depmod -b "$KDIR.new/pkg" "$KVER"
	extract_vmlinux "$KDIR.new/pkg/boot/vmlinuz-$KVER" "$KDIR.new/vmlinux"
	echo "$kernel_stamp" >"$KDIR.new/stamp"
	mv "$KDIR.new" "$KDIR"
	log "kernel ready in $((SECONDS - t0)) s"
fi
# Older kernels of this cache are dead weight.
for d in "$CACHE"/kernel-*; do
	[ "$d" = "$KDIR" ] || [ ! -d "$d" ] || rm -rf "$d"
done
KMODS=$KDIR/pkg/lib/modules/$KVER

# ---- rootfs layer -----------------------------------------------------------------------
ROOTFS=$CACHE/rootfs
# The stamp: our package list, then "name version" of everything installed.
rootfs_current() {
	[ -f "$ROOTFS/.utgt-stamp" ] || return 1
	[ "$(head -1 "$ROOTFS/.utgt-stamp")" = "include: ${ROOT_PKGS[*]}" ] || return 1
	local want have
	have=$(tail -n +2 "$ROOTFS/.utgt-stamp")
	want=$(echo "$have" | awk '{print $1}' | candidates)
	[ "$have" = "$want" ] || { log "rootfs: package versions changed"; return 1; }
}

build_rootfs() {
	local new=$ROOTFS.new m
	m=$(mirror)
	log "rootfs: debootstrap $SUITE from $m"
	rm -rf "$new"
	# --merged-usr is bookworm's default; minbase keeps the image to what the tests need.
	nice -n 10 debootstrap --variant=minbase --include="$(IFS=,; echo "${ROOT_PKGS[*]}")" \
		"$SUITE" "$new" "$m" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/debootstrap.log"; die "debootstrap failed"; }
	# Bring it to the same versions the host's apt sees (updates + security), so the stamp
	# check compares like with like.
	cp /etc/apt/sources.list.d/*.sources "$new/etc/apt/sources.list.d/" 2>/dev/null || true
	[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$new/etc/apt/sources.list"
	printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d" # no service starts in chroot
	chmod +x "$new/usr/sbin/policy-rc.d"
	mount -t proc proc "$new/proc"
	trap 'umount "$ROOTFS.new/proc" 2>/dev/null || true' EXIT
	if ! nice -n 10 chroot "$new" sh -c 'export DEBIAN_FRONTEND=noninteractive;
		apt-get update -qq && apt-get -y -qq -o Dpkg::Options::=--force-confold dist-upgrade &&
		apt-get clean' >>"$CACHE/debootstrap.log" 2>&1; then
		tail -20 "$CACHE/debootstrap.log"
		die "rootfs upgrade failed"
	fi
	umount "$new/proc"
	trap - EXIT
	rm -rf "$new/var/lib/apt/lists"/* "$new/var/cache/apt"/*.bin
	{
		echo "include: ${ROOT_PKGS[*]}"
		dpkg-query --admindir="$new/var/lib/dpkg" -W -f='${Package} ${Version}\n' | sort
	} >"$new/.utgt-stamp"
	rm -rf "$ROOTFS"
	mv "$new" "$ROOTFS"
}

if [ "$FORCE" = 1 ] || ! rootfs_current; then
	t0=$SECONDS
	build_rootfs
	log "rootfs ready in $((SECONDS - t0)) s ($(($(wc -l <"$ROOTFS/.utgt-stamp") - 1)) packages)"
fi

# ---- image layer: initramfs + root.img ----------------------------------------------------
image_stamp=$(
	{
		echo "$kernel_stamp"
		cat "$ROOTFS/.utgt-stamp"
		echo "${MOD_EXCLUDE[*]} / ${INITRD_MODS[*]}"
		cat "$HERE/build-image.sh" "$HERE/guest-init.sh" "$HERE/guest-run.sh" "$HERE/initramfs-init.sh"
	} | sha256sum | cut -d' ' -f1
)
if [ "$FORCE" != 1 ] && [ "$(cat "$CACHE/image.stamp" 2>/dev/null)" = "$image_stamp" ] &&
	[ -f "$CACHE/root.img" ] && [ -f "$CACHE/initramfs.cpio.gz" ]; then
	log "image current ($CACHE)"
	exit 0
fi

t0=$SECONDS
log "initramfs"
IRD=$(mktemp -d "$CACHE/initrd.XXXXXX")
trap 'rm -rf "$IRD"' EXIT
mkdir -p "$IRD"/{bin,dev,proc,sys,newroot}
cp /bin/busybox "$IRD/bin/busybox"
: >"$IRD/modules.order"
for m in "${INITRD_MODS[@]}"; do
	# "insmod /abs/path.ko" lines in dependency order; built-ins print "builtin".
	modprobe -d "$KDIR/pkg" -S "$KVER" --show-depends "$m" | awk '$1=="insmod" {print $2}' |
		while read -r ko; do
			rel=${ko#"$KDIR/pkg"}
			grep -qxF "$rel" "$IRD/modules.order" && continue
			mkdir -p "$IRD$(dirname "$rel")"
			cp "$ko" "$IRD$rel"
			echo "$rel" >>"$IRD/modules.order"
		done
done
install -m 755 "$HERE/initramfs-init.sh" "$IRD/init"
(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) >"$CACHE/initramfs.cpio.gz.new"
mv "$CACHE/initramfs.cpio.gz.new" "$CACHE/initramfs.cpio.gz"
rm -rf "$IRD"
trap - EXIT

log "root image"
# Modules and init go into the cached rootfs (replacing any previous kernel's) before packing.
rm -rf "$ROOTFS/lib/modules" "$ROOTFS/usr/lib/modules"
mkdir -p "$ROOTFS/usr/lib/modules/$KVER"
tar -C "$KMODS" -cf - "${MOD_EXCLUDE[@]/#/--exclude=}" kernel |
	tar -C "$ROOTFS/usr/lib/modules/$KVER" -xf -
cp "$KMODS"/modules.{order,builtin,builtin.modinfo} "$ROOTFS/usr/lib/modules/$KVER/"
[ -e "$ROOTFS/lib" ] || ln -s usr/lib "$ROOTFS/lib"
depmod -b "$ROOTFS" "$KVER"
install -m 755 "$HERE/guest-init.sh" "$ROOTFS/sbin/utgt-init"
install -m 755 "$HERE/guest-run.sh" "$ROOTFS/sbin/utgt-run"
echo utgt-vm >"$ROOTFS/etc/hostname"
printf '127.0.0.1 localhost utgt-vm\n10.0.2.2 host\n' >"$ROOTFS/etc/hosts"
: >"$ROOTFS/etc/fstab"
mkdir -p "$ROOTFS/src" "$ROOTFS/out"
# A fixed initiator name: targets' ACLs and CHAP accounts in the fixtures name it.
echo "InitiatorName=iqn.2024-01.org.utgt:vm-guest" >"$ROOTFS/etc/iscsi/initiatorname.iscsi"
rm -f "$ROOTFS/usr/sbin/policy-rc.d"

used_mb=$(du -sm "$ROOTFS" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 768)) # room for test files, TCMU images, logs
rm -f "$CACHE/root.img.new"
nice -n 10 mke2fs -q -t ext4 -L utgt-root -E root_owner=0:0 -d "$ROOTFS" \
	"$CACHE/root.img.new" "${size_mb}M"
mv "$CACHE/root.img.new" "$CACHE/root.img"
echo "$KVER" >"$CACHE/kver"
echo "$image_stamp" >"$CACHE/image.stamp"
log "image ready in $((SECONDS - t0)) s: root.img ${size_mb} MiB (${used_mb} MiB used), kernel $KVER"
