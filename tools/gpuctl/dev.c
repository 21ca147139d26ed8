// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl dev: the tracked PCI functions, one table row or JSON object each.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "holders.h"
#include "migration.h"
#include "pci_names.h"
#include "json_print.h"
#include "vf_sysfs.h"

enum dev_col {
	COL_ADDRESS,
	COL_ROLE,
	COL_DRIVER,
	COL_STATE,
	COL_RULE,
	COL_IDS,
	COL_GROUP,
	COL_NUMA,
	COL_ROOT,
	COL_ALLOC,
	COL_HOLDER,
	COL_VFS,
	COL_PF,
	COL_VGPU,
	COL_NAME,
	COL_MAX,
};

/* The longest cell is a state with its reason */
#define CELL_BUFSZ (STATE_REASON_BUFSZ + 32)

static const char *const col_titles[COL_MAX] = {
	"ADDRESS", "ROLE", "DRIVER", "STATE", "RULE", "IDS", "GROUP", "NUMA",
	"ROOT", "ALLOC", "HOLDER", "VFS", "PF", "VGPU", "NAME",
};

/* In one-line form (monitor) some values need a word to say what they are */
static const char *const col_labels[COL_MAX] = {
	[COL_STATE] = "state ", [COL_RULE] = "rule ", [COL_GROUP] = "group ",
	[COL_NUMA] = "numa ", [COL_ROOT] = "root ", [COL_ALLOC] = "alloc ",
	[COL_HOLDER] = "holder ", [COL_VFS] = "vfs ", [COL_PF] = "pf ",
	[COL_VGPU] = "vgpu_type ",
};

static const enum mnl_attr_data_type dev_attr_types[GPUCTL_A_DEV_MAX + 1] = {
	[GPUCTL_A_DEV_ADDRESS] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_VENDOR_ID] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_DEVICE_ID] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_CLASS] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_REVISION] = MNL_TYPE_U8,
	[GPUCTL_A_DEV_DRIVER] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_IOMMU_GROUP] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_NUMA_NODE] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_PCI_ROOT] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_SRIOV_TOTALVFS] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_SRIOV_NUMVFS] = MNL_TYPE_U16,
	[GPUCTL_A_DEV_PHYSFN] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_ROLE] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_RESERVED] = MNL_TYPE_U8,
	[GPUCTL_A_DEV_STATE] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_STATE_REASON] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_RULE] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_ACTION] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_ALLOCATION] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_HOLDER_PID] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_HOLDER_COMM] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_HOLDER_UID] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_HOLDER_SINCE] = MNL_TYPE_U64,
	[GPUCTL_A_DEV_OPEN_MATCH] = MNL_TYPE_U32,
	[GPUCTL_A_DEV_REFUSED] = MNL_TYPE_NUL_STRING,
	[GPUCTL_A_DEV_PENDING] = MNL_TYPE_FLAG,
	[GPUCTL_A_DEV_MIGRATION] = MNL_TYPE_U32,
};

static int dev_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	unsigned int type = mnl_attr_get_type(attr);

	/* attributes from a newer module are skipped, not refused */
	if (type > GPUCTL_A_DEV_MAX || !dev_attr_types[type])
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, dev_attr_types[type]) < 0)
		return MNL_CB_ERROR;
	tb[type] = attr;
	return MNL_CB_OK;
}

static void copy_str(char *dst, size_t size, const struct nlattr *attr)
{
	snprintf(dst, size, "%s", attr ? mnl_attr_get_str(attr) : "");
}

/* Which allocation has the device, and which VFIO user holds it open */
static void dev_holder_parse(const struct nlattr **tb, struct dev_info *d)
{
	d->has_allocation = tb[GPUCTL_A_DEV_ALLOCATION];
	if (d->has_allocation)
		d->allocation = mnl_attr_get_u32(tb[GPUCTL_A_DEV_ALLOCATION]);
	d->has_holder = tb[GPUCTL_A_DEV_HOLDER_PID];
	if (d->has_holder)
		d->holder_pid = mnl_attr_get_u32(tb[GPUCTL_A_DEV_HOLDER_PID]);
	d->has_holder_comm = tb[GPUCTL_A_DEV_HOLDER_COMM];
	copy_str(d->holder_comm, sizeof(d->holder_comm),
		 tb[GPUCTL_A_DEV_HOLDER_COMM]);
	d->has_holder_uid = tb[GPUCTL_A_DEV_HOLDER_UID];
	if (d->has_holder_uid)
		d->holder_uid = mnl_attr_get_u32(tb[GPUCTL_A_DEV_HOLDER_UID]);
	d->has_holder_since = tb[GPUCTL_A_DEV_HOLDER_SINCE];
	if (d->has_holder_since)
		d->holder_since =
			mnl_attr_get_u64(tb[GPUCTL_A_DEV_HOLDER_SINCE]);
	if (tb[GPUCTL_A_DEV_OPEN_MATCH])
		d->open_match = mnl_attr_get_u32(tb[GPUCTL_A_DEV_OPEN_MATCH]);
	d->has_refused = tb[GPUCTL_A_DEV_REFUSED];
	copy_str(d->refused, sizeof(d->refused), tb[GPUCTL_A_DEV_REFUSED]);
}

