// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl doctor, the kernel's side: an IOMMU is on, interrupts are
 * remapped, the command line does not turn either off, and no GPU shares
 * its IOMMU group with a device of another slot. Everything here is read
 * from files every user may read.
 */

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "doctor.h"
#include "gpuctl.h"

/* The entries of a directory, as "a b c" in @names; -1 when it cannot be read */
static int dir_list(const struct doctor *dr, const char *dir, char *names,
		    size_t size)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t len = 0;
	int n = 0;
	DIR *d;

	names[0] = '\0';
	d = opendir(doctor_path(dr, dir, path, sizeof(path)));
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (len < size)
			len += snprintf(names + len, size - len, "%s%s",
					len ? " " : "", e->d_name);
	}
	closedir(d);
	return n;
}

/**
 * doctor_iommu() - an IOMMU is on
 * @dr: the doctor
 * @c: the check
 *
 * The fix depends on what the firmware describes: a DMAR table (Intel
 * VT-d) or an IVRS table (AMD-Vi) that the kernel did not use is a
 * command-line matter; neither is one of the firmware setup.
 */
void doctor_iommu(const struct doctor *dr, struct doctor_check *c)
{
	bool dmar, ivrs;
	char names[256];
	int units, groups;

	units = dir_list(dr, "/sys/class/iommu", names, sizeof(names));
	doctor_evidence(c, "/sys/class/iommu: %s",
			units > 0 ? names : "empty");
	groups = dir_list(dr, "/sys/kernel/iommu_groups", names, 0);
	doctor_evidence(c, "/sys/kernel/iommu_groups: %d groups",
			groups > 0 ? groups : 0);
	dmar = doctor_exists(dr, "/sys/firmware/acpi/tables/DMAR");
	ivrs = doctor_exists(dr, "/sys/firmware/acpi/tables/IVRS");
	doctor_evidence(c, "/sys/firmware/acpi/tables: %s",
			dmar && ivrs ? "DMAR, IVRS" : dmar ? "DMAR" :
			ivrs ? "IVRS" : "no DMAR, no IVRS");

	if (units > 0 && groups > 0) {
		doctor_set(c, DOCTOR_PASS, "the IOMMU is on: %d units, %d groups",
			   units, groups);
		return;
	}
	doctor_set(c, DOCTOR_FAIL,
		   "no IOMMU is on: devices have no IOMMU groups, VFIO cannot use them");
	if (dmar)
		doctor_fix(c,
			   "add intel_iommu=on iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot");
	if (ivrs)
		doctor_fix(c,
			   "add amd_iommu=on iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot");
	if (!dmar && !ivrs)
		doctor_fix(c,
			   "the firmware describes no IOMMU (no DMAR or IVRS ACPI table): enable VT-d (Intel) or AMD-Vi/IOMMU (AMD) in the firmware setup, then add intel_iommu=on iommu=pt or amd_iommu=on iommu=pt to the kernel command line");
}

/* The first interrupt chip of /proc/interrupts whose name starts "IR-" */
static bool remapped_chip(const struct doctor *dr, char *chip, size_t size)
{
	char path[PATH_MAX], line[512], *p;
	bool found = false;
	FILE *fp;

	fp = fopen(doctor_path(dr, "/proc/interrupts", path, sizeof(path)),
		   "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		for (p = strstr(line, " IR-"); p && !found;
		     p = strstr(p + 1, " IR-")) {
			found = true;
			snprintf(chip, size, "%.*s", (int)strcspn(p + 1, " \t\n"),
				 p + 1);
		}
	}
	fclose(fp);
	return found;
}

/**
 * doctor_intremap() - interrupts are remapped
 * @dr: the doctor
 * @c: the check
 *
 * /proc/interrupts names each interrupt's chip; remapped ones are "IR-"
 * chips (IR-IO-APIC, IR-PCI-MSI...) on 6.1 and 6.12 alike, and the file
 * is readable by every user, unlike the kernel log that says so at boot.
 * Without remapping vfio_iommu_type1 refuses to attach a group unless
 * allow_unsafe_interrupts is set.
 */
