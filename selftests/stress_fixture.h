/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The fixture every stress program runs its test in, and the steps its
 * tests share, so that each starts from the same checked environment,
 * judges the race the same way and gives the environment back the same
 * way. A program includes this once, after kselftest_harness.h: the
 * setup, the teardown and the helpers become that program's own.
 */
#ifndef _GPUCTL_STRESS_FIXTURE_H
#define _GPUCTL_STRESS_FIXTURE_H

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stress_loops.h"
#include "testlib.h"

/* The devices a test that races VFIO opens maps into @devs. */
#define STRESS_VFIO_DEVS	2
/* The empty root port of topology full that the hot-plug worker uses. */
#define STRESS_HP_BUS		"hp5"
#define STRESS_HP_PORT		"0000:00:1f.4"

FIXTURE(stress) {
	struct stress_env e;
	struct stress *s;
	/* STRESS_VFIO_DEVS, shared with the workers; NULL when not raced. */
	struct stress_vfio_dev *devs;
};

FIXTURE_SETUP(stress)
{
	self->s = stress_new();
	ASSERT_NE(NULL, self->s);
	if (!getenv("GPUCTL_KO"))
		SKIP(return, "GPUCTL_KO not set");
	/* Changes nothing: a failed setup gets no teardown. */
	ASSERT_EQ(0, stress_env_setup(&self->e)) TH_LOG("%s", self->e.why);
}

FIXTURE_TEARDOWN(stress)
{
	stress_env_teardown(&self->e, self->s);
	if (self->devs)
		munmap(self->devs, STRESS_VFIO_DEVS * sizeof(*self->devs));
}

/*
 * Starts the worker that hot-plugs an "edu" device into STRESS_HP_PORT:
 * a test that races bus events needs the port, and fails without it.
 */
static inline void stress_spawn_hotplug(struct __test_metadata *_metadata,
					struct stress *s)
{
	static struct stress_hotplug_arg edu = {
		STRESS_HP_BUS, STRESS_HP_PORT, "edu"
	};

	ASSERT_EQ(0, access("/sys/bus/pci/devices/" STRESS_HP_PORT, F_OK))
		TH_LOG("no root port %s (%s) to hot-plug into", STRESS_HP_PORT,
		       STRESS_HP_BUS);
	ASSERT_LT(0, stress_spawn(s, "hotplug", stress_loop_hotplug, &edu));
}

/*
 * After the race the module's inventory, and with @groups its IOMMU
 * groups, match sysfs within @settle_ms: nothing the race did is lost
 * or invented.
 */
static inline void stress_expect_inventory(struct __test_metadata *_metadata,
					   struct stress_env *e, int settle_ms,
					   bool groups)
{
	EXPECT_EQ(0, tl_inventory_diff(&e->c, settle_ms, e->why,
				       sizeof(e->why)))
		TH_LOG("inventory after the race: %s", e->why);
	if (groups)
		EXPECT_EQ(0, tl_groups_diff(&e->c, settle_ms, e->why,
					    sizeof(e->why)))
			TH_LOG("groups after the race: %s", e->why);
}

/*
 * How every test ends: the environment given back as it was found, no
 * invariant broken by a worker, and nothing in the kernel log that a
 * clean run must not have.
 */
static inline void stress_expect_clean_end(struct __test_metadata *_metadata,
					   struct stress_env *e,
					   const struct stress *s)
{
	EXPECT_EQ(0, stress_env_restore(e)) TH_LOG("restore: %s", e->why);
	EXPECT_EQ(0, s->violations) TH_LOG("first: %s", s->first);
	EXPECT_EQ(0, stress_kmsg_reports(e->kmsg));
}

#endif /* _GPUCTL_STRESS_FIXTURE_H */