/**
 * dev_info_parse() - read a dev-get reply or a dev notification
 * @nlh: the message
 * @d: filled with the device; absent attributes read as unknown, and a
 *	vendor VF's type as none: dev_vgpu_type_read() reads it
 *
 * Return: 0, or -1 with errno set when an attribute is malformed.
 */
int dev_info_parse(const struct nlmsghdr *nlh, struct dev_info *d)
{
	const struct nlattr *tb[GPUCTL_A_DEV_MAX + 1] = {};

	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), dev_attr_cb, tb) <
	    MNL_CB_STOP)
		return -1;

	memset(d, 0, sizeof(*d));
	copy_str(d->address, sizeof(d->address), tb[GPUCTL_A_DEV_ADDRESS]);
	if (tb[GPUCTL_A_DEV_VENDOR_ID])
		d->vendor_id = mnl_attr_get_u16(tb[GPUCTL_A_DEV_VENDOR_ID]);
	if (tb[GPUCTL_A_DEV_DEVICE_ID])
		d->device_id = mnl_attr_get_u16(tb[GPUCTL_A_DEV_DEVICE_ID]);
	if (tb[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID])
		d->subsystem_vendor_id =
			mnl_attr_get_u16(tb[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID]);
	if (tb[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID])
		d->subsystem_device_id =
			mnl_attr_get_u16(tb[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID]);
	if (tb[GPUCTL_A_DEV_CLASS])
		d->class = mnl_attr_get_u32(tb[GPUCTL_A_DEV_CLASS]);
	if (tb[GPUCTL_A_DEV_REVISION])
		d->revision = mnl_attr_get_u8(tb[GPUCTL_A_DEV_REVISION]);
	d->has_driver = tb[GPUCTL_A_DEV_DRIVER];
	copy_str(d->driver, sizeof(d->driver), tb[GPUCTL_A_DEV_DRIVER]);
	d->has_iommu_group = tb[GPUCTL_A_DEV_IOMMU_GROUP];
	if (d->has_iommu_group)
		d->iommu_group = mnl_attr_get_u32(tb[GPUCTL_A_DEV_IOMMU_GROUP]);
	d->numa_node = -1;
	if (tb[GPUCTL_A_DEV_NUMA_NODE])
		d->numa_node = mnl_attr_get_u32(tb[GPUCTL_A_DEV_NUMA_NODE]);
	copy_str(d->pci_root, sizeof(d->pci_root), tb[GPUCTL_A_DEV_PCI_ROOT]);
	if (tb[GPUCTL_A_DEV_SRIOV_TOTALVFS])
		d->sriov_totalvfs =
			mnl_attr_get_u16(tb[GPUCTL_A_DEV_SRIOV_TOTALVFS]);
	if (tb[GPUCTL_A_DEV_SRIOV_NUMVFS])
		d->sriov_numvfs = mnl_attr_get_u16(tb[GPUCTL_A_DEV_SRIOV_NUMVFS]);
	d->has_physfn = tb[GPUCTL_A_DEV_PHYSFN];
	copy_str(d->physfn, sizeof(d->physfn), tb[GPUCTL_A_DEV_PHYSFN]);
	if (tb[GPUCTL_A_DEV_ROLE])
		d->role = mnl_attr_get_u32(tb[GPUCTL_A_DEV_ROLE]);
	if (tb[GPUCTL_A_DEV_RESERVED])
		d->reserved = mnl_attr_get_u8(tb[GPUCTL_A_DEV_RESERVED]);
	if (tb[GPUCTL_A_DEV_STATE])
		d->state = mnl_attr_get_u32(tb[GPUCTL_A_DEV_STATE]);
	d->has_state_reason = tb[GPUCTL_A_DEV_STATE_REASON];
	copy_str(d->state_reason, sizeof(d->state_reason),
		 tb[GPUCTL_A_DEV_STATE_REASON]);
	d->has_rule = tb[GPUCTL_A_DEV_RULE];
	if (d->has_rule)
		d->rule = mnl_attr_get_u32(tb[GPUCTL_A_DEV_RULE]);
	if (tb[GPUCTL_A_DEV_ACTION])
		d->action = mnl_attr_get_u32(tb[GPUCTL_A_DEV_ACTION]);
	d->pending = tb[GPUCTL_A_DEV_PENDING];
	d->has_migration = tb[GPUCTL_A_DEV_MIGRATION];
	if (d->has_migration)
		d->migration = mnl_attr_get_u32(tb[GPUCTL_A_DEV_MIGRATION]);
	dev_holder_parse(tb, d);
	return 0;
}

