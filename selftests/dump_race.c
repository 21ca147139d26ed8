// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Dumps racing with inventory changes. A dump that spans a change must be
 * flagged NLM_F_DUMP_INTR; one that is not flagged must be a state sysfs
 * actually went through, without duplicates.
 *
 * Forcing the flag: the kernel builds the first part of a dump inside
 * sendmsg() and each further part inside the recvmsg() that drains the
 * previous one; the module stamps every part with the inventory generation.
 * Even a dump whose objects fit in one part takes a second pass that finds
 * nothing and adds NLMSG_DONE, and that pass compares generations too. So
 * "send the request, change the inventory, then read" must flag the dump,
 * whatever the size of the inventory. Limits, rules and allocations share
 * the generation.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/msg.h>

#include "kselftest_harness.h"
#include "testlib.h"

#define EVENT_TIMEOUT_MS	20000
#define RACE_MS			10000

FIXTURE(race) {
	struct nlc c;
	struct nlc mon;
	struct model m;
	char why[16384];
	char unbound[NLC_ADDR_LEN];
	char unbound_drv[NLC_NAME_LEN];
	pid_t child;
};

FIXTURE_SETUP(race)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_open(&self->mon));
	ASSERT_EQ(0, nlc_monitor_join(&self->mon));
	ASSERT_EQ(0, model_load(&self->m));
}

FIXTURE_TEARDOWN(race)
{
	int status;

	if (self->child > 0) {
		kill(self->child, SIGTERM);
		waitpid(self->child, &status, 0);
	}
	if (self->unbound[0])
		tl_writef(self->unbound, "/sys/bus/pci/drivers/%s/bind",
			  self->unbound_drv);
	tl_write("/sys/bus/pci/rescan", "1");
	nlc_close(&self->mon);
	nlc_close(&self->c);
}

/* A tracked non-GPU with a driver if there is one: cheap to rebind. */
static const struct nlc_dev *pick_rebind(const struct model *m)
{
	const struct nlc_dev *gpu = NULL;
	int i;

	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];

		if (!d->driver[0] || d->role == GPUCTL_DEV_ROLE_BRIDGE ||
		    !strcmp(d->driver, "pcieport"))
			continue;
		if (d->role != GPUCTL_DEV_ROLE_GPU)
			return d;
		if (!gpu)
			gpu = d;
	}
	return gpu;
}

static int rebind(struct nlc *mon, const char *addr, const char *drv,
		  bool bind)
{
	int ret = tl_writef(addr, "/sys/bus/pci/drivers/%s/%s", drv,
			    bind ? "bind" : "unbind");

	if (ret)
		return ret;
	return tl_wait_ntf(mon, GPUCTL_CMD_DEV_CHANGE_NTF, addr,
			   bind ? drv : "", EVENT_TIMEOUT_MS, NULL) == 1 ?
		0 : -ETIMEDOUT;
}

TEST_F_TIMEOUT(race, forced_dump_intr, 120)
{
	const struct nlc_dev *d = pick_rebind(&self->m);
	struct nlc_dump_info info;
	char addr[NLC_ADDR_LEN], drv[NLC_NAME_LEN];
	struct nlc_dev *devs;
	int i, n, intr = 0;

	ASSERT_EQ(0, nlc_dev_dump(&self->c, &devs, &n, &info));
	free(devs);
	TH_LOG("dev dump: %d devices in %d datagrams", n, info.datagrams);
	ASSERT_NE(NULL, d) TH_LOG("no tracked device with a driver to rebind");
	strscpy(addr, d->address, sizeof(addr));
	strscpy(drv, d->driver, sizeof(drv));

	for (i = 0; i < 3; i++) {
		struct nl_msg *msg = nlc_msg_new(&self->c, GPUCTL_CMD_DEV_GET,
						 NLM_F_DUMP);
		int ret;

		ASSERT_NE(NULL, msg);
		/* Part one is built now; part two after the change. */
		ASSERT_EQ(0, nlc_send(&self->c, msg));
		ASSERT_EQ(0, rebind(&self->mon, addr, drv, false));
		strscpy(self->unbound, addr, sizeof(self->unbound));
		strscpy(self->unbound_drv, drv, sizeof(self->unbound_drv));
		ret = nlc_recv_reply(&self->c, NULL, NULL, &info);
		EXPECT_EQ(0, ret);
		TH_LOG("try %d: %d messages in %d datagrams, intr %d", i,
		       info.messages, info.datagrams, info.intr);
		intr += info.intr;
		ASSERT_EQ(0, rebind(&self->mon, addr, drv, true));
		self->unbound[0] = '\0';
	}
	EXPECT_EQ(3, intr);
}

