// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl vgpu: the host's mdev instances (vGPUs) as the module follows
 * them on the mdev bus, whoever created them; their types; and their
 * creation and removal, which the tool writes to the mdev core's sysfs
 * and the module's view confirms (mdev_sysfs.c says why). Vendor VFs'
 * types are set in vgpu_vf.c.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "holders.h"
#include "migration.h"
#include "json_print.h"
#include "mdev_sysfs.h"
#include "vgpu_vf.h"

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
		case GPUCTL_A_MDEV_OPEN:
			if (mnl_attr_validate(attr, MNL_TYPE_U8) < 0)
				return -1;
			v->has_open = true;
			v->open = mnl_attr_get_u8(attr);
			break;
		case GPUCTL_A_MDEV_MIGRATION:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
				return -1;
			v->has_migration = true;
			v->migration = mnl_attr_get_u32(attr);
			break;
		case GPUCTL_A_MDEV_ALLOCATION:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
				return -1;
			v->has_allocation = true;
			v->allocation = mnl_attr_get_u32(attr);
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
 * vgpu_dump() - every mdev instance the module knows
 * @nl: an open socket
 * @list: initialized here, filled; nl_list_free() is for the caller
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int vgpu_dump(struct nl_ctx *nl, struct nl_list *list)
{
	vgpu_list_init(list);
	return nl_collect(nl, nl_msg_start(nl, GPUCTL_CMD_MDEV_GET, true),
			  list);
}

/**
 * vgpu_find() - an mdev instance of a dump, by UUID
 * @vgpus: the dump (struct vgpu_info)
 * @uuid: its UUID, lower case
 *
 * Return: the instance, or NULL when the dump does not have it.
 */
const struct vgpu_info *vgpu_find(const struct nl_list *vgpus,
				  const char *uuid)
{
	const struct vgpu_info *v = vgpus->v;
	size_t i;

	for (i = 0; i < vgpus->n; i++)
		if (!strcmp(v[i].uuid, uuid))
			return &v[i];
	return NULL;
}

/*
 * "migration" and "migration_compat" in JSON; " migratable" in text when
 * its VFIO device can move its state (stop-copy)
 */
static void vgpu_migration_print(const struct vgpu_info *v)
{
	char key[MIGRATION_COMPAT_BUFSZ];

	migration_print(v->has_migration, v->migration);
	if (!vgpu_migration_compat(v, key, sizeof(key))) {
		print_null(PRINT_JSON, "migration_compat", NULL, NULL);
		return;
	}
	print_string(PRINT_JSON, "migration_compat", NULL, key);
	if (migration_live(v->has_migration, v->migration))
		print_string(PRINT_FP, NULL, "%s", " migratable");
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
	if (v->has_allocation)
		print_uint(PRINT_ANY, "allocation", " alloc %u", v->allocation);
	else
		print_null(PRINT_JSON, "allocation", NULL, NULL);
	/* the module knows that someone has it open; root's tool, who */
	if (v->has_open)
		print_bool(PRINT_JSON, "open", NULL, v->open);
	else
		print_null(PRINT_JSON, "open", NULL, NULL);
	if (v->open)
		print_string(PRINT_FP, NULL, "%s", " open");
	vgpu_migration_print(v);
	if (!v->has_holder) {
		print_null(PRINT_JSON, "holder", NULL, NULL);
		return;
	}
	print_string(PRINT_FP, NULL, " holder %s", v->holder_comm);
	print_uint(PRINT_FP, NULL, "[%u]", v->holder_pid);
	if (v->holder_match == HOLDER_MATCH_MISMATCH ||
	    v->holder_match == GPUCTL_OPEN_MATCH_UNALLOCATED)
		print_string(PRINT_FP, NULL, " (%s)",
			     open_match_name(v->holder_match));
	open_json_object("holder");
	print_uint(PRINT_JSON, "pid", NULL, v->holder_pid);
	print_string(PRINT_JSON, "comm", NULL, v->holder_comm);
	print_uint(PRINT_JSON, "uid", NULL, v->holder_uid);
	print_string(PRINT_JSON, "vm", NULL,
		     v->holder_vm[0] ? v->holder_vm : NULL);
	print_string(PRINT_JSON, "match", NULL,
		     open_match_name(v->holder_match));
	close_json_object();
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

/* Who has the open instances open, for root, and whether it matches */
static void vgpu_holders_fill(struct gpuctl *g, struct nl_list *list)
{
	const struct vgpu_info *v = list->v;
	struct holders f = {};
	struct nl_list allocs;
	struct nl_ctx *nl;
	bool any = false;
	size_t i;

	for (i = 0; i < list->n; i++)
		any |= v[i].open;
	if (!any || geteuid() || gpuctl_nl(g, &nl))
		return;
	alloc_list_init(&allocs);
	holders_fill_vgpus(list, alloc_dump(nl, &allocs) ? NULL : &allocs, &f);
	holders_free(&f);
	nl_list_free(&allocs);
}

static int cmd_vgpu_show(struct gpuctl *g, struct args *a)
{
	static const struct show_by_id show = {
		.cmd = "vgpu show",
		.one_name = "vGPU",
		.object = &vgpu_object,
		.nl_cmd = GPUCTL_CMD_MDEV_GET,
		.id_attr = GPUCTL_A_MDEV_UUID,
		.by_uuid = true,
	};
	struct nl_list list;
	bool collected;
	int ret;

	vgpu_list_init(&list);
	ret = show_by_id(g, a, &show, &list, &collected);
	if (collected) {
		vgpu_holders_fill(g, &list);
		vgpu_list_print(&list);
	}
	nl_list_free(&list);
	return ret;
}

/* mdev-get of @uuid into @list, quietly: -ENODEV when the module has none */
static int vgpu_get(struct nl_ctx *nl, const char *uuid, struct nl_list *list)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(nl, GPUCTL_CMD_MDEV_GET, false);
	mnl_attr_put_strz(nlh, GPUCTL_A_MDEV_UUID, uuid);
	return nl_collect_quiet(nl, nlh, list);
}