void doctor_intremap(const struct doctor *dr, struct doctor_check *c)
{
	const char *param =
		"/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts";
	char chip[64], unsafe[8];

	if (remapped_chip(dr, chip, sizeof(chip))) {
		doctor_set(c, DOCTOR_PASS, "interrupts are remapped");
		doctor_evidence(c, "/proc/interrupts: %s", chip);
		return;
	}
	doctor_evidence(c, "/proc/interrupts: no IR- interrupt chip");
	if (doctor_read(dr, param, unsafe, sizeof(unsafe)) > 0)
		doctor_evidence(c, "%s: %s", param, unsafe);
	else
		unsafe[0] = '\0';
	if (unsafe[0] == 'Y' || unsafe[0] == '1') {
		doctor_set(c, DOCTOR_WARN,
			   "interrupts are not remapped; vfio_iommu_type1 allows unsafe interrupts");
		doctor_fix(c,
			   "a guest can inject interrupts into the host: enable interrupt remapping (see the fixes above) and drop allow_unsafe_interrupts");
		return;
	}
	doctor_set(c, DOCTOR_FAIL,
		   "interrupts are not remapped: vfio_iommu_type1 refuses to attach devices");
	doctor_fix(c,
		   "turn the IOMMU on (see iommu) and remove intremap=off or nointremap from the kernel command line; enable x2APIC and interrupt remapping in the firmware setup");
	doctor_fix(c,
		   "or, trusting every guest, options vfio_iommu_type1 allow_unsafe_interrupts=1 in /etc/modprobe.d/");
}

/* What a command-line parameter does to passthrough: its severity and fix */
static const struct {
	const char *param;	/* the word, or its start up to and with '=' */
	enum doctor_status status;
	const char *fix;
} cmdline_params[] = {
	{ "intel_iommu=off", DOCTOR_FAIL, "remove intel_iommu=off" },
	{ "amd_iommu=off", DOCTOR_FAIL, "remove amd_iommu=off" },
	{ "iommu=off", DOCTOR_FAIL, "remove iommu=off" },
	{ "intremap=off", DOCTOR_FAIL, "remove intremap=off" },
	{ "nointremap", DOCTOR_FAIL, "remove nointremap" },
	{ "vfio_iommu_type1.allow_unsafe_interrupts=", DOCTOR_WARN,
	  "remove vfio_iommu_type1.allow_unsafe_interrupts= once interrupts are remapped" },
	{ "vfio-pci.ids=", DOCTOR_WARN,
	  "remove vfio-pci.ids=: it claims every device of its ids before gpuctl's rules" },
	{ "vfio_pci.ids=", DOCTOR_WARN,
	  "remove vfio_pci.ids=: it claims every device of its ids before gpuctl's rules" },
	{ "pcie_acs_override=", DOCTOR_WARN,
	  "remove pcie_acs_override=: it fakes an isolation the hardware lacks" },
	/* informational: they matter, and are fine */
	{ "intel_iommu=", DOCTOR_PASS, NULL },
	{ "amd_iommu=", DOCTOR_PASS, NULL },
	{ "iommu=", DOCTOR_PASS, NULL },
	{ "intremap=", DOCTOR_PASS, NULL },
	{ "gpuctl.reserve=", DOCTOR_PASS, NULL },
	{ "modprobe.blacklist=", DOCTOR_PASS, NULL },
};

static bool param_matches(const char *word, size_t len, const char *param)
{
	size_t plen = strlen(param);

	if (param[plen - 1] == '=')
		return len >= plen && !strncmp(word, param, plen);
	return len == plen && !strncmp(word, param, plen);
}

/**
 * doctor_cmdline() - the kernel command line turns nothing off
 * @dr: the doctor
 * @c: the check
 */
void doctor_cmdline(const struct doctor *dr, struct doctor_check *c)
{
	char line[4096], seen[1024];
	size_t len, nseen = 0, i;
	const char *w;

	seen[0] = '\0';
	if (doctor_read(dr, "/proc/cmdline", line, sizeof(line)) < 0) {
		doctor_set(c, DOCTOR_SKIP, "/proc/cmdline cannot be read");
		return;
	}
	for (w = line; *w; w += len) {
		w += strspn(w, " \t");
		len = strcspn(w, " \t");
		if (!len)
			break;
		for (i = 0; i < ARRAY_SIZE(cmdline_params); i++) {
			if (!param_matches(w, len, cmdline_params[i].param))
				continue;
			if (nseen < sizeof(seen))
				nseen += snprintf(seen + nseen,
						  sizeof(seen) - nseen, "%s%.*s",
						  nseen ? " " : "", (int)len, w);
			if (cmdline_params[i].fix) {
				doctor_set(c, cmdline_params[i].status,
					   "the kernel command line has %.*s",
					   (int)len, w);
				doctor_fix(c,
					   "%s (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)",
					   cmdline_params[i].fix);
			}
			break;
		}
	}
	doctor_evidence(c, "/proc/cmdline: %s", nseen ? seen :
			"no intel_iommu=, amd_iommu=, iommu=, intremap=, vfio or gpuctl parameter");
	doctor_set(c, DOCTOR_PASS,
		   "nothing on the kernel command line works against passthrough");
}