/* A limit that changes between two parts of a limit dump flags it too. */
TEST_F_TIMEOUT(race, limit_dump_intr, 60)
{
	struct nlc_dump_info info;
	struct nlc_limit l;
	__u32 max = 3;
	struct nlc c2;
	int i, intr = 0;

	ASSERT_EQ(0, nlc_open(&c2));
	ASSERT_EQ(0, nlc_limit_set(&c2, GPUCTL_LIMIT_SCOPE_ACCOUNT, "race",
				   &max, &l));
	for (i = 0; i < 3; i++) {
		struct nl_msg *msg = nlc_msg_new(&self->c, GPUCTL_CMD_LIMIT_GET,
						 NLM_F_DUMP);

		ASSERT_NE(NULL, msg);
		ASSERT_EQ(0, nlc_send(&self->c, msg));
		max++;
		ASSERT_EQ(0, nlc_limit_set(&c2, GPUCTL_LIMIT_SCOPE_ACCOUNT,
					   "race", &max, &l));
		EXPECT_EQ(0, nlc_recv_reply(&self->c, NULL, NULL, &info));
		TH_LOG("try %d: %d messages, intr %d", i, info.messages,
		       info.intr);
		intr += info.intr;
	}
	EXPECT_EQ(0, nlc_limit_set(&c2, GPUCTL_LIMIT_SCOPE_ACCOUNT, "race",
				   NULL, &l));
	nlc_close(&c2);
	EXPECT_EQ(3, intr);
}

/* Two dumps of the same state, or of a state sysfs went through. */
static bool same_set(const struct nlc_dev *devs, int n, const struct model *m)
{
	int i;

	if (n != m->ndevs)
		return false;
	for (i = 0; i < n; i++)
		if (!model_find_dev(m, devs[i].address))
			return false;
	return true;
}

/* The writers count their completed cycles in @cycles, shared memory. */
static void loop_rebind(const char *addr, const char *drv, long *cycles)
{
	char unbind[256], bind[256];

	snprintf(unbind, sizeof(unbind), "/sys/bus/pci/drivers/%s/unbind", drv);
	snprintf(bind, sizeof(bind), "/sys/bus/pci/drivers/%s/bind", drv);
	for (;;) {
		if (!tl_write(unbind, addr) && !tl_write(bind, addr))
			__atomic_add_fetch(cycles, 1, __ATOMIC_RELAXED);
	}
}

static void loop_remove(const char *addr, long *cycles)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", addr);
	for (;;) {
		if (!tl_write(path, "1") && !tl_write("/sys/bus/pci/rescan", "1"))
			__atomic_add_fetch(cycles, 1, __ATOMIC_RELAXED);
		/*
		 * A breath between cycles: QEMU 7.2 under TCG was seen to
		 * crash when a display's BARs were torn down and remapped
		 * back to back for seconds. Dumps still race every cycle.
		 */
		usleep(20 * 1000);
	}
}

/*
 * The GPU with the fewest group members, so that its removal is one step;
 * among those, one without a driver, which spares QEMU a display driver's
 * set-up and tear-down on every cycle.
 */
static const struct nlc_dev *pick_small_gpu(const struct model *m)
{
	const struct nlc_dev *best = NULL;
	int i, size, best_size = 1 << 30;

	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];
		int gi;

		if (d->role != GPUCTL_DEV_ROLE_GPU)
			continue;
		gi = NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP) ?
			model_find_group(m, d->iommu_group) : -1;
		size = gi < 0 ? 1 : m->groups[gi].ndevices;
		size = size * 2 + !!NLC_HAS(d, GPUCTL_A_DEV_DRIVER);
		if (size < best_size) {
			best = d;
			best_size = size;
		}
	}
	return best;
}

