// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl doctor, gpuctl's own checks: the module answers, every reserved
 * device is on its rule's VFIO driver in sysfs (not only in the module's
 * word) and no other device is on gpuctl's, the rules and the ledger
 * hold nothing that needs a hand, every open device is its allocation's
 * VM's, and which allocations could live-migrate.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "doctor.h"
#include "gpuctl.h"
#include "holders.h"

/**
 * doctor_module() - the gpuctl module is loaded and answers
 * @dr: the doctor
 * @c: the check
 */
void doctor_module(const struct doctor *dr, struct doctor_check *c)
{
	if (!dr->module) {
		doctor_set(c, DOCTOR_FAIL,
			   "the gpuctl module is not loaded");
		doctor_evidence(c, "/sys/module/gpuctl: %s",
				doctor_exists(dr, "/sys/module/gpuctl") ?
				"present, but the gpuctl netlink family does not answer" :
				"absent");
		doctor_fix(c, "modprobe gpuctl");
		return;
	}
	doctor_set(c, DOCTOR_PASS, "gpuctl is loaded and tracks %zu devices",
		   dr->devs.n);
	doctor_evidence(c, "generic netlink family \"gpuctl\": %zu devices",
			dr->devs.n);
}

/* The driver sysfs has @addr on, "" when none */
static void sysfs_driver(const struct doctor *dr, const char *addr,
			 char *buf, size_t size)
{
	char link[PATH_MAX];

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/driver", addr);
	doctor_link_name(dr, link, buf, size);
}

/* The driver the rule that reserves @d names; NULL when rules are not read */
static const char *reserving_driver(const struct doctor *dr,
				    const struct dev_info *d)
{
	const struct rule_info *r = dr->rules.v;
	size_t i;

	if (!dr->ledger || !d->has_rule)
		return NULL;
	for (i = 0; i < dr->rules.n; i++)
		if (r[i].id == d->rule)
			return r[i].driver[0] ? r[i].driver :
			       RULE_DRIVER_DEFAULT;
	return NULL;
}

/*
 * A device that no rule reserves, bound to gpuctl-vfio-pci: the rule that
 * put it there went with a module unloaded while it held it, and
 * driver_override, which the kernel keeps, bound it again when the module
 * came back. No host driver takes it until a rule releases it.
 */
static void unreserved_on_gpuctl(const struct doctor *dr,
				 struct doctor_check *c, const char *addr)
{
	char drv[64];

	sysfs_driver(dr, addr, drv, sizeof(drv));
	if (strcmp(drv, GPUCTL_VFIO_DRIVER))
		return;
	doctor_set(c, DOCTOR_WARN,
		   "%s is on " GPUCTL_VFIO_DRIVER " but no rule reserves it",
		   addr);
	doctor_evidence(c, "/sys/bus/pci/devices/%s/driver: %s (no rule)",
			addr, drv);
	doctor_fix(c,
		   "%s: gpuctl reserve add %s driver %s, then gpuctl reserve del %s: the rule's end gives it back to its host driver",
		   addr, addr, GPUCTL_VFIO_DRIVER, addr);
}

/**
 * doctor_reserved() - each reserved device is on its VFIO driver
 * @dr: the doctor
 * @c: the check
 *
 * The driver is read from sysfs, so that a module whose state lags shows.
 */
void doctor_reserved(const struct doctor *dr, struct doctor_check *c)
{
	const struct dev_info *d = dr->devs.v;
	char drv[64];
	const char *want;
	size_t i, n = 0;

	if (!dr->module) {
		doctor_set(c, DOCTOR_SKIP, "needs the gpuctl module");
		doctor_fix(c, "modprobe gpuctl");
		return;
	}
	for (i = 0; i < dr->devs.n; i++) {
		if (!d[i].reserved) {
			unreserved_on_gpuctl(dr, c, d[i].address);
			continue;
		}
		n++;
		sysfs_driver(dr, d[i].address, drv, sizeof(drv));
		want = reserving_driver(dr, &d[i]);
		doctor_evidence(c,
				"/sys/bus/pci/devices/%s/driver: %s (rule %u%s%s, state %s)",
				d[i].address, drv[0] ? drv : "none", d[i].rule,
				want ? ", driver " : "", want ? want : "",
				state_name(d[i].state));
		if (d[i].state == GPUCTL_DEV_STATE_RESERVED &&
		    (want ? !strcmp(drv, want) : drv[0] != '\0'))
			continue;
		doctor_set(c, DOCTOR_FAIL, "%s is reserved but on %s, not %s",
			   d[i].address, drv[0] ? drv : "no driver",
			   want ? want : "its VFIO driver");
		if (d[i].has_state_reason)
			doctor_evidence(c, "%s: %s: %s", d[i].address,
					state_name(d[i].state),
					d[i].state_reason);
		if (d[i].state == GPUCTL_DEV_STATE_HELD)
			doctor_fix(c,
				   "%s: gpuctl reserve del %u, then gpuctl reserve add %s take (or put gpuctl in the initramfs: update-initramfs -u, and reboot)",
				   d[i].address, d[i].rule, d[i].address);
		else
			doctor_fix(c,
				   "%s: see the reason above; gpuctl reserve show %u",
				   d[i].address, d[i].rule);
	}
	if (!dr->ledger)
		doctor_evidence(c,
				"rules not read (%s): the driver is checked against the module's state only",
				strerror(-dr->ledger_err));
	doctor_set(c, DOCTOR_PASS, "%zu reserved devices, each on its VFIO driver",
		   n);
}

