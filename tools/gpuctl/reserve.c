// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl reserve: the rules that keep GPUs, and the companions in their
 * IOMMU groups, away from host drivers and on a VFIO driver. The module
 * enforces them; this file adds, deletes and shows them.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"

static int rule_strv_add(char ***v, size_t *n, const char *s)
{
	char **nv;

	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -1;
	(*n)++;
	return 0;
}

static int rule_attr_add(struct rule_info *r, const struct nlattr *attr)
{
	switch (mnl_attr_get_type(attr)) {
	case GPUCTL_A_RULE_ID:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return -1;
		r->id = mnl_attr_get_u32(attr);
		break;
	case GPUCTL_A_RULE_MATCH:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		snprintf(r->match, sizeof(r->match), "%s",
			 mnl_attr_get_str(attr));
		break;
	case GPUCTL_A_RULE_DRIVER:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		snprintf(r->driver, sizeof(r->driver), "%s",
			 mnl_attr_get_str(attr));
		break;
	case GPUCTL_A_RULE_FORCE:
		r->force = true;
		break;
	case GPUCTL_A_RULE_TAKE:
		r->take = true;
		break;
	case GPUCTL_A_RULE_SOURCE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return -1;
		r->source = mnl_attr_get_u32(attr);
		break;
	case GPUCTL_A_RULE_DEVICE:
		return nl_attr_str_append(&r->devs, &r->ndevs,
					  sizeof(*r->devs), attr);
	case GPUCTL_A_RULE_ORPHAN:
		return nl_attr_str_append(&r->orphans, &r->norphans,
					  sizeof(*r->orphans), attr);
	case GPUCTL_A_RULE_WARNING:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		return rule_strv_add(&r->warnings, &r->nwarnings,
				     mnl_attr_get_str(attr));
	}
	/* attributes from a newer module are skipped, not refused */
	return 0;
}

/**
 * rule_info_parse() - read a rule-get reply or a rule notification
 * @nlh: the message
 * @r: a zeroed rule, filled; free it with rule_info_release()
 *
 * Return: 0, or -1 with errno set when an attribute is malformed.
 */
int rule_info_parse(const struct nlmsghdr *nlh, struct rule_info *r)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		if (rule_attr_add(r, attr))
			return -1;
	return 0;
}

void rule_info_release(struct rule_info *r)
{
	size_t i;

	for (i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->devs);
	free(r->orphans);
	r->warnings = NULL;
	r->devs = NULL;
	r->orphans = NULL;
	r->nwarnings = 0;
	r->ndevs = 0;
	r->norphans = 0;
}

/**
 * rule_info_print() - print one rule, as lines, one line or JSON
 * @r: the rule
 * @form: which text form; JSON is the same for all
 *
 * The caller ends the text with print_nl() and, in JSON, opens and
 * closes the object around it.
 */
void rule_info_print(const struct rule_info *r, enum rule_form form)
{
	bool line = form == RULE_FORM_LINE;
	size_t i;

	print_uint(PRINT_ANY, "id", "rule %u ", r->id);
	print_string(PRINT_ANY, "match", "match %s ", r->match);
	print_string(PRINT_ANY, "driver", "driver %s", r->driver);
	print_bool(PRINT_JSON, "force", NULL, r->force);
	if (r->force)
		print_string(PRINT_FP, NULL, "%s", " force");
	print_bool(PRINT_JSON, "take", NULL, r->take);
	if (r->take)
		print_string(PRINT_FP, NULL, "%s", " take");
	print_string(PRINT_ANY, "source", " source %s",
		     source_name(r->source));

	print_string(PRINT_FP, NULL, "%s", line ? " devices" : "\n  devices:");
	open_json_array(PRINT_JSON, "devices");
	for (i = 0; i < r->ndevs; i++)
		print_string(PRINT_ANY, NULL, " %s", r->devs[i]);
	if (!r->ndevs)
		print_string(PRINT_FP, NULL, "%s", " -");
	close_json_array(PRINT_JSON, NULL);

	/* devices it keeps although their GPU went; rare, so only if any */
	if (r->norphans)
		print_string(PRINT_FP, NULL, "%s",
			     line ? " orphans" : "\n  orphans:");
	open_json_array(PRINT_JSON, "orphans");
	for (i = 0; i < r->norphans; i++)
		print_string(PRINT_ANY, NULL, " %s", r->orphans[i]);
	close_json_array(PRINT_JSON, NULL);

	open_json_array(PRINT_JSON, "warnings");
	for (i = 0; i < r->nwarnings; i++)
		print_string(form == RULE_FORM_ADDED ? PRINT_JSON : PRINT_ANY,
			     NULL, line ? " warning \"%s\"" : "\n  warning: %s",
			     r->warnings[i]);
	close_json_array(PRINT_JSON, NULL);
}

