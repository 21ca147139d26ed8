// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: dev-set enabling and disabling an SR-IOV PF's VFs, racing
 * allocations of those VFs and dumps.
 *
 * Rules name the nvme PF 11:00.0 of topology full (held by nvme, so
 * tracked) and its first two VFs (reserved on vfio-pci as they appear);
 * sriov_drivers_autoprobe is 0, so no host driver takes a VF. For
 * GPUCTL_STRESS_SECONDS one worker sets the PF to 2 VFs and to 0 with
 * dev-set, one worker per VF makes and deletes an allocation of it, and
 * one dumps the allocations and devices.
 *
 * Invariants:
 * - dev-set succeeds, or fails with EBUSY naming a VF that is allocated:
 *   nothing here opens one, and one worker alone changes the PF;
 * - alloc-new of a VF succeeds, or fails with ENODEV (the VF is not
 *   there) or EBUSY (not reserved yet, or its PF is changing its VFs);
 * - no allocation ever becomes lost: a VF never goes while allocated,
 *   because dev-set refuses, and no allocation can take a VF while a
 *   dev-set runs; alloc-del of each allocation succeeds;
 * - no device is in two allocations; afterwards the inventory matches
 *   sysfs and the kernel logged no WARN, BUG, KASAN or lockdep report.
 * Then the allocations and rules go, the VFs are disabled and the PCI
 * state is the one found at the start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "stress_fixture.h"
#include "testlib.h"

#define SYS_PF		"/sys/bus/pci/devices/0000:11:00.0/"
#define PF		"0000:11:00.0"
#define NVFS		2

static const char *const vfs[NVFS] = { "0000:11:00.1", "0000:11:00.2" };

/* A number from sysfs, -1 when it cannot be read. */
static int sysfs_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Sets the PF to 2 VFs and to 0, over and over. */
static void loop_dev_set(struct stress *s, void *arg)
{
	struct stress_op *op[2];
	struct nlc c = { 0 };
	long unloads = -1;
	int want = NVFS, ret;

	op[0] = stress_op(s, "dev-set %s 0", PF);
	op[1] = stress_op(s, "dev-set %s %d", PF, NVFS);
	while (stress_nl_ready(s, &c, &unloads)) {
		ret = nlc_dev_set(&c, PF, want);
		stress_count(op[!!want], ret);
		if (ret && (ret != -EBUSY || strncmp(c.extack, "VF ", 3) ||
			    !strstr(c.extack, " is allocated to ")))
			stress_violation(s, "dev-set %s %d: %s '%s'", PF, want,
					 strerror(-ret), c.extack);
		want = want ? 0 : NVFS;
		stress_pause(20);
	}
	nlc_close(&c);
}

/* Allocates one VF and deletes the allocation, over and over. */
static void loop_alloc(struct stress *s, void *arg)
{
	const char *vf = arg;
	struct nlc_alloc_req req = { .owner = "57e55000-0000-4000-8000-0000000000f1" };
	struct stress_op *op_new, *op_del;
	struct nlc c = { 0 };
	struct nlc_alloc a;
	long unloads = -1;
	int ret;

	req.devices[req.ndevices++] = vf;
	op_new = stress_op(s, "alloc-new %s", vf);
	op_del = stress_op(s, "alloc-del %s", vf);
	while (stress_nl_ready(s, &c, &unloads)) {
		ret = nlc_alloc_new(&c, &req, &a);
		stress_count(op_new, ret);
		if (ret) {
			if (ret != -ENODEV && ret != -EBUSY)
				stress_violation(s, "alloc-new %s: %s '%s'", vf,
						 strerror(-ret), c.extack);
			stress_pause(10);
			continue;
		}
		stress_pause(20);
		ret = nlc_alloc_get(&c, a.id, &a);
		if (!ret && a.state == GPUCTL_ALLOC_STATE_LOST)
			stress_violation(s, "allocation %u of %s lost: its VF went while allocated",
					 a.id, vf);
		ret = ret ?: nlc_alloc_del(&c, &a.id, NULL);
		stress_count(op_del, ret);
		if (ret)
			stress_violation(s, "alloc-get/del %u of %s: %s '%s'",
					 a.id, vf, strerror(-ret), c.extack);
		/* Leaves dev-set a window with nothing allocated. */
		stress_pause(40);
	}
	nlc_close(&c);
}