/**
 * dev_find() - a device of a dump, by address
 * @devs: the dump (struct dev_info)
 * @addr: its PCI address, in full
 *
 * Return: the device, or NULL when the dump does not have it.
 */
const struct dev_info *dev_find(const struct nl_list *devs, const char *addr)
{
	const struct dev_info *d = devs->v;
	size_t i;

	for (i = 0; i < devs->n; i++)
		if (!strcmp(d[i].address, addr))
			return &d[i];
	return NULL;
}

/**
 * dev_is_vf_of() - whether a device is a VF of a PF
 * @d: the device
 * @pf: the PF's address
 *
 * Return: true if @d's physfn is @pf.
 */
bool dev_is_vf_of(const struct dev_info *d, const char *pf)
{
	return d->has_physfn && !strcmp(d->physfn, pf);
}

/**
 * dev_vgpu_type_read() - read a vendor VF's vGPU type into its dev_info
 * @d: a device dev_info_parse() filled
 *
 * The type is the vendor driver's, in sysfs, and no event says when it
 * changes, so it is read now; dev_info_parse() leaves it unread, for the
 * callers that neither show a device nor place by its type. A device
 * that is no vendor VF gets has_vgpu_type false.
 */
void dev_vgpu_type_read(struct dev_info *d)
{
	d->vgpu_type = 0;
	d->has_vgpu_type = d->has_physfn && d->address[0] &&
			   !vf_vgpu_current(d->address, &d->vgpu_type);
}

/*
 * "qemu-system-x86[1234]", and why the open did not match its allocation
 * when it did not: "qemu-system-x86[1234] (unallocated)". A device that
 * was open before gpuctl loaded has an unknown holder.
 */
static void dev_holder_cell(const struct dev_info *d, char *buf, size_t size)
{
	bool odd = d->open_match == GPUCTL_OPEN_MATCH_OTHER ||
		   d->open_match == GPUCTL_OPEN_MATCH_UNALLOCATED ||
		   d->open_match == HOLDER_MATCH_MISMATCH;
	int n;

	if (!d->has_holder) {
		snprintf(buf, size, "-");
		return;
	}
	if (!d->holder_pid)
		n = snprintf(buf, size, "unknown");
	else
		n = snprintf(buf, size, "%s[%u]",
			     d->has_holder_comm ? d->holder_comm : "?",
			     d->holder_pid);
	if (odd && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " (%s)",
			 open_match_name(d->open_match));
}

/* The text of a table cell, also used to measure the column */
static void dev_cell(const struct dev_info *d, enum dev_col col, char *buf,
		     size_t size)
{
	switch (col) {
	case COL_ADDRESS:
		snprintf(buf, size, "%s", d->address);
		break;
	case COL_ROLE:
		snprintf(buf, size, "%s", role_name(d->role));
		break;
	case COL_DRIVER:
		snprintf(buf, size, "%s", d->has_driver ? d->driver : "-");
		break;
	case COL_STATE:
		/* "held (bound to snd_hda_intel)": the reason is the news */
		if (d->has_state_reason)
			snprintf(buf, size, "%s (%s)", state_name(d->state),
				 d->state_reason);
		else
			snprintf(buf, size, "%s", state_name(d->state));
		break;
	case COL_RULE:
		if (d->has_rule)
			snprintf(buf, size, "%u", d->rule);
		else
			snprintf(buf, size, "-");
		break;
	case COL_IDS:
		snprintf(buf, size, "%04x:%04x", d->vendor_id, d->device_id);
		break;
	case COL_GROUP:
		if (d->has_iommu_group)
			snprintf(buf, size, "%u", d->iommu_group);
		else
			snprintf(buf, size, "-");
		break;
	case COL_NUMA:
		if (d->numa_node >= 0)
			snprintf(buf, size, "%d", d->numa_node);
		else
			snprintf(buf, size, "-");
		break;
	case COL_ROOT:
		snprintf(buf, size, "%s", d->pci_root[0] ? d->pci_root : "-");
		break;
	case COL_ALLOC:
		if (d->has_allocation)
			snprintf(buf, size, "%u", d->allocation);
		else
			snprintf(buf, size, "-");
		break;
	case COL_HOLDER:
		dev_holder_cell(d, buf, size);
		break;
	case COL_VFS:
		/* an SR-IOV PF's VFs: enabled of total */
		if (d->sriov_totalvfs)
			snprintf(buf, size, "%u/%u", d->sriov_numvfs,
				 d->sriov_totalvfs);
		else
			snprintf(buf, size, "-");
		break;
	case COL_PF:
		snprintf(buf, size, "%s", d->has_physfn ? d->physfn : "-");
		break;
	case COL_VGPU:
		/* a vendor VF's vGPU type id, "none" without one */
		if (d->has_vgpu_type && d->vgpu_type)
			snprintf(buf, size, "%u", d->vgpu_type);
		else
			snprintf(buf, size, "%s", d->has_vgpu_type ? "none" : "-");
		break;
	default:
		buf[0] = '\0';
	}
}

