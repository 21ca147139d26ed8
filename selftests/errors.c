// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Requests the module must refuse, each with its errno and an extack that
 * tells the user why.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "kselftest_harness.h"
#include "testlib.h"

FIXTURE(err) {
	struct nlc c;
	struct model m;
};

FIXTURE_SETUP(err)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, model_load(&self->m));
}

FIXTURE_TEARDOWN(err)
{
	nlc_close(&self->c);
}

static void log_error(struct __test_metadata *_metadata, const char *what,
		      const struct nlc *c)
{
	TH_LOG("%s: errno %d (%s), extack '%s', missing attr %u", what,
	       c->err, strerror(c->err), c->extack, c->miss_type);
}

TEST_F(err, dev_get_malformed_address)
{
	static const char * const bad[] = {
		"", "garbage", "0000:00:02", "0000:00:02.8", "0000:00:20.0",
		"000:00:02.0x", "0000-00-02.0", "0000:0g:02.0", "0000:00:02:0",
		" 000:00:02.0", "0000:00:02.0 ",
	};
	struct nlc_dev d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = nlc_dev_get(&self->c, bad[i], &d);

		log_error(_metadata, bad[i], &self->c);
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_NE(0, self->c.extack[0])
			TH_LOG("'%s' rejected without a message", bad[i]);
	}
}

/* Longer than address-len: the policy refuses it before the handler. */
TEST_F(err, dev_get_address_too_long)
{
	struct nlc_dev d;

	EXPECT_EQ(-EINVAL, nlc_dev_get(&self->c, "0000:00:02.00000", &d));
	log_error(_metadata, "too long", &self->c);
	EXPECT_NE(0, self->c.extack[0]);
}

/* Well-formed, but no PCI function lives there. */
TEST_F(err, dev_get_unknown_address)
{
	char addr[64];
	struct nlc_dev d;
	int bus;

	for (bus = 0xfe; bus > 0; bus--) {
		snprintf(addr, sizeof(addr), "/sys/bus/pci/devices/0000:%02x:1f.7",
			 bus);
		if (access(addr, F_OK))
			break;
	}
	snprintf(addr, sizeof(addr), "0000:%02x:1f.7", bus);
	EXPECT_EQ(-ENODEV, nlc_dev_get(&self->c, addr, &d));
	log_error(_metadata, addr, &self->c);
	EXPECT_NE(0, self->c.extack[0]);
	/* The offset points at the address attribute. */
	EXPECT_GE(self->c.bad_offset, 0);
}

/* A PCI function that exists but that gpuctl does not track. */
TEST_F(err, dev_get_untracked_device)
{
	struct dirent *de;
	struct nlc_dev d;
	DIR *dir = opendir("/sys/bus/pci/devices");
	char addr[sizeof(de->d_name)] = "";

	ASSERT_NE(NULL, dir);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || model_find_dev(&self->m, de->d_name))
			continue;
		snprintf(addr, sizeof(addr), "%s", de->d_name);
		break;
	}
	closedir(dir);
	/* every topology has bridges and the runner's virtio devices */
	ASSERT_NE(0, addr[0]) TH_LOG("every PCI function is tracked");
	EXPECT_EQ(-ENODEV, nlc_dev_get(&self->c, addr, &d));
	log_error(_metadata, addr, &self->c);
	EXPECT_NE(0, self->c.extack[0]);
}

TEST_F(err, group_get_unknown_id)
{
	__u32 ids[] = { 0xffffffff, 100000 };
	struct dirent *de;
	struct nlc_group g;
	size_t i;
	DIR *dir;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		EXPECT_EQ(-ENOENT, nlc_group_get(&self->c, ids[i], &g));
		log_error(_metadata, "unknown group", &self->c);
		EXPECT_NE(0, self->c.extack[0]);
	}
	/* A real IOMMU group without a GPU is not gpuctl's. */
	dir = opendir("/sys/kernel/iommu_groups");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		__u32 id = strtoul(de->d_name, NULL, 10);

		if (de->d_name[0] == '.' || model_find_group(&self->m, id) >= 0)
			continue;
		EXPECT_EQ(-ENOENT, nlc_group_get(&self->c, id, &g))
			TH_LOG("group %u holds no gpu", id);
		break;
	}
	closedir(dir);
}

