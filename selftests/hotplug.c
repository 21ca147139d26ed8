// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * PCI hot-plug driven from inside the guest through the QEMU monitor the
 * runner wires to $GPUCTL_QMP: a stand-in GPU plugged into the empty root
 * port "hp0" must be announced and listed, and its removal announced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "qmp.h"
#include "testlib.h"

#define PLUG_TIMEOUT_MS		30000
#define DEV_ID			"gpuctl-c-hpgpu"
#define ADD_ARGS \
	"{\"driver\": \"bochs-display\", \"bus\": \"hp0\", \"id\": \"" DEV_ID "\"}"
#define DEL_ARGS		"{\"id\": \"" DEV_ID "\"}"

FIXTURE(hp) {
	struct nlc c;
	struct nlc mon;
	int qmp;
	bool plugged;
	char answer[1024];
	char why[16384];
};

FIXTURE_SETUP(hp)
{
	self->qmp = -1;
	ASSERT_NE(NULL, getenv("GPUCTL_QMP"))
		TH_LOG("GPUCTL_QMP not set (not under selftests/qemu/run.sh)");
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_open(&self->mon));
	ASSERT_EQ(0, nlc_monitor_join(&self->mon));
	self->qmp = qmp_open();
	ASSERT_GE(self->qmp, 0) TH_LOG("open %s: %s", getenv("GPUCTL_QMP"),
				       strerror(-self->qmp));
}

FIXTURE_TEARDOWN(hp)
{
	if (self->plugged)
		qmp_exec(self->qmp, "device_del", DEL_ARGS, "undo",
			 self->answer, sizeof(self->answer));
	if (self->qmp >= 0)
		close(self->qmp);
	nlc_close(&self->mon);
	nlc_close(&self->c);
}

TEST_F_TIMEOUT(hp, device_add_del, 120)
{
	struct model *m = malloc(sizeof(*m));
	char addr[NLC_ADDR_LEN] = "";
	long deadline;
	struct nlc_dev d, want;
	char path[128];
	__u8 cmd;
	int ret;

	ASSERT_NE(NULL, m);
	ret = qmp_exec(self->qmp, "device_add", ADD_ARGS, "add", self->answer,
		       sizeof(self->answer));
	ASSERT_EQ(0, ret) TH_LOG("device_add: %s", self->answer);
	self->plugged = true;

	/* The new GPU's address is whatever the guest gave it. */
	deadline = tl_now_ms() + PLUG_TIMEOUT_MS;
	while (!addr[0] && tl_now_ms() < deadline) {
		ret = nlc_monitor_next(&self->mon, deadline - tl_now_ms(), &cmd, &d);
		ASSERT_GE(ret, 0);
		if (!ret)
			break;
		fprintf(stderr, "# event ");
		nlc_print_dev(stderr, nlc_cmd_name(cmd), &d);
		if (cmd == GPUCTL_CMD_DEV_ADD_NTF && d.role == GPUCTL_DEV_ROLE_GPU)
			strscpy(addr, d.address, sizeof(addr));
	}
	ASSERT_NE(0, addr[0]) TH_LOG("no dev-add-ntf for a gpu after device_add");
	TH_LOG("hot-plugged gpu at %s", addr);
	ASSERT_EQ(0, model_read_dev(addr, &want)) TH_LOG("%s not in sysfs", addr);
	EXPECT_EQ(0x03, want.class >> 16);
	EXPECT_EQ(0, tl_inventory_diff(&self->c, 10000, self->why,
				       sizeof(self->why)))
		TH_LOG("after device_add: %s", self->why);
	ASSERT_EQ(0, model_load(m));
	ASSERT_NE(NULL, model_find_dev(m, addr));
	ASSERT_EQ(0, nlc_dev_get(&self->c, addr, &d));
	EXPECT_EQ(0, model_cmp_dev(model_find_dev(m, addr), &d, self->why,
				   sizeof(self->why)))
		TH_LOG("%s", self->why);

	ret = qmp_exec(self->qmp, "device_del", DEL_ARGS, "del", self->answer,
		       sizeof(self->answer));
	ASSERT_EQ(0, ret) TH_LOG("device_del: %s", self->answer);
	EXPECT_EQ(1, tl_wait_ntf(&self->mon, GPUCTL_CMD_DEV_DEL_NTF, addr, NULL,
				 PLUG_TIMEOUT_MS, NULL))
		TH_LOG("no dev-del-ntf for %s", addr);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", addr);
	deadline = tl_now_ms() + PLUG_TIMEOUT_MS;
	while (!access(path, F_OK) && tl_now_ms() < deadline)
		usleep(100 * 1000);
	EXPECT_NE(0, access(path, F_OK));
	self->plugged = false;
	EXPECT_EQ(-ENODEV, nlc_dev_get(&self->c, addr, &d));
	EXPECT_EQ(0, tl_inventory_diff(&self->c, 10000, self->why,
				       sizeof(self->why)))
		TH_LOG("after device_del: %s", self->why);
	free(m);
}

TEST_HARNESS_MAIN
