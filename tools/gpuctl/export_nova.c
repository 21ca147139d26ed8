// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export nova: the [pci] and [devices] options of nova.conf for
 * this host, from one read of the module's view. oslo.config takes a
 * repeated key of a multi-valued option as one more value, so each
 * device_spec and each alias is a line of its own with one JSON object.
 *
 * [pci] device_spec: one per function a rule reserves that is on the
 * rule's driver now (state reserved), with its full address and
 * "managed": "no", since gpuctl binds it from boot and libvirt must not
 * rebind it, and "live_migratable" (Nova 2025.1), "yes" only when its
 * VFIO driver registered stop-copy migration (migration.c). A vendor
 * vGPU VF is listed only with a type, and carries a resource class of its
 * type. A PF is left out when one of its VFs is listed or its VFs are
 * vendor VFs (nova-compute refuses a PF next to its VFs), and so is an
 * mdev parent, which the host keeps.
 *
 * [pci] alias: one per vendor id, device id and device type among them,
 * named "pci-VVVV-DDDD", with "-pf" or "-vf" for the SR-IOV types;
 * numa_policy "required" when every one of them has a NUMA node, else
 * "legacy", which lets a device without one be used anywhere.
 *
 * [devices] enabled_mdev_types and [mdev_TYPE]: each PCI mdev parent
 * under the type of its mdevs (Nova takes one type per parent, and only
 * the instances say which), with the type's capacity as max_instances.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "export.h"
#include "gpuctl.h"
#include "mdev_sysfs.h"
#include "migration.h"
#include "view.h"

/* Nova's device types, by what sysfs says of the function */
static const char *nova_dev_type(const struct dev_info *d)
{
	if (d->has_physfn)
		return "type-VF";
	return d->sriov_totalvfs ? "type-PF" : "type-PCI";
}

static const char *nova_alias_suffix(const struct dev_info *d)
{
	if (d->has_physfn)
		return "-vf";
	return d->sriov_totalvfs ? "-pf" : "";
}

/* A function VMs can take: reserved, on its rule's driver, typed if a vendor VF */
static bool nova_usable(const struct view *v, const struct dev_info *d)
{
	if (d->role != GPUCTL_DEV_ROLE_GPU || !d->reserved ||
	    d->state != GPUCTL_DEV_STATE_RESERVED)
		return false;
	if (d->has_vgpu_type && !d->vgpu_type)
		return false;
	return !view_is_mdev_parent(v, d->address);
}

/* Whether @d is listed: usable, and no PF of listed or vendor VFs */
static bool nova_listed(const struct view *v, const struct dev_info *d)
{
	const struct dev_info *all = v->devs.v;
	size_t i;

	if (!nova_usable(v, d))
		return false;
	for (i = 0; i < v->devs.n; i++) {
		if (!dev_is_vf_of(&all[i], d->address))
			continue;
		if (all[i].has_vgpu_type || nova_usable(v, &all[i]))
			return false;
	}
	return true;
}

/*
 * A vendor VF's resource class: Nova's default class for its ids with
 * _VGPU_ and its type's id, CUSTOM_PCI_10DE_25B6_VGPU_1156. Not from the
 * type's name: a card lists the names of the types it has room for only,
 * so a class from the name would change once the card is full, and
 * Placement refuses VFs of one PF in two classes.
 */
static void nova_resource_class(const struct dev_info *d, char *buf,
				size_t size)
{
	snprintf(buf, size, "CUSTOM_PCI_%04X_%04X_VGPU_%u", d->vendor_id,
		 d->device_id, d->vgpu_type);
}

/* The ids as Nova compares them: four lower case hex digits */
static void nova_ids(const struct dev_info *d)
{
	printf("\"vendor_id\": \"%04x\", \"product_id\": \"%04x\"",
	       d->vendor_id, d->device_id);
}