/*
 * The text format of one value: "%-Ns  " padded to the column in a table,
 * "label %s " on one line. @conv is the bare conversion, "%s" or "%u".
 */
static const char *col_fmt(char *buf, size_t size, const int *widths,
			   enum dev_col col, const char *conv)
{
	if (is_json_context())
		return NULL;	/* JSON has no columns */
	if (col == COL_NAME)
		snprintf(buf, size, "%s", conv);
	else if (widths)
		snprintf(buf, size, "%%-%d%s  ", widths[col], conv + 1);
	else
		snprintf(buf, size, "%s%s ",
			 col_labels[col] ? col_labels[col] : "", conv);
	return buf;
}

/* A column only the text shows: its cell in its width; nothing in JSON */
static void dev_text_col(const struct dev_info *d, enum dev_col col,
			 const int *widths)
{
	char fmt[32], buf[CELL_BUFSZ];

	if (is_json_context())
		return;
	dev_cell(d, col, buf, sizeof(buf));
	print_string(PRINT_FP, NULL, col_fmt(fmt, sizeof(fmt), widths, col, "%s"),
		     buf);
}

/* "allocation", "holder" and, in a refused open, "refused" */
static void dev_holder_print(const struct dev_info *d, const int *widths)
{
	char fmt[32], buf[CELL_BUFSZ];

	if (d->has_allocation)
		print_uint(PRINT_ANY, "allocation",
			   col_fmt(fmt, sizeof(fmt), widths, COL_ALLOC, "%u"),
			   d->allocation);
	else
		print_null(PRINT_ANY, "allocation",
			   col_fmt(fmt, sizeof(fmt), widths, COL_ALLOC, "%s"),
			   "-");
	dev_holder_cell(d, buf, sizeof(buf));
	print_string(PRINT_FP, NULL,
		     col_fmt(fmt, sizeof(fmt), widths, COL_HOLDER, "%s"), buf);
	if (!d->has_holder) {
		print_null(PRINT_JSON, "holder", NULL, NULL);
	} else {
		open_json_object("holder");
		print_uint(PRINT_JSON, "pid", NULL, d->holder_pid);
		print_string(PRINT_JSON, "comm", NULL,
			     d->has_holder_comm ? d->holder_comm : NULL);
		if (d->has_holder_uid)
			print_uint(PRINT_JSON, "uid", NULL, d->holder_uid);
		else
			print_null(PRINT_JSON, "uid", NULL, NULL);
		if (d->has_holder_since)
			print_u64(PRINT_JSON, "since", NULL, d->holder_since);
		else
			print_null(PRINT_JSON, "since", NULL, NULL);
		print_string(PRINT_JSON, "match", NULL,
			     open_match_name(d->open_match));
		print_string(PRINT_JSON, "vm", NULL,
			     d->holder_vm[0] ? d->holder_vm : NULL);
		print_string(PRINT_JSON, "found_by", NULL,
			     !d->holder_pid ? NULL :
			     d->holder_from_proc ? "proc" : "module");
		close_json_object();
	}
	if (d->has_refused)
		print_string(PRINT_ANY, "refused", "refused \"%s\" ",
			     d->refused);
	else
		print_null(PRINT_JSON, "refused", NULL, NULL);
}