/* The first tracked device of @role in IOMMU group @group, or NULL */
static const struct dev_info *group_member(const struct doctor *dr, u32 group,
					   u32 role)
{
	const struct dev_info *d = dr->devs.v;
	size_t i;

	for (i = 0; i < dr->devs.n; i++)
		if (d[i].has_iommu_group && d[i].iommu_group == group &&
		    d[i].role == role)
			return &d[i];
	return NULL;
}

/* @d is the first GPU of its group in the dump: each group is told once */
static bool group_first_gpu(const struct doctor *dr, const struct dev_info *d)
{
	return group_member(dr, d->iommu_group, GPUCTL_DEV_ROLE_GPU) == d;
}

/* A GPU of group @group is reserved: a foreign member then blocks VFIO */
static bool group_reserved(const struct doctor *dr, u32 group)
{
	const struct dev_info *d = dr->devs.v;
	size_t i;

	for (i = 0; i < dr->devs.n; i++)
		if (d[i].has_iommu_group && d[i].iommu_group == group &&
		    d[i].role == GPUCTL_DEV_ROLE_GPU && d[i].reserved)
			return true;
	return false;
}

static void group_foreign(const struct doctor *dr, struct doctor_check *c,
			  const struct dev_info *gpu)
{
	const struct dev_info *d = dr->devs.v, *bridge;
	bool reserved = group_reserved(dr, gpu->iommu_group);
	u32 group = gpu->iommu_group;
	size_t i;

	bridge = group_member(dr, group, GPUCTL_DEV_ROLE_BRIDGE);
	for (i = 0; i < dr->devs.n; i++) {
		if (!d[i].has_iommu_group || d[i].iommu_group != group ||
		    d[i].role != GPUCTL_DEV_ROLE_FOREIGN)
			continue;
		doctor_set(c, reserved ? DOCTOR_FAIL : DOCTOR_WARN,
			   "group %u of GPU %s has a foreign member, %s",
			   group, gpu->address, d[i].address);
		doctor_evidence(c, "group %u: %s (foreign, %s) shares it with GPU %s",
				group, d[i].address,
				d[i].has_driver ? d[i].driver : "no driver",
				gpu->address);
		if (bridge)
			doctor_fix(c,
				   "group %u: the PCI bridge %s gives no ACS isolation between the devices behind it: put GPU %s in a slot of its own root port, or give %s to the same VM (gpuctl reserve add %s take)",
				   group, bridge->address, gpu->address,
				   d[i].address, d[i].address);
		else
			doctor_fix(c,
				   "group %u: the ports above GPU %s give no ACS isolation from %s (lspci -vvv | grep ACSCtl): use a slot of its own root port, or give %s to the same VM (gpuctl reserve add %s take)",
				   group, gpu->address, d[i].address,
				   d[i].address, d[i].address);
	}
}

/**
 * doctor_groups() - no GPU shares its IOMMU group with a foreign device
 * @dr: the doctor
 * @c: the check
 *
 * A foreign member is a fail for a reserved GPU, whose group VFIO cannot
 * use while the member is on a host driver, and a warning for the others.
 */
void doctor_groups(const struct doctor *dr, struct doctor_check *c)
{
	const struct dev_info *d = dr->devs.v;
	size_t i, gpus = 0, grouped = 0;

	if (!dr->module) {
		doctor_set(c, DOCTOR_SKIP, "needs the gpuctl module");
		doctor_fix(c, "modprobe gpuctl");
		return;
	}
	for (i = 0; i < dr->devs.n; i++) {
		if (d[i].role != GPUCTL_DEV_ROLE_GPU)
			continue;
		gpus++;
		if (!d[i].has_iommu_group)
			continue;
		grouped++;
		if (group_first_gpu(dr, &d[i]))
			group_foreign(dr, c, &d[i]);
	}
	doctor_evidence(c, "gpuctl dev show: %zu GPUs, %zu in IOMMU groups",
			gpus, grouped);
	if (gpus && !grouped) {
		doctor_set(c, DOCTOR_SKIP, "no GPU is in an IOMMU group (see iommu)");
		return;
	}
	doctor_set(c, DOCTOR_PASS, "no GPU shares its IOMMU group with a foreign device");
}
