// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Reservation rules over netlink: a rule's round trip (rule-new, rule-get,
 * dump, rule-del) checked against sysfs and the monitor group, and the
 * requests the module must refuse without changing anything. The target
 * GPU is picked from sysfs: one with an IOMMU group and no driver, so the
 * rule binds it to vfio-pci without taking it from anyone.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "testlib.h"

#define NTF_TIMEOUT_MS		20000
#define BIND_TIMEOUT_MS		15000
#define SNAPSHOT_LEN		16384
/* Matches no device of any test topology. */
#define NO_DEV_ADDR		"0000:7e:1f.6"
#define NO_DEV_IDS		"abcd:ef01"
#define MAX_RULES		8

/* Rules a failed test left behind, deleted by the teardown. */
struct rule_list {
	__u32 ids[MAX_RULES];
	int n;
};

FIXTURE(rsv) {
	struct nlc c;
	struct nlc mon;
	struct model m;
	struct nlc_ntf ntf;
	struct rule_list rules;
	/* Rules and PCI drivers before and after a refused request. */
	char rules0[SNAPSHOT_LEN];
	char rules1[SNAPSHOT_LEN];
	char pci0[SNAPSHOT_LEN];
	char pci1[SNAPSHOT_LEN];
};

FIXTURE_SETUP(rsv)
{
	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_open(&self->mon));
	ASSERT_EQ(0, nlc_monitor_join(&self->mon));
	ASSERT_EQ(0, model_load(&self->m));
}

FIXTURE_TEARDOWN(rsv)
{
	int i;

	for (i = 0; i < self->rules.n; i++)
		if (self->rules.ids[i])
			nlc_rule_del(&self->c, &self->rules.ids[i], NULL);
	nlc_close(&self->mon);
	nlc_close(&self->c);
}

static void remember(struct rule_list *l, __u32 id)
{
	if (l->n < MAX_RULES)
		l->ids[l->n++] = id;
}

static void forget(struct rule_list *l, __u32 id)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ids[i] == id)
			l->ids[i] = 0;
}

/* A GPU in an IOMMU group of its own with no driver: vfio-pci can bind it. */
static const struct nlc_dev *pick_free_gpu(const struct model *m)
{
	int i;

	for (i = 0; i < m->ndevs; i++) {
		const struct nlc_dev *d = &m->devs[i];
		int gi;

		if (d->role != GPUCTL_DEV_ROLE_GPU || d->driver[0] ||
		    !NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP))
			continue;
		gi = model_find_group(m, d->iommu_group);
		if (gi >= 0 && m->groups[gi].ndevices == 1)
			return d;
	}
	return NULL;
}

static void log_error(struct __test_metadata *_metadata, const char *what,
		      const struct nlc *c)
{
	TH_LOG("%s: errno %d (%s), extack '%s', bad attr %d, missing attr %u",
	       what, c->err, strerror(c->err), c->extack, c->bad_attr,
	       c->miss_type);
}

/* Rules as one string, to show a refused request left them alone. */
static int rules_snapshot(struct nlc *c, char *buf, size_t len)
{
	struct nlc_rule *rules;
	size_t used = 0;
	int i, j, n, ret;

	ret = nlc_rule_dump(c, &rules, &n, NULL);
	if (ret)
		return ret;
	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		used += snprintf(buf + used, len - used, "%u %s %s %d %d:",
				 rules[i].id, rules[i].match, rules[i].driver,
				 rules[i].force, rules[i].take);
		for (j = 0; j < rules[i].ndevices && used < len; j++)
			used += snprintf(buf + used, len - used, " %s",
					 rules[i].devices[j]);
		if (used < len)
			used += snprintf(buf + used, len - used, ";");
	}
	free(rules);
	return used < len ? 0 : -E2BIG;
}