/* "migration" and, on a VFIO driver, "migration_compat", in JSON only */
static void dev_migration_print(const struct dev_info *d)
{
	char key[MIGRATION_COMPAT_BUFSZ];

	migration_print(d->has_migration, d->migration);
	if (dev_migration_compat(d, key, sizeof(key)))
		print_string(PRINT_JSON, "migration_compat", NULL, key);
	else
		print_null(PRINT_JSON, "migration_compat", NULL, NULL);
}

/* The ids as JSON has them, "%0*x", without printf's format parsing */
static const char *dev_hex(char *buf, unsigned int value, int digits)
{
	static const char xdigits[] = "0123456789abcdef";

	buf[digits] = '\0';
	while (digits--) {
		buf[digits] = xdigits[value & 0xf];
		value >>= 4;
	}
	return buf;
}

/**
 * dev_info_print() - print one device, as a table row, a line or JSON
 * @d: the device, its vGPU type read by dev_vgpu_type_read()
 * @widths: column widths for a table row, or NULL for one labelled line
 *
 * JSON keys come in the spec's attribute order, as YNL prints them, and
 * text columns in the table's order; a value that appears in both places
 * differently is printed once for each. Every key is always there, null
 * when the kernel did not send its attribute, so scripts can test for null
 * without first testing for the key. The caller ends the line with
 * print_nl() and, in JSON, opens and closes the object around it.
 */
void dev_info_print(const struct dev_info *d, const int *widths)
{
	const char *driver = d->has_driver ? d->driver : NULL;
	char name[2 * PCI_NAME_BUFSZ];
	struct pci_id_names n;
	char fmt[32], buf[CELL_BUFSZ];

	print_string(PRINT_ANY, "address",
		     col_fmt(fmt, sizeof(fmt), widths, COL_ADDRESS, "%s"),
		     d->address);
	print_string(PRINT_FP, NULL,
		     col_fmt(fmt, sizeof(fmt), widths, COL_ROLE, "%s"),
		     role_name(d->role));
	print_string(PRINT_FP, NULL,
		     col_fmt(fmt, sizeof(fmt), widths, COL_DRIVER, "%s"),
		     driver);
	dev_text_col(d, COL_STATE, widths);
	dev_text_col(d, COL_RULE, widths);
	/* only notifications carry an action, and they print as one line */
	if (d->action)
		print_string(PRINT_FP, NULL, "action %s ",
			     action_name(d->action));
	dev_text_col(d, COL_IDS, widths);

	print_string(PRINT_JSON, "vendor_id", NULL,
		     dev_hex(buf, d->vendor_id, 4));
	print_string(PRINT_JSON, "device_id", NULL,
		     dev_hex(buf, d->device_id, 4));
	print_string(PRINT_JSON, "subsystem_vendor_id", NULL,
		     dev_hex(buf, d->subsystem_vendor_id, 4));
	print_string(PRINT_JSON, "subsystem_device_id", NULL,
		     dev_hex(buf, d->subsystem_device_id, 4));
	print_string(PRINT_JSON, "class", NULL, dev_hex(buf, d->class, 6));
	print_uint(PRINT_JSON, "revision", NULL, d->revision);
	print_string(PRINT_JSON, "driver", NULL, driver);

	if (d->has_iommu_group)
		print_uint(PRINT_ANY, "iommu_group",
			   col_fmt(fmt, sizeof(fmt), widths, COL_GROUP, "%u"),
			   d->iommu_group);
	else
		print_null(PRINT_ANY, "iommu_group",
			   col_fmt(fmt, sizeof(fmt), widths, COL_GROUP, "%s"),
			   "-");
	print_int(PRINT_JSON, "numa_node", NULL, d->numa_node);
	dev_text_col(d, COL_NUMA, widths);
	print_string(PRINT_ANY, "pci_root",
		     col_fmt(fmt, sizeof(fmt), widths, COL_ROOT, "%s"),
		     d->pci_root[0] ? d->pci_root : NULL);

	print_uint(PRINT_JSON, "sriov_totalvfs", NULL, d->sriov_totalvfs);
	print_uint(PRINT_JSON, "sriov_numvfs", NULL, d->sriov_numvfs);
	print_string(PRINT_JSON, "physfn", NULL,
		     d->has_physfn ? d->physfn : NULL);
	print_string(PRINT_JSON, "role", NULL, role_name(d->role));
	print_bool(PRINT_JSON, "reserved", NULL, d->reserved);
	print_string(PRINT_JSON, "state", NULL, state_name(d->state));
	if (d->has_state_reason)
		print_string(PRINT_JSON, "state_reason", NULL,
			     d->state_reason);
	else
		print_null(PRINT_JSON, "state_reason", NULL, NULL);
	if (d->has_rule)
		print_uint(PRINT_JSON, "rule", NULL, d->rule);
	else
		print_null(PRINT_JSON, "rule", NULL, NULL);
	if (d->action)
		print_string(PRINT_JSON, "action", NULL,
			     action_name(d->action));
	else
		print_null(PRINT_JSON, "action", NULL, NULL);
	dev_holder_print(d, widths);
	/* on one line (monitor) only where they apply */
	if (widths || d->sriov_totalvfs)
		dev_text_col(d, COL_VFS, widths);
	if (widths || d->has_physfn)
		dev_text_col(d, COL_PF, widths);
	/* a vendor VF's type: 0 for none; null for any other function */
	if (d->has_vgpu_type)
		print_uint(PRINT_JSON, "vgpu_type", NULL, d->vgpu_type);
	else
		print_null(PRINT_JSON, "vgpu_type", NULL, NULL);
	if (widths || d->has_vgpu_type)
		dev_text_col(d, COL_VGPU, widths);
	dev_migration_print(d);

	pci_names(d->vendor_id, d->device_id, &n);
	print_string(PRINT_JSON, "vendor", NULL, n.vendor);
	print_string(PRINT_JSON, "device", NULL, n.device);
	if (!is_json_context()) {
		snprintf(name, sizeof(name), "%s %s", n.vendor, n.device);
		print_string(PRINT_FP, NULL,
			     col_fmt(fmt, sizeof(fmt), widths, COL_NAME, "%s"),
			     name);
	}
}

