// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl doctor, the boot's side: the vfio modules exist, gpuctl and its
 * softdeps are in the initramfs, every GPU's host driver waits for
 * gpuctl (a "pre:" softdep), and the module's signature suits the
 * Secure Boot state.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/gpuctl.h>

#include "doctor.h"
#include "gpuctl.h"

/* modprobe treats "-" and "_" in module names alike; so do we */
static void module_name(char *name)
{
	for (; *name; name++)
		if (*name == '-')
			*name = '_';
}

/*
 * Whether a line of modules.dep ("kernel/.../vfio-pci.ko: DEPS") or of
 * modules.builtin is module @name; only its first path counts
 */
static bool modules_line_is(const char *line, const char *name)
{
	size_t path_len = strcspn(line, ": \t\n"), len;
	const char *base = line + path_len;
	char mod[64];

	while (base > line && base[-1] != '/')
		base--;
	len = strcspn(base, ".: \t\n");
	if (len >= sizeof(mod))
		return false;
	memcpy(mod, base, len);
	mod[len] = '\0';
	module_name(mod);
	return !strcmp(mod, name);
}

/* Whether module @name is listed in /lib/modules/RELEASE/@file */
static bool modules_file_has(const struct doctor *dr, const char *file,
			     const char *name)
{
	char rel[PATH_MAX], path[PATH_MAX], line[512];
	bool found = false;
	FILE *fp;

	snprintf(rel, sizeof(rel), "/lib/modules/%s/%s", dr->release, file);
	fp = fopen(doctor_path(dr, rel, path, sizeof(path)), "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp))
		found = modules_line_is(line, name);
	fclose(fp);
	return found;
}

/**
 * doctor_vfio_modules() - the vfio modules are loaded or can be
 * @dr: the doctor
 * @c: the check
 *
 * gpuctl loads vfio-pci on demand, so a module that is only on disk is
 * as good as a loaded one.
 */
void doctor_vfio_modules(const struct doctor *dr, struct doctor_check *c)
{
	static const char *const mods[] = {
		"vfio", "vfio_iommu_type1", "vfio_pci_core", "vfio_pci",
	};
	char sys[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mods); i++) {
		snprintf(sys, sizeof(sys), "/sys/module/%s", mods[i]);
		if (doctor_exists(dr, sys)) {
			doctor_evidence(c, "%s: loaded", sys);
		} else if (modules_file_has(dr, "modules.dep", mods[i]) ||
			   modules_file_has(dr, "modules.builtin", mods[i])) {
			doctor_evidence(c, "%s: not loaded, in /lib/modules/%s",
					mods[i], dr->release);
		} else {
			doctor_evidence(c,
					"%s: not loaded, not in /lib/modules/%s/modules.dep or modules.builtin",
					mods[i], dr->release);
			doctor_set(c, DOCTOR_FAIL, "%s is missing", mods[i]);
			doctor_fix(c,
				   "%s: install a kernel built with CONFIG_VFIO_PCI and CONFIG_VFIO_IOMMU_TYPE1 (Debian's linux-image-amd64 is), or depmod -a %s",
				   mods[i], dr->release);
		}
	}
	doctor_set(c, DOCTOR_PASS, "vfio, vfio_iommu_type1, vfio_pci_core and vfio_pci are there");
}

/* What lsinitramfs lists that matters to gpuctl */
struct initramfs_scan {
	bool module;
	bool softdeps;
};

static int initramfs_line(void *ctx, const char *text)
{
	struct initramfs_scan *s = ctx;
	const char *base = strrchr(text, '/');

	base = base ? base + 1 : text;
	if (!strncmp(base, "gpuctl.ko", strlen("gpuctl.ko")))
		s->module = true;
	if (strstr(text, "etc/modprobe.d/gpuctl.conf"))
		s->softdeps = true;
	return 0;
}

/**
 * doctor_initramfs() - gpuctl and its softdeps are in the initramfs
 * @dr: the doctor
 * @c: the check
 *
 * lsinitramfs (initramfs-tools) lists the image, whichever compression it
 * has: reading the cpio archives here would mean carrying every
 * decompressor. Without an image, nothing in the initramfs can take a
 * GPU before gpuctl, so that is a warning only.
 */