static int rule_parse(const struct nlmsghdr *nlh, void *elem)
{
	return rule_info_parse(nlh, elem);
}

static void rule_release(void *elem)
{
	rule_info_release(elem);
}

/* An empty list of rules for nl_collect(); free it with nl_list_free() */
void reserve_list_init(struct nl_list *list)
{
	*list = (struct nl_list){ .size = sizeof(struct rule_info),
				  .parse = rule_parse,
				  .release = rule_release };
}

/*
 * How long reserve_new() and reserve_del() wait for the kernel's worker to
 * act on a rule's devices, and how often they look.
 */
#define RESERVE_SETTLE_MS 10000
#define RESERVE_POLL_MS 20

static long long reserve_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Wait until the kernel's worker acted on each of @devs: none carries
 * "pending" in dev-get, or it left the table. The kernel answers rule-new
 * and rule-del before it binds, takes or releases anything, since a
 * driver may take long to let go of a device; the waiting is the tool's.
 * After RESERVE_SETTLE_MS it says which device is still pending, and goes
 * on: the kernel keeps at it, and "gpuctl monitor" shows when it is done.
 */
static void reserve_settle(struct nl_ctx *nl, char (*devs)[ADDR_BUFSZ],
			   size_t n)
{
	long long deadline = reserve_now_ms() + RESERVE_SETTLE_MS;
	const char *pending;
	struct dev_info d;
	size_t i;

	for (;;) {
		pending = NULL;
		for (i = 0; i < n && !pending; i++)
			if (!dev_get_quiet(nl, devs[i], &d) && d.pending)
				pending = devs[i];
		if (!pending)
			return;
		if (reserve_now_ms() >= deadline)
			break;
		usleep(RESERVE_POLL_MS * 1000);
	}
	fprintf(stderr,
		"Warning: the kernel has not finished with %s after %d s; it goes on (gpuctl monitor shows when)\n",
		pending, RESERVE_SETTLE_MS / 1000);
}

/* rule-get of one rule into an empty @list; -ENOENT when it is gone. */
static int reserve_get_quiet(struct nl_ctx *nl, u32 id, struct nl_list *list)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(nl, GPUCTL_CMD_RULE_GET, false);
	mnl_attr_put_u32(nlh, GPUCTL_A_RULE_ID, id);
	return nl_collect_quiet(nl, nlh, list);
}

