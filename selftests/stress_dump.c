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
#include <unistd.h>

#include "kselftest_harness.h"
#include "stress_fixture.h"
#include "testlib.h"

#define VFIO_GPU	"0000:01:00.0"
#define OWN_GPU		"0000:81:00.0"
#define OWN_DRV		"gpuctl-vfio-pci"
#define RULE_GPU	"0000:07:00.0"
#define PARAMS		"reserve=" VFIO_GPU "+take," OWN_GPU "@" OWN_DRV "+take"
#define DUMPERS		2

/* What PARAMS reserves. */
static const struct stress_reserved reserved[] = {
	{ VFIO_GPU, "vfio-pci" },
	{ OWN_GPU, OWN_DRV },
};

TEST_F_TIMEOUT(stress, dumps_vs_everything, 900)
{
	struct stress_rmmod_arg rmmod = { PARAMS, .strict = true };
	struct stress_rule_arg rule = { RULE_GPU };
	struct stress_remove_arg remove = { { RULE_GPU }, 1 };
	struct stress_rebind_arg rebind = { RULE_GPU, "bochs-drm" };
	struct stress_limit_arg limit = { "stress" };
	struct stress *s = self->s;
	int seconds = stress_seconds();
	struct nlc_rule rule_left;
	int i;

	self->devs = stress_shared(STRESS_VFIO_DEVS * sizeof(*self->devs));
	ASSERT_NE(NULL, self->devs);
	ASSERT_EQ(0, stress_env_reload(&self->e, PARAMS, reserved,
				       ARRAY_SIZE(reserved)))
		TH_LOG("%s", self->e.why);
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
	for (i = 0; i < STRESS_VFIO_DEVS; i++) {
		ASSERT_LT(0, stress_spawn(s, "opener", stress_loop_open,
					  &self->devs[i]));
		ASSERT_LT(0, stress_spawn(s, "allocator", stress_loop_alloc,
					  &self->devs[i]));
	}
	ASSERT_LT(0, stress_spawn(s, "rule", stress_loop_rule, &rule));
	ASSERT_LT(0, stress_spawn(s, "remove", stress_loop_remove, &remove));
	ASSERT_LT(0, stress_spawn(s, "rebind", stress_loop_rebind, &rebind));
	ASSERT_LT(0, stress_spawn(s, "limit", stress_loop_limit, &limit));
	stress_spawn_hotplug(_metadata, s);
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "dev-get dump", 0));
	EXPECT_LT(0, stress_count_of(s, "alloc-get dump", 0));
	ASSERT_TRUE(tl_module_loaded()) TH_LOG("the rmmod worker left gpuctl unloaded");
	nlc_close(&self->e.c);
	ASSERT_EQ(0, nlc_open(&self->e.c));
	stress_write("/sys/bus/pci/rescan", "1");
	stress_expect_inventory(_metadata, &self->e, STRESS_SETTLE_MS, false);

	/*
	 * The module forgets rules made through netlink when it unloads and
	 * leaves their driver_override behind, as documented; a rule for
	 * 07:00.0 again makes its release clear them.
	 */
	nlc_rule_new(&self->e.c, RULE_GPU, NULL, false, false, &rule_left);
	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