void doctor_initramfs(const struct doctor *dr, struct doctor_check *c)
{
	char rel[PATH_MAX], path[PATH_MAX];
	struct initramfs_scan s = {};
	const char *argv[3];
	int ret;

	snprintf(rel, sizeof(rel), "/boot/initrd.img-%s", dr->release);
	doctor_path(dr, rel, path, sizeof(path));
	if (access(path, F_OK)) {
		doctor_set(c, DOCTOR_WARN, "no initramfs %s", rel);
		doctor_evidence(c, "%s: absent", rel);
		doctor_fix(c, "if this kernel boots with an initramfs: update-initramfs -c -k %s",
			   dr->release);
		return;
	}
	if (access(path, R_OK)) {
		doctor_set(c, DOCTOR_SKIP, "%s cannot be read: %s", rel,
			   strerror(errno));
		doctor_fix(c, "run gpuctl doctor as root");
		return;
	}
	argv[0] = "lsinitramfs";
	argv[1] = path;
	argv[2] = NULL;
	ret = doctor_run(argv, initramfs_line, &s);
	if (ret) {
		doctor_set(c, DOCTOR_SKIP, "lsinitramfs %s failed (%d)", rel,
			   ret);
		doctor_fix(c, "apt-get install initramfs-tools-core");
		return;
	}
	doctor_evidence(c, "lsinitramfs %s: %s, %s", rel,
			s.module ? "gpuctl.ko" : "no gpuctl.ko",
			s.softdeps ? "etc/modprobe.d/gpuctl.conf" :
			"no etc/modprobe.d/gpuctl.conf");
	if (!s.module) {
		doctor_set(c, DOCTOR_FAIL, "gpuctl.ko is not in %s", rel);
		doctor_fix(c,
			   "make install (the hook goes to /usr/share/initramfs-tools/hooks/gpuctl), then update-initramfs -u -k %s",
			   dr->release);
	}
	if (!s.softdeps) {
		doctor_set(c, DOCTOR_FAIL,
			   "%s has no gpuctl softdeps: GPU drivers may load before gpuctl",
			   rel);
		doctor_fix(c,
			   "install packaging/modprobe.d/gpuctl.conf as /etc/modprobe.d/gpuctl.conf, then update-initramfs -u -k %s",
			   dr->release);
	}
	doctor_set(c, DOCTOR_PASS, "gpuctl and its softdeps are in %s", rel);
}

/* The modules whose "softdep MODULE pre: ..." lines name gpuctl */
struct softdeps {
	char (*mods)[64];
	size_t n;
	char files[512];	/* where they were found, for the evidence */
};

static void softdeps_add(struct softdeps *s, const char *mod)
{
	char (*grown)[64];

	grown = realloc(s->mods, (s->n + 1) * sizeof(*s->mods));
	if (!grown)
		return;
	s->mods = grown;
	snprintf(s->mods[s->n], sizeof(s->mods[s->n]), "%s", mod);
	module_name(s->mods[s->n++]);
}

/* One modprobe.d line: "softdep MOD pre: A B post: C" */
static bool softdep_line(struct softdeps *s, char *line)
{
	char *save, *word, *mod;
	bool pre = false;

	word = strtok_r(line, " \t\n", &save);
	if (!word || strcmp(word, "softdep"))
		return false;
	mod = strtok_r(NULL, " \t\n", &save);
	if (!mod)
		return false;
	while ((word = strtok_r(NULL, " \t\n", &save))) {
		if (!strcmp(word, "pre:") || !strcmp(word, "post:")) {
			pre = !strcmp(word, "pre:");
		} else if (pre && !strcmp(word, "gpuctl")) {
			softdeps_add(s, mod);
			return true;
		}
	}
	return false;
}