/**
 * reserve_new() - add a rule, and wait for the kernel to enforce it
 * @nl: an open socket
 * @r: the rule
 * @list: an empty rule list, given the rule the kernel made
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int reserve_new(struct nl_ctx *nl, const struct rule_spec *r,
		struct nl_list *list)
{
	const struct rule_info *rule;
	struct nlmsghdr *nlh;
	struct nl_list now;
	size_t i;
	int ret;

	nlh = nl_msg_start(nl, GPUCTL_CMD_RULE_NEW, false);
	if (r->id)
		mnl_attr_put_u32(nlh, GPUCTL_A_RULE_ID, r->id);
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_MATCH, r->match);
	/* without a driver, the kernel's default applies */
	if (r->driver[0])
		mnl_attr_put_strz(nlh, GPUCTL_A_RULE_DRIVER, r->driver);
	if (r->force)
		mnl_attr_put(nlh, GPUCTL_A_RULE_FORCE, 0, NULL);
	if (r->take)
		mnl_attr_put(nlh, GPUCTL_A_RULE_TAKE, 0, NULL);
	for (i = 0; i < r->norphans; i++)
		mnl_attr_put_strz(nlh, GPUCTL_A_RULE_ORPHAN, r->orphans[i]);
	ret = nl_collect(nl, nlh, list);
	if (ret || list->n != 1)
		return ret;

	/* The rule as it is once its devices are bound, with its warnings. */
	rule = list->v;
	reserve_settle(nl, rule->devs, rule->ndevs);
	reserve_list_init(&now);
	if (!reserve_get_quiet(nl, rule->id, &now) && now.n == 1) {
		nl_list_free(list);
		*list = now;
	} else {
		nl_list_free(&now);
	}
	return 0;
}

/**
 * reserve_del() - delete a rule and give its devices back to the host
 * @nl: an open socket
 * @id: the rule's id, used when @match is NULL
 * @match: the rule's match in canonical form, or NULL
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int reserve_del(struct nl_ctx *nl, u32 id, const char *match)
{
	const struct rule_info *v;
	struct nlmsghdr *nlh;
	struct nl_list rules;
	size_t i;
	int ret;

	/* Its devices, to wait for their release; none if it cannot be read. */
	reserve_list_init(&rules);
	if (match) {
		if (!nl_collect_quiet(nl, nl_msg_start(nl, GPUCTL_CMD_RULE_GET,
						       true), &rules))
			for (v = rules.v, i = 0; i < rules.n; i++)
				if (!strcmp(v[i].match, match))
					id = v[i].id;
		nl_list_free(&rules);
		reserve_list_init(&rules);
	}
	if (id)
		reserve_get_quiet(nl, id, &rules);

	nlh = nl_msg_start(nl, GPUCTL_CMD_RULE_DEL, false);
	if (match)
		mnl_attr_put_strz(nlh, GPUCTL_A_RULE_MATCH, match);
	else
		mnl_attr_put_u32(nlh, GPUCTL_A_RULE_ID, id);
	ret = nl_request(nl, nlh, NULL, NULL, NULL);
	if (!ret && rules.n == 1) {
		v = rules.v;
		reserve_settle(nl, v->devs, v->ndevs);
	}
	nl_list_free(&rules);
	return ret;
}

/**
 * reserve_dump() - every rule, in id order
 * @nl: an open socket
 * @list: an empty rule list, filled
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int reserve_dump(struct nl_ctx *nl, struct nl_list *list)
{
	return nl_collect(nl, nl_msg_start(nl, GPUCTL_CMD_RULE_GET, true),
			  list);
}

/**
 * reserve_list_print() - print rules as {"rules":[...]} or as text
 * @list: the rules
 * @form: RULE_FORM_BLOCK, or RULE_FORM_ADDED to send warnings to stderr
 *
 * With RULE_FORM_ADDED, text mode prints each warning as
 * "Warning: ..." on stderr, after the rules; JSON keeps them in the rule.
 */
void reserve_list_print(const struct nl_list *list, enum rule_form form)
{
	new_json_obj();
	reserve_rules_print(list, form);
	delete_json_obj();
}

/**
 * reserve_rules_print() - the "rules" array of reserve_list_print()
 * @list: rules from reserve_new() or reserve_dump()
 * @form: as for reserve_list_print()
 *
 * For output that has more than rules in its JSON object (apply).
 */