static void nova_device_specs(const struct view *v)
{
	const struct dev_info *d = v->devs.v;
	char rc[48];
	size_t i;

	for (i = 0; i < v->devs.n; i++) {
		if (!nova_listed(v, &d[i]))
			continue;
		printf("device_spec = {");
		nova_ids(&d[i]);
		printf(", \"address\": \"%s\", \"managed\": \"no\"",
		       d[i].address);
		/* Nova 2025.1's tag; "yes" only when the driver can move state */
		printf(", \"live_migratable\": \"%s\"",
		       migration_live(d[i].has_migration, d[i].migration) ?
		       "yes" : "no");
		if (d[i].has_vgpu_type) {
			nova_resource_class(&d[i], rc, sizeof(rc));
			printf(", \"resource_class\": \"%s\"", rc);
		}
		printf("}\n");
	}
}

static bool nova_same_alias(const struct dev_info *a, const struct dev_info *b)
{
	return a->vendor_id == b->vendor_id && a->device_id == b->device_id &&
	       !strcmp(nova_dev_type(a), nova_dev_type(b));
}

/* One alias per ids and type, where the first listed device has them */
static void nova_aliases(const struct view *v)
{
	const struct dev_info *d = v->devs.v;
	size_t i, j;
	bool known;

	for (i = 0; i < v->devs.n; i++) {
		if (!nova_listed(v, &d[i]))
			continue;
		for (j = 0; j < i; j++)
			if (nova_listed(v, &d[j]) && nova_same_alias(&d[i], &d[j]))
				break;
		if (j < i)
			continue;
		known = true;
		for (j = i; j < v->devs.n; j++)
			if (nova_listed(v, &d[j]) &&
			    nova_same_alias(&d[i], &d[j]) && d[j].numa_node < 0)
				known = false;
		printf("alias = {\"name\": \"pci-%04x-%04x%s\", ",
		       d[i].vendor_id, d[i].device_id, nova_alias_suffix(&d[i]));
		nova_ids(&d[i]);
		printf(", \"device_type\": \"%s\", \"numa_policy\": \"%s\"}\n",
		       nova_dev_type(&d[i]), known ? "required" : "legacy");
	}
}

/* Whether an mdev parent is a PCI function: Nova parses it as one */
static bool nova_pci_parent(const char *parent)
{
	unsigned int domain, bus, slot, fn;
	int end = 0;

	return sscanf(parent, "%x:%x:%x.%x%n", &domain, &bus, &slot, &fn,
		      &end) == 4 && !parent[end];
}

/*
 * The type @parent is listed under: that of its first mdev; NULL for a
 * virtual parent or one without mdevs.
 */
static const char *nova_parent_type(const struct view *v, const char *parent)
{
	const struct vgpu_info *m = v->vgpus.v;
	size_t i;

	if (!nova_pci_parent(parent))
		return NULL;
	for (i = 0; i < v->vgpus.n; i++)
		if (!strcmp(m[i].parent, parent))
			return m[i].type;
	return NULL;
}

/* Whether the mdev @i is the first of its parent */
static bool nova_first_on_parent(const struct view *v, size_t i)
{
	const struct vgpu_info *m = v->vgpus.v;
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(m[j].parent, m[i].parent))
			return false;
	return true;
}

/* Whether the mdev @i is the first of its parent's listed type */
static bool nova_first_of_type(const struct view *v, size_t i)
{
	const struct vgpu_info *m = v->vgpus.v;
	const char *t = nova_parent_type(v, m[i].parent);
	size_t j;

	if (!t || !nova_first_on_parent(v, i))
		return false;
	for (j = 0; j < i; j++)
		if (nova_first_on_parent(v, j) &&
		    !strcmp(m[j].type, t) && nova_parent_type(v, m[j].parent))
			return false;
	return true;
}

/*
 * How many mdevs of @type @parent can hold: max_instance= of the type's
 * description, else those it has and those it can still make; 0 when
 * sysfs no longer lists the type.
 */
