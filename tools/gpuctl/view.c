// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The module's whole view at one moment: the dumps of devices,
 * allocations, limits and mdevs, and the vGPU types sysfs lists, read
 * before an output prints its first line, so that a failure prints
 * nothing half.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuctl.h"
#include "holders.h"
#include "mdev_sysfs.h"
#include "vgpu_vf.h"
#include "view.h"

/**
 * view_free() - free what view_read() read
 * @v: the view
 */
void view_free(struct view *v)
{
	nl_list_free(&v->devs);
	nl_list_free(&v->allocs);
	nl_list_free(&v->limits);
	nl_list_free(&v->vgpus);
	free(v->types);
	free(v->vf_types);
	memset(v, 0, sizeof(*v));
}

/**
 * view_read() - read the module's view and the vGPU types
 * @nl: an open socket
 * @v: filled; view_free() is for the caller once this returns 0
 * @cmd: "metrics", for the messages
 *
 * The ledger's dumps need CAP_SYS_ADMIN, as alloc show does.
 *
 * Return: 0 or a negative errno, which has been printed; nothing is kept
 * then.
 */
int view_read(struct nl_ctx *nl, struct view *v, const char *cmd)
{
	struct holders holders = {};
	size_t i;
	int ret;

	memset(v, 0, sizeof(*v));
	alloc_list_init(&v->allocs);
	limit_list_init(&v->limits);
	ret = dev_dump(nl, &v->devs);
	for (i = 0; !ret && i < v->devs.n; i++)
		dev_vgpu_type_read((struct dev_info *)v->devs.v + i);
	if (!ret)
		ret = alloc_dump(nl, &v->allocs);
	if (!ret)
		ret = vgpu_dump(nl, &v->vgpus);
	if (!ret) {
		/* one read of /proc for devices and vGPUs, if one is open */
		holders_fill(&v->devs, &v->allocs, &holders);
		holders_fill_vgpus(&v->vgpus, &v->allocs, &holders);
	}
	holders_free(&holders);
	if (!ret)
		ret = limit_dump(nl, &v->limits);
	if (!ret) {
		ret = mdev_types_read(NULL, &v->types, &v->ntypes);
		if (ret)
			fprintf(stderr, "gpuctl: %s: cannot read the mdev types: %s\n",
				cmd, strerror(-ret));
	}
	/*
	 * The vendor VFs are the module's: a VF of a GPU is a GPU function,
	 * which it tracks, so there is no need to look for them in sysfs.
	 */
	for (i = 0; !ret && i < v->devs.n; i++) {
		const struct dev_info *d = (struct dev_info *)v->devs.v + i;

		if (d->has_vgpu_type)
			ret = vgpu_vf_types_add(d->address, d->physfn,
						&v->vf_types, &v->nvf_types);
		if (ret)
			fprintf(stderr,
				"gpuctl: %s: cannot read the types of vendor VF %s: %s\n",
				cmd, d->address, strerror(-ret));
	}
	if (ret)
		view_free(v);
	return ret;
}

/**
 * view_type() - an mdev type of the view
 * @v: the view
 * @parent: the parent's address
 * @id: the type's id
 *
 * Return: the type, or NULL when sysfs no longer lists it.
 */
const struct mdev_type_info *view_type(const struct view *v,
				       const char *parent, const char *id)
{
	size_t i;

	for (i = 0; i < v->ntypes; i++)
		if (!strcmp(v->types[i].parent, parent) &&
		    !strcmp(v->types[i].id, id))
			return &v->types[i];
	return NULL;
}

/**
 * view_is_mdev_parent() - whether a device has mdev types
 * @v: the view
 * @addr: the device's address
 *
 * Return: true when some type of the view has @addr as its parent.
 */
bool view_is_mdev_parent(const struct view *v, const char *addr)
{
	size_t i;

	for (i = 0; i < v->ntypes; i++)
		if (!strcmp(v->types[i].parent, addr))
			return true;
	return false;
}