static int cmd_vgpu_types(struct gpuctl *g, struct args *a)
{
	char parent[MDEV_PARENT_BUFSZ];
	const char *arg;

	arg = args_next(a);
	if (arg && !strcmp(arg, "help")) {
		object_help(stdout, &vgpu_object);
		return EXIT_OK;
	}
	if (arg && mdev_parent_name(arg, parent, sizeof(parent))) {
		fprintf(stderr, "gpuctl: vgpu types: invalid parent \"%s\"\n",
			arg);
		return EXIT_USAGE;
	}
	if (!args_done(a, "vgpu types"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	return vgpu_types_show(arg ? parent : NULL);
}

/* "PARENT type TYPE [ uuid UUID ]" */
static int vgpu_add_parse(struct args *a, struct vgpu_spec *r)
{
	char err[RULE_ERR_BUFSZ];

	if (vgpu_spec_parse(a, r, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: vgpu add: %s\n", err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Explains why the mdev core refused to create @r's instance */
static void vgpu_create_error(const char *cmd, const struct vgpu_spec *r,
			      int err)
{
	if (err == -ENOSPC)
		fprintf(stderr,
			"gpuctl: %s: %s has no capacity left for type %s\n",
			cmd, r->parent, r->type);
	else if (err == -EEXIST)
		fprintf(stderr, "gpuctl: %s: mdev %s exists already\n", cmd,
			r->uuid);
	else
		fprintf(stderr,
			"gpuctl: %s: cannot create mdev %s of type %s on %s: %s\n",
			cmd, r->uuid, r->type, r->parent, strerror(-err));
}

/**
 * vgpu_make() - create @r's instance and see that the module lists it
 * @nl: an open socket
 * @r: parent, type and UUID
 * @cmd: "vgpu add" or "apply", for messages
 * @list: gets the module's view of the instance; vgpu_list_init() is done
 *	here, nl_list_free() is for the caller
 *
 * The checks before the write give the clearer message; the mdev core's
 * own checks in the write are what counts when two writers race for the
 * last instance or for one UUID. The write returns after the mdev core
 * added the instance and its parent's driver bound it, so the module has
 * seen both by then: one request confirms it. An instance the module does
 * not list is removed again.
 *
 * Return: 0, or the exit code after the error has been printed.
 */
int vgpu_make(struct nl_ctx *nl, const struct vgpu_spec *r, const char *cmd,
	      struct nl_list *list)
{
	struct mdev_type_info t;
	int ret;

	vgpu_list_init(list);
	ret = vgpu_type_find(r->parent, r->type, &t, cmd);
	if (ret)
		return ret;
	if (!t.available) {
		vgpu_create_error(cmd, r, -ENOSPC);
		return EXIT_KERNEL;
	}
	if (mdev_exists(r->uuid)) {
		vgpu_create_error(cmd, r, -EEXIST);
		return EXIT_KERNEL;
	}
	ret = mdev_create(r->parent, r->type, r->uuid);
	if (ret) {
		vgpu_create_error(cmd, r, ret);
		return EXIT_KERNEL;
	}

	ret = vgpu_get(nl, r->uuid, list);
	if (!ret)
		return EXIT_OK;
	nl_perror(nl, ret);
	fprintf(stderr,
		"gpuctl: %s: the gpuctl module does not list mdev %s; removing it\n",
		cmd, r->uuid);
	ret = mdev_remove(r->uuid);
	if (ret)
		fprintf(stderr, "gpuctl: %s: cannot remove mdev %s: %s\n", cmd,
			r->uuid, strerror(-ret));
	return EXIT_KERNEL;
}

/*
 * gpuctl vgpu add PARENT type TYPE [ uuid UUID ]: creates the instance and
 * shows it as the module lists it.
 */
static int cmd_vgpu_add(struct gpuctl *g, struct args *a)
{
	struct vgpu_spec r = {};
	struct nl_list list;
	struct nl_ctx *nl;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &vgpu_object);
		return EXIT_OK;
	}
	ret = vgpu_add_parse(a, &r);
	if (ret || g->dry_run)
		return ret;
	/* the module must be there to confirm the instance */
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	if (!r.has_uuid && mdev_uuid_generate(r.uuid, sizeof(r.uuid))) {
		fprintf(stderr, "gpuctl: vgpu add: cannot make a UUID: %m\n");
		return EXIT_KERNEL;
	}
	ret = vgpu_make(nl, &r, "vgpu add", &list);
	if (!ret)
		vgpu_list_print(&list);
	nl_list_free(&list);
	return ret;
}

/**
 * vgpu_remove() - remove an instance and see that the module saw it go
 * @nl: an open socket
 * @uuid: the instance, canonical
 * @cmd: "vgpu del" or "alloc del", for messages
 *
 * The mdev core makes the write wait while a VFIO user has the instance
 * open, until the user closes it.
 *
 * Return: 0, or the exit code after the error has been printed.
 */
int vgpu_remove(struct nl_ctx *nl, const char *uuid, const char *cmd)
{
	struct nl_list list;
	int ret;

	ret = mdev_remove(uuid);
	if (ret) {
		fprintf(stderr, "gpuctl: %s: cannot remove mdev %s: %s\n", cmd,
			uuid, strerror(-ret));
		return EXIT_KERNEL;
	}
	vgpu_list_init(&list);
	ret = vgpu_get(nl, uuid, &list);
	nl_list_free(&list);
	if (ret != -ENODEV) {
		if (ret)
			nl_perror(nl, ret);
		fprintf(stderr,
			"gpuctl: %s: the gpuctl module still lists mdev %s\n",
			cmd, uuid);
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

/*
 * gpuctl vgpu del UUID: removes an instance the module lists, that no
 * allocation holds and no VM has open. A VM that opens it between the
 * check and the write makes the write wait until it closes the instance.
 */
static int cmd_vgpu_del(struct gpuctl *g, struct args *a)
{
	char uuid[GPUCTL_UUID_LEN + 1];
	const struct vgpu_info *v;
	struct nl_list list;
	struct nl_ctx *nl;
	const char *arg;
	int ret;

	arg = args_next(a);
	if (!arg) {
		fprintf(stderr, "gpuctl: vgpu del: expected a UUID\n");
		return EXIT_USAGE;
	}
	if (!strcmp(arg, "help")) {
		object_help(stdout, &vgpu_object);
		return EXIT_OK;
	}
	if (uuid_parse(arg, uuid, sizeof(uuid))) {
		fprintf(stderr, "gpuctl: vgpu del: malformed UUID \"%s\"\n", arg);
		return EXIT_USAGE;
	}
	if (!args_done(a, "vgpu del"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;

	vgpu_list_init(&list);
	ret = vgpu_get(nl, uuid, &list);
	if (ret) {
		nl_perror(nl, ret);
		fprintf(stderr, "gpuctl: cannot remove vGPU %s\n", uuid);
		nl_list_free(&list);
		return EXIT_KERNEL;
	}
	v = list.v;
	if (list.n && v->has_allocation) {
		fprintf(stderr,
			"gpuctl: vgpu del: mdev %s is in allocation %u; delete the allocation first\n",
			uuid, v->allocation);
		nl_list_free(&list);
		return EXIT_KERNEL;
	}
	/* the mdev core would wait for the VM; a VM that runs on is no wait */
	if (list.n && v->open) {
		fprintf(stderr,
			"gpuctl: vgpu del: mdev %s is open by a VFIO user; stop the VM first\n",
			uuid);
		nl_list_free(&list);
		return EXIT_KERNEL;
	}
	nl_list_free(&list);
	return vgpu_remove(nl, uuid, "vgpu del");
}

static const struct cmd_entry vgpu_cmds[] = {
	{ .name = "show", .fn = cmd_vgpu_show, .usage = "[ UUID ]" },
	{ .name = "types", .fn = cmd_vgpu_types, .usage = "[ PARENT ]" },
	{ .name = "add", .fn = cmd_vgpu_add,
	  .usage = "PARENT type TYPE [ uuid UUID ]" },
	{ .name = "del", .fn = cmd_vgpu_del, .usage = "UUID" },
	{ .name = "set", .fn = cmd_vgpu_set,
	  .usage = "VF type { VFTYPE | none }" },
};

const struct object vgpu_object = {
	.name = "vgpu",
	.desc = "mdev vGPUs, their types, and the types of vendor VFs",
	.cmds = vgpu_cmds,
	.ncmds = ARRAY_SIZE(vgpu_cmds),
	.dflt = "show",
	.notes = "where  UUID := an mdev instance, xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n"
		 "       PARENT := { DDDD:BB:DD.F | BB:DD.F | NAME }, a device with mdev types\n"
		 "                 or a PF with vendor VFs\n"
		 "       TYPE := a type's id, as vgpu types lists it\n"
		 "       VF := { DDDD:BB:DD.F | BB:DD.F }, a vendor VF (nvidia/current_vgpu_type)\n"
		 "       VFTYPE := a vendor VF type's id or name, as vgpu types lists it\n",
};