struct race_ctx {
	struct nlc *c;
	const struct model *m;
	char *why;
	size_t whylen;
	pid_t *child;
};

static void run_race(struct __test_metadata *_metadata, struct race_ctx *x,
		     bool remove)
{
	const struct nlc_dev *d = remove ? pick_small_gpu(x->m) :
					   pick_rebind(x->m);
	struct model *without = NULL;
	long deadline, *cycles;
	int dumps = 0, intr = 0, dup = 0, odd = 0, status;

	ASSERT_NE(NULL, d) TH_LOG("no device to race with");
	TH_LOG("%s %s in a loop while dumping", remove ?
	       "removing and rescanning" : "unbinding and binding", d->address);
	if (remove) {
		/* The one other state the device set may show. */
		without = malloc(sizeof(*without));
		ASSERT_NE(NULL, without);
		ASSERT_EQ(0, tl_writef("1", "/sys/bus/pci/devices/%s/remove",
				       d->address));
		ASSERT_EQ(0, model_load(without));
		ASSERT_EQ(0, tl_write("/sys/bus/pci/rescan", "1"));
		ASSERT_EQ(0, tl_inventory_diff(x->c, 10000, x->why,
					       x->whylen))
			TH_LOG("%s", x->why);
	}
	cycles = mmap(NULL, sizeof(*cycles), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, cycles);
	*cycles = 0;
	*x->child = fork();
	ASSERT_GE(*x->child, 0);
	if (!*x->child) {
		/* The writer's own log would drown the TAP output. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(1);
		if (remove)
			loop_remove(d->address, cycles);
		else
			loop_rebind(d->address, d->driver, cycles);
		_exit(0);
	}
	deadline = tl_now_ms() + RACE_MS;
	while (tl_now_ms() < deadline) {
		struct nlc_dump_info info;
		struct nlc_dev *devs;
		int i, j, n;

		ASSERT_EQ(0, nlc_dev_dump(x->c, &devs, &n, &info))
			TH_LOG("%s", x->c->extack);
		dumps++;
		if (info.intr) {
			intr++;
			free(devs);
			continue;
		}
		for (i = 0; i < n; i++)
			for (j = 0; j < i; j++)
				if (!strcmp(devs[i].address, devs[j].address)) {
					TH_LOG("%s twice in one dump", devs[i].address);
					dup++;
				}
		if (!same_set(devs, n, x->m) &&
		    !(without && same_set(devs, n, without))) {
			TH_LOG("dump of %d devices matches no state sysfs went through",
			       n);
			odd++;
		}
		free(devs);
	}
	kill(*x->child, SIGTERM);
	waitpid(*x->child, &status, 0);
	*x->child = 0;
	free(without);
	/* Put everything back, then compare at a quiet moment. */
	tl_writef(d->address, "/sys/bus/pci/drivers/%s/bind", d->driver);
	tl_write("/sys/bus/pci/rescan", "1");
	TH_LOG("%ld change cycles, %d dumps, %d flagged NLM_F_DUMP_INTR",
	       *cycles, dumps, intr);
	/* Without changes the race proves nothing. */
	EXPECT_GT(*cycles, 0);
	munmap(cycles, sizeof(*cycles));
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, odd);
	EXPECT_GT(dumps, 0);
	EXPECT_EQ(0, tl_inventory_diff(x->c, 10000, x->why,
				       x->whylen))
		TH_LOG("after the race: %s", x->why);
}

TEST_F_TIMEOUT(race, dump_vs_rebind, 120)
{
	struct race_ctx x = { &self->c, &self->m, self->why, sizeof(self->why),
			      &self->child };

	run_race(_metadata, &x, false);
}

TEST_F_TIMEOUT(race, dump_vs_remove_rescan, 120)
{
	struct race_ctx x = { &self->c, &self->m, self->why, sizeof(self->why),
			      &self->child };

	run_race(_metadata, &x, true);
}

TEST_HARNESS_MAIN
