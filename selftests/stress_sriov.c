// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: dev-set enabling and disabling an SR-IOV PF's VFs, racing
 * allocations of those VFs, dumps, bus rescans and the removal of the PF.
 *
 * dev_set_vs_alloc: rules name the nvme PF 11:00.0 of topology full (held
 * by nvme, so tracked) and its first two VFs (reserved on vfio-pci as they
 * appear); sriov_drivers_autoprobe is 0, so no host driver takes a VF. For
 * GPUCTL_STRESS_SECONDS one worker sets the PF to 3 VFs and to 0 with
 * dev-set, one worker per named VF makes and deletes an allocation of it,
 * one dumps the allocations and devices, and one writes
 * /sys/bus/pci/rescan, whose pci_bus_add_devices() would add a VF that
 * sriov_configure() is adding a second time unless both hold the PCI
 * core's rescan lock, as sriov_numvfs_store() does.
 *
 * dev_set_vs_pf_remove: the same PF taken for gpuctl-vfio-pci (with
 * gpuctl.enable_sriov=1), so that the PF a rescan brings back is bound
 * there again, and its three VFs named by rules for the same driver, no
 * allocation; one worker sets the PF to 3 VFs and 0, one removes the PF
 * through its sysfs "remove" (pci_stop_and_remove_bus_device_locked(),
 * under the rescan lock, unbinding the PF under its device lock) and
 * brings it back with a rescan, one dumps. A VF
 * has no "remove" of its own: both kernels hide the hot-plug attributes of
 * VFs (drivers/pci/pci-sysfs.c, pci_dev_hp_attrs_are_visible()).
 *
 * Invariants:
 * - dev-set succeeds, or fails with EBUSY naming a VF that is allocated,
 *   or a VF or the PF whose device lock a driver change holds (the worker
 *   binding a VF that just came): nothing here opens one, and one worker
 *   alone changes the PF; it never waits on a lock a VM could hold; while
 *   the PF is removed, it fails with ENODEV;
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
#define NVFS		2	/* the VFs allocations take */
#define NVFS_ENABLED	3	/* the VFs dev-set enables */
#define OWN_DRIVER	"gpuctl-vfio-pci"
#define ENABLE_SRIOV	"/sys/module/gpuctl/parameters/enable_sriov"

static const char *const vfs[NVFS_ENABLED] = {
	"0000:11:00.1", "0000:11:00.2", "0000:11:00.3"
};

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

/* Whether dev-set's answer is one of the invariants' (see the top). */
static bool dev_set_expected(int ret, const char *extack, bool pf_may_go)
{
	if (!ret || (ret == -ENODEV && pf_may_go))
		return true;
	return ret == -EBUSY &&
	       (strstr(extack, " is allocated to ") ||
		strstr(extack, " is busy: its driver is being changed"));
}

/*
 * Sets the PF to 3 VFs and to 0, over and over. @arg non-NULL: the PF may
 * be removed meanwhile, and ENODEV is its answer then.
 */