/* The *.conf files of modprobe.d(5)'s directories */
static void softdeps_read(const struct doctor *dr, struct softdeps *s)
{
	static const char *const dirs[] = {
		"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
		"/lib/modprobe.d", "/usr/lib/modprobe.d",
	};
	char path[PATH_MAX], file[PATH_MAX + 256], line[512];
	bool any;
	size_t i, len, flen = 0;
	struct dirent *e;
	FILE *fp;
	DIR *d;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		d = opendir(doctor_path(dr, dirs[i], path, sizeof(path)));
		if (!d)
			continue;
		while ((e = readdir(d))) {
			len = strlen(e->d_name);
			if (len < 5 || strcmp(e->d_name + len - 5, ".conf"))
				continue;
			snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
			fp = fopen(file, "r");
			if (!fp)
				continue;
			any = false;
			while (fgets(line, sizeof(line), fp))
				any |= softdep_line(s, line);
			fclose(fp);
			if (any && flen < sizeof(s->files))
				flen += snprintf(s->files + flen,
						 sizeof(s->files) - flen,
						 "%s%s/%s", flen ? " " : "",
						 dirs[i], e->d_name);
		}
		closedir(d);
	}
}

static bool softdeps_has(const struct softdeps *s, const char *mod)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->mods[i], mod))
			return true;
	return false;
}

/* The module of the driver sysfs has @addr on; "" when built in or none */
static void driver_module(const struct doctor *dr, const char *addr,
			  char *buf, size_t size)
{
	char link[PATH_MAX];

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/driver/module",
		 addr);
	doctor_link_name(dr, link, buf, size);
}

/* A driver gpuctl binds: its device is reserved already, no host driver */
static bool vfio_driver(const char *driver)
{
	return !strcmp(driver, "vfio-pci") ||
	       !strcmp(driver, GPUCTL_VFIO_DRIVER) ||
	       !strcmp(driver, "pci-stub");
}

/**
 * doctor_softdeps() - every GPU's host driver loads after gpuctl
 * @dr: the doctor
 * @c: the check
 *
 * A "softdep DRIVER pre: gpuctl" makes every modprobe of the driver,
 * udev's in the initramfs included, load gpuctl first. A GPU or its
 * companion on a host driver without one may be taken before gpuctl can
 * reserve it at the next boot. No softdep at all is a fail once anything
 * is reserved (now, or in /etc/gpuctl/gpuctl.conf).
 */
void doctor_softdeps(const struct doctor *dr, struct doctor_check *c)
{
	const struct dev_info *d = dr->devs.v;
	struct softdeps s = {};
	bool reserved = false;
	char mod[64];
	size_t i;

	softdeps_read(dr, &s);
	doctor_evidence(c, "modprobe.d: %zu softdeps pre: gpuctl%s%s", s.n,
			s.n ? " in " : "", s.files);
	for (i = 0; i < dr->devs.n; i++) {
		reserved |= d[i].reserved;
		if ((d[i].role != GPUCTL_DEV_ROLE_GPU &&
		     d[i].role != GPUCTL_DEV_ROLE_COMPANION) ||
		    !d[i].has_driver || vfio_driver(d[i].driver))
			continue;
		driver_module(dr, d[i].address, mod, sizeof(mod));
		if (!mod[0]) {
			doctor_set(c, DOCTOR_WARN,
				   "%s is on %s, built into the kernel: it binds before any module",
				   d[i].address, d[i].driver);
			doctor_evidence(c, "%s: driver %s, built in",
					d[i].address, d[i].driver);
			doctor_fix(c, "%s: gpuctl reserve add %s take, after boot",
				   d[i].address, d[i].address);
			continue;
		}
		if (softdeps_has(&s, mod))
			continue;
		doctor_set(c, DOCTOR_WARN, "%s is on %s, which has no softdep pre: gpuctl",
			   d[i].address, mod);
		doctor_evidence(c, "%s: driver %s, module %s, no softdep %s pre: gpuctl",
				d[i].address, d[i].driver, mod, mod);
		doctor_fix(c,
			   "add \"softdep %s pre: gpuctl\" to /etc/modprobe.d/gpuctl.conf, then update-initramfs -u",
			   mod);
	}
	reserved |= doctor_exists(dr, "/etc/gpuctl/gpuctl.conf");
	if (!s.n) {
		doctor_set(c, reserved ? DOCTOR_FAIL : DOCTOR_WARN,
			   "no modprobe.d file has a softdep pre: gpuctl: GPU drivers may load before gpuctl");
		doctor_fix(c,
			   "install packaging/modprobe.d/gpuctl.conf as /etc/modprobe.d/gpuctl.conf (make install), then update-initramfs -u");
	}
	free(s.mods);
	doctor_set(c, DOCTOR_PASS, "every GPU's host driver loads after gpuctl");
}

