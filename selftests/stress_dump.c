// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: dumps racing everything.
 *
 * Two workers dump devices, groups, rules, allocations and limits in turn
 * for GPUCTL_STRESS_SECONDS, while the mutations of the other stress
 * programs run together: rmmod and reload (with "reserve=" rules for
 * 01:00.0 on vfio-pci and 81:00.0 on gpuctl-vfio-pci), vfio_open opens and
 * closes and alloc-new/alloc-del of those two, rule-new/rule-del of
 * 07:00.0 while it is removed, rescanned, unbound and reprobed (never its
 * HDA companion from here: see stress_rmmod.c), limit-set of an account,
 * and the hot-plug of an "edu" device through QMP. The mutations count
 * their outcomes only: their invariants are the other programs' to check,
 * and here the module comes and goes under them.
 *
 * Invariants: every dump completes (retried while it comes back
 * NLM_F_DUMP_INTR), every message is a reply to the dump and parses with
 * its key attributes, no key comes twice within one dump, and devices,
 * groups, rules and allocations come in ascending order of address or
 * id, as the dump cursor is documented to go; a dump is refused only when
 * the module was unloaded meanwhile. rmmod succeeds or fails "in use".
 * Afterwards the inventory matches sysfs and the kernel logged no WARN,
 * BUG or lockdep report; then everything is deleted, the module is loaded
 * as run_tests.sh loads it, and the PCI state is the one found at the
 * start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "stress_loops.h"
#include "testlib.h"

#define VFIO_GPU	"0000:01:00.0"
#define OWN_GPU		"0000:81:00.0"
#define OWN_DRV		"gpuctl-vfio-pci"
#define RULE_GPU	"0000:07:00.0"
#define PARAMS		"reserve=" VFIO_GPU "+take," OWN_GPU "@" OWN_DRV "+take"
#define HP_BUS		"hp5"
#define HP_PORT		"0000:00:1f.4"
#define DUMPERS		2
#define SETTLE_MS	30000

FIXTURE(stress) {
	struct stress_env e;
	struct stress *s;
	struct stress_vfio_dev *devs;	/* shared with the workers */
};

FIXTURE_SETUP(stress)
{
	self->s = stress_new();
	ASSERT_NE(NULL, self->s);
	self->devs = stress_shared(2 * sizeof(*self->devs));
	ASSERT_NE(NULL, self->devs);
	if (!getenv("GPUCTL_KO"))
		SKIP(return, "GPUCTL_KO not set");
	/* Changes nothing: a failed setup gets no teardown. */
	ASSERT_EQ(0, stress_env_setup(&self->e)) TH_LOG("%s", self->e.why);
}

FIXTURE_TEARDOWN(stress)
{
	stress_env_teardown(&self->e, self->s, PARAMS);
	munmap(self->devs, 2 * sizeof(*self->devs));
}

/* The module with the rules of PARAMS, the GPUs on their drivers. */
static int load_reserved(struct stress_env *e)
{
	int ret;

	nlc_close(&e->c);
	ret = tl_module_unload();
	if (!ret)
		ret = tl_module_load(PARAMS);
	if (!ret)
		ret = nlc_open(&e->c);
	if (ret) {
		snprintf(e->why, sizeof(e->why), "reload with %s: %s", PARAMS,
			 strerror(-ret));
		return ret;
	}
	ret = stress_wait_reserved(&e->c, VFIO_GPU, "vfio-pci", SETTLE_MS,
				   e->why, sizeof(e->why));
	if (!ret)
		ret = stress_wait_reserved(&e->c, OWN_GPU, OWN_DRV, SETTLE_MS,
					   e->why, sizeof(e->why));
	return ret;
}

TEST_F_TIMEOUT(stress, dumps_vs_everything, 900)
{
	struct stress_rmmod_arg rmmod = { PARAMS, .strict = true };
	struct stress_rule_arg rule = { RULE_GPU };
	struct stress_remove_arg remove = { { RULE_GPU }, 1 };
	struct stress_rebind_arg rebind = { RULE_GPU, "bochs-drm" };
	struct stress_limit_arg limit = { "stress" };
	struct stress_hotplug_arg hotplug = { HP_BUS, HP_PORT, "edu" };
	struct stress *s = self->s;
	int seconds = stress_seconds();
	struct nlc_rule rule_left;
	int i;

	ASSERT_EQ(0, load_reserved(&self->e)) TH_LOG("%s", self->e.why);
	self->devs[0].addr = VFIO_GPU;
	self->devs[0].owner = "57e55000-0000-4000-8000-000000000003";
	self->devs[1].addr = OWN_GPU;
	self->devs[1].owner = "57e55000-0000-4000-8000-000000000004";
	self->devs[1].enforcing = true;
	TH_LOG("%d s: %d dumpers racing rmmod, VFIO opens, allocations, rules, limits,",
	       seconds, DUMPERS);
	TH_LOG("remove/rescan and hot-plug");
	for (i = 0; i < DUMPERS; i++)
		ASSERT_LT(0, stress_spawn(s, "dumper", stress_loop_dump, NULL));
	ASSERT_LT(0, stress_spawn(s, "rmmod", stress_loop_rmmod, &rmmod));
	for (i = 0; i < 2; i++) {
		ASSERT_LT(0, stress_spawn(s, "opener", stress_loop_open,
					  &self->devs[i]));
		ASSERT_LT(0, stress_spawn(s, "allocator", stress_loop_alloc,
					  &self->devs[i]));
	}
	ASSERT_LT(0, stress_spawn(s, "rule", stress_loop_rule, &rule));
	ASSERT_LT(0, stress_spawn(s, "remove", stress_loop_remove, &remove));
	ASSERT_LT(0, stress_spawn(s, "rebind", stress_loop_rebind, &rebind));
	ASSERT_LT(0, stress_spawn(s, "limit", stress_loop_limit, &limit));
	ASSERT_EQ(0, access("/sys/bus/pci/devices/" HP_PORT, F_OK))
		TH_LOG("no root port %s (%s) to hot-plug into", HP_PORT, HP_BUS);
	ASSERT_LT(0, stress_spawn(s, "hotplug", stress_loop_hotplug, &hotplug));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "dev-get dump", 0));
	EXPECT_LT(0, stress_count_of(s, "alloc-get dump", 0));
	ASSERT_TRUE(stress_module_loaded()) TH_LOG("the rmmod worker left gpuctl unloaded");
	nlc_close(&self->e.c);
	ASSERT_EQ(0, nlc_open(&self->e.c));
	stress_write("/sys/bus/pci/rescan", "1");
	EXPECT_EQ(0, tl_inventory_diff(&self->e.c, SETTLE_MS, self->e.why,
				       sizeof(self->e.why)))
		TH_LOG("inventory after the race: %s", self->e.why);

	/*
	 * The module forgets rules made through netlink when it unloads and
	 * leaves their driver_override behind, as documented; a rule for
	 * 07:00.0 again makes its release clear them.
	 */
	nlc_rule_new(&self->e.c, RULE_GPU, NULL, false, false, &rule_left);
	EXPECT_EQ(0, stress_env_restore(&self->e, PARAMS))
		TH_LOG("restore: %s", self->e.why);
	EXPECT_EQ(0, s->violations) TH_LOG("first: %s", s->first);
	EXPECT_EQ(0, stress_kmsg_reports(self->e.kmsg));
}

TEST_HARNESS_MAIN
