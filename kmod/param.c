// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Rules from the module parameters: "gpuctl.reserve=" on the kernel
 * command line or "options gpuctl reserve=" in modprobe.d, the only
 * sources there are before userspace runs.
 */

#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <uapi/linux/gpuctl.h>

#include "inventory.h"
#include "param.h"
#include "rule.h"

static char *reserve;
module_param(reserve, charp, 0444);
MODULE_PARM_DESC(reserve,
		 "GPUs to reserve at load, comma-separated: MATCH[@DRIVER][+force][+take], MATCH being DDDD:BB:DD.F, VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS");

static bool take;
module_param(take, bool, 0444);
MODULE_PARM_DESC(take,
		 "Take GPUs the reserve rules match from host drivers that have them at load (default: report them held)");

/*
 * The ids a module reload keeps: "gpuctl module reload" passes the running
 * module's rules as MATCH=ID, so that a rule modprobe.d gives the new
 * module keeps the id it had (tools/gpuctl/module.c).
 */
static char *rule_ids;
module_param(rule_ids, charp, 0444);
MODULE_PARM_DESC(rule_ids,
		 "Ids for the reserve rules, comma-separated: MATCH=ID; set by gpuctl module reload, so that a rule keeps its id");

/* The id rule_ids gives a match, 0 for none. */
static u32 gpuctl_param_rule_id(const struct gpuctl_match *m)
{
	char *list, *cur, *s, *eq;
	struct gpuctl_match each;
	const char *why;
	u32 id = 0;

	if (!rule_ids || !*rule_ids)
		return 0;
	list = kstrdup(rule_ids, GFP_KERNEL);
	if (!list)
		return 0;
	cur = list;
	while (!id && (s = strsep(&cur, ","))) {
		eq = strrchr(s, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!gpuctl_match_parse(strim(s), &each, &why) &&
		    gpuctl_match_equal(m, &each) && kstrtou32(eq, 10, &id))
			id = 0;
	}
	kfree(list);
	return id;
}

static void gpuctl_param_add(char *s)
{
	struct gpuctl_rule tmpl, *rule;
	char buf[GPUCTL_NEVER_LEN];
	const char *why = "";
	char *orig;

	/* Keep the operator's spelling for the message. */
	orig = kstrdup(s, GFP_KERNEL);
	if (gpuctl_rule_parse_param(s, &tmpl, &why)) {
		pr_err("reserve: bad rule '%s': %s, skipped\n",
		       orig ?: "", why);
		goto out;
	}
	if (gpuctl_match_names_never(&tmpl.match, buf, sizeof(buf))) {
		pr_err("reserve: rule '%s': %s: never reserved, skipped\n",
		       orig ?: "", buf);
		goto out;
	}
	if (gpuctl_rule_find_match(&tmpl.match)) {
		pr_err("reserve: rule '%s' given twice, skipped\n", orig ?: "");
		goto out;
	}

	tmpl.take |= take;
	tmpl.source = GPUCTL_RULE_SOURCE_PARAM;
	tmpl.id = gpuctl_param_rule_id(&tmpl.match);
	rule = gpuctl_rule_insert(&tmpl);
	if (IS_ERR(rule) && tmpl.id) {
		pr_warn("reserve: rule '%s': id %u is taken, given a new one\n",
			orig ?: "", tmpl.id);
		tmpl.id = 0;
		rule = gpuctl_rule_insert(&tmpl);
	}
	if (IS_ERR(rule))
		pr_err("reserve: rule '%s' not added: %ld\n", orig ?: "",
		       PTR_ERR(rule));
out:
	kfree(orig);
}

/**
 * gpuctl_param_load() - add the rules of the "reserve" parameter
 *
 * A malformed rule is logged and skipped; the others apply, so one typo
 * does not leave every GPU to the host drivers.
 *
 * Context: module init, before the inventory is scanned; takes gpuctl_lock.
 * Return: 0 or -ENOMEM.
 */
int gpuctl_param_load(void)
{
	char *list, *cur, *s;

	if (!reserve || !*reserve)
		return 0;

	list = kstrdup(reserve, GFP_KERNEL);
	if (!list)
		return -ENOMEM;

	mutex_lock(&gpuctl_lock);
	cur = list;
	while ((s = strsep(&cur, ","))) {
		s = strim(s);
		if (*s)
			gpuctl_param_add(s);
	}
	mutex_unlock(&gpuctl_lock);

	kfree(list);
	return 0;
}