#define EFI_GLOBAL_GUID "8be4df61-93ca-11d2-aa0d-e98c2b4b4d33"
#define SECURE_BOOT_VAR \
	"/sys/firmware/efi/efivars/SecureBoot-" EFI_GLOBAL_GUID

/* Secure Boot: 1 on, 0 off, -1 unknown; the evidence says which file */
static int secure_boot(const struct doctor *dr, struct doctor_check *c)
{
	char path[PATH_MAX];
	unsigned char var[8];
	ssize_t n;
	FILE *fp;

	if (!doctor_exists(dr, "/sys/firmware/efi")) {
		doctor_evidence(c, "/sys/firmware/efi: absent, not an EFI boot: no Secure Boot");
		return 0;
	}
	fp = fopen(doctor_path(dr, SECURE_BOOT_VAR, path, sizeof(path)), "r");
	if (!fp) {
		doctor_evidence(c, "%s: %s", SECURE_BOOT_VAR, strerror(errno));
		return -1;
	}
	/* efivarfs: 4 bytes of attributes, then the variable's one byte */
	n = fread(var, 1, sizeof(var), fp);
	fclose(fp);
	if (n != 5) {
		doctor_evidence(c, "%s: %zd bytes, expected 5", SECURE_BOOT_VAR,
				n);
		return -1;
	}
	doctor_evidence(c, "%s: %u (Secure Boot %s)", SECURE_BOOT_VAR, var[4],
			var[4] == 1 ? "on" : "off");
	return var[4] == 1;
}

/**
 * doctor_signature() - the module's signature suits Secure Boot
 * @dr: the doctor
 * @c: the check
 *
 * The kernel marks a module it loaded without verifying a signature with
 * the taint flag E in /sys/module/NAME/taint, on 6.1 and 6.12 alike and
 * readable by every user. Such a module is refused once Secure Boot's
 * lockdown enforces signatures, so an unsigned gpuctl on a Secure Boot
 * host fails; without Secure Boot it loads, tainting the kernel.
 */
void doctor_signature(const struct doctor *dr, struct doctor_check *c)
{
	const char *taint_file = "/sys/module/gpuctl/taint";
	char taint[32];
	int sb;

	sb = secure_boot(dr, c);
	if (doctor_read(dr, taint_file, taint, sizeof(taint)) < 0) {
		doctor_set(c, DOCTOR_SKIP,
			   "gpuctl is not loaded: its signature is checked when it loads");
		doctor_evidence(c, "%s: absent", taint_file);
		return;
	}
	doctor_evidence(c, "%s: %s", taint_file, taint[0] ? taint : "(none)");
	if (!strchr(taint, 'E')) {
		doctor_set(c, DOCTOR_PASS, "gpuctl is signed by a key the kernel trusts");
		return;
	}
	if (sb == 1) {
		doctor_set(c, DOCTOR_FAIL,
			   "gpuctl is not signed by a key the kernel trusts, and Secure Boot is on");
		doctor_fix(c,
			   "sign gpuctl.ko with a key enrolled as a MOK: mokutil --import KEY.der (reboot to enroll), then /usr/src/linux-headers-%s/scripts/sign-file sha256 KEY.priv KEY.der gpuctl.ko; DKMS does so with its own key",
			   dr->release);
		return;
	}
	if (sb < 0) {
		doctor_set(c, DOCTOR_WARN,
			   "gpuctl is not signed by a key the kernel trusts, and the Secure Boot state is unknown");
		doctor_fix(c,
			   "mokutil --sb-state; if Secure Boot is on, sign gpuctl.ko with an enrolled MOK key");
		return;
	}
	doctor_set(c, DOCTOR_PASS,
		   "gpuctl is unsigned, which the kernel allows without Secure Boot");
}