static void loop_dev_set(struct stress *s, void *arg)
{
	struct stress_op *op[2];
	struct nlc c = { 0 };
	long unloads = -1;
	int want = NVFS_ENABLED, ret;

	op[0] = stress_op(s, "dev-set %s 0", PF);
	op[1] = stress_op(s, "dev-set %s %d", PF, NVFS_ENABLED);
	while (stress_nl_ready(s, &c, &unloads)) {
		ret = nlc_dev_set(&c, PF, want);
		stress_count(op[!!want], ret);
		if (!dev_set_expected(ret, c.extack, arg))
			stress_violation(s, "dev-set %s %d: %s '%s'", PF, want,
					 strerror(-ret), c.extack);
		want = want ? 0 : NVFS_ENABLED;
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

/* Removes the PF through sysfs and brings it back with a rescan. */
static void loop_pf_remove(struct stress *s, void *arg)
{
	struct stress_op *op_rm = stress_op(s, "remove %s", PF);
	struct stress_op *op_scan = stress_op(s, "rescan after remove");
	int ret;

	while (stress_running(s)) {
		ret = stress_write(SYS_PF "remove", "1");
		stress_count(op_rm, ret);
		if (ret)
			stress_violation(s, "remove %s: %s", PF, strerror(-ret));
		stress_pause(50);
		ret = stress_write("/sys/bus/pci/rescan", "1");
		stress_count(op_scan, ret);
		if (ret)
			stress_violation(s, "rescan: %s", strerror(-ret));
		stress_pause(200);
	}
}

/* Rescans the PCI bus, as an operator or a hot-plug event would. */
static void loop_rescan(struct stress *s, void *arg)
{
	struct stress_op *op = stress_op(s, "rescan");
	int ret;

	while (stress_running(s)) {
		ret = stress_write("/sys/bus/pci/rescan", "1");
		stress_count(op, ret);
		if (ret)
			stress_violation(s, "rescan: %s", strerror(-ret));
		stress_pause(30);
	}
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

/*
 * The PF with 0 VFs and a rule naming it (for @driver, the kernel's
 * default when NULL; with take when @take_pf), and rules naming its first
 * @nvfs VFs for the same driver. 0, or -1 after a failed expectation.
 */
static int rules_new(struct __test_metadata *_metadata, struct nlc *c,
		     const char *driver, bool take_pf, int nvfs)
{
	struct nlc_rule r;
	int i;

	EXPECT_LE(NVFS_ENABLED, sysfs_int(SYS_PF "sriov_totalvfs"))
		TH_LOG("no SR-IOV PF %s with %d VFs", PF, NVFS_ENABLED);
	EXPECT_EQ(0, sysfs_int(SYS_PF "sriov_numvfs"));
	EXPECT_EQ(0, nlc_rule_new(c, PF, driver, false, take_pf, &r))
		TH_LOG("rule-new %s: '%s'", PF, c->extack);
	for (i = 0; i < nvfs; i++)
		EXPECT_EQ(0, nlc_rule_new(c, vfs[i], driver, false, false, &r))
			TH_LOG("rule-new of VF %d: '%s'", i + 1, c->extack);
	return _metadata->exit_code ? -1 : 0;
}

TEST_F_TIMEOUT(stress, dev_set_vs_alloc, 900)
{
	struct stress *s = self->s;
	int seconds = stress_seconds();
	int i;

	ASSERT_EQ(0, stress_write(SYS_PF "sriov_drivers_autoprobe", "0"));
	ASSERT_EQ(0, rules_new(_metadata, &self->e.c, NULL, false, NVFS));

	TH_LOG("%d s: dev-set %s 0/%d racing allocations of its VFs, dumps,",
	       seconds, PF, NVFS_ENABLED);
	TH_LOG("and bus rescans");
	ASSERT_LT(0, stress_spawn(s, "dev-set", loop_dev_set, NULL));
	for (i = 0; i < NVFS; i++)
		ASSERT_LT(0, stress_spawn(s, vfs[i], loop_alloc,
					  (void *)vfs[i]));
	ASSERT_LT(0, stress_spawn(s, "dump", loop_dump, NULL));
	ASSERT_LT(0, stress_spawn(s, "rescan", loop_rescan, NULL));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "dev-set " PF " 0", 0));
	EXPECT_LT(0, stress_count_of(s, "dev-set " PF " 3", 0));
	EXPECT_LT(0, stress_count_of(s, "rescan", 0));
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

TEST_F_TIMEOUT(stress, dev_set_vs_pf_remove, 900)
{
	struct stress *s = self->s;
	int seconds = stress_seconds();

	ASSERT_EQ(0, stress_write(ENABLE_SRIOV, "1"));
	/*
	 * Each VF on the PF's driver from its ADD_DEVICE, which is where
	 * vfio-pci-core's own notifier puts a VF of its PF, whatever
	 * autoprobe says.
	 */
	ASSERT_EQ(0, rules_new(_metadata, &self->e.c, OWN_DRIVER, true,
			       NVFS_ENABLED));

	TH_LOG("%d s: dev-set %s 0/%d racing the PF's removal and rescans",
	       seconds, PF, NVFS_ENABLED);
	ASSERT_LT(0, stress_spawn(s, "dev-set", loop_dev_set, (void *)PF));
	ASSERT_LT(0, stress_spawn(s, "remove", loop_pf_remove, NULL));
	ASSERT_LT(0, stress_spawn(s, "dump", loop_dump, NULL));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "dev-set " PF " 3", 0));
	EXPECT_LT(0, stress_count_of(s, "remove " PF, 0));
	/* The PF back, its VFs gone, the rules gone: as found. */
	EXPECT_EQ(0, stress_write("/sys/bus/pci/rescan", "1"));
	stress_write(SYS_PF "sriov_numvfs", "0");
	EXPECT_EQ(0, stress_clear_all(&self->e.c));
	stress_expect_inventory(_metadata, &self->e, 10000, true);
	EXPECT_EQ(0, stress_write(ENABLE_SRIOV, "0"));
	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