void reserve_rules_print(const struct nl_list *list, enum rule_form form)
{
	const struct rule_info *v = list->v;
	size_t i, j;

	open_json_array(PRINT_JSON, "rules");
	for (i = 0; i < list->n; i++) {
		open_json_object(NULL);
		rule_info_print(&v[i], form);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);

	if (form != RULE_FORM_ADDED || is_json_context())
		return;
	for (i = 0; i < list->n; i++)
		for (j = 0; j < v[i].nwarnings; j++)
			fprintf(stderr, "Warning: %s\n", v[i].warnings[j]);
}

static int cmd_reserve_add(struct gpuctl *g, struct args *a)
{
	char err[RULE_ERR_BUFSZ];
	struct rule_spec r;
	struct nl_list list;
	struct nl_ctx *nl;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &reserve_object);
		return EXIT_OK;
	}
	if (rule_args_parse(a, &r, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: reserve add: %s\n", err);
		return EXIT_USAGE;
	}
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	reserve_list_init(&list);
	if (reserve_new(nl, &r, &list)) {
		fprintf(stderr, "gpuctl: cannot add rule %s\n", r.match);
		ret = EXIT_KERNEL;
	} else {
		reserve_list_print(&list, RULE_FORM_ADDED);
	}
	nl_list_free(&list);
	return ret;
}

static int cmd_reserve_del(struct gpuctl *g, struct args *a)
{
	char match[GPUCTL_MATCH_LEN + 1];
	struct nl_ctx *nl;
	const char *arg;
	bool by_id;
	u32 id = 0;
	int ret;

	arg = args_next(a);
	if (!arg) {
		fprintf(stderr, "gpuctl: reserve del: missing ID or MATCH\n");
		return EXIT_USAGE;
	}
	if (!strcmp(arg, "help")) {
		object_help(stdout, &reserve_object);
		return EXIT_OK;
	}
	/* a bare number is an id; every match has a colon */
	ret = parse_u32(arg, &id);
	by_id = ret != -EINVAL;
	if (by_id ? ret : rule_match_parse(arg, match, sizeof(match))) {
		fprintf(stderr,
			"gpuctl: reserve del: invalid rule \"%s\", expected a rule id or a match\n",
			arg);
		return EXIT_USAGE;
	}
	if (!args_done(a, "reserve del"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	if (reserve_del(nl, id, by_id ? NULL : match)) {
		fprintf(stderr, "gpuctl: cannot delete rule %s\n", arg);
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

static int cmd_reserve_show(struct gpuctl *g, struct args *a)
{
	static const struct show_by_id show = {
		.cmd = "reserve show", .id_name = "rule id",
		.one_name = "rule", .object = &reserve_object,
		.nl_cmd = GPUCTL_CMD_RULE_GET, .id_attr = GPUCTL_A_RULE_ID,
	};
	struct nl_list list;
	bool collected;
	int ret;

	reserve_list_init(&list);
	ret = show_by_id(g, a, &show, &list, &collected);
	if (collected)
		reserve_list_print(&list, RULE_FORM_BLOCK);
	nl_list_free(&list);
	return ret;
}

static const struct cmd_entry reserve_cmds[] = {
	{ .name = "add", .fn = cmd_reserve_add,
	  .usage = "MATCH [ driver NAME ] [ force ] [ take ]" },
	{ .name = "del", .fn = cmd_reserve_del, .usage = "{ ID | MATCH }" },
	{ .name = "show", .fn = cmd_reserve_show, .usage = "[ ID ]" },
};

const struct object reserve_object = {
	.name = "reserve",
	.desc = "the rules that keep GPUs on a VFIO driver for VMs",
	.cmds = reserve_cmds,
	.ncmds = ARRAY_SIZE(reserve_cmds),
	.dflt = "show",
	.notes = "where  MATCH := { DDDD:BB:DD.F | BB:DD.F | VVVV:DDDD | VVVV:* |\n"
		 "                  VVVV:DDDD:SSSS:SSSS }\n"
		 "       NAME := a VFIO driver (default vfio-pci) or pci-stub\n",
};