/* Dumps the ledger: nothing lost, no device in two allocations. */
static void loop_dump(struct stress *s, void *arg)
{
	struct stress_op *op = stress_op(s, "alloc-dump");
	struct nlc_dump_info info;
	struct nlc_alloc *allocs;
	struct nlc c = { 0 };
	long unloads = -1;
	int i, j, n, ret;

	while (stress_nl_ready(s, &c, &unloads)) {
		ret = nlc_alloc_dump(&c, &allocs, &n, &info);
		stress_count(op, ret);
		if (ret) {
			stress_violation(s, "alloc-dump: %s '%s'",
					 strerror(-ret), c.extack);
			continue;
		}
		/* The ledger changed under a dump of several datagrams. */
		if (info.intr) {
			free(allocs);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (allocs[i].state == GPUCTL_ALLOC_STATE_LOST)
				stress_violation(s, "allocation %u (%s) is lost",
						 allocs[i].id,
						 allocs[i].devices[0]);
			for (j = 0; j < i; j++)
				if (!strcmp(allocs[i].devices[0],
					    allocs[j].devices[0]))
					stress_violation(s, "%s in allocations %u and %u",
							 allocs[i].devices[0],
							 allocs[j].id,
							 allocs[i].id);
		}
		free(allocs);
		stress_pause(10);
	}
	nlc_close(&c);
}

TEST_F_TIMEOUT(stress, dev_set_vs_alloc, 900)
{
	struct stress *s = self->s;
	int seconds = stress_seconds();
	struct nlc_rule r;
	int i;

	ASSERT_LE(NVFS, sysfs_int(SYS_PF "sriov_totalvfs"))
		TH_LOG("no SR-IOV PF %s with %d VFs", PF, NVFS);
	ASSERT_EQ(0, sysfs_int(SYS_PF "sriov_numvfs"));
	ASSERT_EQ(0, stress_write(SYS_PF "sriov_drivers_autoprobe", "0"));
	ASSERT_EQ(0, nlc_rule_new(&self->e.c, PF, NULL, false, false, &r))
		TH_LOG("rule-new %s: '%s'", PF, self->e.c.extack);
	for (i = 0; i < NVFS; i++)
		ASSERT_EQ(0, nlc_rule_new(&self->e.c, vfs[i], NULL, false,
					  false, &r))
			TH_LOG("rule-new of VF %d: '%s'", i + 1,
			       self->e.c.extack);

	TH_LOG("%d s: dev-set %s 0/%d racing alloc-new/alloc-del of its VFs and dumps",
	       seconds, PF, NVFS);
	ASSERT_LT(0, stress_spawn(s, "dev-set", loop_dev_set, NULL));
	for (i = 0; i < NVFS; i++)
		ASSERT_LT(0, stress_spawn(s, vfs[i], loop_alloc,
					  (void *)vfs[i]));
	ASSERT_LT(0, stress_spawn(s, "dump", loop_dump, NULL));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "dev-set " PF " 0", 0));
	EXPECT_LT(0, stress_count_of(s, "dev-set " PF " 2", 0));
	EXPECT_LT(0, stress_count_of(s, "alloc-new 0000:11:00.1", 0) +
		     stress_count_of(s, "alloc-new 0000:11:00.2", 0));
	/*
	 * Without the rules the PF and its VFs are no units: the inventory
	 * must match the sysfs model of GPUs and their groups again. The VFs
	 * go with sysfs then: once the rules are gone, dev-set cannot.
	 */
	EXPECT_EQ(0, stress_clear_all(&self->e.c));
	stress_expect_inventory(_metadata, &self->e, 10000, true);
	EXPECT_EQ(0, stress_write(SYS_PF "sriov_numvfs", "0"));
	EXPECT_EQ(0, stress_write(SYS_PF "sriov_drivers_autoprobe", "1"));
	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
