// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Loading and unloading the module: the inventory is complete after every
 * load, every "dev ADDR created" debug line has its "dev ADDR destroyed",
 * and rmmod is safe with a monitor subscribed or a dump half read.
 * Needs $GPUCTL_KO; leaves the module loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/msg.h>

#include "kselftest_harness.h"
#include "testlib.h"

#define CYCLES	3
/* Turns the lifecycle pr_debug() lines on from the start. */
#define PARAMS	"dyndbg=+p"

struct balance {
	int created;
	int destroyed;
	char live[512][NLC_ADDR_LEN];	/* created, not yet destroyed */
	int nlive;
	int unmatched;			/* destroyed without created */
};

/* Reads every record since the last call, "gpuctl: dev ADDR created". */
static void kmsg_scan(int fd, struct balance *b)
{
	char rec[8192], addr[NLC_ADDR_LEN], what[16];
	ssize_t n;
	int i;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg;

		if (n <= 0)
			continue;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || sscanf(msg + 1, "gpuctl: dev %15s %15s", addr, what) != 2)
			continue;
		if (!strcmp(what, "created")) {
			b->created++;
			if (b->nlive < 512)
				strscpy(b->live[b->nlive++], addr, sizeof(b->live[b->nlive++]));
		} else if (!strcmp(what, "destroyed")) {
			b->destroyed++;
			for (i = 0; i < b->nlive; i++)
				if (!strcmp(b->live[i], addr))
					break;
			if (i == b->nlive) {
				b->unmatched++;
				continue;
			}
			strscpy(b->live[i], b->live[--b->nlive], sizeof(b->live[i]));
		}
	}
}

FIXTURE(life) {
	char why[16384];
	struct balance b;
	int kmsg;
};

FIXTURE_SETUP(life)
{
	ASSERT_NE(NULL, getenv("GPUCTL_KO")) TH_LOG("GPUCTL_KO not set");
	ASSERT_EQ(0, access("/dev/kmsg", R_OK)) TH_LOG("no /dev/kmsg");
	memset(&self->b, 0, sizeof(self->b));
	if (tl_module_loaded())
		ASSERT_EQ(0, tl_module_unload());
	self->kmsg = tl_kmsg_open();
	ASSERT_GE(self->kmsg, 0);
}

FIXTURE_TEARDOWN(life)
{
	if (!tl_module_loaded())
		tl_module_load(PARAMS);
	if (self->kmsg > 0)
		close(self->kmsg);
}

TEST_F_TIMEOUT(life, load_unload_cycles, 180)
{
	struct nlc c;
	struct model m;
	int i;

	for (i = 0; i < CYCLES; i++) {
		int before = self->b.created;

		ASSERT_EQ(0, tl_module_load(PARAMS)) TH_LOG("insmod %s", getenv("GPUCTL_KO"));
		ASSERT_EQ(0, nlc_open(&c));
		EXPECT_EQ(0, tl_inventory_diff(&c, 0, self->why, sizeof(self->why)))
			TH_LOG("cycle %d: %s", i, self->why);
		EXPECT_EQ(0, tl_groups_diff(&c, 0, self->why, sizeof(self->why)))
			TH_LOG("cycle %d: %s", i, self->why);
		nlc_close(&c);
		ASSERT_EQ(0, model_load(&m));
		kmsg_scan(self->kmsg, &self->b);
		EXPECT_EQ(m.ndevs, self->b.created - before)
			TH_LOG("cycle %d: %d 'created' lines for %d devices", i,
			       self->b.created - before, m.ndevs);
		ASSERT_EQ(0, tl_module_unload());
		EXPECT_FALSE(tl_module_loaded());
		kmsg_scan(self->kmsg, &self->b);
		EXPECT_EQ(0, self->b.nlive)
			TH_LOG("cycle %d: %d devices never destroyed, first %s", i,
			       self->b.nlive, self->b.live[0]);
		EXPECT_EQ(0, self->b.unmatched);
	}
	TH_LOG("%d created, %d destroyed", self->b.created, self->b.destroyed);
	EXPECT_EQ(self->b.created, self->b.destroyed);
	EXPECT_GT(self->b.created, 0) TH_LOG("no lifecycle lines: dyndbg?");
}

TEST_F_TIMEOUT(life, rmmod_with_monitor, 60)
{
	struct nlc mon;
	struct nlc_dev d;
	__u8 cmd;

	ASSERT_EQ(0, tl_module_load(PARAMS));
	ASSERT_EQ(0, nlc_open(&mon));
	ASSERT_EQ(0, nlc_monitor_join(&mon));
	/* A subscriber does not pin the module. */
	EXPECT_EQ(0, tl_module_unload());
	/* The socket outlives the family; reading it must stay harmless. */
	EXPECT_GE(nlc_monitor_next(&mon, 200, &cmd, &d), 0);
	nlc_close(&mon);
	if (tl_module_loaded())
		ASSERT_EQ(0, tl_module_unload());
	kmsg_scan(self->kmsg, &self->b);
	EXPECT_EQ(0, self->b.nlive);
	EXPECT_EQ(self->b.created, self->b.destroyed);
}

TEST_F_TIMEOUT(life, rmmod_during_dump, 60)
{
	struct nlc_dump_info info;
	struct nl_msg *msg;
	struct nlc c;
	int ret;

	ASSERT_EQ(0, tl_module_load(PARAMS));
	ASSERT_EQ(0, nlc_open(&c));
	ASSERT_EQ(0, nlc_set_rcvbuf(&c, 1024));
	msg = nlc_msg_new(&c, GPUCTL_CMD_DEV_GET, NLM_F_DUMP);
	ASSERT_NE(NULL, msg);
	ASSERT_EQ(0, nlc_send(&c, msg));
	/*
	 * With the dump unfinished the module is pinned (EAGAIN or EBUSY);
	 * a dump that fit in one part is already over and rmmod works.
	 */
	ret = tl_module_unload();
	TH_LOG("rmmod with a dump pending: %s", ret ? strerror(-ret) : "ok");
	EXPECT_TRUE(ret == 0 || ret == -EAGAIN || ret == -EBUSY);
	if (ret) {
		EXPECT_EQ(0, nlc_recv_reply(&c, NULL, NULL, &info));
		TH_LOG("%d messages in %d datagrams", info.messages,
		       info.datagrams);
		nlc_close(&c);
		EXPECT_EQ(0, tl_module_unload());
	} else {
		/* Reading what the gone module left queued is harmless. */
		nlc_recv_reply(&c, NULL, NULL, &info);
		nlc_close(&c);
	}
	EXPECT_FALSE(tl_module_loaded());
	kmsg_scan(self->kmsg, &self->b);
	EXPECT_EQ(0, self->b.nlive);
	EXPECT_EQ(self->b.created, self->b.destroyed);
}

TEST_HARNESS_MAIN
