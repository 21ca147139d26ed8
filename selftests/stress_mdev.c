// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: allocations of mdev instances (vGPUs) racing each other, the
 * removal and re-creation of an instance through sysfs, and dumps.
 *
 * The kernel's sample mtty driver (built by scripts/build-mdev-samples.sh
 * into build/RELEASE/mdev/) gives NMDEV instances. For
 * GPUCTL_STRESS_SECONDS one worker per instance and two more that pick
 * instances at random name them to alloc-new and delete what they got;
 * one worker removes the first instance through its "remove" file and
 * makes it again; one dumps the ledger and the instances.
 *
 * Invariants:
 * - alloc-new of an instance succeeds, or fails with EBUSY (another
 *   allocation has it) or ENODEV (it is being removed or made again);
 * - an allocation is lost only when its instance is the one the churn
 *   worker removes, and says so; alloc-del of every allocation succeeds;
 * - no instance is ever in two allocations, in any dump, and every
 *   instance that a dump shows allocated is in that allocation;
 * afterwards nothing is allocated, the instances go, mtty unloads, the
 * inventory matches sysfs and the kernel logged no WARN, BUG, KASAN or
 * lockdep report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "stress_fixture.h"
#include "testlib.h"

#define NMDEV		3
#define MTTY_TYPE	"/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-1/"
#define MDEVS		"/sys/bus/mdev/devices/"
#define OWNER		"57e55000-0000-4000-8000-0000000000f2"

static const char *const uuids[NMDEV] = {
	"8e2f0c10-0000-4000-8000-0000000000f1",
	"8e2f0c10-0000-4000-8000-0000000000f2",
	"8e2f0c10-0000-4000-8000-0000000000f3",
};

static int mdev_make(const char *uuid)
{
	return stress_write(MTTY_TYPE "create", uuid);
}

static int mdev_remove(const char *uuid)
{
	char path[128];

	snprintf(path, sizeof(path), MDEVS "%s/remove", uuid);
	return stress_write(path, "1");
}

/* Allocates an instance (arg: its index, or -1 for one at random). */
static void loop_alloc(struct stress *s, void *arg)
{
	struct nlc_alloc_req req = { .owner = OWNER };
	struct stress_op *op_new, *op_del;
	unsigned int seed = getpid();
	long fixed = (long)arg;
	struct nlc c = { 0 };
	long unloads = -1;
	struct nlc_alloc a;
	const char *u;
	int ret;

	op_new = stress_op(s, "alloc-new mdev");
	op_del = stress_op(s, "alloc-del mdev");
	req.nmdevs = 1;
	while (stress_nl_ready(s, &c, &unloads)) {
		u = uuids[fixed >= 0 ? fixed : rand_r(&seed) % NMDEV];
		req.mdevs[0] = u;
		ret = nlc_alloc_new(&c, &req, &a);
		stress_count(op_new, ret);
		if (ret) {
			if (ret != -EBUSY && ret != -ENODEV)
				stress_violation(s, "alloc-new %s: %s '%s'", u,
						 strerror(-ret), c.extack);
			stress_pause(5);
			continue;
		}
		stress_pause(10);
		ret = nlc_alloc_get(&c, a.id, &a);
		if (!ret && a.state == GPUCTL_ALLOC_STATE_LOST &&
		    (strcmp(u, uuids[0]) || !strstr(a.state_reason, u)))
			stress_violation(s, "allocation %u of %s lost: '%s'",
					 a.id, u, a.state_reason);
		ret = ret ?: nlc_alloc_del(&c, &a.id, NULL);
		stress_count(op_del, ret);
		if (ret)
			stress_violation(s, "alloc-get/del %u of %s: %s '%s'",
					 a.id, u, strerror(-ret), c.extack);
		stress_pause(10);
	}
	nlc_close(&c);
}