/*
 * Whether the module and its ledger could be read; else the check skips,
 * saying that @what needs the module or root.
 */
static bool doctor_ledger_read(const struct doctor *dr, struct doctor_check *c,
			       const char *what)
{
	if (!dr->module) {
		doctor_set(c, DOCTOR_SKIP, "needs the gpuctl module");
		doctor_fix(c, "modprobe gpuctl");
		return false;
	}
	if (!dr->ledger) {
		doctor_set(c, DOCTOR_SKIP,
			   "%s need root (CAP_SYS_ADMIN) to read", what);
		doctor_evidence(c, "rule-get dump: %s",
				strerror(-dr->ledger_err));
		doctor_fix(c, "run gpuctl doctor as root");
		return false;
	}
	return true;
}

/**
 * doctor_ledger() - the rules and the ledger need no attention
 * @dr: the doctor
 * @c: the check
 *
 * A rule that reserves nothing or carries the module's warnings, and an
 * allocation that lost a device, are warnings: each may be intended.
 */
void doctor_ledger(const struct doctor *dr, struct doctor_check *c)
{
	const struct alloc_info *al = dr->allocs.v;
	const struct rule_info *r = dr->rules.v;
	u32 states[GPUCTL_ALLOC_STATE_MAX + 1] = {};
	size_t i, w;

	if (!doctor_ledger_read(dr, c, "the rules and the ledger"))
		return;
	for (i = 0; i < dr->rules.n; i++) {
		doctor_evidence(c, "rule %u: %s driver %s, %zu devices",
				r[i].id, r[i].match,
				r[i].driver[0] ? r[i].driver : RULE_DRIVER_DEFAULT,
				r[i].ndevs);
		for (w = 0; w < r[i].nwarnings; w++) {
			doctor_set(c, DOCTOR_WARN, "rule %u: %s", r[i].id,
				   r[i].warnings[w]);
			doctor_evidence(c, "rule %u: warning: %s", r[i].id,
					r[i].warnings[w]);
		}
		if (!r[i].ndevs) {
			doctor_set(c, DOCTOR_WARN, "rule %u (%s) reserves no device",
				   r[i].id, r[i].match);
			doctor_fix(c,
				   "rule %u: check its match against gpuctl dev show, or gpuctl reserve del %u",
				   r[i].id, r[i].id);
		}
	}
	for (i = 0; i < dr->allocs.n; i++) {
		if (al[i].state <= GPUCTL_ALLOC_STATE_MAX)
			states[al[i].state]++;
		if (al[i].state != GPUCTL_ALLOC_STATE_LOST)
			continue;
		doctor_set(c, DOCTOR_WARN, "allocation %u of %s lost a device",
			   al[i].id, al[i].owner);
		doctor_evidence(c, "allocation %u: lost%s%s", al[i].id,
				al[i].has_state_reason ? ": " : "",
				al[i].has_state_reason ? al[i].state_reason : "");
		doctor_fix(c, "gpuctl alloc del %u", al[i].id);
	}
	doctor_evidence(c, "ledger: %zu allocations (%u idle, %u running, %u lost)",
			dr->allocs.n, states[GPUCTL_ALLOC_STATE_IDLE],
			states[GPUCTL_ALLOC_STATE_RUNNING],
			states[GPUCTL_ALLOC_STATE_LOST]);
	doctor_set(c, DOCTOR_PASS, "%zu rules, %zu allocations", dr->rules.n,
		   dr->allocs.n);
}

