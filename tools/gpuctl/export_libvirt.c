// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export libvirt: the <hostdev> elements of libvirt's domain XML
 * for an allocation, an owner's allocations, one device or one mdev,
 * built from the module's view. Every PCI function, companions included,
 * gets a hostdev of type pci with managed='no' and <driver name='vfio'/>:
 * gpuctl, not libvirt, keeps it on its VFIO driver (libvirt would bind a
 * vendor VF, which stays on nvidia, to vfio-pci, and fail). Every
 * mdev gets a hostdev of type mdev, named by its UUID, whose model is its
 * type's device_api. The elements are printed one after the other, as
 * virsh dumpxml indents them, to go inside a domain's <devices>.
 *
 * Everything is found and checked before the first element is printed,
 * so a refusal prints nothing half.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "export.h"
#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "view.h"

/* What "export libvirt" was asked for */
enum lv_target_kind {
	LV_ALLOC,	/* ID, id ID: one allocation */
	LV_OWNER,	/* owner UUID: every allocation of a VM */
	LV_DEV,		/* DEV: a PCI function and its companions */
	LV_MDEV,	/* UUID: an mdev */
};

struct lv_target {
	enum lv_target_kind kind;
	u32 id;
	char uuid[GPUCTL_UUID_LEN + 1];	/* the owner's or the mdev's */
	char addr[ADDR_BUFSZ];
};

/* One hostdev to print: a PCI function, or an mdev with its model */
struct lv_hostdev {
	bool mdev;
	unsigned int domain, bus, slot, fn;
	char uuid[GPUCTL_UUID_LEN + 1];
	const char *model;
};

struct lv_list {
	struct lv_hostdev *v;
	size_t n;
};

/* The device APIs libvirt's schema takes as an mdev hostdev's model */
static const char *const lv_models[] = { "vfio-pci", "vfio-ccw", "vfio-ap" };

static void lv_help(FILE *fp)
{
	cmd_help(fp, &export_object, "libvirt");
	fprintf(fp,
		"where  DEV := { DDDD:BB:DD.F | BB:DD.F }, MDEV := an mdev's UUID\n");
}

static int lv_add(struct lv_list *l, const struct lv_hostdev *h)
{
	struct lv_hostdev *grown;

	grown = realloc(l->v, (l->n + 1) * sizeof(*grown));
	if (!grown) {
		fprintf(stderr, "gpuctl: export libvirt: %s\n",
			strerror(ENOMEM));
		return -ENOMEM;
	}
	l->v = grown;
	l->v[l->n++] = *h;
	return 0;
}

static int lv_add_pci(struct lv_list *l, const char *addr)
{
	struct lv_hostdev h = { .mdev = false };

	if (sscanf(addr, "%x:%x:%x.%x", &h.domain, &h.bus, &h.slot,
		   &h.fn) != 4) {
		fprintf(stderr,
			"gpuctl: export libvirt: the module gave a malformed address \"%s\"\n",
			addr);
		return -EPROTO;
	}
	return lv_add(l, &h);
}

/*
 * An mdev's model is its type's device_api, which libvirt needs to know:
 * an instance the module does not list, or a type sysfs no longer has,
 * is named rather than guessed.
 */
static int lv_add_mdev(struct lv_list *l, const struct view *s,
		       const char *uuid)
{
	const struct vgpu_info *v = vgpu_find(&s->vgpus, uuid);
	const struct mdev_type_info *t;
	struct lv_hostdev h = { .mdev = true };
	size_t i;

	if (!v) {
		fprintf(stderr, "gpuctl: export libvirt: no mdev %s\n", uuid);
		return -ENOENT;
	}
	t = view_type(s, v->parent, v->type);
	if (!t) {
		fprintf(stderr,
			"gpuctl: export libvirt: mdev %s: its parent %s no longer lists type %s\n",
			uuid, v->parent, v->type);
		return -ENOENT;
	}
	for (i = 0; i < ARRAY_SIZE(lv_models) && !h.model; i++)
		if (!strcmp(t->device_api, lv_models[i]))
			h.model = lv_models[i];
	if (!h.model) {
		fprintf(stderr,
			"gpuctl: export libvirt: mdev %s: type %s has device_api \"%s\", which libvirt cannot pass to a VM\n",
			uuid, v->type, t->device_api);
		return -EINVAL;
	}
	snprintf(h.uuid, sizeof(h.uuid), "%s", uuid);
	return lv_add(l, &h);
}

