// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl vgpu: the host's mdev instances (vGPUs) as the module follows
 * them on the mdev bus, whoever created them.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"

static void vgpu_help(FILE *fp)
{
	fprintf(fp,
		"Usage: gpuctl vgpu show [ UUID ]\n"
		"       gpuctl vgpu help\n"
		"where  UUID := an mdev instance, xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n");
}

/* Copies a string attribute, validated, into @buf */
static int vgpu_str(const struct nlattr *attr, char *buf, size_t size)
{
	if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return -1;
	snprintf(buf, size, "%s", mnl_attr_get_str(attr));
	return 0;
}

/**
 * vgpu_info_parse() - read an mdev-get reply or an mdev-*-ntf
 * @nlh: the message
 * @v: filled; zeroed by the caller
 *
 * Return: 0, or -1 for a malformed attribute.
 */
int vgpu_info_parse(const struct nlmsghdr *nlh, struct vgpu_info *v)
{
	const struct nlattr *attr;
	int ret = 0;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(attr)) {
		case GPUCTL_A_MDEV_UUID:
			ret = vgpu_str(attr, v->uuid, sizeof(v->uuid));
			break;
		case GPUCTL_A_MDEV_TYPE:
			ret = vgpu_str(attr, v->type, sizeof(v->type));
			break;
		case GPUCTL_A_MDEV_TYPE_NAME:
			ret = vgpu_str(attr, v->type_name, sizeof(v->type_name));
			break;
		case GPUCTL_A_MDEV_PARENT:
			ret = vgpu_str(attr, v->parent, sizeof(v->parent));
			break;
		case GPUCTL_A_MDEV_DRIVER:
			ret = vgpu_str(attr, v->driver, sizeof(v->driver));
			break;
		case GPUCTL_A_MDEV_IOMMU_GROUP:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
				return -1;
			v->has_group = true;
			v->group = mnl_attr_get_u32(attr);
			break;
		default:
			/* attributes from a newer module are skipped */
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int vgpu_parse(const struct nlmsghdr *nlh, void *elem)
{
	return vgpu_info_parse(nlh, elem);
}

static void vgpu_list_init(struct nl_list *list)
{
	*list = (struct nl_list){ .size = sizeof(struct vgpu_info),
				  .parse = vgpu_parse };
}

/**
 * vgpu_info_print() - one instance on one line
 * @v: the instance
 *
 * "UUID type T name "N" parent P group G driver D"; group and driver are
 * left out (JSON null) while the instance has none. The caller ends the
 * text with print_nl() and, in JSON, opens and closes the object.
 */
void vgpu_info_print(const struct vgpu_info *v)
{
	print_string(PRINT_ANY, "uuid", "%s", v->uuid);
	print_string(PRINT_ANY, "type", " type %s", v->type);
	print_string(PRINT_ANY, "type_name", " name \"%s\"", v->type_name);
	print_string(PRINT_ANY, "parent", " parent %s", v->parent);
	if (v->has_group)
		print_uint(PRINT_ANY, "iommu_group", " group %u", v->group);
	else
		print_null(PRINT_JSON, "iommu_group", NULL, NULL);
	if (v->driver[0])
		print_string(PRINT_ANY, "driver", " driver %s", v->driver);
	else
		print_null(PRINT_JSON, "driver", NULL, NULL);
}

/* Instances as {"vgpus":[...]} or as text, one line each */
static void vgpu_list_print(const struct nl_list *list)
{
	const struct vgpu_info *v = list->v;
	size_t i;

	new_json_obj();
	open_json_array(PRINT_JSON, "vgpus");
	for (i = 0; i < list->n; i++) {
		open_json_object(NULL);
		vgpu_info_print(&v[i]);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
}

static int cmd_vgpu_show(struct gpuctl *g, struct args *a)
{
	static const struct show_by_id show = {
		.cmd = "vgpu show",
		.one_name = "vGPU",
		.help = vgpu_help,
		.nl_cmd = GPUCTL_CMD_MDEV_GET,
		.id_attr = GPUCTL_A_MDEV_UUID,
		.by_uuid = true,
	};
	struct nl_list list;
	bool collected;
	int ret;

	vgpu_list_init(&list);
	ret = show_by_id(g, a, &show, &list, &collected);
	if (collected)
		vgpu_list_print(&list);
	nl_list_free(&list);
	return ret;
}

/**
 * cmd_vgpu() - gpuctl vgpu { show | help }
 * @g: the tool's state
 * @a: the words after "vgpu"
 *
 * Return: the exit code.
 */
int cmd_vgpu(struct gpuctl *g, struct args *a)
{
	static const struct cmd_entry cmds[] = {
		{ "show", cmd_vgpu_show },
	};

	return cmd_dispatch(g, a, "vgpu", cmds, ARRAY_SIZE(cmds), vgpu_help);
}
