// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export cloudstack: the JSON that CloudStack's KVM agent reads
 * from gpudiscovery.sh, built from one dev dump, one mdev dump and the
 * ledger instead of lspci, virsh and xmlstarlet per device. The keys and
 * their order are the script's; what the agent's Gson parser demands is
 * kept: "enabled" is the integer 0 or 1 (a boolean throws, and an
 * exception drops that GPU and every GPU after it), no required key is
 * ever null, and "pci_address" is "bb:dd.f" for PCI domain 0000, as lspci
 * prints it and as the agent's XML builder splits it. A device in another
 * domain keeps its domain, which agents before CloudStack PR #12981 read
 * wrongly. "used_by_vm" is the name of the allocation that holds the
 * function or mdev (its owner UUID when it has no name), or, for one no
 * allocation has, the guest name of the QEMU that has it open; never a
 * guess from domain XML.
 *
 * A GPU is a tracked function of role gpu that is no VF and is a display
 * controller (class 0x03, VGA included) or a processing accelerator
 * (0x12), or a PF whose VFs are vendor vGPU VFs, or an mdev parent.
 */

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
#include "vgpu_vf.h"
#include "view.h"

/* "bb:dd.f" in domain 0000, as lspci prints it; the whole address else */
static const char *cs_address(const char *addr)
{
	return strncmp(addr, "0000:", 5) ? addr : addr + 5;
}

/*
 * The parts of a canonical address, "0000:65:00.0", as hex numbers:
 * cut out rather than parsed, as this runs for every device.
 */
static void cs_libvirt_address(const char *addr)
{
	static const struct {
		const char *key;
		int at, len;
	} part[] = {
		{ "domain", 0, 4 }, { "bus", 5, 2 }, { "slot", 8, 2 },
		{ "function", 11, 1 },
	};
	char buf[8] = "0x";
	size_t i;

	/* never: the module's and sysfs's addresses have this form */
	if (strlen(addr) != 12 || addr[4] != ':' || addr[7] != ':' ||
	    addr[10] != '.')
		addr = "0000:00:00.0";
	open_json_object("libvirt_address");
	for (i = 0; i < ARRAY_SIZE(part); i++) {
		memcpy(buf + 2, addr + part[i].at, part[i].len);
		buf[2 + part[i].len] = '\0';
		print_string(PRINT_JSON, part[i].key, NULL, buf);
	}
	close_json_object();
}

/*
 * The VM an allocation is for: its name, else its owner's UUID; for a
 * device no allocation has, the guest name of the QEMU that holds it
 * (@holder_vm, found in /proc: holders.c), so that a GPU a VM uses never
 * reads free.
 */
static void cs_used_by_vm(const struct view *s, bool has_alloc, u32 id,
			  const char *holder_vm)
{
	const struct alloc_info *al = s->allocs.v;
	size_t i;

	for (i = 0; has_alloc && i < s->allocs.n; i++) {
		if (al[i].id != id)
			continue;
		print_string(PRINT_JSON, "used_by_vm", NULL,
			     al[i].name[0] ? al[i].name : al[i].owner);
		return;
	}
	if (holder_vm[0])
		print_string(PRINT_JSON, "used_by_vm", NULL, holder_vm);
	else
		print_null(PRINT_JSON, "used_by_vm", NULL, NULL);
}

/* The five numbers of a profile; null when the description lacks one */
static void cs_profile_numbers(const struct mdev_type_info *t)
{
	unsigned int x, y;

	if (t && t->has_max_instance)
		print_uint(PRINT_JSON, "max_instances", NULL, t->max_instance);
	else
		print_null(PRINT_JSON, "max_instances", NULL, NULL);
	if (t && t->has_framebuffer)
		print_uint(PRINT_JSON, "video_ram", NULL, t->framebuffer_mb);
	else
		print_null(PRINT_JSON, "video_ram", NULL, NULL);
	if (t && t->has_num_heads)
		print_uint(PRINT_JSON, "max_heads", NULL, t->num_heads);
	else
		print_null(PRINT_JSON, "max_heads", NULL, NULL);
	if (t && sscanf(t->max_resolution, "%ux%u", &x, &y) == 2) {
		print_uint(PRINT_JSON, "max_resolution_x", NULL, x);
		print_uint(PRINT_JSON, "max_resolution_y", NULL, y);
	} else {
		print_null(PRINT_JSON, "max_resolution_x", NULL, NULL);
		print_null(PRINT_JSON, "max_resolution_y", NULL, NULL);
	}
}