/* "qemu-system-x86[1234] (guest vm-one)", or "an unknown process" */
static void holder_name(const struct dev_info *d, char *buf, size_t size)
{
	if (!d->holder_pid) {
		snprintf(buf, size, "an unknown process");
		return;
	}
	snprintf(buf, size, "%s[%u]%s%s%s",
		 d->has_holder_comm ? d->holder_comm : "?", d->holder_pid,
		 d->holder_vm[0] ? " (guest " : "", d->holder_vm,
		 d->holder_vm[0] ? ")" : "");
}

/**
 * doctor_holders() - every open device is held by its allocation's VM
 * @dr: the doctor
 * @c: the check
 *
 * A device a VM holds without an allocation reads free to the cloud
 * stack while it is in use; one held by a VM that is not its
 * allocation's is a VM on another's GPU. The holders the module does not
 * know (on a VFIO driver other than gpuctl's) come from /proc
 * (holders.c); the match is the module's, or the tool's then.
 */
void doctor_holders(const struct doctor *dr, struct doctor_check *c)
{
	const struct dev_info *d = dr->devs.v;
	char who[sizeof(d->holder_comm) + HOLDER_VM_BUFSZ + 32];
	size_t i, n = 0;

	if (!doctor_ledger_read(dr, c, "the holders and the ledger"))
		return;
	for (i = 0; i < dr->devs.n; i++) {
		if (!d[i].has_holder)
			continue;
		n++;
		holder_name(&d[i], who, sizeof(who));
		doctor_evidence(c, "%s: open by %s, %s", d[i].address, who,
				open_match_name(d[i].open_match));
		if (d[i].open_match == GPUCTL_OPEN_MATCH_UNALLOCATED) {
			doctor_set(c, DOCTOR_WARN,
				   "%s is open by %s, but no allocation has it",
				   d[i].address, who);
			doctor_fix(c,
				   "gpuctl alloc add owner UUID dev %s, for the VM that has it",
				   d[i].address);
		} else if (d[i].open_match == GPUCTL_OPEN_MATCH_OTHER ||
			   d[i].open_match == HOLDER_MATCH_MISMATCH) {
			doctor_set(c, DOCTOR_WARN,
				   "%s of allocation %u is open by %s, not by its VM",
				   d[i].address, d[i].allocation, who);
			doctor_fix(c,
				   "gpuctl alloc show %u: stop the VM that is not its own",
				   d[i].allocation);
		}
	}
	doctor_set(c, DOCTOR_PASS, "%zu devices open, each by its allocation's VM",
		   n);
}

/**
 * doctor_migration() - which allocations' VMs could live-migrate
 * @dr: the doctor
 * @c: the check
 *
 * An allocation whose devices cannot move their state (no VFIO driver's
 * stop-copy, kmod/migration.c) is no fault: a whole GPU on vfio-pci is
 * the common case. So it passes, and names those that cannot, for the
 * operator who is about to tell the cloud stack that they can.
 */
void doctor_migration(const struct doctor *dr, struct doctor_check *c)
{
	const struct alloc_info *al = dr->allocs.v;
	size_t i, b, n = 0, len = 0;
	char names[96] = "", line[512];

	if (!doctor_ledger_read(dr, c, "the ledger"))
		return;
	for (i = 0; i < dr->allocs.n; i++) {
		if (!al[i].migration_read)
			continue;
		if (!al[i].nblockers) {
			doctor_evidence(c, "alloc %u: can live-migrate",
					al[i].id);
			continue;
		}
		line[0] = '\0';
		for (b = 0; b < al[i].nblockers; b++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 " %s", al[i].blockers[b]);
		doctor_evidence(c, "alloc %u: cannot live-migrate:%s",
				al[i].id, line);
		if (len < sizeof(names))
			len += snprintf(names + len, sizeof(names) - len,
					"%s%u", n ? ", " : "", al[i].id);
		n++;
	}
	if (n)
		doctor_set(c, DOCTOR_PASS,
			   "%zu of %zu allocations cannot live-migrate: %s",
			   n, dr->allocs.n, names);
	else if (dr->allocs.n)
		doctor_set(c, DOCTOR_PASS,
			   "all %zu allocations can live-migrate",
			   dr->allocs.n);
	else
		doctor_set(c, DOCTOR_PASS, "no allocations");
}
