// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl limit: the most GPUs the allocations of one tenant account,
 * project or domain may hold together, as CloudStack's max.account.gpus
 * and its siblings. The module refuses an allocation over a limit.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"

static int limit_info_parse(const struct nlmsghdr *nlh, struct limit_info *l)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		u16 type = mnl_attr_get_type(attr);

		switch (type) {
		case GPUCTL_A_LIMIT_SCOPE:
		case GPUCTL_A_LIMIT_MAX_GPUS:
		case GPUCTL_A_LIMIT_USED:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
				return -1;
			break;
		case GPUCTL_A_LIMIT_NAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
				return -1;
			snprintf(l->name, sizeof(l->name), "%s",
				 mnl_attr_get_str(attr));
			continue;
		default:
			/* attributes from a newer module are skipped */
			continue;
		}
		if (type == GPUCTL_A_LIMIT_SCOPE)
			l->scope = mnl_attr_get_u32(attr);
		else if (type == GPUCTL_A_LIMIT_USED)
			l->used = mnl_attr_get_u32(attr);
		else
			l->max = mnl_attr_get_u32(attr);
		l->has_max |= type == GPUCTL_A_LIMIT_MAX_GPUS;
	}
	return 0;
}

static int limit_parse(const struct nlmsghdr *nlh, void *elem)
{
	return limit_info_parse(nlh, elem);
}

/* An empty list of limits for nl_collect(); free it with nl_list_free() */
void limit_list_init(struct nl_list *list)
{
	*list = (struct nl_list){ .size = sizeof(struct limit_info),
				  .parse = limit_parse };
}

/**
 * limit_info_print() - print one limit, "account acme max 2 used 1"
 * @l: the limit; without a max (just removed) "max none", JSON null
 *
 * The caller ends the text with print_nl() and, in JSON, opens and
 * closes the object around it.
 */
void limit_info_print(const struct limit_info *l)
{
	print_string(PRINT_JSON, "scope", NULL, limit_scope_name(l->scope));
	print_string(PRINT_FP, NULL, "%s", limit_scope_name(l->scope));
	print_string(PRINT_ANY, "name", " %s", l->name);
	if (l->has_max)
		print_uint(PRINT_ANY, "max", " max %u", l->max);
	else
		print_null(PRINT_ANY, "max", " max %s", "none");
	print_uint(PRINT_ANY, "used", " used %u", l->used);
}

/* Limits as {"limits":[...]} or as text, one line each */
void limit_list_print(const struct nl_list *list)
{
	const struct limit_info *v = list->v;
	size_t i;

	new_json_obj();
	open_json_array(PRINT_JSON, "limits");
	for (i = 0; i < list->n; i++) {
		open_json_object(NULL);
		limit_info_print(&v[i]);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
}

static struct nlmsghdr *limit_msg(struct nl_ctx *nl, u8 cmd, u32 scope,
				  const char *name)
{
	struct nlmsghdr *nlh = nl_msg_start(nl, cmd, false);

	mnl_attr_put_u32(nlh, GPUCTL_A_LIMIT_SCOPE, scope);
	mnl_attr_put_strz(nlh, GPUCTL_A_LIMIT_NAME, name);
	return nlh;
}

/**
 * limit_set() - set a label's limit, or remove it
 * @nl: an open socket
 * @l: the limit; without a max it is removed
 * @list: a limit list, given the kernel's reply
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int limit_set(struct nl_ctx *nl, const struct limit_spec *l,
	      struct nl_list *list)
{
	struct nlmsghdr *nlh;

	nlh = limit_msg(nl, GPUCTL_CMD_LIMIT_SET, l->scope, l->name);
	if (l->has_max)
		mnl_attr_put_u32(nlh, GPUCTL_A_LIMIT_MAX_GPUS, l->max);
	return nl_collect(nl, nlh, list);
}

/**
 * limit_dump() - every limit
 * @nl: an open socket
 * @list: an empty limit list, filled
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int limit_dump(struct nl_ctx *nl, struct nl_list *list)
{
	return nl_collect(nl, nl_msg_start(nl, GPUCTL_CMD_LIMIT_GET, true),
			  list);
}

static int cmd_limit_set(struct gpuctl *g, struct args *a)
{
	char err[ALLOC_ERR_BUFSZ];
	struct limit_spec l;
	struct nl_list list;
	struct nl_ctx *nl;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &limit_object);
		return EXIT_OK;
	}
	if (limit_args_parse(a, &l, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: limit set: %s\n", err);
		return EXIT_USAGE;
	}
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	limit_list_init(&list);
	if (limit_set(nl, &l, &list)) {
		fprintf(stderr, "gpuctl: cannot set the limit of %s %s\n",
			limit_scope_name(l.scope), l.name);
		ret = EXIT_KERNEL;
	} else {
		limit_list_print(&list);
	}
	nl_list_free(&list);
	return ret;
}

static int cmd_limit_show(struct gpuctl *g, struct args *a)
{
	char err[ALLOC_ERR_BUFSZ];
	struct limit_spec l = {};
	struct nlmsghdr *nlh;
	struct nl_list list;
	struct nl_ctx *nl;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &limit_object);
		return EXIT_OK;
	}
	/* "SCOPE NAME" reads like "limit set" without its max */
	if (!args_end(a)) {
		char *words[4] = { NULL, NULL, "max", "none" };
		struct args one = { .argc = 1, .argv = words };

		words[0] = a->argv[0];
		args_next(a);
		if (!args_end(a)) {
			words[1] = a->argv[0];
			args_next(a);
			one.argc = 4;
		}
		if (limit_args_parse(&one, &l, err, sizeof(err))) {
			fprintf(stderr, "gpuctl: limit show: %s\n", err);
			return EXIT_USAGE;
		}
	}
	if (!args_done(a, "limit show"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	limit_list_init(&list);
	if (l.scope)
		nlh = limit_msg(nl, GPUCTL_CMD_LIMIT_GET, l.scope, l.name);
	else
		nlh = nl_msg_start(nl, GPUCTL_CMD_LIMIT_GET, true);
	if (nl_collect(nl, nlh, &list)) {
		if (l.scope)
			fprintf(stderr, "gpuctl: cannot show the limit of %s %s\n",
				limit_scope_name(l.scope), l.name);
		ret = EXIT_KERNEL;
	} else {
		limit_list_print(&list);
	}
	nl_list_free(&list);
	return ret;
}

static const struct cmd_entry limit_cmds[] = {
	{ .name = "set", .fn = cmd_limit_set,
	  .usage = "SCOPE NAME max { MAX | none }" },
	{ .name = "show", .fn = cmd_limit_show, .usage = "[ SCOPE NAME ]" },
};

const struct object limit_object = {
	.name = "limit",
	.desc = "the most GPUs an account, project or domain may hold",
	.cmds = limit_cmds,
	.ncmds = ARRAY_SIZE(limit_cmds),
	.dflt = "show",
	.notes = "where  SCOPE := { account | project | domain }\n"
		 "       MAX := the most GPUs the label's allocations may hold\n",
};
