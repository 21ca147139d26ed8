// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: VFIO open and close racing alloc-del and alloc-new, on plain
 * vfio-pci and on the enforcing gpuctl-vfio-pci.
 *
 * Rules reserve 01:00.0 on vfio-pci and 81:00.0 on gpuctl-vfio-pci. For
 * GPUCTL_STRESS_SECONDS, on each device one worker opens it with
 * selftests/bin/vfio_open (a minimal QEMU-like VFIO user) and closes it,
 * by a close of the device fd or by the process's exit, while another
 * makes and deletes an allocation of it (uid 0, gid 0: the opener's).
 * Each publishes its state for the other (stress_loops.h).
 *
 * Invariants:
 * - alloc-del never succeeds while the device is open: it fails with
 *   EBUSY, "ADDR is open by ...", naming the holder's pid on
 *   gpuctl-vfio-pci (on vfio-pci the holder may be unknown); and it is
 *   not refused while nothing has the device open;
 * - on gpuctl-vfio-pci an open never succeeds without an allocation
 *   (dev-get then names the allocation and the opener as holder,
 *   open_match owner); it is refused with EPERM, and only without one;
 * - on vfio-pci every open succeeds; the open is seen through the IOMMU
 *   group's DMA ownership, so only the refusal of alloc-del is asserted
 *   there, and a holder pid, when dev-get names one, is the opener's;
 * - afterwards no device is in two allocations, every open has been
 *   closed, the module's reference count is back where it was, and the
 *   kernel logged no WARN, BUG or lockdep report.
 * Then the rules go and the PCI state is the one found at the start.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "ledger.h"
#include "stress_fixture.h"
#include "testlib.h"

#define VFIO_GPU	"0000:01:00.0"
#define OWN_GPU		"0000:81:00.0"
#define OWN_DRV		"gpuctl-vfio-pci"

/* What reserve() makes rules for. */
static const struct stress_reserved reserved[] = {
	{ VFIO_GPU, "vfio-pci" },
	{ OWN_GPU, OWN_DRV },
};

/* Rules take the GPUs to their drivers; 0 or -errno with @e->why. */
static int reserve(struct stress_env *e)
{
	struct nlc_rule r;
	int ret;

	ret = nlc_rule_new(&e->c, VFIO_GPU, NULL, false, true, &r);
	if (!ret)
		ret = nlc_rule_new(&e->c, OWN_GPU, OWN_DRV, false, true, &r);
	if (ret) {
		snprintf(e->why, sizeof(e->why), "rule-new: %s '%s'",
			 strerror(-ret), e->c.extack);
		return ret;
	}
	return stress_env_wait_reserved(e, reserved, ARRAY_SIZE(reserved));
}

/* After the race: nobody holds @addr and no allocation names it. */
static int check_idle(struct nlc *c, const char *addr, char *why, size_t len)
{
	struct nlc_dev d;
	int ret = nlc_dev_get(c, addr, &d);

	if (ret) {
		snprintf(why, len, "dev-get %s: %s", addr, strerror(-ret));
		return ret;
	}
	if (NLC_HAS(&d, GPUCTL_A_DEV_HOLDER_PID) ||
	    NLC_HAS(&d, GPUCTL_A_DEV_ALLOCATION)) {
		snprintf(why, len, "%s still has holder pid %u, allocation %u",
			 addr, d.holder_pid, d.allocation);
		return -EBUSY;
	}
	return 0;
}

TEST_F_TIMEOUT(stress, open_vs_alloc_del, 900)
{
	struct stress_vfio_dev *vfio, *own;
	struct stress *s = self->s;
	int seconds = stress_seconds();
	long refcnt, refcnt0;
	int i;

	self->devs = stress_shared(STRESS_VFIO_DEVS * sizeof(*self->devs));
	ASSERT_NE(NULL, self->devs);
	vfio = &self->devs[0];
	own = &self->devs[1];
	ASSERT_EQ(0, reserve(&self->e)) TH_LOG("%s", self->e.why);
	/* What rules hold of the module; allocations and opens add to it. */
	refcnt0 = stress_module_refcnt();
	ASSERT_LE(0, refcnt0);
	vfio->addr = VFIO_GPU;
	vfio->owner = "57e55000-0000-4000-8000-000000000001";
	own->addr = OWN_GPU;
	own->owner = "57e55000-0000-4000-8000-000000000002";
	own->enforcing = true;
	vfio->strict = true;
	own->strict = true;
	TH_LOG("%d s: vfio_open open/close racing alloc-new/alloc-del on %s (vfio-pci) and %s (%s)",
	       seconds, VFIO_GPU, OWN_GPU, OWN_DRV);
	for (i = 0; i < STRESS_VFIO_DEVS; i++) {
		ASSERT_LT(0, stress_spawn(s, "opener", stress_loop_open,
					  &self->devs[i]));
		ASSERT_LT(0, stress_spawn(s, "allocator", stress_loop_alloc,
					  &self->devs[i]));
	}
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	/* The race happened: opens and refused deletes on both drivers. */
	EXPECT_LT(0, stress_count_of(s, "vfio open " VFIO_GPU, 0));
	EXPECT_LT(0, stress_count_of(s, "vfio open " OWN_GPU, 0));
	EXPECT_LT(0, stress_count_of(s, "alloc-del " VFIO_GPU, EBUSY));
	EXPECT_LT(0, stress_count_of(s, "alloc-del " OWN_GPU, EBUSY));

	EXPECT_EQ(0, ledger_check(&self->e.c, self->e.why, sizeof(self->e.why)))
		TH_LOG("%s", self->e.why);
	EXPECT_LE(0, ledger_clear(&self->e.c));
	EXPECT_EQ(0, check_idle(&self->e.c, VFIO_GPU, self->e.why,
				sizeof(self->e.why)))
		TH_LOG("%s", self->e.why);
	EXPECT_EQ(0, check_idle(&self->e.c, OWN_GPU, self->e.why,
				sizeof(self->e.why)))
		TH_LOG("%s", self->e.why);
	/* Every allocation and every open gave its reference back. */
	refcnt = stress_module_refcnt();
	EXPECT_EQ(refcnt0, refcnt)
		TH_LOG("module refcnt %ld, %ld before the race", refcnt, refcnt0);
	stress_expect_inventory(_metadata, &self->e, 10000, false);

	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
