# SPDX-License-Identifier: GPL-2.0
#
# gpuctl: the human entry point. See README.
#
#   make                 module for KVER and the tool
#   make module KVER=R   the module for installed kernel release R
#   make tools           the tool
#   make check           the whole QEMU suite on every test kernel
#   make check-debug     the suite on a KASAN/lockdep/kmemleak kernel
#   make demo            a simulated GPU host in QEMU with a gpuctl tour
#   make bench           speed and scale ratios against sysfs walks (2 VMs)
#   make teeth           which cases notice a broken module, case by case
#   make install         module, tool and boot files (DESTDIR= to stage)
#   make install-cloudstack  gpudiscovery.sh for CloudStack's KVM agent
#   make deb             Debian packages into build/deb/, checked by lintian
#   make check-packages  the packages installed, loaded and removed in QEMU

# Default kernel: the running one when its headers exist, else the newest
# installed kernel that has headers.
KVER ?= $(shell r=$$(uname -r); \
	if [ -d /lib/modules/$$r/build ]; then echo $$r; else \
	ls -d /lib/modules/*/build 2>/dev/null | cut -d/ -f4 | sort -V | tail -n1; fi)
KDIR ?= /lib/modules/$(KVER)/build
GPUCTL_VERSION ?= $(shell git -C $(CURDIR) describe --always --dirty --tags 2>/dev/null || echo 0.1)
KSRC := $(CURDIR)/build/linux-source-6.12
KSRC_TAR ?= /usr/src/linux-source-6.12.tar.xz

export GPUCTL_VERSION

.PHONY: all module tools selftests modules-all clean regen regen-check \
	ksrc deps check check-debug demo bench teeth style install install-packaging \
	install-cloudstack deb check-packages

all: module tools

module:
	@test -d $(KDIR) || { echo "gpuctl: no kernel headers in $(KDIR) (scripts/install-deps.sh build)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools/gpuctl

selftests: ksrc
	$(MAKE) -C selftests KSRC=$(KSRC)

# The module for each test kernel, in build/<release>/gpuctl.ko (see
# scripts/build-module.sh for why each builds in its own copy).
TEST_KERNELS ?= $(shell ls /boot/vmlinuz-* 2>/dev/null | sed 's,/boot/vmlinuz-,,' | \
	while read r; do [ -d /lib/modules/$$r/build ] && echo $$r; done)
modules-all:
	@set -e; for r in $(TEST_KERNELS); do scripts/build-module.sh $$r; done

# Parts of linux-source-6.12 used at build time: the YNL generator and CLI,
# the kselftest harness and checkpatch. Extracted, never committed.
ksrc: $(KSRC)/.stamp
$(KSRC)/.stamp:
	@test -f $(KSRC_TAR) || { echo "gpuctl: $(KSRC_TAR) missing (scripts/install-deps.sh)" >&2; exit 1; }
	mkdir -p build
	tar -C build -xJf $(KSRC_TAR) --wildcards \
		'linux-source-6.12/tools/net/ynl/*' \
		'linux-source-6.12/Documentation/netlink/*.yaml' \
		'linux-source-6.12/scripts/checkpatch.pl' \
		'linux-source-6.12/scripts/spelling.txt' \
		'linux-source-6.12/scripts/const_structs.checkpatch' \
		'linux-source-6.12/tools/testing/selftests/kselftest.h' \
		'linux-source-6.12/tools/testing/selftests/kselftest_harness.h' \
		'linux-source-6.12/.clang-format'
	# The guests see this tree read-only, where Python cannot cache the
	# YNL library's bytecode: each guest test compiled it afresh in TCG.
	python3 -m compileall -q $(KSRC)/tools/net/ynl >/dev/null
	touch $@

regen: ksrc
	scripts/ynl-regen.sh $(KSRC) $(CURDIR)

regen-check: ksrc
	@scripts/regen-check.sh $(KSRC)

deps:
	scripts/install-deps.sh all

check:
	scripts/check.sh

# Builds its kernel once (about an hour on two cores), cached in
# /var/cache/gpuctl; see scripts/check-debug.sh.
check-debug:
	scripts/check-debug.sh

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

# How many cases notice a broken module, case by case; about an hour and a
# quarter, not part of make check. See scripts/teeth.sh.
teeth:
	scripts/teeth.sh

style: ksrc
	scripts/style.sh $(KSRC)

# DESTDIR stages the whole installation (a package build), where depmod is
# left to the package's postinst: a staged tree has no modules.order or
# modules.builtin to run it on. After an install to the running system,
# rebuild the initramfs (update-initramfs -u) so that reservations hold from
# boot.
install: module tools install-packaging
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools/gpuctl install

# The boot side: softdeps that load gpuctl before GPU drivers, the
# initramfs-tools hook that carries gpuctl.conf's reservations into the
# initramfs, the unit that applies gpuctl.conf once the system is up, and
# the udev rule that applies it again when an mdev parent registers.
# An existing gpuctl.conf is the administrator's and is left alone.
install-packaging:
	install -D -m 0644 packaging/modprobe.d/gpuctl.conf \
		$(DESTDIR)/etc/modprobe.d/gpuctl.conf
	install -D -m 0755 packaging/initramfs-tools/hooks/gpuctl \
		$(DESTDIR)/usr/share/initramfs-tools/hooks/gpuctl
	install -D -m 0644 packaging/systemd/gpuctl.service \
		$(DESTDIR)/lib/systemd/system/gpuctl.service
	install -D -m 0644 packaging/udev/90-gpuctl.rules \
		$(DESTDIR)/lib/udev/rules.d/90-gpuctl.rules
	test -e $(DESTDIR)/etc/gpuctl/gpuctl.conf || \
		install -D -m 0644 packaging/gpuctl.conf $(DESTDIR)/etc/gpuctl/gpuctl.conf

# CloudStack's KVM agent runs gpudiscovery.sh from kvm.scripts.dir; this
# one answers with gpuctl export cloudstack. It replaces the agent's own
# file, so a package diverts that first.
CLOUDSTACK_SCRIPTS ?= /usr/share/cloudstack-common/scripts/vm/hypervisor/kvm
install-cloudstack:
	install -D -m 0755 packaging/cloudstack/gpudiscovery.sh \
		$(DESTDIR)$(CLOUDSTACK_SCRIPTS)/gpudiscovery.sh

# The packages are built from a copy of the tree's files (tracked, and new
# ones git does not ignore) in build/deb/gpuctl/, so dpkg-buildpackage's
# output, which goes to the parent directory, lands in build/deb/ and the
# tree stays clean. Lintian's errors fail the target; see debian/rules.
deb:
	rm -rf build/deb
	mkdir -p build/deb/gpuctl
	git ls-files -z --cached --others --exclude-standard | \
		tar -c --null -T - | tar -x -C build/deb/gpuctl
	cd build/deb/gpuctl && dpkg-buildpackage -us -uc -b
	lintian --fail-on error \
		build/deb/gpuctl_*.changes

# Not part of make check: DKMS builds the module for both kernels in
# each guest, minutes under TCG. See scripts/check-packages.sh.
check-packages:
	scripts/check-packages.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C tools/gpuctl clean
	-$(MAKE) -C selftests clean
	rm -rf build
