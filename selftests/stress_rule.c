// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Stress: rule-new and rule-del racing the devices they match coming and
 * going.
 *
 * For GPUCTL_STRESS_SECONDS two workers add and delete a rule each, with
 * and without take, for vfio-pci or gpuctl-vfio-pci: one for 01:00.0, one
 * for 07:00.0 (whose HDA companion 07:00.1 follows it). Meanwhile another
 * removes those GPUs through sysfs and rescans the bus, and another
 * hot-plugs an "edu" device into the root port hp5 and unplugs it through
 * QMP (when the topology has that port), so bus events of tracked and
 * untracked devices race the rules.
 *
 * Invariants: rule-new and rule-del succeed, since nothing here (no VFIO
 * user, no allocation) gives a documented error a cause, and the rule-new
 * reply is the rule asked for. Once the workers stop, wherever they left
 * their rules: every device a remaining rule lists names that rule and is
 * reserved (on the rule's driver, or unbound, with driver_override naming
 * it), held (by a host driver, named in state-reason, only by a rule
 * without take) or blocked (with a reason); every device no rule has is
 * free and back on the driver it had at the start with no
 * driver_override; the inventory matches sysfs; the kernel logged no
 * WARN, BUG or lockdep report. Then the rules go and the PCI state is the
 * one found at the start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "stress_fixture.h"
#include "testlib.h"

#define GPU		"0000:01:00.0"
#define GPU2		"0000:07:00.0"

/* What @before says @addr's driver (or override) was: "" if none. */
static void was(const char *before, const char *addr, const char *key,
		char *val, size_t len)
{
	char pat[64];
	const char *p;
	size_t n;

	val[0] = '\0';
	snprintf(pat, sizeof(pat), "%s driver=", addr);
	p = strstr(before, pat);
	if (!p)
		return;
	p = strstr(p, key);
	if (!p)
		return;
	p += strlen(key);
	n = strcspn(p, "\n ");
	snprintf(val, len, "%.*s", (int)n, p);
}

#define WHY(...) snprintf(why + strlen(why), len - strlen(why), __VA_ARGS__)

/* A device a rule has: the states Documentation/gpuctl.rst allows. */
static int check_ruled(const struct nlc_dev *d, const struct nlc_rule *r,
		       char *why, size_t len)
{
	char drv[NLC_NAME_LEN], ovr[NLC_NAME_LEN];
	const char *a = d->address;

	tl_driver_of(a, drv, sizeof(drv));
	tl_override_of(a, ovr, sizeof(ovr));
	switch (d->state) {
	case GPUCTL_DEV_STATE_RESERVED:
		if ((drv[0] && strcmp(drv, r->driver)) || strcmp(ovr, r->driver)) {
			WHY(" %s reserved by rule %u (%s) but on '%s' with override '%s';",
			    a, r->id, r->driver, drv, ovr);
			return 1;
		}
		return 0;
	case GPUCTL_DEV_STATE_HELD:
		if (r->take || !drv[0] || !strcmp(drv, r->driver) ||
		    strcmp(ovr, r->driver) ||
		    strncmp(d->state_reason, "bound to ", 9) ||
		    strcmp(d->state_reason + 9, drv)) {
			WHY(" %s held under rule %u (%s%s) on '%s', override '%s', reason '%s';",
			    a, r->id, r->driver, r->take ? " take" : "", drv,
			    ovr, d->state_reason);
			return 1;
		}
		return 0;
	case GPUCTL_DEV_STATE_BLOCKED:
		if (!d->state_reason[0]) {
			WHY(" %s blocked without a reason;", a);
			return 1;
		}
		printf("# %s blocked: %s\n", a, d->state_reason);
		return 0;
	default:
		WHY(" %s has rule %u but state %s;", a, r->id,
		    nlc_state_name(d->state));
		return 1;
	}
}

/* A device no rule has: free, on its old driver, no override. */
static int check_free(const struct nlc_dev *d, const char *before, char *why,
		      size_t len)
{
	char drv[NLC_NAME_LEN], ovr[NLC_NAME_LEN];
	char drv0[NLC_NAME_LEN], ovr0[NLC_NAME_LEN];
	const char *a = d->address;

	tl_driver_of(a, drv, sizeof(drv));
	tl_override_of(a, ovr, sizeof(ovr));
	was(before, a, "driver=", drv0, sizeof(drv0));
	was(before, a, "override=", ovr0, sizeof(ovr0));
	if ((NLC_HAS(d, GPUCTL_A_DEV_STATE) && d->state != GPUCTL_DEV_STATE_FREE) ||
	    strcmp(drv, drv0) || strcmp(ovr, ovr0)) {
		WHY(" %s in no rule: %s on '%s' override '%s', was on '%s' override '%s';",
		    a, nlc_state_name(d->state), drv, ovr, drv0, ovr0);
		return 1;
	}
	return 0;
}

