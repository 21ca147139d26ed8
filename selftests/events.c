// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Notifications on the "monitor" group for PCI remove/rescan, driver
 * unbind/bind and a switch to vfio-pci, each checked against what sysfs
 * says changed. Devices are picked from the inventory at run time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "testlib.h"

#define EVENT_TIMEOUT_MS	20000
#define QUIET_MS		1500
#define SETTLE_MS		10000

FIXTURE(ev) {
	struct nlc c;
	struct nlc mon;
	struct model before;
	struct model after;
	struct event ev[EVENT_MAX];
	char why[16384];
	/* What teardown must put back. */
	char unbound[NLC_ADDR_LEN];
	char unbound_drv[NLC_NAME_LEN];
	char removed[NLC_ADDR_LEN];
	char override[NLC_ADDR_LEN];
};

FIXTURE_SETUP(ev)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_open(&self->mon));
	ASSERT_EQ(0, nlc_monitor_join(&self->mon));
	ASSERT_EQ(0, model_load(&self->before));
}

FIXTURE_TEARDOWN(ev)
{
	if (self->override[0]) {
		tl_writef(self->override, "/sys/bus/pci/devices/%s/driver/unbind",
			  self->override);
		tl_writef("\n", "/sys/bus/pci/devices/%s/driver_override",
			  self->override);
		tl_write("/sys/bus/pci/drivers_probe", self->override);
	}
	if (self->unbound[0])
		tl_writef(self->unbound, "/sys/bus/pci/drivers/%s/bind",
			  self->unbound_drv);
	if (self->removed[0])
		tl_write("/sys/bus/pci/rescan", "1");
	nlc_close(&self->mon);
	nlc_close(&self->c);
}

/* A tracked device with a driver, GPUs first, bochs before the rest. */
static const struct nlc_dev *pick_bound(const struct model *m, bool gpu_only)
{
	const struct nlc_dev *best = NULL;
	int i, score, best_score = -1;

	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];

		if (!d->driver[0] || d->role == GPUCTL_DEV_ROLE_BRIDGE ||
		    strstr(d->driver, "vfio") || !strcmp(d->driver, "pcieport"))
			continue;
		if (gpu_only && d->role != GPUCTL_DEV_ROLE_GPU)
			continue;
		score = (d->role == GPUCTL_DEV_ROLE_GPU) * 2 +
			!!strstr(d->driver, "bochs");
		if (score > best_score) {
			best = d;
			best_score = score;
		}
	}
	return best;
}

TEST_F_TIMEOUT(ev, unbind_bind, 90)
{
	const struct nlc_dev *d = pick_bound(&self->before, false);
	struct nlc_dev got;
	char addr[NLC_ADDR_LEN], drv[NLC_NAME_LEN];

	ASSERT_NE(NULL, d) TH_LOG("no tracked device is bound to a driver");
	strscpy(addr, d->address, sizeof(addr));
	strscpy(drv, d->driver, sizeof(drv));
	TH_LOG("unbinding %s from %s", addr, drv);

	ASSERT_EQ(0, tl_writef(addr, "/sys/bus/pci/drivers/%s/unbind", drv));
	strscpy(self->unbound, addr, sizeof(self->unbound));
	strscpy(self->unbound_drv, drv, sizeof(self->unbound_drv));
	ASSERT_EQ(1, tl_wait_ntf(&self->mon, GPUCTL_CMD_DEV_CHANGE_NTF, addr,
				 "", EVENT_TIMEOUT_MS, &got))
		TH_LOG("no dev-change-ntf without driver for %s", addr);
	EXPECT_FALSE(NLC_HAS(&got, GPUCTL_A_DEV_DRIVER));
	ASSERT_EQ(0, nlc_dev_get(&self->c, addr, &got));
	EXPECT_FALSE(NLC_HAS(&got, GPUCTL_A_DEV_DRIVER))
		TH_LOG("driver %s", got.driver);
	EXPECT_EQ(0, tl_inventory_diff(&self->c, 0, self->why, sizeof(self->why)))
		TH_LOG("after unbind: %s", self->why);
	EXPECT_EQ(0, tl_groups_diff(&self->c, 0, self->why, sizeof(self->why)))
		TH_LOG("after unbind: %s", self->why);

	ASSERT_EQ(0, tl_writef(addr, "/sys/bus/pci/drivers/%s/bind", drv));
	self->unbound[0] = '\0';
	ASSERT_EQ(1, tl_wait_ntf(&self->mon, GPUCTL_CMD_DEV_CHANGE_NTF, addr,
				 drv, EVENT_TIMEOUT_MS, &got))
		TH_LOG("no dev-change-ntf with driver %s for %s", drv, addr);
	EXPECT_EQ(0, tl_inventory_diff(&self->c, SETTLE_MS, self->why,
				       sizeof(self->why)))
		TH_LOG("after bind: %s", self->why);
	EXPECT_EQ(0, tl_groups_diff(&self->c, 0, self->why, sizeof(self->why)))
		TH_LOG("after bind: %s", self->why);
}

