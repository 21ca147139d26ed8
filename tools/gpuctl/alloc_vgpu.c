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
 * A TYPE no mdev parent has, given by a number, may be a vendor VF type:
 * then free vendor VFs (reserved, in no allocation, not open) are picked,
 * first those that have the type, then those that can take it (their card
 * is homogeneous), and given it; alloc-new names them as "device-typed",
 * so that "alloc del" takes the types away again.
 *
 * All or nothing: when the third instance cannot be made, or the module
 * refuses the allocation, the instances made and the types given so far
 * are taken back. Two requests never get one instance or VF: each makes
 * its own, and the module refuses one that another allocation holds.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "vf_sysfs.h"
#include "vgpu_vf.h"

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

/* Whether the module has @addr in an allocation now */
static bool dev_allocated(struct nl_ctx *nl, const char *addr)
{
	struct dev_info d;

	return !dev_get_quiet(nl, addr, &d) && d.has_allocation;
}

/**
 * alloc_vgpus_unmake() - take back what alloc_vgpus_make() made
 * @nl: an open socket
 * @s: the request; what was made is dropped from it again
 * @made: where it starts in @s; what comes before was named
 *
 * A VF this request typed but another allocation holds now keeps its
 * type: a concurrent request took it as typed, and won it.
 */
void alloc_vgpus_unmake(struct nl_ctx *nl, struct alloc_spec *s,
			const struct alloc_made *made)
{
	size_t i;
	int ret;

	for (i = s->nvgpus; i-- > made->vgpu_first;) {
		ret = mdev_remove(s->vgpus[i].uuid);
		if (ret)
			fprintf(stderr, "gpuctl: alloc add: cannot remove mdev %s: %s\n",
				s->vgpus[i].uuid, strerror(-ret));
	}
	for (i = s->ndevs; i-- > made->dev_first;) {
		if (!s->dev_typed[i])
			continue;
		if (dev_allocated(nl, s->devs[i]))
			continue;
		ret = vf_vgpu_write(s->devs[i], 0);
		if (ret)
			fprintf(stderr, "gpuctl: alloc add: cannot clear the type of %s: %s\n",
				s->devs[i], strerror(-ret));
	}
	s->nvgpus = made->vgpu_first;
	s->ndevs = made->dev_first;
}

/**
 * alloc_vfs_lost() - whether a vendor VF placed for a request is another
 *	allocation's now
 * @nl: an open socket
 * @s: the request, which the kernel refused
 * @made: where the placed VFs start in @s
 *
 * Return: true if one is, so that the kernel's EBUSY was a race lost, not
 * a device the request named.
 */
bool alloc_vfs_lost(struct nl_ctx *nl, const struct alloc_spec *s,
		    const struct alloc_made *made)
{
	size_t i;

	for (i = made->dev_first; i < s->ndevs; i++)
		if (dev_allocated(nl, s->devs[i]))
			return true;
	return false;
}

static bool vf_taken(const struct alloc_spec *s, const char *addr)
{
	size_t i;

	for (i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i], addr))
			return true;
	return false;
}

/* Whether vendor VF @d can take type @id now, as its driver lists it */
static bool vf_can_take(const struct dev_info *d, u32 id)
{
	struct vf_vgpu_type *types;
	bool ok = false;
	size_t n, i;

	if (d->vgpu_type || vf_vgpu_creatable(d->address, &types, &n))
		return false;
	for (i = 0; i < n; i++)
		ok |= types[i].id == id;
	free(types);
	return ok;
}

/*
 * The free vendor VF to give the next instance of type @id: on the node
 * asked for first, one that has the type before one that can take it;
 * never one of @s's already, nor one @lost to another request.
 */
static const struct dev_info *vf_place(const struct alloc_spec *s,
				       const struct nl_list *devs,
				       const bool *lost, u32 id)
{
	const struct dev_info *d = devs->v, *pick = NULL;
	enum vgpu_pass pass;
	int typed;
	size_t i;

	for (pass = VGPU_ON_NODE; pass <= VGPU_ELSEWHERE && !pick; pass++)
		for (typed = 1; typed >= 0 && !pick; typed--)
			for (i = 0; i < devs->n && !pick; i++) {
				if (!d[i].has_vgpu_type ||
				    d[i].state != GPUCTL_DEV_STATE_RESERVED ||
				    d[i].has_allocation || d[i].has_holder ||
				    lost[i] || vf_taken(s, d[i].address) ||
				    !vgpu_node_ok(s, d[i].numa_node, pass))
					continue;
				if (typed ? d[i].vgpu_type == id :
					    vf_can_take(&d[i], id))
					pick = &d[i];
			}
	return pick;
}

/*
 * Gives @s "vgpu ID count N" as vendor VFs. The type is written once, not
 * as "vgpu set" would (which leaves a VF that has it alone): a VF that a
 * concurrent request typed between the dump and the write refuses the
 * write (EPERM), or is open (EBUSY), and is passed over, so that a VF is
 * marked typed only by the request that typed it. Return: 0 or the exit
 * code.
 */