/* Wait for a rule notification @cmd about rule @id. */
static int wait_rule_ntf(struct nlc *mon, struct nlc_ntf *ntf, __u8 cmd,
			 __u32 id)
{
	long deadline = tl_now_ms() + NTF_TIMEOUT_MS;
	int ret;

	for (;;) {
		long left = deadline - tl_now_ms();

		if (left <= 0)
			return 0;
		ret = nlc_monitor_next_ntf(mon, left, ntf);
		if (ret <= 0)
			return ret;
		fprintf(stderr, "# event ");
		nlc_print_ntf(stderr, ntf);
		if (ntf->cmd == cmd && ntf->rule.id == id)
			return 1;
	}
}

/* Wait for a dev-change-ntf about @addr that reports @action. */
static int wait_action(struct nlc *mon, struct nlc_ntf *ntf, const char *addr,
		       __u32 action)
{
	long deadline = tl_now_ms() + NTF_TIMEOUT_MS;
	const struct nlc_dev *d = &ntf->dev;
	int ret;

	for (;;) {
		long left = deadline - tl_now_ms();

		if (left <= 0)
			return 0;
		ret = nlc_monitor_next_ntf(mon, left, ntf);
		if (ret <= 0)
			return ret;
		fprintf(stderr, "# event ");
		nlc_print_ntf(stderr, ntf);
		if (ntf->cmd == GPUCTL_CMD_DEV_CHANGE_NTF &&
		    !strcmp(d->address, addr) &&
		    NLC_HAS(d, GPUCTL_A_DEV_ACTION) && d->action == action)
			return 1;
	}
}

static bool rule_has_dev(const struct nlc_rule *r, const char *addr)
{
	int i;

	for (i = 0; i < r->ndevices; i++)
		if (!strcmp(r->devices[i], addr))
			return true;
	return false;
}

/*
 * A host driver that fails its probe (vmwgfx on 6.12 says "no pitchlock")
 * shows in sysfs as bound while the probe runs, which takes seconds under
 * TCG; an earlier test's rule-del starts such probes. Wait for one to end.
 */
static const struct nlc_dev *settle_free_gpu(struct model *m)
{
	long deadline = tl_now_ms() + 30000;
	const struct nlc_dev *gpu;

	while (!(gpu = pick_free_gpu(m)) && tl_now_ms() < deadline) {
		usleep(200000);
		if (model_load(m))
			return NULL;
	}
	return gpu;
}