/* The GPU whose removal drops the most devices (companions, foreign). */
static const struct nlc_dev *pick_gpu_biggest_group(const struct model *m)
{
	const struct nlc_dev *best = NULL;
	int i, size, best_size = -1;

	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];
		int gi;

		if (d->role != GPUCTL_DEV_ROLE_GPU)
			continue;
		gi = NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP) ?
			model_find_group(m, d->iommu_group) : -1;
		size = gi < 0 ? 1 : m->groups[gi].ndevices;
		if (size > best_size) {
			best = d;
			best_size = size;
		}
	}
	return best;
}

/*
 * Notifications of @cmd (add or del) must name exactly the devices in @from
 * but not in @to, once each. dev-change-ntf is allowed for devices in both,
 * and around the add/del: a removed device first loses its driver, an added
 * one gets its driver afterwards; nothing may follow a del or precede an add.
 */
static int check_diff(struct __test_metadata *_metadata, struct event *ev,
		      int n, __u8 cmd, const struct model *from,
		      const struct model *to)
{
	int i, j, bad = 0;

	for (i = 0; i < from->ndevs; i++) {
		const char *addr = from->devs[i].address;
		int seen = 0;

		if (model_find_dev(to, addr))
			continue;
		for (j = 0; j < n; j++)
			seen += ev[j].cmd == cmd && !strcmp(ev[j].dev.address, addr);
		if (seen != 1) {
			TH_LOG("%s: %d %s notifications, want 1", addr, seen,
			       nlc_cmd_name(cmd));
			bad++;
		}
	}
	for (j = 0; j < n; j++) {
		const char *addr = ev[j].dev.address;
		bool in_from = model_find_dev(from, addr);
		bool in_to = model_find_dev(to, addr);
		bool del = cmd == GPUCTL_CMD_DEV_DEL_NTF;
		int k, pivot = -1;

		if (ev[j].cmd == cmd && in_from && !in_to)
			continue;
		if (ev[j].cmd != GPUCTL_CMD_DEV_CHANGE_NTF || !in_from) {
			TH_LOG("unexpected %s for %s", nlc_cmd_name(ev[j].cmd), addr);
			bad++;
			continue;
		}
		if (in_to)
			continue;
		for (k = 0; k < n; k++)
			if (ev[k].cmd == cmd && !strcmp(ev[k].dev.address, addr))
				pivot = k;
		if (pivot >= 0 && (del ? j > pivot : j < pivot)) {
			TH_LOG("dev-change-ntf for %s %s its %s", addr,
			       del ? "after" : "before", nlc_cmd_name(cmd));
			bad++;
		}
	}
	return bad;
}

static int wait_gone(const char *addr, int timeout_ms)
{
	char path[128];
	long deadline = tl_now_ms() + timeout_ms;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", addr);
	while (!access(path, F_OK)) {
		if (tl_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(100 * 1000);
	}
	return 0;
}

TEST_F_TIMEOUT(ev, remove_rescan, 120)
{
	const struct nlc_dev *gpu = pick_gpu_biggest_group(&self->before);
	char addr[NLC_ADDR_LEN];
	struct model *rescanned;
	int n;

	ASSERT_NE(NULL, gpu);
	strscpy(addr, gpu->address, sizeof(addr));
	TH_LOG("removing gpu %s", addr);
	ASSERT_EQ(0, tl_writef("1", "/sys/bus/pci/devices/%s/remove", addr));
	strscpy(self->removed, addr, sizeof(self->removed));
	ASSERT_EQ(0, wait_gone(addr, EVENT_TIMEOUT_MS));
	ASSERT_EQ(0, model_load(&self->after));
	ASSERT_EQ(NULL, model_find_dev(&self->after, addr));

	n = tl_collect(&self->mon, QUIET_MS * 2, EVENT_TIMEOUT_MS, self->ev,
		       EVENT_MAX);
	ASSERT_GE(n, 1);
	EXPECT_EQ(0, check_diff(_metadata, self->ev, n, GPUCTL_CMD_DEV_DEL_NTF,
				&self->before, &self->after));
	EXPECT_EQ(0, tl_inventory_diff(&self->c, SETTLE_MS, self->why,
				       sizeof(self->why)))
		TH_LOG("after remove: %s", self->why);
	EXPECT_EQ(0, tl_groups_diff(&self->c, 0, self->why, sizeof(self->why)))
		TH_LOG("after remove: %s", self->why);

	ASSERT_EQ(0, tl_write("/sys/bus/pci/rescan", "1"));
	self->removed[0] = '\0';
	n = tl_collect(&self->mon, QUIET_MS * 2, EVENT_TIMEOUT_MS, self->ev,
		       EVENT_MAX);
	rescanned = malloc(sizeof(*rescanned));
	ASSERT_NE(NULL, rescanned);
	ASSERT_EQ(0, model_load(rescanned));
	EXPECT_NE(NULL, model_find_dev(rescanned, addr)) TH_LOG("rescan did not bring %s back",
								addr);
	EXPECT_EQ(0, check_diff(_metadata, self->ev, n, GPUCTL_CMD_DEV_ADD_NTF,
				rescanned, &self->after));
	free(rescanned);
	EXPECT_EQ(0, tl_inventory_diff(&self->c, SETTLE_MS, self->why,
				       sizeof(self->why)))
		TH_LOG("after rescan: %s", self->why);
	EXPECT_EQ(0, tl_groups_diff(&self->c, SETTLE_MS, self->why,
				    sizeof(self->why)))
		TH_LOG("after rescan: %s", self->why);
}

/*
 * A GPU whose group becomes viable once the GPU itself is on vfio-pci:
 * every other non-bridge member already is (or has no driver).
 */
static const struct nlc_dev *pick_vfio_candidate(const struct model *m,
						 bool *flips)
{
	const struct nlc_dev *any = NULL;
	int i, j;

	*flips = false;
	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];
		const struct nlc_group *g;
		bool ok = true;
		int gi;

		if (d->role != GPUCTL_DEV_ROLE_GPU || !d->driver[0] ||
		    strstr(d->driver, "vfio") ||
		    !NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP))
			continue;
		gi = model_find_group(m, d->iommu_group);
		if (gi < 0)
			continue;
		g = &m->groups[gi];
		for (j = 0; j < g->ndevices; j++) {
			const struct nlc_dev *o = model_find_dev(m, g->devices[j]);

			if (o && o != d && o->role != GPUCTL_DEV_ROLE_BRIDGE &&
			    !model_driver_is_vfio_ok(o->driver))
				ok = false;
		}
		if (ok) {
			*flips = true;
			return d;
		}
		if (!any)
			any = d;
	}
	return any;
}