static int send_raw(struct nlc *c, __u8 cmd, int flags,
		    void (*fill)(struct nl_msg *msg))
{
	struct nl_msg *msg = nlc_msg_new(c, cmd, flags);

	if (!msg)
		return -ENOMEM;
	if (fill)
		fill(msg);
	return nlc_exchange(c, msg, NULL, NULL, NULL);
}

TEST_F(err, dev_get_missing_address)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_DEV_GET, NLM_F_ACK,
				    NULL));
	log_error(_metadata, "dev-get without address", &self->c);
	EXPECT_EQ(GPUCTL_A_DEV_ADDRESS, self->c.miss_type);
}

TEST_F(err, group_get_missing_id)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_GROUP_GET, NLM_F_ACK,
				    NULL));
	log_error(_metadata, "group-get without id", &self->c);
	EXPECT_EQ(GPUCTL_A_GROUP_ID, self->c.miss_type);
}

static void fill_addr_and_vendor(struct nl_msg *msg)
{
	nla_put_string(msg, GPUCTL_A_DEV_ADDRESS, "0000:00:00.0");
	nla_put_u16(msg, GPUCTL_A_DEV_VENDOR_ID, 0x1234);
}

static void fill_unknown_type(struct nl_msg *msg)
{
	nla_put_string(msg, GPUCTL_A_DEV_ADDRESS, "0000:00:00.0");
	nla_put_u32(msg, 200, 1);
}

static void fill_short_id(struct nl_msg *msg)
{
	nla_put_u8(msg, GPUCTL_A_GROUP_ID, 1);
}

static void fill_unterminated(struct nl_msg *msg)
{
	nla_put(msg, GPUCTL_A_DEV_ADDRESS, 12, "0000:00:00.0");
}

/* Strict validation: a reply-only attribute in a request is refused. */
TEST_F(err, dev_get_reply_attr_in_request)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_DEV_GET, NLM_F_ACK,
				    fill_addr_and_vendor));
	log_error(_metadata, "dev-get with vendor-id", &self->c);
	EXPECT_GE(self->c.bad_offset, 0);
}

TEST_F(err, dev_get_unknown_attr)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_DEV_GET, NLM_F_ACK,
				    fill_unknown_type));
	log_error(_metadata, "dev-get with attribute 200", &self->c);
	EXPECT_NE(0, self->c.extack[0]);
}

TEST_F(err, dev_dump_unknown_attr)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_DEV_GET, NLM_F_DUMP,
				    fill_unknown_type));
	log_error(_metadata, "dev dump with attribute 200", &self->c);
}

TEST_F(err, group_get_short_id)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_GROUP_GET, NLM_F_ACK,
				    fill_short_id));
	log_error(_metadata, "group-get with a u8 id", &self->c);
}

TEST_F(err, dev_get_unterminated_address)
{
	EXPECT_EQ(-EINVAL, send_raw(&self->c, GPUCTL_CMD_DEV_GET, NLM_F_ACK,
				    fill_unterminated));
	log_error(_metadata, "dev-get with an unterminated string", &self->c);
}

/* Notifications are not requests. */
TEST_F(err, ntf_cmd_as_request)
{
	int ret = send_raw(&self->c, GPUCTL_CMD_DEV_ADD_NTF, NLM_F_ACK, NULL);

	log_error(_metadata, "dev-add-ntf as a request", &self->c);
	EXPECT_EQ(-EOPNOTSUPP, ret);
	EXPECT_EQ(-EOPNOTSUPP, send_raw(&self->c, 99, NLM_F_ACK, NULL));
}

TEST_HARNESS_MAIN
