// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl vgpu types: the mdev types each parent offers and how many more
 * instances of each it can make, and the types vendor VFs can take, read
 * from sysfs at every call (mdev_sysfs.c and vf_sysfs.c say why the tool
 * reads them, not the module).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuctl.h"
#include "json_print.h"
#include "mdev_sysfs.h"
#include "vgpu_vf.h"

/**
 * vgpu_type_print() - one type on one line, or one JSON object
 * @t: the type
 *
 * "PARENT TYPE name "N" api A available N", then the description's
 * fields that it has, then the description itself. JSON has every key,
 * null where the type has no such value.
 */
static void vgpu_type_print(const struct mdev_type_info *t)
{
	print_string(PRINT_ANY, "parent", "%s", t->parent);
	print_string(PRINT_ANY, "type", " %s", t->id);
	print_string(PRINT_ANY, "name", " name \"%s\"", t->name);
	print_string(PRINT_ANY, "device_api", " api %s", t->device_api);
	print_uint(PRINT_ANY, "available_instances", " available %u",
		   t->available);
	if (t->has_max_instance)
		print_uint(PRINT_ANY, "max_instance", " max_instance %u",
			   t->max_instance);
	else
		print_null(PRINT_JSON, "max_instance", NULL, NULL);
	if (t->has_framebuffer)
		print_uint(PRINT_ANY, "framebuffer_mb", " framebuffer %uM",
			   t->framebuffer_mb);
	else
		print_null(PRINT_JSON, "framebuffer_mb", NULL, NULL);
	if (t->has_num_heads)
		print_uint(PRINT_ANY, "num_heads", " num_heads %u",
			   t->num_heads);
	else
		print_null(PRINT_JSON, "num_heads", NULL, NULL);
	if (t->max_resolution[0])
		print_string(PRINT_ANY, "max_resolution", " max_resolution %s",
			     t->max_resolution);
	else
		print_null(PRINT_JSON, "max_resolution", NULL, NULL);
	if (t->description[0])
		print_string(PRINT_ANY, "description", " description \"%s\"",
			     t->description);
	else
		print_null(PRINT_JSON, "description", NULL, NULL);
	print_string(PRINT_JSON, "kind", NULL, "mdev");
}

/* "no mdev parent "qxl" (parents: mbochs, mtty)"; Return: the exit code */
static int vgpu_no_parent(const char *cmd, const char *parent)
{
	char names[256];

	if (mdev_parent_list(names, sizeof(names)))
		snprintf(names, sizeof(names), "unknown");
	fprintf(stderr, "gpuctl: %s: no mdev parent \"%s\" (parents: %s)\n",
		cmd, parent, names);
	return EXIT_KERNEL;
}

/**
 * vgpu_types_show() - gpuctl vgpu types [ PARENT ]
 * @parent: a parent from mdev_parent_name(), or NULL for all
 *
 * The mdev types, then the types of vendor VFs, per PF.
 *
 * Return: the exit code.
 */
int vgpu_types_show(const char *parent)
{
	struct mdev_type_info *types = NULL;
	struct vgpu_vf_type *vf_types = NULL;
	size_t n = 0, nvf = 0, i;
	bool vf_pf = false;
	int ret = 0;

	/*
	 * A PARENT with vendor VFs is their PF, and has their types only:
	 * one walk of the VFs says so and reads them. An error before any
	 * of its VFs leaves it to be an mdev parent, or none.
	 */
	if (parent)
		ret = vgpu_vf_types_read(parent, &vf_types, &nvf, &vf_pf);
	if (!vf_pf) {
		ret = mdev_types_read(parent, &types, &n);
		if (ret == -ENOENT)
			return vgpu_no_parent("vgpu types", parent);
		if (ret) {
			fprintf(stderr, "gpuctl: vgpu types: cannot read the mdev types: %s\n",
				strerror(-ret));
			return EXIT_KERNEL;
		}
		if (!parent)
			ret = vgpu_vf_types_read(NULL, &vf_types, &nvf, NULL);
	}
	if (ret) {
		fprintf(stderr,
			"gpuctl: vgpu types: cannot read the vendor VFs' types: %s\n",
			strerror(-ret));
		free(types);
		return EXIT_KERNEL;
	}

	new_json_obj();
	open_json_array(PRINT_JSON, "vgpu_types");
	for (i = 0; i < n; i++) {
		open_json_object(NULL);
		vgpu_type_print(&types[i]);
		close_json_object();
		print_nl();
	}
	for (i = 0; i < nvf; i++) {
		open_json_object(NULL);
		vgpu_vf_type_print(&vf_types[i]);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
	free(types);
	free(vf_types);
	return EXIT_OK;
}

/**
 * vgpu_type_find() - one type of one parent, as sysfs has it now
 * @parent: the parent
 * @type: the type's id
 * @t: filled
 * @cmd: "vgpu add", for messages
 *
 * Return: 0, or the exit code after a message naming the parents or the
 * types there are.
 */
int vgpu_type_find(const char *parent, const char *type,
		   struct mdev_type_info *t, const char *cmd)
{
	struct mdev_type_info *types;
	char names[256];
	size_t n, i;
	int ret;

	ret = mdev_types_read(parent, &types, &n);
	if (ret == -ENOENT)
		return vgpu_no_parent(cmd, parent);
	if (ret) {
		fprintf(stderr, "gpuctl: %s: cannot read the types of %s: %s\n",
			cmd, parent, strerror(-ret));
		return EXIT_KERNEL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(types[i].id, type))
			break;
	if (i < n)
		*t = types[i];
	free(types);
	if (i < n)
		return 0;
	if (mdev_type_list(parent, names, sizeof(names)))
		snprintf(names, sizeof(names), "unknown");
	fprintf(stderr, "gpuctl: %s: %s has no mdev type \"%s\" (types: %s)\n",
		cmd, parent, type, names);
	return EXIT_KERNEL;
}
