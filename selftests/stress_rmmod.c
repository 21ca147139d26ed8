// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: rmmod racing the unbind and removal of reserved devices, on
 * plain vfio-pci and on gpuctl's own gpuctl-vfio-pci.
 *
 * The module is loaded with "reserve=" rules, so every reload reserves
 * the same devices again: 01:00.0 on vfio-pci, 81:00.0 and 07:00.0 (with
 * its HDA companion 07:00.1) on gpuctl-vfio-pci, all taken from their host
 * drivers. For GPUCTL_STRESS_SECONDS one worker unloads and reloads the
 * module while others unbind and reprobe the GPUs through sysfs,
 * write a host driver (bochs-drm) into their driver_override or clear it,
 * and remove 01:00.0 and 81:00.0 and rescan the bus.
 *
 * Invariants: rmmod succeeds or fails "in use" (EWOULDBLOCK), and every
 * load succeeds; at each unload every "dev ADDR created" line has its
 * "destroyed"; afterwards the module is loaded, the inventory matches
 * sysfs, and every reserved device is bound to its rule's driver with its
 * override naming it while every other PCI function is as it was: no
 * device is left half-bound. The kernel logs no WARN, BUG or lockdep
 * report. Then the rules go, the module is loaded as run_tests.sh loads
 * it, and the PCI state is the one found at the start.
 *
 * Devices of topology "full" (topologies/full). Left alone, as problems
 * of the environment: the qxl 03:00.0 (6.12's qxl oopses when rebound),
 * and unbinds of the HDA 07:00.1 from here: snd_hda_intel's remove drops
 * the device lock while it waits for its probe work, so an unbind through
 * sysfs racing gpuctl's take enters remove twice and frees the card twice
 * (an oops in snd_card_disconnect). Only gpuctl moves 07:00.1.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "stress_fixture.h"
#include "testlib.h"

#define VFIO_GPU	"0000:01:00.0"
#define OWN_GPU		"0000:81:00.0"
#define OWN_GPU2	"0000:07:00.0"
#define OWN_HDA		"0000:07:00.1"
#define OWN_DRV		"gpuctl-vfio-pci"
#define PARAMS		"reserve=" VFIO_GPU "+take," OWN_GPU "@" OWN_DRV "+take," \
			OWN_GPU2 "@" OWN_DRV "+take dyndbg=+p"

/* What PARAMS reserves. */
static const struct stress_reserved reserved[] = {
	{ VFIO_GPU, "vfio-pci" },
	{ OWN_GPU, OWN_DRV },
	{ OWN_GPU2, OWN_DRV },
	{ OWN_HDA, OWN_DRV },
};

TEST_F_TIMEOUT(stress, rmmod_vs_unbind_remove, 900)
{
	struct stress_rmmod_arg rmmod = { PARAMS, .strict = true, .balance = true };
	struct stress_rebind_arg rebind[] = {
		{ VFIO_GPU, "bochs-drm" },
		{ OWN_GPU, "bochs-drm" },
		{ OWN_GPU2, "bochs-drm" },
	};
	struct stress_remove_arg remove = { { VFIO_GPU, OWN_GPU }, 2 };
	char *want = malloc(STRESS_SNAPSHOT_LEN);
	struct stress *s = self->s;
	int seconds = stress_seconds();
	size_t i;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, stress_env_reload(&self->e, PARAMS, reserved,
				       ARRAY_SIZE(reserved)))
		TH_LOG("%s", self->e.why);
	TH_LOG("%d s: rmmod/insmod racing unbind, driver_override and remove/rescan",
	       seconds);
	ASSERT_LT(0, stress_spawn(s, "rmmod", stress_loop_rmmod, &rmmod));
	for (i = 0; i < ARRAY_SIZE(rebind); i++)
		ASSERT_LT(0, stress_spawn(s, rebind[i].addr, stress_loop_rebind,
					  &rebind[i]));
	ASSERT_LT(0, stress_spawn(s, "remove", stress_loop_remove, &remove));
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	/* Without an unload the race proves nothing. */
	EXPECT_LT(0, stress_count_of(s, "rmmod", 0));
	ASSERT_TRUE(tl_module_loaded()) TH_LOG("the rmmod worker left gpuctl unloaded");
	nlc_close(&self->e.c);
	ASSERT_EQ(0, nlc_open(&self->e.c));

	/* Every function as found, but the reserved ones on their drivers. */
	memcpy(want, self->e.before, STRESS_SNAPSHOT_LEN);
	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		ASSERT_EQ(0, stress_snapshot_set(want, reserved[i].addr,
						 reserved[i].driver,
						 reserved[i].driver));
	EXPECT_EQ(0, stress_wait_snapshot(want, STRESS_SETTLE_MS, self->e.why,
					  sizeof(self->e.why)))
		TH_LOG("half-bound after the race: %s", self->e.why);
	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		EXPECT_EQ(0, stress_wait_reserved(&self->e.c, reserved[i].addr,
						  reserved[i].driver, 0,
						  self->e.why, sizeof(self->e.why)))
			TH_LOG("%s", self->e.why);
	stress_expect_inventory(_metadata, &self->e, 10000, true);
	free(want);

	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