/* The devices of one dev-get reply or dump */
struct dev_list {
	const struct dev_info *v;
	size_t n;
};

static int dev_parse(const struct nlmsghdr *nlh, void *elem)
{
	return dev_info_parse(nlh, elem);
}

/*
 * The table lists each GPU, then the other functions of its slot, then
 * the rest of its IOMMU group; groups come in the order of their first
 * GPU. Each row gets a key (unit, gpu, rank, address) that says so.
 */
struct dev_row {
	const struct dev_info *d;
	const char *unit;
	const char *gpu;
	int rank;
};

/* After every address, for rows that belong to no single GPU */
#define ROW_GROUP_REST "~"

static bool same_group(const struct dev_info *a, const struct dev_info *b)
{
	if (a->has_iommu_group != b->has_iommu_group)
		return false;
	return !a->has_iommu_group || a->iommu_group == b->iommu_group;
}

/* "dddd:bb:dd" is the part of a normalised address before the function */
static bool same_slot(const struct dev_info *a, const struct dev_info *b)
{
	return !strncmp(a->address, b->address, 10);
}

/* The first GPU that satisfies @match with @d, by address */
static const struct dev_info *
first_gpu(const struct dev_list *list, const struct dev_info *d,
	  bool (*match)(const struct dev_info *a, const struct dev_info *b))
{
	const struct dev_info *best = NULL;
	size_t i;

	for (i = 0; i < list->n; i++) {
		const struct dev_info *g = &list->v[i];

		if (g->role != GPUCTL_DEV_ROLE_GPU || !same_group(g, d) ||
		    (match && !match(g, d)))
			continue;
		if (!best || strcmp(g->address, best->address) < 0)
			best = g;
	}
	return best;
}

static int dev_row_cmp(const void *pa, const void *pb)
{
	const struct dev_row *a = pa, *b = pb;
	int ret;

	ret = strcmp(a->unit, b->unit);
	if (!ret)
		ret = strcmp(a->gpu, b->gpu);
	if (!ret)
		ret = a->rank - b->rank;
	if (!ret)
		ret = strcmp(a->d->address, b->d->address);
	return ret;
}

static void dev_row_key(const struct dev_list *list, struct dev_row *row)
{
	const struct dev_info *d = row->d, *gpu = NULL, *unit;

	/* without a group a device is its own unit, even a GPU */
	unit = d->has_iommu_group ? first_gpu(list, d, NULL) : NULL;
	if (d->role == GPUCTL_DEV_ROLE_GPU) {
		gpu = d;
		row->rank = 0;
	} else if (d->role == GPUCTL_DEV_ROLE_COMPANION) {
		gpu = first_gpu(list, d, same_slot);
		row->rank = 1;
	}
	if (gpu && !d->has_iommu_group)
		unit = gpu;
	if (!gpu)
		row->rank = 2;
	row->unit = unit ? unit->address : d->address;
	row->gpu = gpu ? gpu->address : ROW_GROUP_REST;
}