TEST_F_TIMEOUT(rsv, round_trip, 180)
{
	const struct nlc_dev *gpu = settle_free_gpu(&self->m);
	char addr[NLC_ADDR_LEN], s[NLC_NAME_LEN];
	struct nlc_rule r, got, *rules;
	struct nlc_dev d;
	int n;

	ASSERT_NE(NULL, gpu) TH_LOG("no driverless gpu alone in an iommu group");
	strscpy(addr, gpu->address, sizeof(addr));
	TH_LOG("reserving %s", addr);

	ASSERT_EQ(0, nlc_rule_new(&self->c, addr, NULL, false, false, &r))
		log_error(_metadata, "rule-new", &self->c);
	remember(&self->rules, r.id);
	EXPECT_TRUE(NLC_HAS(&r, GPUCTL_A_RULE_ID));
	EXPECT_STREQ(addr, r.match);
	EXPECT_STREQ("vfio-pci", r.driver);
	EXPECT_FALSE(r.force);
	EXPECT_FALSE(r.take);
	EXPECT_EQ(GPUCTL_RULE_SOURCE_NETLINK, r.source);
	EXPECT_TRUE(rule_has_dev(&r, addr));
	EXPECT_EQ(0, r.nwarnings) TH_LOG("warning '%s'", r.warnings[0]);

	/* rule-get and the dump give back what the reply said. */
	ASSERT_EQ(0, nlc_rule_get(&self->c, r.id, &got));
	EXPECT_EQ(r.id, got.id);
	EXPECT_STREQ(r.match, got.match);
	EXPECT_STREQ(r.driver, got.driver);
	EXPECT_EQ(r.source, got.source);
	EXPECT_EQ(r.ndevices, got.ndevices);
	ASSERT_EQ(0, nlc_rule_dump(&self->c, &rules, &n, NULL));
	EXPECT_NE(NULL, nlc_rule_find(rules, n, addr));
	free(rules);

	/* rule-new returns after enforcement: sysfs shows it at once. */
	EXPECT_EQ(0, tl_override_of(addr, s, sizeof(s)));
	EXPECT_STREQ("vfio-pci", s);
	EXPECT_EQ(1, tl_wait_driver(addr, "vfio-pci", BIND_TIMEOUT_MS));
	ASSERT_EQ(0, nlc_dev_get(&self->c, addr, &d));
	EXPECT_EQ(1, d.reserved);
	EXPECT_EQ(GPUCTL_DEV_STATE_RESERVED, d.state)
		TH_LOG("state %s: %s", nlc_state_name(d.state), d.state_reason);
	EXPECT_EQ(r.id, d.rule);
	EXPECT_STREQ("vfio-pci", d.driver);
	EXPECT_FALSE(NLC_HAS(&d, GPUCTL_A_DEV_ACTION));

	EXPECT_EQ(1, wait_rule_ntf(&self->mon, &self->ntf,
				   GPUCTL_CMD_RULE_NEW_NTF, r.id));
	EXPECT_STREQ(addr, self->ntf.rule.match);
	EXPECT_EQ(1, wait_action(&self->mon, &self->ntf, addr,
				 GPUCTL_DEV_ACTION_BOUND))
		TH_LOG("no dev-change-ntf with action bound for %s", addr);

	ASSERT_EQ(0, nlc_rule_del(&self->c, &r.id, NULL))
		log_error(_metadata, "rule-del", &self->c);
	forget(&self->rules, r.id);
	EXPECT_EQ(-ENOENT, nlc_rule_get(&self->c, r.id, &got));
	ASSERT_EQ(0, nlc_rule_dump(&self->c, &rules, &n, NULL));
	EXPECT_EQ(NULL, nlc_rule_find(rules, n, addr));
	free(rules);
	EXPECT_EQ(0, tl_override_of(addr, s, sizeof(s)));
	EXPECT_STREQ("", s);
	/* No host driver wants this device: it ends with none. */
	EXPECT_EQ(1, tl_wait_driver(addr, "", BIND_TIMEOUT_MS));
	ASSERT_EQ(0, nlc_dev_get(&self->c, addr, &d));
	EXPECT_EQ(0, d.reserved);
	EXPECT_EQ(GPUCTL_DEV_STATE_FREE, d.state);
	EXPECT_FALSE(NLC_HAS(&d, GPUCTL_A_DEV_RULE));

	EXPECT_EQ(1, wait_rule_ntf(&self->mon, &self->ntf,
				   GPUCTL_CMD_RULE_DEL_NTF, r.id));
	EXPECT_EQ(1, wait_action(&self->mon, &self->ntf, addr,
				 GPUCTL_DEV_ACTION_RELEASED))
		TH_LOG("no dev-change-ntf with action released for %s", addr);
}

/* Matches are canonical, lower-case: the same rule in another case exists. */
TEST_F(rsv, duplicate)
{
	static const char * const twins[][2] = {
		{ "ABCD:EF01", "abcd:EF01" },
		{ "ABCD:*", "abcd:*" },
		{ "0000:7E:1F.6", NO_DEV_ADDR },
		{ "abcd:ef01:1AF4:1100", "ABCD:EF01:1af4:1100" },
	};
	struct nlc_rule r, dup;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(twins); i++) {
		char lower[NLC_NAME_LEN];
		size_t k;

		ASSERT_EQ(0, nlc_rule_new(&self->c, twins[i][0], NULL, false,
					  false, &r))
			log_error(_metadata, twins[i][0], &self->c);
		remember(&self->rules, r.id);
		for (k = 0; twins[i][0][k] && k < sizeof(lower) - 1; k++)
			lower[k] = tolower(twins[i][0][k]);
		lower[k] = '\0';
		EXPECT_STREQ(lower, r.match);
		EXPECT_EQ(0, r.ndevices) TH_LOG("%s matched %s", r.match,
						r.devices[0]);
		EXPECT_EQ(-EEXIST, nlc_rule_new(&self->c, twins[i][1], NULL,
						false, false, &dup))
			log_error(_metadata, twins[i][1], &self->c);
		EXPECT_EQ(-EEXIST, nlc_rule_new(&self->c, twins[i][0], NULL,
						false, false, &dup));
		ASSERT_EQ(0, nlc_rule_del(&self->c, &r.id, NULL))
			log_error(_metadata, "rule-del", &self->c);
		forget(&self->rules, r.id);
	}
}

