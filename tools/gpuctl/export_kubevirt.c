// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export kubevirt: the permittedHostDevices block of KubeVirt's
 * CR (spec.configuration.permittedHostDevices) for what this host
 * reserves, as YAML for kubectl patch --type merge --patch-file on the
 * KubeVirt CR, or as JSON with -j. KubeVirt's own device
 * plugins advertise the devices: externalResourceProvider is false,
 * since true would leave a resource to a plugin gpuctl does not run.
 *
 * pciHostDevices has one entry per distinct model (vendor:device) among
 * the functions of role gpu that a rule reserves and that KubeVirt's PCI
 * plugin takes: those bound to vfio-pci, and the vendor VFs on nvidia
 * with a vGPU type (KubeVirt 1.9, PR #16890). A reserved function on
 * another driver (gpuctl-vfio-pci, pci-stub) is left out with a message,
 * since KubeVirt would never advertise it. The selector is sysfs's
 * vendor:device in lower case, which is what KubeVirt compares.
 *
 * mediatedDevices has one entry per distinct mdev type name among the
 * types of the tracked GPUs' mdev parents, whether or not an instance
 * exists (KubeVirt can create them). The selector is the type's name
 * with each space made '_', or its id when it has no name, as KubeVirt
 * reads an instance's type.
 *
 * A resourceName is "DOMAIN/NAME": DOMAIN is the vendor's (nvidia.com,
 * amd.com, intel.com), else "pci-VVVV" from the PCI vendor id (of the
 * parent, for an mdev type); NAME is the PCI device name, or the mdev
 * type's, with every run of characters other than letters, digits, '-'
 * and '.' made one '_', cut to 63 characters and trimmed to begin and end
 * with a letter or digit, which makes it a Kubernetes qualified name
 * ("GA102GL [A10]" gives "nvidia.com/GA102GL_A10"). Two models whose
 * names meet get "_DDDD", their device ids; an mdev type whose name meets
 * another entry's gets "_" and its type id.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "export.h"
#include "gpuctl.h"
#include "json_print.h"
#include "mdev_sysfs.h"
#include "pci_names.h"
#include "view.h"

/* A qualified name's part after the '/', at most (Kubernetes) */
#define KV_NAME_MAX 63
/* "DOMAIN/NAME": a short domain, '/', at most KV_NAME_MAX */
#define KV_RESOURCE_BUFSZ 96

/**
 * struct kv_entry - one entry of pciHostDevices or mediatedDevices
 * @selector: "vvvv:dddd", or the mdev type's name with '_' for spaces
 * @resource: its resourceName
 * @vendor: the PCI vendor id its domain comes from
 * @name: the name its resourceName is made from
 * @suffix: what tells it from another entry of the same name: the device
 *          id ("2236") or the mdev type id ("nvidia-222")
 * @suffixed: whether @resource carries @suffix
 * @origin: a device or type it stands for, for messages
 */
struct kv_entry {
	char selector[MDEV_NAME_BUFSZ];
	char resource[KV_RESOURCE_BUFSZ];
	u16 vendor;
	char name[PCI_NAME_BUFSZ];
	char suffix[MDEV_TYPE_BUFSZ];
	bool suffixed;
	char origin[MDEV_PARENT_BUFSZ + MDEV_TYPE_BUFSZ + 8];
};

struct kv_list {
	struct kv_entry *v;
	size_t n;
};

/* The domains GPU vendors' own device plugins name their resources in */
static const struct {
	u16 vendor;
	const char *domain;
} kv_domains[] = {
	{ 0x10de, "nvidia.com" },
	{ 0x1002, "amd.com" },
	{ 0x8086, "intel.com" },
};

/*
 * @name made a qualified name's part of at most @max characters: runs of
 * characters other than letters, digits, '-' and '.' become one '_', and
 * it begins and ends with a letter or digit; "" if it has none.
 */