static void dev_list_print(const struct dev_list *list)
{
	int widths[COL_MAX] = {};
	struct dev_row *rows;
	char cell[CELL_BUFSZ];
	char fmt[32];
	size_t i;
	int col;

	rows = calloc(list->n ? list->n : 1, sizeof(*rows));
	if (!rows) {
		fprintf(stderr, "gpuctl: out of memory\n");
		return;
	}
	for (i = 0; i < list->n; i++) {
		rows[i].d = &list->v[i];
		dev_row_key(list, &rows[i]);
	}
	qsort(rows, list->n, sizeof(*rows), dev_row_cmp);

	for (col = 0; col < COL_MAX; col++)
		widths[col] = strlen(col_titles[col]);
	/* JSON has no columns to line up */
	for (i = 0; !is_json_context() && i < list->n; i++) {
		for (col = 0; col < COL_NAME; col++) {
			int len;

			dev_cell(rows[i].d, col, cell, sizeof(cell));
			len = strlen(cell);
			if (len > widths[col])
				widths[col] = len;
		}
	}

	new_json_obj();
	if (list->n && !is_json_context()) {
		for (col = 0; col < COL_MAX; col++)
			print_string(PRINT_FP, NULL,
				     col_fmt(fmt, sizeof(fmt), widths, col,
					     "%s"),
				     col_titles[col]);
		print_nl();
	}
	open_json_array(PRINT_JSON, "devices");
	for (i = 0; i < list->n; i++) {
		open_json_object(NULL);
		dev_info_print(rows[i].d, widths);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
	free(rows);
}

/* DEV, or NULL with a message: @arg is no PCI address. */
static const char *dev_address(const char *arg, char *addr, size_t size)
{
	if (parse_pci_address(arg, addr, size)) {
		fprintf(stderr,
			"gpuctl: invalid PCI address \"%s\", expected DDDD:BB:DD.F or BB:DD.F\n",
			arg);
		return NULL;
	}
	return addr;
}

/**
 * dev_show_quiet() - print one tracked device, or say why not
 * @nl: an open socket
 * @addr: its canonical address
 *
 * Return: 0, or a negative errno (-ENODEV: not tracked); nothing printed.
 */
int dev_show_quiet(struct nl_ctx *nl, const char *addr)
{
	struct dev_info d;
	int ret;

	ret = dev_get_quiet(nl, addr, &d);
	if (!ret) {
		dev_vgpu_type_read(&d);
		dev_list_print(&(struct dev_list){ .v = &d, .n = 1 });
	}
	return ret;
}

/**
 * dev_dump() - every tracked device
 * @nl: an open socket
 * @list: initialized here, filled; nl_list_free() is for the caller
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int dev_dump(struct nl_ctx *nl, struct nl_list *list)
{
	*list = (struct nl_list){ .size = sizeof(struct dev_info),
				  .parse = dev_parse };
	return nl_collect(nl, nl_msg_start(nl, GPUCTL_CMD_DEV_GET, true),
			  list);
}

/* dev-get of one device; @quiet: nothing printed on failure */
static int dev_get_one(struct nl_ctx *nl, const char *addr,
		       struct dev_info *d, bool quiet)
{
	struct nl_list list = { .size = sizeof(struct dev_info),
				.parse = dev_parse };
	struct nlmsghdr *nlh;
	int ret;

	nlh = nl_msg_start(nl, GPUCTL_CMD_DEV_GET, false);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, addr);
	ret = quiet ? nl_collect_quiet(nl, nlh, &list) :
		      nl_collect(nl, nlh, &list);
	if (!ret && list.n != 1)
		ret = -EPROTO;
	if (!ret)
		*d = *(const struct dev_info *)list.v;
	nl_list_free(&list);
	return ret;
}

/**
 * dev_get_quiet() - dev_get() for a device that may not be tracked
 * @nl: an open socket
 * @addr: its canonical address
 * @d: filled on success
 *
 * Return: 0, or a negative errno (-ENODEV: not tracked); nothing printed.
 */
int dev_get_quiet(struct nl_ctx *nl, const char *addr, struct dev_info *d)
{
	return dev_get_one(nl, addr, d, true);
}

/*
 * The holders the module does not know, from /proc, and their allocations
 * for the match; only root looks, and only when one is open so.
 */
static void dev_holders_fill(struct nl_ctx *nl, struct nl_list *devs)
{
	struct holders f = {};
	struct nl_list allocs;

	if (!holders_wanted(devs))
		return;
	alloc_list_init(&allocs);
	holders_fill(devs, alloc_dump(nl, &allocs) ? NULL : &allocs, &f);
	holders_free(&f);
	nl_list_free(&allocs);
}