TEST_F(rsv, malformed_match)
{
	static const char * const bad[] = {
		"", "garbage", "0000:01:00", "0000:01:00.8", "0000:01:20.0",
		"0000:0g:00.0", "0000-01-00.0", "01:00.0 ", " 0000:01:00.0",
		"1234", "1234:", ":1111", "12345:1111", "1234:11111",
		"1234:111g", "1234:1111:1af4", "1234:1111:1af4:", "*:1111",
		"1234:1111:1af4:1100:0", "1234:1111:*:1100",
		/* longer than match-len: the policy refuses it */
		"0000:01:00.0000000000000000000000000000000",
	};
	struct nlc_rule r;
	size_t i;

	ASSERT_EQ(0, rules_snapshot(&self->c, self->rules0, SNAPSHOT_LEN));
	ASSERT_EQ(0, tl_pci_snapshot(self->pci0, SNAPSHOT_LEN, false));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = nlc_rule_new(&self->c, bad[i], NULL, false, true, &r);

		log_error(_metadata, bad[i], &self->c);
		if (!ret)
			remember(&self->rules, r.id);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("'%s' accepted", bad[i]);
		EXPECT_NE(0, self->c.extack[0])
			TH_LOG("'%s' rejected without a message", bad[i]);
		EXPECT_EQ(GPUCTL_A_RULE_MATCH, self->c.bad_attr)
			TH_LOG("'%s': extack does not point at the match", bad[i]);
	}
	ASSERT_EQ(0, rules_snapshot(&self->c, self->rules1, SNAPSHOT_LEN));
	EXPECT_STREQ(self->rules0, self->rules1);
	ASSERT_EQ(0, tl_pci_snapshot(self->pci1, SNAPSHOT_LEN, false));
	EXPECT_STREQ(self->pci0, self->pci1);
}

TEST_F(rsv, not_a_vfio_driver)
{
	static const char * const bad[] = { "bochs-drm", "e1000", "nouveau" };
	const struct nlc_dev *gpu = pick_free_gpu(&self->m);
	const char *addr = gpu ? gpu->address : NO_DEV_ADDR;
	struct nlc_rule r;
	size_t i;

	ASSERT_EQ(0, rules_snapshot(&self->c, self->rules0, SNAPSHOT_LEN));
	ASSERT_EQ(0, tl_pci_snapshot(self->pci0, SNAPSHOT_LEN, false));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = nlc_rule_new(&self->c, addr, bad[i], false, false, &r);

		log_error(_metadata, bad[i], &self->c);
		if (!ret)
			remember(&self->rules, r.id);
		EXPECT_EQ(-EINVAL, ret);
		/* The message names the driver, the offset its attribute. */
		EXPECT_NE(NULL, strstr(self->c.extack, bad[i]));
		EXPECT_EQ(GPUCTL_A_RULE_DRIVER, self->c.bad_attr);
	}
	ASSERT_EQ(0, rules_snapshot(&self->c, self->rules1, SNAPSHOT_LEN));
	EXPECT_STREQ(self->rules0, self->rules1);
	ASSERT_EQ(0, tl_pci_snapshot(self->pci1, SNAPSHOT_LEN, false));
	EXPECT_STREQ(self->pci0, self->pci1);
}

/*
 * "nvidia" reserves NVIDIA's vendor VFs only: a rule naming a whole GPU
 * with it is taken, but the GPU is blocked, with the reason, and neither
 * the rule nor its removal touches the GPU's driver or override.
 */