static void kv_name_part(const char *name, char *out, size_t max)
{
	size_t n = 0;

	/* nothing may begin it but a letter or digit */
	while (*name && !isalnum((unsigned char)*name))
		name++;
	for (; *name && n < max; name++) {
		if (isalnum((unsigned char)*name) || *name == '-' ||
		    *name == '.')
			out[n++] = *name;
		else if (n && out[n - 1] != '_')
			out[n++] = '_';
	}
	while (n && !isalnum((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
}

/* @e's resourceName, with its suffix when @with_suffix */
static void kv_resource(struct kv_entry *e, bool with_suffix)
{
	char domain[16], part[KV_NAME_MAX + 1], suffix[KV_NAME_MAX + 1];
	size_t i;

	snprintf(domain, sizeof(domain), "pci-%04x", e->vendor);
	for (i = 0; i < ARRAY_SIZE(kv_domains); i++)
		if (kv_domains[i].vendor == e->vendor)
			snprintf(domain, sizeof(domain), "%s",
				 kv_domains[i].domain);
	suffix[0] = '\0';
	if (with_suffix) {
		suffix[0] = '_';
		kv_name_part(e->suffix, suffix + 1, KV_NAME_MAX / 2);
	}
	/* the suffix keeps its place within the 63 characters */
	kv_name_part(e->name, part, KV_NAME_MAX - strlen(suffix));
	if (!part[0])
		snprintf(part, sizeof(part), "device");
	snprintf(e->resource, sizeof(e->resource), "%s/%s%s", domain, part,
		 suffix);
	e->suffixed = with_suffix;
}

static struct kv_entry *kv_add(struct kv_list *l)
{
	struct kv_entry *e;

	e = realloc(l->v, (l->n + 1) * sizeof(*e));
	if (!e)
		return NULL;
	l->v = e;
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

static struct kv_entry *kv_find(const struct kv_list *l, const char *sel)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].selector, sel))
			return &l->v[i];
	return NULL;
}

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv_entry *)a)->selector,
		      ((const struct kv_entry *)b)->selector);
}

/*
 * Whether KubeVirt's PCI plugin takes @d: on vfio-pci, or a vendor VF on
 * nvidia with a vGPU type; a reserved GPU on any other driver but nvidia
 * is named.
 */
static bool kv_pci_taken(const struct dev_info *d)
{
	if (d->role != GPUCTL_DEV_ROLE_GPU ||
	    d->state != GPUCTL_DEV_STATE_RESERVED)
		return false;
	if (d->has_driver && !strcmp(d->driver, "vfio-pci"))
		return true;
	/* a nvidia rule is for vendor VFs; it never takes their PF */
	if (d->has_driver && !strcmp(d->driver, "nvidia"))
		return d->has_physfn && d->has_vgpu_type && d->vgpu_type;
	fprintf(stderr,
		"gpuctl: export kubevirt: %s left out: it is on %s, and KubeVirt's device plugin takes only functions on vfio-pci\n",
		d->address, d->has_driver ? d->driver : "no driver");
	return false;
}

static int kv_pci_models(const struct view *s, struct kv_list *l)
{
	const struct dev_info *d = s->devs.v;
	struct pci_id_names names;
	char sel[16];
	struct kv_entry *e;
	size_t i;

	for (i = 0; i < s->devs.n; i++) {
		if (!kv_pci_taken(&d[i]))
			continue;
		snprintf(sel, sizeof(sel), "%04x:%04x", d[i].vendor_id,
			 d[i].device_id);
		if (kv_find(l, sel))
			continue;
		e = kv_add(l);
		if (!e)
			return -ENOMEM;
		snprintf(e->selector, sizeof(e->selector), "%s", sel);
		snprintf(e->origin, sizeof(e->origin), "%s", d[i].address);
		e->vendor = d[i].vendor_id;
		pci_names(d[i].vendor_id, d[i].device_id, &names);
		snprintf(e->name, sizeof(e->name), "%s", names.device);
		snprintf(e->suffix, sizeof(e->suffix), "%04x", d[i].device_id);
		kv_resource(e, false);
	}
	return 0;
}

static const struct dev_info *kv_gpu(const struct view *s, const char *addr)
{
	const struct dev_info *d = dev_find(&s->devs, addr);

	return d && d->role == GPUCTL_DEV_ROLE_GPU ? d : NULL;
}

static int kv_mdev_types(const struct view *s, struct kv_list *l)
{
	const struct mdev_type_info *t;
	const struct dev_info *parent;
	char sel[MDEV_NAME_BUFSZ], *c;
	struct kv_entry *e;
	size_t i;

	for (i = 0; i < s->ntypes; i++) {
		t = &s->types[i];
		parent = kv_gpu(s, t->parent);
		if (!parent)
			continue;
		snprintf(sel, sizeof(sel), "%s", t->name[0] ? t->name : t->id);
		for (c = sel; *c; c++)
			if (*c == ' ')
				*c = '_';
		if (kv_find(l, sel))
			continue;
		e = kv_add(l);
		if (!e)
			return -ENOMEM;
		snprintf(e->selector, sizeof(e->selector), "%s", sel);
		snprintf(e->origin, sizeof(e->origin), "%s type %s",
			 t->parent, t->id);
		e->vendor = parent->vendor_id;
		snprintf(e->name, sizeof(e->name), "%s", sel);
		snprintf(e->suffix, sizeof(e->suffix), "%s", t->id);
		kv_resource(e, false);
	}
	return 0;
}

/* Whether an entry of @l before @n other than @e has @e's resourceName */
static bool kv_resource_taken(const struct kv_list *l, size_t n,
			      const struct kv_entry *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (&l->v[i] != e && !strcmp(l->v[i].resource, e->resource))
			return true;
	return false;
}

