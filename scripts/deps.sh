#!/usr/bin/env bash
# Install every Debian package utgt needs to build, test and demo.  Idempotent; silent when
# nothing is missing.  Needs root (or sudo) only when something must be installed.
# `scripts/deps.sh vm` also installs VM_PKGS, what the qemu guest tests need (make vm-image,
# make vmtest), `scripts/deps.sh deb` DEB_PKGS (make deb), `scripts/deps.sh rbd` RBD_PKGS (the
# test Ceph cluster of make rbdtest and scripts/bench/rbd.sh); plain `make` stays light.
set -euo pipefail

PKGS=(
	build-essential pkg-config clang clang-format
	libcriterion-dev          # unit tests
	liburing-dev              # backstore async I/O
	libisal-dev               # CRC32C for iSCSI digests
	libssl-dev                # CHAP MD5/SHA-1/SHA-256
	libiscsi-dev libiscsi-bin # utgt-bench's iSCSI engine; iscsi-test-cu conformance oracle
	libibverbs-dev librdmacm-dev
	tgt                       # the userspace peer for benchmarks
	iproute2 iperf3 gnuplot-nox
	iptables                  # the lab's link delay where the kernel has no netem
	python3
	jq                        # utgt-bench integration tests read its JSON reports
	fio fio-examples          # utgt-bench's fio compatibility: fio's job files, tools, numbers
	python3-six               # fio2gnuplot and fio_jsonplus_clat2csv import it; fio does not depend on it
	systemd man-db groff-base # tests/integration/install.sh: systemd-analyze verify, man --warnings
	# vdisk_rbd's headers (under 0.5 MB: fio above already pulls in librbd1 and librados2)
	librbd-dev librados-dev
)

# The qemu test guest (scripts/vm/): emulator, root image tools, kernel unpacking, initramfs.
VM_PKGS=(
	qemu-system-x86 qemu-utils debootstrap busybox-static cpio kmod e2fsprogs xz-utils
	xorriso # tests/vm/vcdrom.sh: the ISO image the fixture serves
)
# `make deb` (dpkg-buildpackage -us -uc -b, checked with lintian): `scripts/deps.sh deb`.
DEB_PKGS=(
	dpkg-dev debhelper fakeroot lintian
)
# A one-host Ceph cluster (scripts/ceph-cluster.sh) and the peers of scripts/bench/rbd.sh:
# about 90 packages, 55 MB to download, 80 s; so not part of `make test`'s own install.
RBD_PKGS=(
	ceph-mon ceph-mgr ceph-osd ceph-common uuid-runtime
	tgt-rbd # Debian's tgtd with bs_rbd, the benchmark's peer
)
[ "${1:-}" = vm ] && PKGS+=("${VM_PKGS[@]}")
[ "${1:-}" = rbd ] && PKGS+=("${RBD_PKGS[@]}")
[ "${1:-}" = deb ] && PKGS+=("${DEB_PKGS[@]}")

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# tgt's package starts a tgtd service where an init system runs; we never use that instance.
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