static u32 nova_capacity(const struct view *v, const char *parent,
			 const char *type)
{
	const struct mdev_type_info *t = view_type(v, parent, type);
	const struct vgpu_info *m = v->vgpus.v;
	size_t i;
	u32 n;

	if (!t)
		return 0;
	if (t->has_max_instance)
		return t->max_instance;
	n = t->available;
	for (i = 0; i < v->vgpus.n; i++)
		n += !strcmp(m[i].parent, parent) && !strcmp(m[i].type, type);
	return n;
}

/* Each parent whose mdevs are of two types is listed under the first */
static void nova_mixed_parents(const struct view *v)
{
	const struct vgpu_info *m = v->vgpus.v;
	const char *t;
	size_t i, j;

	for (i = 0; i < v->vgpus.n; i++) {
		t = nova_parent_type(v, m[i].parent);
		if (!t || !strcmp(m[i].type, t))
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(m[j].parent, m[i].parent) &&
			    !strcmp(m[j].type, m[i].type))
				break;
		if (j == i)
			fprintf(stderr,
				"gpuctl: export nova: %s has mdevs of types %s and %s; Nova takes one type per parent, it is listed under %s\n",
				m[i].parent, t, m[i].type, t);
	}
}

static void nova_mdev_section(const struct view *v, const char *type,
			      size_t ntypes)
{
	const struct vgpu_info *m = v->vgpus.v;
	const char *sep = "";
	u32 cap, max = 0;
	bool all_known = true;
	size_t i;
	char c;

	printf("\n[mdev_%s]\ndevice_addresses = ", type);
	for (i = 0; i < v->vgpus.n; i++) {
		if (!nova_first_on_parent(v, i) ||
		    !nova_parent_type(v, m[i].parent) ||
		    strcmp(nova_parent_type(v, m[i].parent), type))
			continue;
		printf("%s%s", sep, m[i].parent);
		sep = ",";
		cap = nova_capacity(v, m[i].parent, type);
		if (!cap)
			all_known = false;
		else if (!max || cap < max)
			max = cap;
	}
	printf("\n");
	/* the fewest any parent holds; Nova reads it since 2024.1 */
	if (all_known && max)
		printf("max_instances = %u\n", max);
	/* with one type, flavors ask for VGPU, Nova's default class */
	if (ntypes < 2)
		return;
	printf("mdev_class = CUSTOM_");
	for (i = 0; type[i]; i++) {
		c = type[i];
		if (c >= 'a' && c <= 'z')
			c -= 'a' - 'A';
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		putchar(c);
	}
	printf("\n");
}

static void nova_mdev_types(const struct view *v)
{
	const struct vgpu_info *m = v->vgpus.v;
	const char *sep = "";
	size_t i, ntypes = 0;

	for (i = 0; i < v->vgpus.n; i++)
		ntypes += nova_first_of_type(v, i);
	if (!ntypes)
		return;
	nova_mixed_parents(v);
	printf("\n[devices]\nenabled_mdev_types = ");
	for (i = 0; i < v->vgpus.n; i++) {
		if (!nova_first_of_type(v, i))
			continue;
		printf("%s%s", sep, m[i].type);
		sep = ", ";
	}
	printf("\n");
	for (i = 0; i < v->vgpus.n; i++)
		if (nova_first_of_type(v, i))
			nova_mdev_section(v, m[i].type, ntypes);
}

/**
 * export_nova() - print the nova.conf options for this host
 * @nl: an open socket
 *
 * Return: 0 or a negative errno, which has been printed; nothing is
 * printed then.
 */
int export_nova(struct nl_ctx *nl)
{
	struct view v;
	int ret;

	ret = view_read(nl, &v, "export nova");
	if (ret)
		return ret;
	printf("# gpuctl export nova: the devices gpuctl reserves and the host's mdev types\n");
	printf("[pci]\n");
	nova_device_specs(&v);
	nova_aliases(&v);
	nova_mdev_types(&v);
	view_free(&v);
	return 0;
}