/* Prints one device, or every device when @addr is empty. */
static int dev_show(struct nl_ctx *nl, const char *addr)
{
	struct nl_list list = { .size = sizeof(struct dev_info),
				.parse = dev_parse };
	struct nlmsghdr *nlh;
	int ret = EXIT_OK;

	nlh = nl_msg_start(nl, GPUCTL_CMD_DEV_GET, !addr[0]);
	if (addr[0])
		mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, addr);
	if (nl_collect(nl, nlh, &list)) {
		if (addr[0])
			fprintf(stderr, "gpuctl: cannot show device %s\n",
				addr);
		ret = EXIT_KERNEL;
	} else {
		struct dev_list devs = { .v = list.v, .n = list.n };
		size_t i;

		for (i = 0; i < list.n; i++)
			dev_vgpu_type_read((struct dev_info *)list.v + i);
		dev_holders_fill(nl, &list);
		dev_list_print(&devs);
	}
	nl_list_free(&list);
	return ret;
}

static int cmd_dev_show(struct gpuctl *g, struct args *a)
{
	char addr[ADDR_BUFSZ] = "";
	struct nl_ctx *nl;
	const char *arg;
	int ret;

	arg = args_next(a);
	if (arg) {
		if (!strcmp(arg, "help")) {
			object_help(stdout, &dev_object);
			return EXIT_OK;
		}
		if (!dev_address(arg, addr, sizeof(addr)))
			return EXIT_USAGE;
	}
	if (!args_done(a, "dev show"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	return dev_show(nl, addr);
}

/**
 * dev_get() - one tracked device
 * @nl: an open socket
 * @addr: its address, canonical
 * @d: filled
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int dev_get(struct nl_ctx *nl, const char *addr, struct dev_info *d)
{
	return dev_get_one(nl, addr, d, false);
}

/**
 * dev_set_numvfs() - dev-set: the number of VFs a tracked PF is to have
 * @nl: an open socket
 * @addr: the PF's address, canonical
 * @numvfs: the number
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int dev_set_numvfs(struct nl_ctx *nl, const char *addr, u16 numvfs)
{
	struct nl_list list = { .size = sizeof(struct dev_info),
				.parse = dev_parse };
	struct nlmsghdr *nlh;
	int ret;

	nlh = nl_msg_start(nl, GPUCTL_CMD_DEV_SET, false);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, addr);
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_SRIOV_NUMVFS, numvfs);
	ret = nl_collect(nl, nlh, &list);
	nl_list_free(&list);
	return ret;
}

/* gpuctl dev set DEV numvfs NUM: then shows the device as it is now. */
static int cmd_dev_set(struct gpuctl *g, struct args *a)
{
	char err[RULE_ERR_BUFSZ];
	struct vfs_spec v = {};
	struct nl_ctx *nl;
	const char *arg;
	int ret;

	arg = args_next(a);
	if (!arg) {
		fprintf(stderr,
			"gpuctl: dev set: expected \"DEV numvfs NUM\"\n");
		return EXIT_USAGE;
	}
	if (!strcmp(arg, "help")) {
		object_help(stdout, &dev_object);
		return EXIT_OK;
	}
	if (!dev_address(arg, v.address, sizeof(v.address)))
		return EXIT_USAGE;
	if (vfs_numvfs_parse(a, &v, err, sizeof(err))) {
		fprintf(stderr, "gpuctl: dev set: %s\n", err);
		return EXIT_USAGE;
	}
	if (g->dry_run)
		return EXIT_OK;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	if (dev_set_numvfs(nl, v.address, v.numvfs)) {
		fprintf(stderr, "gpuctl: cannot set %u VFs on %s\n", v.numvfs,
			v.address);
		return EXIT_KERNEL;
	}
	return dev_show(nl, v.address);
}

static const struct cmd_entry dev_cmds[] = {
	{ .name = "show", .fn = cmd_dev_show, .usage = "[ DEV ]" },
	{ .name = "set", .fn = cmd_dev_set, .usage = "DEV numvfs NUM" },
};

const struct object dev_object = {
	.name = "dev",
	.desc = "GPUs and the other members of their IOMMU groups",
	.cmds = dev_cmds,
	.ncmds = ARRAY_SIZE(dev_cmds),
	.dflt = "show",
	.notes = "where  DEV := { DDDD:BB:DD.F | BB:DD.F }\n",
};