TEST_F(rsv, vf_only_driver_blocks_gpu)
{
	const struct nlc_dev *gpu = pick_free_gpu(&self->m);
	const char *addr = gpu ? gpu->address : NO_DEV_ADDR;
	struct nlc_rule r;
	struct nlc_dev d;

	ASSERT_EQ(0, tl_pci_snapshot(self->pci0, SNAPSHOT_LEN, false));
	ASSERT_EQ(0, nlc_rule_new(&self->c, addr, "nvidia", false, false, &r))
		log_error(_metadata, "nvidia", &self->c);
	remember(&self->rules, r.id);
	ASSERT_EQ(0, nlc_dev_get(&self->c, addr, &d));
	EXPECT_EQ(GPUCTL_DEV_STATE_BLOCKED, d.state)
		TH_LOG("state %s: %s", nlc_state_name(d.state), d.state_reason);
	EXPECT_STREQ("nvidia takes only vendor VFs; this is no VF",
		     d.state_reason);
	ASSERT_EQ(0, tl_pci_snapshot(self->pci1, SNAPSHOT_LEN, false));
	EXPECT_STREQ(self->pci0, self->pci1);

	ASSERT_EQ(0, nlc_rule_del(&self->c, &r.id, NULL))
		log_error(_metadata, "rule-del", &self->c);
	forget(&self->rules, r.id);
	ASSERT_EQ(0, tl_pci_snapshot(self->pci1, SNAPSHOT_LEN, false));
	EXPECT_STREQ(self->pci0, self->pci1);
}

TEST_F(rsv, missing_match)
{
	struct nlc_rule r;
	int ret = nlc_rule_new(&self->c, NULL, NULL, false, false, &r);

	log_error(_metadata, "no match", &self->c);
	if (!ret)
		remember(&self->rules, r.id);
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_EQ(GPUCTL_A_RULE_MATCH, self->c.miss_type);
}

TEST_F(rsv, del_unknown)
{
	__u32 id = 0xfffffff0;
	struct nlc_rule r;

	EXPECT_EQ(-ENOENT, nlc_rule_del(&self->c, &id, NULL));
	log_error(_metadata, "rule-del id", &self->c);
	EXPECT_NE(0, self->c.extack[0]);
	EXPECT_EQ(-ENOENT, nlc_rule_del(&self->c, NULL, NO_DEV_ADDR));
	log_error(_metadata, "rule-del match", &self->c);
	EXPECT_NE(0, self->c.extack[0]);
	EXPECT_EQ(-ENOENT, nlc_rule_get(&self->c, id, &r));
	log_error(_metadata, "rule-get id", &self->c);
	/* Neither id nor match: nothing says which rule. */
	EXPECT_EQ(-EINVAL, nlc_rule_del(&self->c, NULL, NULL));
	log_error(_metadata, "rule-del", &self->c);
	EXPECT_NE(0, self->c.extack[0]);
}

/* Deleting by match finds the rule whatever case it is written in. */
TEST_F(rsv, del_by_match)
{
	struct nlc_rule r;
	__u32 id;

	ASSERT_EQ(0, nlc_rule_new(&self->c, NO_DEV_IDS, NULL, false, false, &r))
		log_error(_metadata, "rule-new", &self->c);
	id = r.id;
	remember(&self->rules, id);
	EXPECT_EQ(0, nlc_rule_del(&self->c, NULL, "ABCD:EF01"))
		log_error(_metadata, "rule-del ABCD:EF01", &self->c);
	forget(&self->rules, id);
	EXPECT_EQ(-ENOENT, nlc_rule_get(&self->c, id, &r));
	EXPECT_EQ(1, wait_rule_ntf(&self->mon, &self->ntf,
				   GPUCTL_CMD_RULE_DEL_NTF, id));
	EXPECT_STREQ(NO_DEV_IDS, self->ntf.rule.match);
}

TEST_HARNESS_MAIN