/*
 * Models whose names meet all take their device ids; then an mdev type
 * whose name meets a model's or an earlier type's takes its type id. Two
 * entries that still meet are refused: KubeVirt would pool them.
 */
static int kv_resources_unique(struct kv_list *pci, struct kv_list *mdev)
{
	const struct kv_entry *e, *f;
	size_t i, j, n = pci->n + mdev->n;

	/* marked first: a model that takes its suffix clashes no more */
	for (i = 0; i < pci->n; i++)
		pci->v[i].suffixed = kv_resource_taken(pci, pci->n, &pci->v[i]);
	for (i = 0; i < pci->n; i++)
		kv_resource(&pci->v[i], pci->v[i].suffixed);
	for (i = 0; i < mdev->n; i++) {
		if (kv_resource_taken(pci, pci->n, &mdev->v[i]) ||
		    kv_resource_taken(mdev, i, &mdev->v[i]))
			kv_resource(&mdev->v[i], true);
	}
	for (i = 0; i < n; i++) {
		e = i < pci->n ? &pci->v[i] : &mdev->v[i - pci->n];
		for (j = i + 1; j < n; j++) {
			f = j < pci->n ? &pci->v[j] : &mdev->v[j - pci->n];
			if (strcmp(e->resource, f->resource))
				continue;
			fprintf(stderr,
				"gpuctl: export kubevirt: %s and %s would both be resource %s\n",
				e->origin, f->origin, e->resource);
			return -EEXIST;
		}
	}
	return 0;
}

/* A YAML double-quoted scalar; JSON's escapes are YAML's too */
static void kv_yaml_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void kv_yaml_list(const char *key, const char *selector_key,
			 const struct kv_list *l)
{
	size_t i;

	printf("      %s:%s\n", key, l->n ? "" : " []");
	for (i = 0; i < l->n; i++) {
		printf("      - %s: ", selector_key);
		kv_yaml_string(l->v[i].selector);
		printf("\n        resourceName: ");
		kv_yaml_string(l->v[i].resource);
		printf("\n        externalResourceProvider: false\n");
	}
}

static void kv_json_list(const char *key, const char *selector_key,
			 const struct kv_list *l)
{
	size_t i;

	open_json_array(PRINT_JSON, key);
	for (i = 0; i < l->n; i++) {
		open_json_object(NULL);
		print_string(PRINT_JSON, selector_key, NULL, l->v[i].selector);
		print_string(PRINT_JSON, "resourceName", NULL,
			     l->v[i].resource);
		print_bool(PRINT_JSON, "externalResourceProvider", NULL, false);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

static void kv_print(const struct kv_list *pci, const struct kv_list *mdev,
		     bool json, bool pretty)
{
	if (!json) {
		printf("spec:\n  configuration:\n    permittedHostDevices:\n");
		kv_yaml_list("pciHostDevices", "pciVendorSelector", pci);
		kv_yaml_list("mediatedDevices", "mdevNameSelector", mdev);
		return;
	}
	json_print_init(stdout, true, pretty);
	new_json_obj();
	open_json_object("spec");
	open_json_object("configuration");
	open_json_object("permittedHostDevices");
	kv_json_list("pciHostDevices", "pciVendorSelector", pci);
	kv_json_list("mediatedDevices", "mdevNameSelector", mdev);
	close_json_object();
	close_json_object();
	close_json_object();
	delete_json_obj();
}

/**
 * export_kubevirt() - print KubeVirt's permittedHostDevices for this host
 * @nl: an open socket
 * @json: JSON instead of YAML
 * @pretty: indent the JSON
 *
 * Return: 0 or a negative errno, which has been printed; nothing is
 * printed on stdout then.
 */
int export_kubevirt(struct nl_ctx *nl, bool json, bool pretty)
{
	struct kv_list pci = { 0 }, mdev = { 0 };
	struct view s;
	int ret;

	ret = view_read(nl, &s, "export kubevirt");
	if (ret)
		return ret;
	ret = kv_pci_models(&s, &pci);
	if (!ret)
		ret = kv_mdev_types(&s, &mdev);
	if (ret == -ENOMEM)
		fprintf(stderr, "gpuctl: export kubevirt: %s\n",
			strerror(-ret));
	if (!ret) {
		/* the host's order is no order; the selector's is stable */
		qsort(pci.v, pci.n, sizeof(*pci.v), kv_cmp);
		qsort(mdev.v, mdev.n, sizeof(*mdev.v), kv_cmp);
		ret = kv_resources_unique(&pci, &mdev);
	}
	if (!ret)
		kv_print(&pci, &mdev, json, pretty);
	free(pci.v);
	free(mdev.v);
	view_free(&s);
	return ret;
}