TEST_F_TIMEOUT(ev, vfio_viability, 120)
{
	char addr[NLC_ADDR_LEN], drv[NLC_NAME_LEN];
	const struct nlc_dev *d;
	struct nlc_group g;
	struct nlc_dev got;
	__u32 group;
	bool flips;

	if (!self->before.ngroups && !tl_have_iommu())
		SKIP(return, "no IOMMU: vfio-pci cannot bind");
	ASSERT_NE(0, self->before.ngroups) TH_LOG("no gpu in an iommu group");
	d = pick_vfio_candidate(&self->before, &flips);
	ASSERT_NE(NULL, d) TH_LOG("no gpu bound to a host driver");
	ASSERT_EQ(0, tl_modprobe("vfio-pci")) TH_LOG("modprobe vfio-pci failed");
	strscpy(addr, d->address, sizeof(addr));
	strscpy(drv, d->driver, sizeof(drv));
	group = d->iommu_group;
	TH_LOG("moving %s (group %u) from %s to vfio-pci; group should %s",
	       addr, group, drv, flips ? "become viable" : "stay not viable");

	ASSERT_EQ(0, nlc_group_get(&self->c, group, &g));
	EXPECT_EQ(0, g.viable);
	ASSERT_EQ(0, tl_writef("vfio-pci", "/sys/bus/pci/devices/%s/driver_override",
			       addr));
	strscpy(self->override, addr, sizeof(self->override));
	ASSERT_EQ(0, tl_writef(addr, "/sys/bus/pci/drivers/%s/unbind", drv));
	ASSERT_EQ(0, tl_write("/sys/bus/pci/drivers_probe", addr));
	ASSERT_EQ(1, tl_wait_ntf(&self->mon, GPUCTL_CMD_DEV_CHANGE_NTF, addr,
				 "vfio-pci", EVENT_TIMEOUT_MS, &got));
	ASSERT_EQ(0, nlc_group_get(&self->c, group, &g));
	EXPECT_EQ(flips, g.viable) TH_LOG("reason '%s'", g.reason);
	EXPECT_EQ(0, tl_groups_diff(&self->c, 0, self->why, sizeof(self->why)))
		TH_LOG("on vfio-pci: %s", self->why);

	ASSERT_EQ(0, tl_writef(addr, "/sys/bus/pci/drivers/vfio-pci/unbind"));
	ASSERT_EQ(0, tl_writef("\n", "/sys/bus/pci/devices/%s/driver_override",
			       addr));
	self->override[0] = '\0';
	ASSERT_EQ(0, tl_write("/sys/bus/pci/drivers_probe", addr));
	ASSERT_EQ(1, tl_wait_ntf(&self->mon, GPUCTL_CMD_DEV_CHANGE_NTF, addr,
				 drv, EVENT_TIMEOUT_MS, &got));
	ASSERT_EQ(0, nlc_group_get(&self->c, group, &g));
	EXPECT_EQ(0, g.viable);
	EXPECT_NE(0, g.reason[0]);
	EXPECT_EQ(0, tl_groups_diff(&self->c, SETTLE_MS, self->why,
				    sizeof(self->why)))
		TH_LOG("back on %s: %s", drv, self->why);
}

TEST_HARNESS_MAIN