static const struct nlc_rule *rule_by_id(const struct nlc_rule *rules, int n,
					 __u32 id)
{
	int i;

	for (i = 0; i < n; i++)
		if (rules[i].id == id)
			return &rules[i];
	return NULL;
}

static bool lists(const struct nlc_rule *r, const char *addr)
{
	int i;

	for (i = 0; i < r->ndevices; i++)
		if (!strcmp(r->devices[i], addr))
			return true;
	return false;
}

/* Every tracked device against the rules that are left; mismatches. */
static int check_rules_once(struct nlc *c, const char *before, char *why,
			    size_t len)
{
	struct nlc_rule *rules = NULL;
	struct nlc_dev *devs = NULL;
	int i, j, nr, nd, bad = 0, ret;

	why[0] = '\0';
	ret = nlc_rule_dump(c, &rules, &nr, NULL);
	if (!ret)
		ret = nlc_dev_dump(c, &devs, &nd, NULL);
	if (ret) {
		WHY(" dump: %s '%s'", strerror(-ret), c->extack);
		bad = 1;
		goto out;
	}
	for (i = 0; i < nd; i++) {
		const struct nlc_dev *d = &devs[i];
		const struct nlc_rule *r = NULL;

		if (NLC_HAS(d, GPUCTL_A_DEV_RULE)) {
			r = rule_by_id(rules, nr, d->rule);
			if (!r) {
				WHY(" %s names rule %u, which is gone;", d->address,
				    d->rule);
				bad++;
				continue;
			}
			if (!lists(r, d->address)) {
				WHY(" %s names rule %u, which does not list it;",
				    d->address, r->id);
				bad++;
			}
			bad += check_ruled(d, r, why, len);
		} else {
			bad += check_free(d, before, why, len);
		}
	}
	for (i = 0; i < nr; i++)
		for (j = 0; j < rules[i].ndevices; j++) {
			int k;

			for (k = 0; k < nd; k++)
				if (!strcmp(devs[k].address, rules[i].devices[j]))
					break;
			if (k == nd || devs[k].rule != rules[i].id) {
				WHY(" rule %u lists %s, which does not name it;",
				    rules[i].id, rules[i].devices[j]);
				bad++;
			}
		}
out:
	free(rules);
	free(devs);
	return bad;
}

/* Gives gpuctl's worker @settle_ms to reach a state that passes. */
static int check_rules(struct nlc *c, const char *before, int settle_ms,
		       char *why, size_t len)
{
	long deadline = tl_now_ms() + settle_ms;
	int bad;

	while ((bad = check_rules_once(c, before, why, len)) &&
	       tl_now_ms() < deadline)
		usleep(200 * 1000);
	return bad;
}

TEST_F_TIMEOUT(stress, rule_vs_add_remove, 900)
{
	struct stress_rule_arg rule[] = {
		{ GPU, .strict = true },
		{ GPU2, .strict = true },
	};
	struct stress_remove_arg remove = { { GPU, GPU2 }, 2 };
	struct stress *s = self->s;
	int seconds = stress_seconds();
	struct nlc_rule *rules;
	size_t i;
	int n;

	TH_LOG("%d s: rule-new/rule-del of %s and %s racing remove/rescan and hot-plug",
	       seconds, GPU, GPU2);
	for (i = 0; i < ARRAY_SIZE(rule); i++)
		ASSERT_LT(0, stress_spawn(s, rule[i].match, stress_loop_rule,
					  &rule[i]));
	ASSERT_LT(0, stress_spawn(s, "remove", stress_loop_remove, &remove));
	stress_spawn_hotplug(_metadata, s);
	EXPECT_EQ(0, stress_run(s, seconds));
	stress_report(s);

	EXPECT_LT(0, stress_count_of(s, "rule-new " GPU, 0) +
		     stress_count_of(s, "rule-new " GPU " take", 0));
	EXPECT_LT(0, stress_count_of(s, "remove " GPU, 0));
	EXPECT_LT(0, stress_count_of(s, "device_add edu on " STRESS_HP_BUS, 0));
	/* Every removed device back before the rules are judged. */
	stress_write("/sys/bus/pci/rescan", "1");
	ASSERT_EQ(0, nlc_rule_dump(&self->e.c, &rules, &n, NULL));
	for (i = 0; i < (size_t)n; i++)
		TH_LOG("left: rule %u %s driver %s%s, %d devices", rules[i].id,
		       rules[i].match, rules[i].driver,
		       rules[i].take ? " take" : "", rules[i].ndevices);
	free(rules);
	EXPECT_EQ(0, check_rules(&self->e.c, self->e.before, STRESS_SETTLE_MS,
				 self->e.why, sizeof(self->e.why)))
		TH_LOG("after the race:%s", self->e.why);
	stress_expect_inventory(_metadata, &self->e, 10000, true);

	stress_expect_clean_end(_metadata, &self->e, s);
}

TEST_HARNESS_MAIN