/* An allocation's functions in its order (address order), then its mdevs */
static int lv_add_alloc(struct lv_list *l, const struct view *s,
			const struct alloc_info *al)
{
	size_t i;
	int ret;

	if (al->state == GPUCTL_ALLOC_STATE_LOST) {
		fprintf(stderr,
			"gpuctl: export libvirt: allocation %u is lost: %s\n",
			al->id, al->state_reason);
		return -ENODEV;
	}
	for (i = 0; i < al->ndevs; i++) {
		ret = lv_add_pci(l, al->devs[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < al->nvgpus; i++) {
		ret = lv_add_mdev(l, s, al->vgpus[i].uuid);
		if (ret)
			return ret;
	}
	return 0;
}

static int lv_add_allocs(struct lv_list *l, const struct view *s,
			 const struct lv_target *t)
{
	const struct alloc_info *al = s->allocs.v;
	size_t i, found = 0;
	int ret;

	for (i = 0; i < s->allocs.n; i++) {
		if (t->kind == LV_ALLOC ? al[i].id != t->id :
					  strcmp(al[i].owner, t->uuid))
			continue;
		ret = lv_add_alloc(l, s, &al[i]);
		if (ret)
			return ret;
		found++;
	}
	if (found)
		return 0;
	if (t->kind == LV_ALLOC)
		fprintf(stderr, "gpuctl: export libvirt: no allocation %u\n",
			t->id);
	else
		fprintf(stderr,
			"gpuctl: export libvirt: owner %s has no allocation\n",
			t->uuid);
	return -ENOENT;
}

/*
 * Whether @d goes with @gpu: a companion (another function of its slot in
 * its IOMMU group), as the kernel adds to an allocation of @gpu.
 */
static bool lv_is_companion(const struct dev_info *gpu,
			    const struct dev_info *d)
{
	const char *dot = strrchr(gpu->address, '.');

	return gpu->role == GPUCTL_DEV_ROLE_GPU &&
	       d->role == GPUCTL_DEV_ROLE_COMPANION && gpu->has_iommu_group &&
	       d->has_iommu_group && d->iommu_group == gpu->iommu_group &&
	       dot && !strncmp(d->address, gpu->address, dot - gpu->address + 1);
}

/*
 * A function as an allocation would hold it: a GPU with its companions,
 * in address order. managed='no' is right only for a function gpuctl
 * keeps on its VFIO driver, so an unreserved one is refused, and so is
 * a bridge, which vfio-pci does not take.
 */
static int lv_add_dev(struct lv_list *l, const struct view *s,
		      const char *addr)
{
	const struct dev_info *d = s->devs.v;
	const struct dev_info *dev = dev_find(&s->devs, addr);
	size_t i;
	int ret;

	if (!dev) {
		fprintf(stderr,
			"gpuctl: export libvirt: %s is not a device gpuctl tracks\n",
			addr);
		return -ENOENT;
	}
	if (dev->role == GPUCTL_DEV_ROLE_BRIDGE) {
		fprintf(stderr,
			"gpuctl: export libvirt: %s is a PCI bridge, which VFIO cannot pass to a VM\n",
			addr);
		return -EINVAL;
	}
	if (!dev->reserved) {
		fprintf(stderr,
			"gpuctl: export libvirt: %s is not reserved, so not kept on a VFIO driver as managed='no' needs; reserve it first\n",
			addr);
		return -EINVAL;
	}
	for (i = 0; i < s->devs.n; i++) {
		if (&d[i] != dev && !lv_is_companion(dev, &d[i]))
			continue;
		ret = lv_add_pci(l, d[i].address);
		if (ret)
			return ret;
	}
	return 0;
}

static void lv_print_pci(const struct lv_hostdev *h)
{
	printf("<hostdev mode='subsystem' type='pci' managed='no'>\n"
	       "  <driver name='vfio'/>\n"
	       "  <source>\n"
	       "    <address domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/>\n"
	       "  </source>\n"
	       "</hostdev>\n",
	       h->domain, h->bus, h->slot, h->fn);
}

static void lv_print_mdev(const struct lv_hostdev *h)
{
	printf("<hostdev mode='subsystem' type='mdev' model='%s' managed='no'>\n"
	       "  <source>\n"
	       "    <address uuid='%s'/>\n"
	       "  </source>\n"
	       "</hostdev>\n",
	       h->model, h->uuid);
}

/**
 * export_libvirt() - print the hostdev elements of an allocation or device
 * @nl: an open socket
 * @t: what to print them for
 *
 * Return: 0, -ENOENT or -EINVAL for what the module does not have or
 * libvirt cannot take, or another negative errno; it has been printed,
 * and no element then.
 */
static int export_libvirt(struct nl_ctx *nl, const struct lv_target *t)
{
	struct lv_list l = {};
	struct view s;
	size_t i;
	int ret;

	ret = view_read(nl, &s, "export libvirt");
	if (ret)
		return ret;
	switch (t->kind) {
	case LV_ALLOC:
	case LV_OWNER:
		ret = lv_add_allocs(&l, &s, t);
		break;
	case LV_DEV:
		ret = lv_add_dev(&l, &s, t->addr);
		break;
	case LV_MDEV:
		ret = lv_add_mdev(&l, &s, t->uuid);
		break;
	}
	for (i = 0; !ret && i < l.n; i++) {
		if (l.v[i].mdev)
			lv_print_mdev(&l.v[i]);
		else
			lv_print_pci(&l.v[i]);
	}
	free(l.v);
	view_free(&s);
	return ret;
}

/* ID, id ID, owner UUID, DEV or an mdev's UUID */
static int lv_target_parse(struct args *a, struct lv_target *t)
{
	const char *arg = args_next(a);

	memset(t, 0, sizeof(*t));
	if (!arg) {
		fprintf(stderr,
			"gpuctl: export libvirt: missing allocation id, DEV or mdev UUID\n");
		return -EINVAL;
	}
	if (!strcmp(arg, "owner")) {
		t->kind = LV_OWNER;
		arg = args_next(a);
		if (arg && !uuid_parse(arg, t->uuid, sizeof(t->uuid)))
			return 0;
		fprintf(stderr,
			"gpuctl: export libvirt: invalid owner \"%s\", expected a UUID\n",
			arg ? arg : "");
		return -EINVAL;
	}
	if (!strcmp(arg, "id")) {
		t->kind = LV_ALLOC;
		arg = args_next(a);
		if (arg && !parse_u32(arg, &t->id))
			return 0;
		fprintf(stderr,
			"gpuctl: export libvirt: invalid allocation id \"%s\", expected a number\n",
			arg ? arg : "");
		return -EINVAL;
	}
	if (strchr(arg, ':')) {
		t->kind = LV_DEV;
		if (!parse_pci_address(arg, t->addr, sizeof(t->addr)))
			return 0;
		fprintf(stderr,
			"gpuctl: export libvirt: invalid PCI address \"%s\"\n",
			arg);
		return -EINVAL;
	}
	t->kind = LV_MDEV;
	if (!uuid_parse(arg, t->uuid, sizeof(t->uuid)))
		return 0;
	t->kind = LV_ALLOC;
	if (!parse_u32(arg, &t->id))
		return 0;
	fprintf(stderr,
		"gpuctl: export libvirt: \"%s\" is no allocation id, PCI address or mdev UUID\n",
		arg);
	return -EINVAL;
}

/**
 * cmd_export_libvirt() - gpuctl export libvirt { ID | id ID | owner UUID |
 *	DEV | MDEV }
 * @g: the tool's state
 * @a: the words after "libvirt"
 *
 * Return: the exit code: 2 also when the module has no such allocation,
 * device or mdev, as alloc show says for an unknown id.
 */
int cmd_export_libvirt(struct gpuctl *g, struct args *a)
{
	struct lv_target t;
	struct nl_ctx *nl;
	int ret;

	if (args_is(a, "help")) {
		lv_help(stdout);
		return EXIT_OK;
	}
	if (g->json) {
		fprintf(stderr,
			"gpuctl: export libvirt: prints XML, -j does not apply\n");
		return EXIT_USAGE;
	}
	if (lv_target_parse(a, &t) || !args_done(a, "export libvirt"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	return export_libvirt(nl, &t) ? EXIT_KERNEL : EXIT_OK;
}