static int alloc_vfs_make(struct nl_ctx *nl, struct alloc_spec *s, u32 id)
{
	const struct dev_info *d;
	struct nl_list devs;
	bool *lost;
	size_t i;
	u32 made;
	int ret;

	ret = dev_dump(nl, &devs);
	if (ret)
		return EXIT_KERNEL;
	for (i = 0; i < devs.n; i++)
		dev_vgpu_type_read((struct dev_info *)devs.v + i);
	lost = calloc(devs.n ? devs.n : 1, sizeof(*lost));
	if (!lost) {
		nl_list_free(&devs);
		fprintf(stderr, "gpuctl: out of memory\n");
		return EXIT_KERNEL;
	}
	for (made = 0; made < s->vgpu_count;) {
		if (s->ndevs == ALLOC_DEVS_MAX) {
			fprintf(stderr, "gpuctl: alloc add: more than %d devices\n",
				ALLOC_DEVS_MAX);
			ret = EXIT_USAGE;
			break;
		}
		d = vf_place(s, &devs, lost, id);
		if (!d) {
			fprintf(stderr,
				"gpuctl: alloc add: no free vendor VF%s can take type %u (got %u of %u)\n",
				s->has_numa ? " on that node" : "", id, made,
				s->vgpu_count);
			ret = EXIT_KERNEL;
			break;
		}
		if (d->vgpu_type != id) {
			ret = vf_vgpu_write(d->address, id);
			if (ret == -EPERM || ret == -EBUSY) {
				lost[d - (const struct dev_info *)devs.v] = true;
				ret = 0;
				continue;
			}
			if (ret) {
				vf_write_error("alloc add", d->address, id, ret);
				ret = EXIT_KERNEL;
				break;
			}
		}
		s->dev_typed[s->ndevs] = d->vgpu_type != id;
		snprintf(s->devs[s->ndevs++], ADDR_BUFSZ, "%s", d->address);
		made++;
	}
	free(lost);
	nl_list_free(&devs);
	return ret;
}

/* "1156": a vendor VF type's id; Return: 0 or -EINVAL */
static int vf_type_id(const char *type, u32 *id)
{
	return *type >= '1' && *type <= '9' ? parse_u32(type, id) : -EINVAL;
}

/**
 * alloc_vgpus_make() - make the instances "vgpu TYPE count N" asks for
 * @nl: an open socket
 * @s: the request; each instance made is added to @s->vgpus, marked made,
 *	each vendor VF given its type to @s->devs, marked typed
 * @made: where the new ones start in @s
 *
 * Return: 0, or the exit code after the error has been printed and what
 * was made taken back again.
 */
int alloc_vgpus_make(struct nl_ctx *nl, struct alloc_spec *s,
		     struct alloc_made *made)
{
	struct vgpu_spec v = {};
	struct nl_list list;
	u32 n, id;
	int ret;

	made->vgpu_first = s->nvgpus;
	made->dev_first = s->ndevs;
	snprintf(v.type, sizeof(v.type), "%s", s->vgpu_type);
	for (n = 0; n < s->vgpu_count; n++) {
		if (s->nvgpus == ALLOC_DEVS_MAX) {
			fprintf(stderr, "gpuctl: alloc add: more than %d vGPUs\n",
				ALLOC_DEVS_MAX);
			ret = EXIT_USAGE;
			goto undo;
		}
		ret = vgpu_place(s, v.parent, sizeof(v.parent));
		if (ret == -ENOENT && !vf_type_id(s->vgpu_type, &id)) {
			ret = alloc_vfs_make(nl, s, id);
			if (ret)
				goto undo;
			return EXIT_OK;
		}
		if (ret) {
			if (ret == -ENOENT)
				fprintf(stderr,
					"gpuctl: alloc add: no mdev parent has type %s\n",
					s->vgpu_type);
			else if (ret == -ENOSPC)
				fprintf(stderr,
					"gpuctl: alloc add: no mdev parent%s has room for %s vGPU of type %s (made %u of %u)\n",
					s->has_numa ? " on that node" : "",
					n ? "another" : "a", s->vgpu_type,
					n, s->vgpu_count);
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
	alloc_vgpus_unmake(nl, s, made);
	return ret;
}

/**
 * alloc_vgpus_remove() - take back what deleted allocations made
 * @nl: an open socket
 * @allocs: the allocations as they were before their deletion
 *
 * Removes the instances made for them that still exist and takes the
 * vGPU type away from the vendor VFs they typed.
 *
 * Return: 0, or the exit code after every failure has been printed; the
 * others are taken back nonetheless.
 */
int alloc_vgpus_remove(struct nl_ctx *nl, const struct nl_list *allocs)
{
	const struct alloc_info *al = allocs->v;
	int ret = EXIT_OK, err;
	size_t i, j;

	for (i = 0; i < allocs->n; i++) {
		for (j = 0; j < al[i].nvgpus; j++) {
			/*
			 * An instance removed by hand (the allocation is lost
			 * then) is already where deleting takes it.
			 */
			if (!al[i].vgpus[j].made ||
			    !mdev_exists(al[i].vgpus[j].uuid))
				continue;
			if (vgpu_remove(nl, al[i].vgpus[j].uuid, "alloc del"))
				ret = EXIT_KERNEL;
		}
		for (j = 0; j < al[i].ntyped; j++) {
			err = vf_vgpu_write(al[i].typed[j], 0);
			if (err) {
				fprintf(stderr,
					"gpuctl: alloc del: cannot clear the type of %s: %s\n",
					al[i].typed[j], strerror(-err));
				ret = EXIT_KERNEL;
			}
		}
	}
	return ret;
}
