// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl group: the IOMMU groups that hold a GPU, and whether VFIO could
 * use each of them today.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"

struct group_info {
	u32 id;
	bool viable;
	bool has_reason;
	char reason[256];
	size_t ndevs;
	char (*devs)[ADDR_BUFSZ];
};

static int group_attr_add(struct group_info *gr, const struct nlattr *attr)
{
	char (*devs)[ADDR_BUFSZ];

	switch (mnl_attr_get_type(attr)) {
	case GPUCTL_A_GROUP_ID:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return -1;
		gr->id = mnl_attr_get_u32(attr);
		break;
	case GPUCTL_A_GROUP_DEVICE:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		devs = realloc(gr->devs, (gr->ndevs + 1) * sizeof(*devs));
		if (!devs)
			return -1;
		gr->devs = devs;
		snprintf(devs[gr->ndevs++], ADDR_BUFSZ, "%s",
			 mnl_attr_get_str(attr));
		break;
	case GPUCTL_A_GROUP_VIABLE:
		if (mnl_attr_validate(attr, MNL_TYPE_U8) < 0)
			return -1;
		gr->viable = mnl_attr_get_u8(attr);
		break;
	case GPUCTL_A_GROUP_REASON:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return -1;
		gr->has_reason = true;
		snprintf(gr->reason, sizeof(gr->reason), "%s",
			 mnl_attr_get_str(attr));
		break;
	}
	/* attributes from a newer module are skipped, not refused */
	return 0;
}

static int group_parse(const struct nlmsghdr *nlh, void *elem)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		if (group_attr_add(elem, attr))
			return -1;
	return 0;
}

static void group_release(void *elem)
{
	struct group_info *gr = elem;

	free(gr->devs);
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group_info *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

static int addr_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void group_print(struct group_info *gr)
{
	size_t i;

	qsort(gr->devs, gr->ndevs, sizeof(*gr->devs), addr_cmp);
	open_json_object(NULL);
	print_uint(PRINT_ANY, "id", "group %u\n", gr->id);
	open_json_array(PRINT_JSON, "devices");
	print_string(PRINT_FP, NULL, "%s", "  devices:");
	for (i = 0; i < gr->ndevs; i++)
		print_string(PRINT_ANY, NULL, " %s", gr->devs[i]);
	close_json_array(PRINT_JSON, NULL);
	print_nl();
	print_bool(PRINT_ANY, "viable", "  viable: %s\n", gr->viable);
	if (gr->has_reason)
		print_string(PRINT_ANY, "reason", "  reason: %s\n", gr->reason);
	else
		print_null(PRINT_JSON, "reason", NULL, NULL);
	close_json_object();
}

static void group_list_print(struct group_info *v, size_t n)
{
	size_t i;

	qsort(v, n, sizeof(*v), group_cmp);
	new_json_obj();
	open_json_array(PRINT_JSON, "groups");
	for (i = 0; i < n; i++)
		group_print(&v[i]);
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
}

static int cmd_group_show(struct gpuctl *g, struct args *a)
{
	static const struct show_by_id show = {
		.cmd = "group show", .id_name = "IOMMU group",
		.one_name = "IOMMU group", .object = &group_object,
		.nl_cmd = GPUCTL_CMD_GROUP_GET, .id_attr = GPUCTL_A_GROUP_ID,
	};
	struct nl_list list = { .size = sizeof(struct group_info),
				.parse = group_parse, .release = group_release };
	bool collected;
	int ret;

	ret = show_by_id(g, a, &show, &list, &collected);
	if (collected)
		group_list_print(list.v, list.n);
	nl_list_free(&list);
	return ret;
}

static const struct cmd_entry group_cmds[] = {
	{ .name = "show", .fn = cmd_group_show, .usage = "[ ID ]" },
};

const struct object group_object = {
	.name = "group",
	.desc = "the IOMMU groups that hold a GPU, and whether they are viable",
	.cmds = group_cmds,
	.ncmds = ARRAY_SIZE(group_cmds),
	.dflt = "show",
	.notes = "where  ID := IOMMU group number\n",
};