/* Whether @parent is @gpu or one of its VFs */
static bool cs_on_gpu(const struct view *s, const char *parent,
		      const char *gpu)
{
	const struct dev_info *d;

	if (!strcmp(parent, gpu))
		return true;
	d = dev_find(&s->devs, parent);
	return d && dev_is_vf_of(d, gpu);
}

static size_t cs_vgpu_count(const struct view *s, const char *gpu)
{
	const struct vgpu_info *v = s->vgpus.v;
	size_t i, n = 0;

	for (i = 0; i < s->vgpus.n; i++)
		n += cs_on_gpu(s, v[i].parent, gpu);
	return n;
}

/* The mdevs on @gpu and on its VFs */
static void cs_vgpu_instances(const struct view *s, const char *gpu)
{
	const struct vgpu_info *v = s->vgpus.v;
	size_t i;

	open_json_array(PRINT_JSON, "vgpu_instances");
	for (i = 0; i < s->vgpus.n; i++) {
		if (!cs_on_gpu(s, v[i].parent, gpu))
			continue;
		open_json_object(NULL);
		print_string(PRINT_JSON, "mdev_uuid", NULL, v[i].uuid);
		print_string(PRINT_JSON, "profile_name", NULL,
			     v[i].type_name[0] ? v[i].type_name : v[i].type);
		cs_profile_numbers(view_type(s, v[i].parent, v[i].type));
		cs_libvirt_address(v[i].parent);
		cs_used_by_vm(s, v[i].has_allocation, v[i].allocation,
			      v[i].holder_vm);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/*
 * A VF's profile: its vendor vGPU type's name, as the PF's VFs list it,
 * else its type id; a VF without a type has its PCI device name, as
 * gpudiscovery.sh gives it.
 */
static void cs_vf_profile(const struct view *s, const struct dev_info *vf,
			  char *buf, size_t size)
{
	struct pci_id_names n;
	size_t i;

	if (vf->has_vgpu_type && vf->vgpu_type) {
		for (i = 0; i < s->nvf_types; i++) {
			if (s->vf_types[i].type.id == vf->vgpu_type &&
			    !strcmp(s->vf_types[i].pf, vf->physfn)) {
				snprintf(buf, size, "%s",
					 s->vf_types[i].type.name);
				return;
			}
		}
		snprintf(buf, size, "vGPU type %u", vf->vgpu_type);
		return;
	}
	pci_names(vf->vendor_id, vf->device_id, &n);
	snprintf(buf, size, "%s", n.device);
}

static size_t cs_vf_count(const struct view *s, const char *gpu)
{
	const struct dev_info *d = s->devs.v;
	size_t i, n = 0;

	for (i = 0; i < s->devs.n; i++)
		n += dev_is_vf_of(&d[i], gpu);
	return n;
}

/* The VFs of @gpu the module tracks */
static void cs_vf_instances(const struct view *s, const char *gpu)
{
	const struct dev_info *d = s->devs.v;
	char profile[PCI_NAME_BUFSZ];
	size_t i;

	open_json_array(PRINT_JSON, "vf_instances");
	for (i = 0; i < s->devs.n; i++) {
		if (!dev_is_vf_of(&d[i], gpu))
			continue;
		open_json_object(NULL);
		print_string(PRINT_JSON, "vf_pci_address", NULL,
			     cs_address(d[i].address));
		cs_vf_profile(s, &d[i], profile, sizeof(profile));
		print_string(PRINT_JSON, "vf_profile", NULL, profile);
		/* what only nvidia-smi tells; null is what the agent allows */
		cs_profile_numbers(NULL);
		cs_libvirt_address(d[i].address);
		cs_used_by_vm(s, d[i].has_allocation, d[i].allocation,
			      d[i].holder_vm);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

static bool cs_is_gpu(const struct view *s, const struct dev_info *d)
{
	const struct dev_info *all = s->devs.v;
	u8 base = d->class >> 16;
	size_t i;

	if (d->role != GPUCTL_DEV_ROLE_GPU || d->has_physfn)
		return false;
	if (base == 0x03 || base == 0x12)
		return true;
	if (view_is_mdev_parent(s, d->address))
		return true;
	for (i = 0; i < s->devs.n; i++)
		if (dev_is_vf_of(&all[i], d->address) && all[i].has_vgpu_type)
			return true;
	return false;
}

static void cs_gpu(const struct view *s, const struct dev_info *d)
{
	char buf[PCI_NAME_BUFSZ + 16], class[PCI_NAME_BUFSZ];
	struct pci_id_names n;
	bool whole;

	pci_names(d->vendor_id, d->device_id, &n);
	print_string(PRINT_JSON, "pci_address", NULL, cs_address(d->address));
	snprintf(buf, sizeof(buf), "%04x", d->vendor_id);
	print_string(PRINT_JSON, "vendor_id", NULL, buf);
	snprintf(buf, sizeof(buf), "%04x", d->device_id);
	print_string(PRINT_JSON, "device_id", NULL, buf);
	print_string(PRINT_JSON, "vendor", NULL, n.vendor);
	print_string(PRINT_JSON, "device", NULL, n.device);
	print_string(PRINT_JSON, "driver", NULL,
		     d->has_driver ? d->driver : "unknown");
	snprintf(buf, sizeof(buf), "%s [%04x]",
		 pci_class_name(d->class, class, sizeof(class)), d->class >> 8);
	print_string(PRINT_JSON, "pci_class", NULL, buf);
	/* a string, and the string "null" without a group, as the script */
	if (d->has_iommu_group)
		snprintf(buf, sizeof(buf), "%u", d->iommu_group);
	else
		snprintf(buf, sizeof(buf), "null");
	print_string(PRINT_JSON, "iommu_group", NULL, buf);
	if (d->pci_root[0])
		print_string(PRINT_JSON, "pci_root", NULL, d->pci_root);
	else
		print_null(PRINT_JSON, "pci_root", NULL, NULL);
	print_int(PRINT_JSON, "numa_node", NULL, d->numa_node);
	print_uint(PRINT_JSON, "sriov_totalvfs", NULL, d->sriov_totalvfs);
	print_uint(PRINT_JSON, "sriov_numvfs", NULL, d->sriov_numvfs);
	/* from a PF's own description file, which GPUs do not have */
	cs_profile_numbers(NULL);

	whole = !cs_vgpu_count(s, d->address) && !cs_vf_count(s, d->address);
	open_json_object("full_passthrough");
	print_int(PRINT_JSON, "enabled", NULL, whole);
	cs_libvirt_address(d->address);
	cs_used_by_vm(s, d->has_allocation, d->allocation, d->holder_vm);
	close_json_object();
	cs_vgpu_instances(s, d->address);
	cs_vf_instances(s, d->address);
}

/**
 * export_cloudstack() - print gpudiscovery.sh's JSON
 * @nl: an open socket
 * @pretty: indent it
 *
 * Return: 0 or a negative errno, which has been printed; nothing is
 * printed then.
 */
int export_cloudstack(struct nl_ctx *nl, bool pretty)
{
	const struct dev_info *d;
	struct view s;
	size_t i;
	int ret;

	ret = view_read(nl, &s, "export cloudstack");
	if (ret)
		return ret;
	d = s.devs.v;
	json_print_init(stdout, true, pretty);
	new_json_obj();
	open_json_array(PRINT_JSON, "gpus");
	for (i = 0; i < s.devs.n; i++) {
		if (!cs_is_gpu(&s, &d[i]))
			continue;
		open_json_object(NULL);
		cs_gpu(&s, &d[i]);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
	view_free(&s);
	return 0;
}
