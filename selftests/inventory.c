// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The inventory against sysfs, device by device and group by group, through
 * both dumps and do requests. Expected values come from sysfs at run time.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "testlib.h"

FIXTURE(inv) {
	struct nlc c;
	struct model m;
	char why[16384];
};

FIXTURE_SETUP(inv)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, model_load(&self->m));
}

FIXTURE_TEARDOWN(inv)
{
	nlc_close(&self->c);
}

/* The model itself must not be empty, or every comparison passes. */
TEST_F(inv, sysfs_has_gpus)
{
	int i, gpus = 0;

	for (i = 0; i < self->m.ndevs; i++)
		gpus += self->m.devs[i].role == GPUCTL_DEV_ROLE_GPU;
	TH_LOG("sysfs: %d tracked devices, %d gpus, %d groups",
	       self->m.ndevs, gpus, self->m.ngroups);
	ASSERT_GT(gpus, 0);
}

TEST_F(inv, dev_dump_matches_sysfs)
{
	int bad = tl_inventory_diff(&self->c, 0, self->why, sizeof(self->why));

	EXPECT_EQ(0, bad) TH_LOG("%s", self->why);
}

TEST_F(inv, dev_dump_no_duplicates)
{
	struct nlc_dump_info info;
	struct nlc_dev *devs;
	int i, j, n;

	ASSERT_EQ(0, nlc_dev_dump(&self->c, &devs, &n, &info));
	TH_LOG("%d devices in %d datagrams", n, info.datagrams);
	EXPECT_EQ(n, info.messages);
	EXPECT_FALSE(info.intr);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			EXPECT_STRNE(devs[i].address, devs[j].address);
	free(devs);
}

TEST_F(inv, dev_get_matches_dump)
{
	struct nlc_dev *devs, one;
	int i, n;

	ASSERT_EQ(0, nlc_dev_dump(&self->c, &devs, &n, NULL));
	ASSERT_GT(n, 0);
	for (i = 0; i < n; i++) {
		int ret = nlc_dev_get(&self->c, devs[i].address, &one);

		EXPECT_EQ(0, ret) TH_LOG("dev-get %s: %s", devs[i].address,
					 self->c.extack);
		if (ret)
			continue;
		EXPECT_EQ(0, model_cmp_dev(&devs[i], &one, self->why,
					   sizeof(self->why)))
			TH_LOG("do vs dump: %s", self->why);
	}
	free(devs);
}

TEST_F(inv, dev_get_matches_sysfs)
{
	struct nlc_dev one;
	int i;

	for (i = 0; i < self->m.ndevs; i++) {
		const struct nlc_dev *want = &self->m.devs[i];

		ASSERT_EQ(0, nlc_dev_get(&self->c, want->address, &one))
			TH_LOG("dev-get %s: %s", want->address, self->c.extack);
		EXPECT_EQ(0, model_cmp_dev(want, &one, self->why,
					   sizeof(self->why)))
			TH_LOG("%s", self->why);
	}
}

TEST_F(inv, group_dump_matches_sysfs)
{
	int bad = tl_groups_diff(&self->c, 0, self->why, sizeof(self->why));

	EXPECT_EQ(0, bad) TH_LOG("%s", self->why);
}

TEST_F(inv, group_get_matches_sysfs)
{
	struct nlc_group g;
	int i;

	if (!self->m.ngroups && !tl_have_iommu())
		SKIP(return, "no IOMMU, so no group to get");
	ASSERT_NE(0, self->m.ngroups) TH_LOG("no gpu sits in an iommu group");
	for (i = 0; i < self->m.ngroups; i++) {
		ASSERT_EQ(0, nlc_group_get(&self->c, self->m.groups[i].id, &g))
			TH_LOG("group-get %u: %s", self->m.groups[i].id,
			       self->c.extack);
		EXPECT_EQ(0, model_cmp_group(&self->m, i, &g, self->why,
					     sizeof(self->why)))
			TH_LOG("%s", self->why);
	}
}

/*
 * Each device that sysfs puts in an IOMMU group carries the iommu-group
 * attribute, and the group dump lists the device under that group. A
 * device whose reply lost the attribute must fail here, not be skipped.
 */
TEST_F(inv, dev_groups_agree)
{
	struct nlc_group *groups;
	struct nlc_dev *devs;
	int i, j, k, n, ng, grouped = 0;

	ASSERT_EQ(0, nlc_dev_dump(&self->c, &devs, &n, NULL));
	ASSERT_EQ(0, nlc_group_dump(&self->c, &groups, &ng, NULL));
	for (i = 0; i < n; i++) {
		struct nlc_dev want;
		bool found = false;

		if (model_read_dev(devs[i].address, &want))
			continue;	/* removed since the dump */
		if (!NLC_HAS(&want, GPUCTL_A_DEV_IOMMU_GROUP))
			continue;
		grouped++;
		EXPECT_TRUE(NLC_HAS(&devs[i], GPUCTL_A_DEV_IOMMU_GROUP))
			TH_LOG("%s: in group %u in sysfs, no iommu-group in the reply",
			       devs[i].address, want.iommu_group);
		if (!NLC_HAS(&devs[i], GPUCTL_A_DEV_IOMMU_GROUP))
			continue;
		EXPECT_EQ(want.iommu_group, devs[i].iommu_group)
			TH_LOG("%s: group %u in sysfs", devs[i].address,
			       want.iommu_group);
		for (j = 0; j < ng; j++) {
			if (groups[j].id != devs[i].iommu_group)
				continue;
			for (k = 0; k < groups[j].ndevices; k++)
				found |= !strcmp(groups[j].devices[k],
						 devs[i].address);
		}
		EXPECT_TRUE(found) TH_LOG("%s: not a member of group %u",
					  devs[i].address, devs[i].iommu_group);
	}
	if (tl_have_iommu())
		EXPECT_NE(0, grouped) TH_LOG("no tracked device is in a group");
	free(devs);
	free(groups);
}

TEST_HARNESS_MAIN