/* Removes the first instance and makes it again, over and over. */
static void loop_churn(struct stress *s, void *arg)
{
	struct stress_op *op_rm = stress_op(s, "remove %s", uuids[0]);
	struct stress_op *op_mk = stress_op(s, "create %s", uuids[0]);
	int ret;

	while (stress_running(s)) {
		ret = mdev_remove(uuids[0]);
		stress_count(op_rm, ret);
		if (ret)
			stress_violation(s, "remove %s: %s", uuids[0],
					 strerror(-ret));
		stress_pause(20);
		ret = mdev_make(uuids[0]);
		stress_count(op_mk, ret);
		if (ret)
			stress_violation(s, "create %s: %s", uuids[0],
					 strerror(-ret));
		stress_pause(40);
	}
}

/* Dumps the ledger: no instance in two allocations. */
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
		if (info.intr) {
			free(allocs);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (allocs[i].nmdevs != 1 || allocs[i].mdev_made[0])
				stress_violation(s, "allocation %u has %d mdevs",
						 allocs[i].id,
						 allocs[i].nmdevs);
			for (j = 0; j < i; j++)
				if (allocs[i].state != GPUCTL_ALLOC_STATE_LOST &&
				    allocs[j].state != GPUCTL_ALLOC_STATE_LOST &&
				    !strcmp(allocs[i].mdevs[0], allocs[j].mdevs[0]))
					stress_violation(s, "%s in allocations %u and %u",
							 allocs[i].mdevs[0],
							 allocs[j].id,
							 allocs[i].id);
		}
		free(allocs);
		stress_pause(10);
	}
	nlc_close(&c);
}

TEST_F_TIMEOUT(stress, mdev_alloc, 900)
{
	char ko[512], cmd[600];
	struct stress *s = self->s;
	int seconds = stress_seconds();
	const char *root = getenv("GPUCTL_ROOT");
	struct utsname un;
	long i;

	ASSERT_NE(NULL, root) TH_LOG("GPUCTL_ROOT not set");
	ASSERT_EQ(0, uname(&un));
	snprintf(ko, sizeof(ko), "%s/build/%s/mdev/mtty.ko", root, un.release);
	ASSERT_EQ(0, access(ko, R_OK))
		TH_LOG("no %s (scripts/build-mdev-samples.sh)", ko);
	snprintf(cmd, sizeof(cmd),
		 "modprobe -a vfio_iommu_type1 mdev && insmod %s", ko);
	ASSERT_EQ(0, system(cmd));
	for (i = 0; i < NMDEV; i++)
		ASSERT_EQ(0, mdev_make(uuids[i])) TH_LOG("create instance %ld", i);

	TH_LOG("%d s: alloc-new/del of %d mtty instances, one removed and made again",
	       seconds, NMDEV);
	for (i = 0; i < NMDEV; i++)
		ASSERT_LT(0, stress_spawn(s, uuids[i], loop_alloc, (void *)i));
	ASSERT_LT(0, stress_spawn(s, "random-1", loop_alloc, (void *)-1L));
	ASSERT_LT(0, stress_spawn(s, "random-2", loop_alloc, (void *)-1L));
	ASSERT_LT(0, stress_spawn(s, "churn", loop_churn, NULL));
	ASSERT_LT(0, stress_spawn(s, "dump", loop_dump, NULL));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "alloc-new mdev", 0));
	EXPECT_LT(0, stress_count_of(s, "alloc-new mdev", EBUSY));
	EXPECT_LT(0, stress_count_of(s, "alloc-del mdev", 0));
	snprintf(cmd, sizeof(cmd), "create %s", uuids[0]);
	EXPECT_LT(0, stress_count_of(s, cmd, 0));

	EXPECT_EQ(0, stress_clear_all(&self->e.c));
	for (i = 0; i < NMDEV; i++) {
		snprintf(cmd, sizeof(cmd), MDEVS "%s", uuids[i]);
		if (!access(cmd, F_OK))
			EXPECT_EQ(0, mdev_remove(uuids[i]));
	}
	EXPECT_EQ(0, system("rmmod mtty"));
	stress_expect_inventory(_metadata, &self->e, 10000, true);
	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
