# utgt — top-level build.  `make` builds build/utgtd, build/utgtadm and build/utgt-bench.
# Sources are discovered by directory so adding a file needs no Makefile edit.

CC       ?= cc
BUILD    ?= build
OPT      ?= -O2
SAN      ?=
# One version for utgtd, utgtadm and utgt-bench: a release tag (vX.Y.Z) when git has one,
# else the VERSION file (a tarball, or no tag yet).
UTGT_VERSION := $(or $(patsubst v%,%,$(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)),$(shell cat VERSION))
CFLAGS   := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(OPT) -g -pthread -I. $(SAN) $(EXTRA_CFLAGS) \
	    -DUTGT_VERSION='"$(UTGT_VERSION)"'
LDFLAGS  := -pthread $(SAN) $(EXTRA_LDFLAGS)
LIBS     := -luring -lisal -lcrypto -lm -libverbs -lrdmacm
BENCH_LIBS := -liscsi -luring -lm
TEST_LIBS  := -lcriterion
# vdisk_rbd needs librbd; Debian's librbd-dev ships no pkg-config file, so the header decides.
# Without it the handler is compiled out and a configuration naming it is refused.
HAVE_RBD := $(shell printf '\043include <rbd/librbd.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_RBD),1)
LIBS   += -lrbd -lrados
endif

# Everything but program entry points goes into libutgt.a, so unit tests link the same objects.
CORE_SRCS  := $(wildcard common/*.c scsi/*.c scsi/backstore/*.c target/*.c transports/*/*.c)
CORE_MAINS := target/utgtd_main.c target/utgtadm_main.c
CORE_LIB_SRCS := $(filter-out $(CORE_MAINS),$(CORE_SRCS))
BENCH_SRCS := $(wildcard initiator/*.c)
BENCH_MAINS := initiator/bench_main.c
BENCH_LIB_SRCS := $(filter-out $(BENCH_MAINS),$(BENCH_SRCS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CORE_LIB   := $(BUILD)/libutgt.a
BENCH_LIB  := $(BUILD)/libutgtbench.a
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# Keep test objects: they are intermediate files to make, but rebuilding them each run is waste.
.SECONDARY:

.PHONY: all deps test unit asan asan-unit demo clean format fuzz conformance integration bench vm-image vmtest lab lab-quick rbdtest
all: $(BUILD)/utgtd $(BUILD)/utgt-bench $(BUILD)/utgtadm

$(BUILD)/obj/scsi/backstore/bs_rbd.o $(BUILD)/obj/scsi/backstore/bs_rbd_pr.o \
  $(BUILD)/obj/scsi/backstore/bs_rbd_gw.o \
  $(BUILD)/obj/tests/unit/test_bs_rbd_pr.o $(BUILD)/obj/tests/unit/test_bs_rbd.o: CFLAGS += $(if $(HAVE_RBD),-DUTGT_HAVE_RBD)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(call obj,$(CORE_LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BENCH_LIB): $(call obj,$(BENCH_LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Whole-archive: every object of the library is part of the program, so nothing in it can
# silently drop out of a build and tests link exactly what the daemon runs.
WHOLE = -Wl,--whole-archive $(1) -Wl,--no-whole-archive

$(BUILD)/utgtd: $(call obj,target/utgtd_main.c) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,target/utgtd_main.c) $(call WHOLE,$(CORE_LIB)) $(LIBS)

# The admin client needs only the few library objects it calls (no whole archive).
$(BUILD)/utgtadm: $(call obj,target/utgtadm_main.c) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,target/utgtadm_main.c) $(CORE_LIB) $(LIBS)

# The tester takes all of its own code but only the generic helpers it calls from the target
# library (common/ diagnostics and number parsing, address parsing; no archive-wide pull): it shares no protocol
# code with the target it measures (tests/integration/bench_independent.sh).
$(BUILD)/utgt-bench: $(call obj,$(BENCH_MAINS)) $(BENCH_LIB) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(BENCH_MAINS)) $(call WHOLE,$(BENCH_LIB)) $(CORE_LIB) $(BENCH_LIBS) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BENCH_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(call WHOLE,$(BENCH_LIB) $(CORE_LIB)) $(TEST_LIBS) $(BENCH_LIBS) $(LIBS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

deps:
	@scripts/deps.sh

# Unit tests: every tests/unit/test_*.c is its own Criterion binary.
unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))

asan-unit: asan
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 UNIT_SUITE=asan-unit \
	  scripts/run-unit.sh $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))

integration: all
	@scripts/run-suite.sh integration

conformance: all
	@scripts/run-suite.sh conformance

# The README's test command: installs, builds, then every suite that exists, ending with the
# qemu guest subset (Debian's kernel as the initiator: open-iscsi login, mkfs, fio verify, one
# dm-multipath failover; LIO + TCMU; the guest image is built on first use, ~2 min, then cached).
# scripts/run-tests.sh gives each suite its own time limit and ends with a summary table.
test: deps
	+@MAKE="$(MAKE)" scripts/run-tests.sh

# vdisk_rbd against a Ceph cluster it brings up on 127.0.0.1 (tests/rbd/, docs/rbd.md):
# iscsi-test-cu beside a fileio LU, verified utgt-bench, resize and fencing, persistent
# reservations shared by two gateways, two gateways on one image with the owner killed
# (tests/rbd/suite_*.sh).  About 4 min,
# plus ~80 s of packages on a fresh machine (scripts/deps.sh rbd); not part of `make test`.
rbdtest: deps
	@scripts/deps.sh rbd
	$(MAKE) all
	@tests/rbd/run-rbdtest.sh

demo: deps
	$(MAKE) all
	@scripts/demo.sh

# libFuzzer harnesses: every tests/fuzz/fuzz_*.c, linked against the library built with clang
# and ASan+UBSan in build-fuzz/.  `make fuzz` runs each for FUZZ_SECONDS (default 30) from a
# corpus seeded by tests/fuzz/seeds/<harness>/; not part of `make test`.
FUZZ_SECONDS ?= 30
FUZZ_SAN  := -fsanitize=address,undefined -fno-omit-frame-pointer
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRCS))

.PHONY: fuzz-lib
fuzz-lib:
	$(MAKE) BUILD=build-fuzz CC=clang OPT=-O1 EXTRA_CFLAGS=-Wno-error SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" build-fuzz/libutgt.a

# fuzz_admin replaces every transport with a recording fake: nothing listens or opens devices
FUZZ_LDFLAGS_fuzz_admin := -Wl,--wrap=tgt_transport_find
$(FUZZ_BINS): build-fuzz/%: tests/fuzz/%.c fuzz-lib
	clang -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -pthread -I. $(FUZZ_SAN) -fsanitize=fuzzer $< -o $@ $(FUZZ_LDFLAGS_$*) \
	  -Wl,--whole-archive build-fuzz/libutgt.a -Wl,--no-whole-archive $(LIBS)

fuzz: $(FUZZ_BINS)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz

# Tests with Linux's own initiators in a qemu guest (scripts/vm/, tests/vm/, docs/testing.md).
# The image is cached outside the tree ($UTGT_VM_CACHE, default /var/cache/utgt-vm).
# T=NAME runs tests/vm/NAME* only; UTGT_VM_TARGET=tgtd runs against Debian's tgtd instead.
.PHONY: vmtest-quick
VM_TARGET_DEP := $(if $(filter tgtd,$(UTGT_VM_TARGET)),,all)
vm-image:
	@scripts/vm/build-image.sh

vmtest: vm-image $(VM_TARGET_DEP)
	@scripts/vm/vmtest.sh $(T)

# utgt's Debian package and systemd unit in a guest whose PID 1 is systemd (tests/vm/systemd_deb.sh;
# the guest image of scripts/vm/build-image-systemd.sh, derived from the ordinary one).
.PHONY: vmtest-systemd
vmtest-systemd: vm-image deb
	@scripts/vm/vmtest.sh systemd_deb

# The short subset meant for `make test`: open-iscsi login, mkfs, fio verify, one multipath
# failover, the same login and verify over iSER (ib_iser on soft-RoCE), and LIO serving a
# utgtd DEVICE through the TCMU ring (tcm_loop /dev/sdX; tcmu.sh alone: `make vmtest T=tcmu`
# also runs tcmu_tmr, tcmu_iscsi, tcmu_srp and tcmu_compare).
vmtest-quick: vm-image $(VM_TARGET_DEP)
	@scripts/vm/vmtest.sh --quick iscsi_login multipath iser_login tcmu.sh

# The multipath lab (scripts/lab/): network namespaces joined by shaped veth paths, utgtd (and
# Debian's tgtd) in one, utgt-bench in the other.  Needs root.  `make lab` runs the campaign
# (~12 min) into lab-results/report.md; `make lab-quick` a short version that asserts only what
# holds on a busy machine (make test runs it through tests/integration/lab_quick.sh).
LAB_DELAY := $(BUILD)/lab-delay
$(LAB_DELAY): scripts/lab/lab_delay.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<

lab: deps
	$(MAKE) all $(LAB_DELAY)
	BUILD=$(BUILD) scripts/lab/campaign.sh

lab-quick: deps
	$(MAKE) all $(LAB_DELAY)
	BUILD=$(BUILD) scripts/lab/campaign.sh --quick

# ---- installation (docs/install.md) ----
# `make install DESTDIR=/tmp/stage PREFIX=/usr` stages everything; DESTDIR is prepended to every
# path.  The configuration and state paths are the daemon's compiled-in defaults (/etc/utgt,
# /var/lib/utgt), so they do not follow PREFIX.  An existing /etc/utgt/scst.conf is never
# overwritten.  SYSTEMDUNITDIR: Debian 12 packages use /lib/systemd/system (debian/rules).
PREFIX         ?= /usr/local
BINDIR         ?= $(PREFIX)/bin
SBINDIR        ?= $(PREFIX)/sbin
MANDIR         ?= $(PREFIX)/share/man
DOCDIR         ?= $(PREFIX)/share/doc/utgt
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR     ?= /etc
STATEDIR       ?= /var/lib/utgt
INSTALL        ?= install
MAN8 := man/utgtd.8 man/utgtadm.8
MAN1 := man/utgt-bench.1
MAN5 := man/utgt-scst.conf.5
DOC_EXAMPLES := $(wildcard conf/*.conf) conf/README.md

.PHONY: install install-bin install-data uninstall deb
install: install-bin install-data

install-bin: all
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(BUILD)/utgtd $(BUILD)/utgtadm $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0755 $(BUILD)/utgt-bench $(DESTDIR)$(BINDIR)/

install-data:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 0644 $(DOC_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g; s|@STATEDIR@|$(STATEDIR)|g' \
	  dist/utgtd.service.in >$(DESTDIR)$(SYSTEMDUNITDIR)/utgtd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/utgtd.service
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/utgt
	[ -e $(DESTDIR)$(SYSCONFDIR)/utgt/scst.conf ] || \
	  $(INSTALL) -m 0644 dist/scst.conf $(DESTDIR)$(SYSCONFDIR)/utgt/scst.conf
	$(INSTALL) -d -m 0700 $(DESTDIR)$(STATEDIR)

# Removes what install put there except the configuration (an administrator's file) and the
# state directory (APTPL reservations): both are left, as dpkg's remove (not purge) does.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/utgtd $(DESTDIR)$(SBINDIR)/utgtadm $(DESTDIR)$(BINDIR)/utgt-bench
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
	  $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5))) \
	  $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN8)))
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/utgtd.service
	rm -rf $(DESTDIR)$(DOCDIR)

# Debian packages utgt_*.deb and utgt-bench_*.deb (debian/), built by dpkg-buildpackage from a
# copy of the tracked files (a clean tree, whatever is built here) in $(BUILD)/deb/src, then
# checked with lintian.  The .debs land in $(BUILD)/deb/.
deb:
	@scripts/deps.sh deb
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	git ls-files -z | tar -c --null -T - | tar -x -C $(BUILD)/deb/src
	cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b -j2
	lintian --fail-on error $(BUILD)/deb/*.changes
