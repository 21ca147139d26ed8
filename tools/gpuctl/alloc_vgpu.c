// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The vGPUs an allocation asks for by type ("alloc add ... vgpu TYPE
 * count N"): the tool places and makes them, since only the mdev core's
 * sysfs can make an instance, then names them to alloc-new as made for the
 * allocation ("mdev-made"), which the module keeps in the ledger; "alloc
 * del" removes them again unless told to keep them.
 *
 * All or nothing: when the third instance cannot be made, or the module
 * refuses the allocation, the instances made so far are removed. Two
 * requests never get one instance: each makes its own, and the module
 * refuses an instance that another allocation holds.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "mdev_sysfs.h"

/* Placement passes, as the module's for whole GPUs (kmod/alloc.c) */
enum vgpu_pass {
	VGPU_ON_NODE,
	VGPU_ELSEWHERE,
};

static bool vgpu_node_ok(const struct alloc_spec *s, int node,
			 enum vgpu_pass pass)
{
	if (!s->has_numa)
		return pass == VGPU_ON_NODE;
	if (pass == VGPU_ON_NODE)
		return node == (int)s->numa_node;
	switch (s->numa_policy) {
	case GPUCTL_NUMA_POLICY_PREFERRED:
		return node != (int)s->numa_node;
	case GPUCTL_NUMA_POLICY_REQUIRED:
		return false;
	default:
		/* legacy: parents whose platform gives no node fit anywhere */
		return node < 0;
	}
}

/*
 * The parent to make the next instance of @s's type on: the first, in
 * parent order, with room, on the node asked for first. Types are read
 * afresh each time: an instance of one type takes room from the others.
 * Return: 0, -ENOENT when no parent has the type, -ENOSPC when none has
 * room, or another negative errno.
 */
static int vgpu_place(const struct alloc_spec *s, char *parent, size_t size)
{
	struct mdev_type_info *types;
	enum vgpu_pass pass;
	bool any = false;
	size_t n, i;
	int ret;

	ret = mdev_types_read(NULL, &types, &n);
	if (ret)
		return ret;
	ret = -ENOSPC;
	for (pass = VGPU_ON_NODE; pass <= VGPU_ELSEWHERE && ret; pass++) {
		for (i = 0; i < n && ret; i++) {
			if (strcmp(types[i].id, s->vgpu_type))
				continue;
			any = true;
			if (!types[i].available ||
			    !vgpu_node_ok(s, mdev_parent_node(types[i].parent),
					  pass))
				continue;
			snprintf(parent, size, "%s", types[i].parent);
			ret = 0;
		}
	}
	free(types);
	return any ? ret : -ENOENT;
}

/**
 * alloc_vgpus_unmake() - remove the instances alloc_vgpus_make() made
 * @s: the request
 * @first: where they start in @s->vgpus; those before were named
 */
void alloc_vgpus_unmake(const struct alloc_spec *s, size_t first)
{
	size_t i;
	int ret;

	for (i = s->nvgpus; i-- > first;) {
		ret = mdev_remove(s->vgpus[i].uuid);
		if (ret)
			fprintf(stderr, "gpuctl: alloc add: cannot remove mdev %s: %s\n",
				s->vgpus[i].uuid, strerror(-ret));
	}
}

/**
 * alloc_vgpus_make() - make the instances "vgpu TYPE count N" asks for
 * @nl: an open socket
 * @s: the request; each instance made is added to @s->vgpus, marked made
 * @first: where the new ones start in @s->vgpus
 *
 * Return: 0, or the exit code after the error has been printed and what
 * was made removed again.
 */
int alloc_vgpus_make(struct nl_ctx *nl, struct alloc_spec *s, size_t *first)
{
	struct vgpu_spec v = {};
	struct nl_list list;
	u32 made;
	int ret;

	*first = s->nvgpus;
	snprintf(v.type, sizeof(v.type), "%s", s->vgpu_type);
	for (made = 0; made < s->vgpu_count; made++) {
		if (s->nvgpus == ALLOC_DEVS_MAX) {
			fprintf(stderr, "gpuctl: alloc add: more than %d vGPUs\n",
				ALLOC_DEVS_MAX);
			ret = EXIT_USAGE;
			goto undo;
		}
		ret = vgpu_place(s, v.parent, sizeof(v.parent));
		if (ret) {
			if (ret == -ENOENT)
				fprintf(stderr,
					"gpuctl: alloc add: no mdev parent has type %s\n",
					s->vgpu_type);
			else if (ret == -ENOSPC)
				fprintf(stderr,
					"gpuctl: alloc add: no mdev parent%s has room for %s vGPU of type %s (made %u of %u)\n",
					s->has_numa ? " on that node" : "",
					made ? "another" : "a", s->vgpu_type,
					made, s->vgpu_count);
			else
				fprintf(stderr,
					"gpuctl: alloc add: cannot read the mdev types: %s\n",
					strerror(-ret));
			ret = EXIT_KERNEL;
			goto undo;
		}
		if (mdev_uuid_generate(v.uuid, sizeof(v.uuid))) {
			fprintf(stderr, "gpuctl: alloc add: cannot make a UUID: %m\n");
			ret = EXIT_KERNEL;
			goto undo;
		}
		ret = vgpu_make(nl, &v, "alloc add", &list);
		nl_list_free(&list);
		if (ret)
			goto undo;
		snprintf(s->vgpus[s->nvgpus].uuid, sizeof(v.uuid), "%s", v.uuid);
		s->vgpus[s->nvgpus++].made = true;
	}
	return EXIT_OK;

undo:
	alloc_vgpus_unmake(s, *first);
	s->nvgpus = *first;
	return ret;
}

/**
 * alloc_vgpus_remove() - remove what deleted allocations made
 * @nl: an open socket
 * @allocs: the allocations as they were before their deletion
 *
 * Return: 0, or the exit code after every failure has been printed; the
 * others are removed nonetheless.
 */
int alloc_vgpus_remove(struct nl_ctx *nl, const struct nl_list *allocs)
{
	const struct alloc_info *al = allocs->v;
	int ret = EXIT_OK;
	size_t i, j;

	for (i = 0; i < allocs->n; i++)
		for (j = 0; j < al[i].nvgpus; j++)
			if (al[i].vgpus[j].made &&
			    vgpu_remove(nl, al[i].vgpus[j].uuid, "alloc del"))
				ret = EXIT_KERNEL;
	return ret;
}
