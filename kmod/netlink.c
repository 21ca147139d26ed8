// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The "gpuctl" generic netlink family: the family itself, request handlers,
 * dumps and notifications. Policies and the ops table are generated from
 * the spec into netlink-gen.c; the generator's legacy mode, the only one
 * that builds on 6.1, leaves the family and its multicast groups to us.
 */

#include <linux/kernel.h>
#include <linux/pci.h>
#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "inventory.h"
#include "iommu.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "reserve.h"
#include "rule.h"
#include "sriov.h"
#include "vfio-track.h"

/* "device 0000:01:00.0 is bound to snd_hda_intel" */
#define GPUCTL_REASON_LEN (GPUCTL_ADDRESS_LEN + GPUCTL_DRIVER_NAME_LEN + 32)

/*
 * "monitor" is the inventory's, open to every user like lspci; "ledger"
 * carries every event with all attributes, tenants' VMs and holders
 * included, and only CAP_SYS_ADMIN may join it (the spec's doc says so;
 * the generator does not emit group flags).
 */
static const struct genl_multicast_group gpuctl_mcgrps[] = {
	[GPUCTL_NLGRP_MONITOR] = { .name = GPUCTL_MCGRP_MONITOR, },
	[GPUCTL_NLGRP_LEDGER] = { .name = GPUCTL_MCGRP_LEDGER,
				  .flags = GENL_MCAST_CAP_SYS_ADMIN, },
};

/*
 * Under gpuctl_lock: the family is registered, so notifications may go
 * out. Cleared before the family is unregistered: a group id sent to after
 * that may belong to another family already.
 */
static bool gpuctl_nl_live;

/* Whoever sent @skb may see the ledger, and change anything. */
bool gpuctl_nl_admin(struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_SYS_ADMIN);
}

/*
 * The host bridge or root port a device hangs off, as the second path
 * component of its sysfs realpath: the bridge on the root bus above the
 * device, or "pciDDDD:BB" for a device on a root bus itself.
 */
static void gpuctl_nl_pci_root(const struct pci_dev *pdev, char *buf,
			       size_t len)
{
	struct pci_bus *bus = pdev->bus;

	while (!pci_is_root_bus(bus) && !pci_is_root_bus(bus->parent))
		bus = bus->parent;

	if (!pci_is_root_bus(bus)) {
		/* A virtual bus (SR-IOV) has no bridge; use its root bus. */
		if (bus->self) {
			strscpy(buf, pci_name(bus->self), len);
			return;
		}
		bus = bus->parent;
	}
	snprintf(buf, len, "pci%04x:%02x", pci_domain_nr(bus), bus->number);
}

/*
 * Why the device is held or blocked. A device blocked because a VFIO user
 * or an allocation has it (or one of its VFs) says who only to
 * CAP_SYS_ADMIN, as the holder and the allocation are shown.
 */
static int gpuctl_nl_dev_fill_reason(struct sk_buff *msg,
				     const struct gpuctl_dev *dev, bool admin)
{
	char reason[GPUCTL_DRIVER_NAME_LEN + 16];

	switch (dev->res.state) {
	case GPUCTL_DEV_STATE_HELD:
		snprintf(reason, sizeof(reason), "bound to %s", dev->driver);
		return nla_put_string(msg, GPUCTL_A_DEV_STATE_REASON, reason);
	case GPUCTL_DEV_STATE_BLOCKED:
		return nla_put_string(msg, GPUCTL_A_DEV_STATE_REASON,
				      dev->res.blocked_in_use && !admin ?
				      "in use by a VFIO user or an allocation" :
				      dev->res.blocked);
	default:
		return 0;
	}
}

static int gpuctl_nl_holder_fill(struct sk_buff *msg,
				 const struct gpuctl_dev *dev,
				 const struct gpuctl_holder *holder);

/*
 * One fill function for get replies, dumps and notifications; @admin adds
 * the device's allocation and holder, which only CAP_SYS_ADMIN may see.
 */
static int gpuctl_nl_dev_fill(struct sk_buff *msg, const struct gpuctl_dev *dev,
			      bool admin)
{
	struct pci_dev *pdev = dev->pdev;
	char root[24];

	gpuctl_nl_pci_root(pdev, root, sizeof(root));

	if (nla_put_string(msg, GPUCTL_A_DEV_ADDRESS, pci_name(pdev)) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_VENDOR_ID, pdev->vendor) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_DEVICE_ID, pdev->device) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID,
			pdev->subsystem_vendor) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID,
			pdev->subsystem_device) ||
	    nla_put_u32(msg, GPUCTL_A_DEV_CLASS, pdev->class) ||
	    nla_put_u8(msg, GPUCTL_A_DEV_REVISION, pdev->revision))
		return -EMSGSIZE;

	if (dev->driver[0] &&
	    nla_put_string(msg, GPUCTL_A_DEV_DRIVER, dev->driver))
		return -EMSGSIZE;
#ifndef GPUCTL_TEST_MUTANT_DEV_ATTR
	/*
	 * Left out only by a test-only mutant, built with
	 * -DGPUCTL_TEST_MUTANT_DEV_ATTR (scripts/teeth.sh), so that a
	 * selftest run shows which cases notice.
	 */
	if (dev->group &&
	    nla_put_u32(msg, GPUCTL_A_DEV_IOMMU_GROUP, dev->group->id))
		return -EMSGSIZE;
#endif

	if (nla_put_s32(msg, GPUCTL_A_DEV_NUMA_NODE, dev_to_node(&pdev->dev)) ||
	    nla_put_string(msg, GPUCTL_A_DEV_PCI_ROOT, root) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_SRIOV_TOTALVFS,
			pci_sriov_get_totalvfs(pdev)) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_SRIOV_NUMVFS, pci_num_vf(pdev)))
		return -EMSGSIZE;

	if (pdev->is_virtfn &&
	    nla_put_string(msg, GPUCTL_A_DEV_PHYSFN, pci_name(pci_physfn(pdev))))
		return -EMSGSIZE;

	if (nla_put_u32(msg, GPUCTL_A_DEV_ROLE, dev->role) ||
	    nla_put_u8(msg, GPUCTL_A_DEV_RESERVED, !!dev->res.rule) ||
	    nla_put_u32(msg, GPUCTL_A_DEV_STATE, dev->res.state))
		return -EMSGSIZE;

	if (dev->res.rule &&
	    nla_put_u32(msg, GPUCTL_A_DEV_RULE, dev->res.rule->id))
		return -EMSGSIZE;
	if (gpuctl_nl_dev_fill_reason(msg, dev, admin))
		return -EMSGSIZE;
	if (!admin)
		return 0;

	if (dev->alloc &&
	    nla_put_u32(msg, GPUCTL_A_DEV_ALLOCATION, dev->alloc->info.id))
		return -EMSGSIZE;
	return gpuctl_nl_holder_fill(msg, dev, &dev->holder);
}

/*
 * A reply or a dump also says whether the worker still has to act on the
 * device, and what its VFIO device can do for migration. Notifications do
 * not: they are sent as the worker goes, and "action" says what it did;
 * the migration capabilities are read when opens are looked for, not at
 * an event (migration.c), so an event would carry them or not by timing.
 */
static int gpuctl_nl_dev_fill_reply(struct sk_buff *msg,
				    const struct gpuctl_dev *dev, bool admin)
{
	int ret = gpuctl_nl_dev_fill(msg, dev, admin);

	if (!ret && gpuctl_reserve_pending(dev) &&
	    nla_put_flag(msg, GPUCTL_A_DEV_PENDING))
		ret = -EMSGSIZE;
	if (!ret && dev->mig.known &&
	    nla_put_u32(msg, GPUCTL_A_DEV_MIGRATION, dev->mig.caps))
		ret = -EMSGSIZE;
	return ret;
}

/*
 * The VFIO user that has the device open. An observed one is unknown: pid
 * 0, and whether it matches the allocation depends only on whether the
 * device has one now.
 */
static int gpuctl_nl_holder_fill(struct sk_buff *msg,
				 const struct gpuctl_dev *dev,
				 const struct gpuctl_holder *holder)
{
	u32 match = holder->match;

	if (!holder->open || holder->opening)
		return 0;

	if (holder->observed)
		match = dev->alloc ? GPUCTL_OPEN_MATCH_UNKNOWN :
				     GPUCTL_OPEN_MATCH_UNALLOCATED;
	if (nla_put_u32(msg, GPUCTL_A_DEV_HOLDER_PID, holder->pid) ||
	    nla_put_u32(msg, GPUCTL_A_DEV_OPEN_MATCH, match))
		return -EMSGSIZE;
	if (holder->observed)
		return nla_put_u64_64bit(msg, GPUCTL_A_DEV_HOLDER_SINCE,
					 holder->since, GPUCTL_A_DEV_PAD);

	if (nla_put_string(msg, GPUCTL_A_DEV_HOLDER_COMM, holder->comm) ||
	    nla_put_u32(msg, GPUCTL_A_DEV_HOLDER_UID, holder->uid) ||
	    nla_put_u64_64bit(msg, GPUCTL_A_DEV_HOLDER_SINCE, holder->since,
			      GPUCTL_A_DEV_PAD))
		return -EMSGSIZE;
	return 0;
}

static int gpuctl_nl_group_fill(struct sk_buff *msg,
				const struct gpuctl_group *group)
{
	const struct gpuctl_dev *offender = gpuctl_group_offender(group);
	const struct gpuctl_dev *m;
	char reason[GPUCTL_REASON_LEN];

	if (nla_put_u32(msg, GPUCTL_A_GROUP_ID, group->id))
		return -EMSGSIZE;

	list_for_each_entry(m, &group->members, group_node) {
		if (nla_put_string(msg, GPUCTL_A_GROUP_DEVICE, pci_name(m->pdev)))
			return -EMSGSIZE;
	}

	if (nla_put_u8(msg, GPUCTL_A_GROUP_VIABLE, !offender))
		return -EMSGSIZE;

	if (offender) {
		snprintf(reason, sizeof(reason), "%s is bound to %s",
			 pci_name(offender->pdev), offender->driver);
		if (nla_put_string(msg, GPUCTL_A_GROUP_REASON, reason))
			return -EMSGSIZE;
	}
	return 0;
}

static int gpuctl_nl_dev_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_ADDRESS];
	struct gpuctl_dev *dev;
	unsigned long key;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_DEV_ADDRESS))
		return -EINVAL;

	if (gpuctl_parse_address(nla_data(attr), &key)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "malformed pci address, expected DDDD:BB:DD.F");
		return -EINVAL;
	}

	dev = gpuctl_inventory_find(key);
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such device");
		return -ENODEV;
	}
	info->user_ptr[0] = dev;
	return 0;
}

static int gpuctl_nl_group_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_GROUP_ID];
	struct gpuctl_group *group;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_GROUP_ID))
		return -EINVAL;

	group = gpuctl_group_find(nla_get_u32(attr));
	if (!group) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such iommu group");
		return -ENOENT;
	}
	info->user_ptr[0] = group;
	return 0;
}

/*
 * Every doit runs under gpuctl_lock, taken here and dropped in post_doit,
 * with its target object already resolved into user_ptr[0]. Handlers that
 * wait for the enforcement worker drop the lock meanwhile and take it
 * again before they return.
 */
static int gpuctl_nl_pre_doit(const struct gpuctl_genl_ops *ops,
			      struct sk_buff *skb, struct genl_info *info)
{
	int ret;

	/* GENL_ADMIN_PERM only asks for CAP_NET_ADMIN. */
	if ((ops->flags & GENL_ADMIN_PERM) && !gpuctl_nl_admin(skb)) {
		NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN");
		return -EPERM;
	}

	mutex_lock(&gpuctl_lock);

	/*
	 * Lookups below must not find an allocation a close just ended. Only
	 * for CAP_SYS_ADMIN: the sync takes every watched group's mutex,
	 * which no unprivileged read may make gpuctl_lock wait for, and what
	 * it brings up to date (holders, allocations) only CAP_SYS_ADMIN
	 * sees; everyone else reads what the once-a-second look found.
	 */
	switch (ops->cmd) {
	case GPUCTL_CMD_DEV_GET:
	case GPUCTL_CMD_MDEV_GET:
		if (!gpuctl_nl_admin(skb))
			break;
		fallthrough;
	case GPUCTL_CMD_DEV_SET:
	case GPUCTL_CMD_ALLOC_DEL:
	case GPUCTL_CMD_ALLOC_GET:
	case GPUCTL_CMD_RULE_DEL:
		gpuctl_vfio_watch_sync();
		break;
	}

	switch (ops->cmd) {
	case GPUCTL_CMD_DEV_GET:
	case GPUCTL_CMD_DEV_SET:
		ret = gpuctl_nl_dev_lookup(info);
		break;
	case GPUCTL_CMD_GROUP_GET:
		ret = gpuctl_nl_group_lookup(info);
		break;
	case GPUCTL_CMD_RULE_NEW:
	case GPUCTL_CMD_ALLOC_NEW:
	case GPUCTL_CMD_ALLOC_DEL:
	case GPUCTL_CMD_LIMIT_SET:
		ret = 0;
		break;
	case GPUCTL_CMD_ALLOC_GET:
		ret = gpuctl_nl_alloc_lookup(info);
		break;
	case GPUCTL_CMD_LIMIT_GET:
		ret = gpuctl_nl_limit_lookup(info);
		break;
	case GPUCTL_CMD_MDEV_GET:
		ret = gpuctl_nl_mdev_lookup(info);
		break;
	case GPUCTL_CMD_RULE_DEL:
	case GPUCTL_CMD_RULE_GET:
		ret = gpuctl_nl_rule_lookup(info);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}

	if (ret)
		mutex_unlock(&gpuctl_lock);
	return ret;
}

static void gpuctl_nl_post_doit(const struct gpuctl_genl_ops *ops,
				struct sk_buff *skb, struct genl_info *info)
{
	mutex_unlock(&gpuctl_lock);
}

struct genl_family gpuctl_nl_family __ro_after_init = {
	.name		= GPUCTL_FAMILY_NAME,
	.version	= GPUCTL_FAMILY_VERSION,
	/*
	 * PCI devices are host-global and genlmsg_multicast() reaches only
	 * the initial network namespace, so the family stays there.
	 */
	.netnsok	= false,
	/*
	 * gpuctl_lock serialises every handler against the bus notifier;
	 * the global genl_mutex would add nothing but contention with other
	 * families.
	 */
	.parallel_ops	= true,
	/* Strict validation and reject-all policies for every command. */
	.resv_start_op	= 0,
	.pre_doit	= gpuctl_nl_pre_doit,
	.post_doit	= gpuctl_nl_post_doit,
	.ops		= gpuctl_nl_ops,
	.n_ops		= ARRAY_SIZE(gpuctl_nl_ops),
	.mcgrps		= gpuctl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(gpuctl_mcgrps),
	/* A running dump holds a reference on the module. */
	.module		= THIS_MODULE,
};

/**
 * gpuctl_nl_reply_new() - start the reply to a request
 * @info: the request
 * @hdr: set to the reply's genetlink header
 *
 * The reply carries the request's command, as YNL expects.
 *
 * Context: process.
 * Return: the message, or an ERR_PTR().
 */
struct sk_buff *gpuctl_nl_reply_new(struct genl_info *info, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return ERR_PTR(-ENOMEM);

	*hdr = genlmsg_put_reply(msg, info, &gpuctl_nl_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return ERR_PTR(-EMSGSIZE);
	}
	return msg;
}

/**
 * gpuctl_nl_reply_send() - send a reply, or drop it when filling it failed
 * @info: the request
 * @msg: from gpuctl_nl_reply_new()
 * @hdr: its header
 * @err: what filling @msg returned
 *
 * Context: process.
 * Return: @err when it is not 0, otherwise what sending returned.
 */
int gpuctl_nl_reply_send(struct genl_info *info, struct sk_buff *msg,
			 void *hdr, int err)
{
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/**
 * gpuctl_nl_dev_get_doit() - reply with one device
 * @skb: the request
 * @info: the request; user_ptr[0] holds the device pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct gpuctl_dev *dev = info->user_ptr[0];
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr,
				    gpuctl_nl_dev_fill_reply(msg, dev,
							     gpuctl_nl_admin(skb)));
}

/*
 * The VFs' own bus events come before the PF's count is updated
 * (sriov_enable() sets it after adding them), so the PF is announced
 * again once the change is done.
 */
static void gpuctl_nl_sriov_changed(struct pci_dev *pf)
{
	struct gpuctl_dev *dev = gpuctl_inventory_find_pdev(pf);

	if (!dev)
		return;
	gpuctl_netlink_notify_dev(dev, GPUCTL_CMD_DEV_CHANGE_NTF, 0);
	gpuctl_inventory_changed();
}

/*
 * The switch a VFIO driver that enables VFs only when told to wants, as
 * its sriov_configure() returns -ENOENT without it (vfio_pci.c,
 * vfio_pci_sriov_configure(), 6.1 and 6.12; vfio-driver.c).
 */
static const char *gpuctl_nl_sriov_opt_in(const char *driver)
{
	if (!strcmp(driver, "vfio-pci"))
		return "vfio_pci.enable_sriov=1";
	if (!strcmp(driver, GPUCTL_VFIO_DRIVER_NAME))
		return "gpuctl.enable_sriov=1";
	return NULL;
}

static void gpuctl_nl_sriov_tell(struct genl_info *info, struct pci_dev *pf,
				 u16 want,
				 const struct gpuctl_sriov_result *res)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	char why[GPUCTL_SRIOV_WHY_LEN];
	const char *opt_in;

	switch (res->outcome) {
	case GPUCTL_SRIOV_DONE:
		break;
	case GPUCTL_SRIOV_PF_GONE:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s was removed", name);
		break;
	case GPUCTL_SRIOV_PF_LOCKED:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is busy: its driver is being changed",
				       name);
		break;
	case GPUCTL_SRIOV_VF_LOCKED:
	case GPUCTL_SRIOV_VF_OPEN:
		gpuctl_sriov_result_why(pf, res, why, sizeof(why));
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr, "%s", why);
		break;
	case GPUCTL_SRIOV_NO_DRIVER:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s has no driver to enable its VFs",
				       name);
		break;
	case GPUCTL_SRIOV_NO_CONFIGURE:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "driver %s of %s cannot set its VFs",
				       res->driver, name);
		break;
	case GPUCTL_SRIOV_HAS_VFS:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s has %u VFs: set 0 before %u", name,
				       res->had, want);
		break;
	case GPUCTL_SRIOV_REFUSED:
		opt_in = gpuctl_nl_sriov_opt_in(res->driver);
		if (res->enabled == -ENOENT && opt_in) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%.16s needs %s to enable VFs on %s",
					       res->driver, opt_in, name);
			break;
		}
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s refused %u VFs on %s: error %d",
				       res->driver, want, name, res->enabled);
		break;
	case GPUCTL_SRIOV_SHORT:
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s enabled %d of %u VFs on %s: disabled",
				       res->driver, res->enabled, want, name);
		break;
	}
}

/*
 * The checks before the change: a PF, and a count it supports. Then
 * (gpuctl_nl_sriov_busy()) allocations and opens, which count only on VFs
 * gpuctl tracks: an untracked VF in use makes disabling wait for its user,
 * as a write to sriov_numvfs would.
 */
static int gpuctl_nl_sriov_check(struct genl_info *info, struct pci_dev *pf,
				 u16 want)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	int total;

	if (!pf->is_physfn) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is not an SR-IOV PF", name);
		return -EOPNOTSUPP;
	}
	total = pci_sriov_get_totalvfs(pf);
	if (want > total) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s supports %d VFs, not %u", name,
				       total, want);
		return -ERANGE;
	}
	return 0;
}

/* Whether anything gpuctl sees stands in the way of a change. */
static int gpuctl_nl_sriov_busy(struct genl_info *info, struct pci_dev *pf)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS];
	const char *name = pci_name(pf);
	const struct gpuctl_dev *vf;

	if (gpuctl_sriov_changing(pf)) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "%s is changing its VFs already", name);
		return -EBUSY;
	}
	vf = gpuctl_sriov_busy_vf(pf);
	if (vf && vf->alloc) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "VF %s of %s is allocated to %u",
				       pci_name(vf->pdev), name,
				       vf->alloc->info.id);
		return -EBUSY;
	}
	if (vf) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
				       "VF %s of %s is open", pci_name(vf->pdev),
				       name);
		return -EBUSY;
	}
	return 0;
}

/**
 * gpuctl_nl_dev_set_doit() - set a tracked PF's number of VFs
 * @skb: the request
 * @info: the request; user_ptr[0] holds the device pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit; dropped while the PF's driver
 * changes its VFs, and taken again.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuctl_dev *dev = info->user_ptr[0];
	struct gpuctl_sriov_result res = {};
	struct gpuctl_sriov_change change;
	u16 want;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_DEV_SRIOV_NUMVFS))
		return -EINVAL;
	want = nla_get_u16(info->attrs[GPUCTL_A_DEV_SRIOV_NUMVFS]);

	ret = gpuctl_nl_sriov_check(info, dev->pdev, want);
	if (ret)
		return ret;
	/*
	 * The count it has already: nothing to change, nothing to refuse
	 * (gpuctl apply's second run). A sysfs write racing this unlocked
	 * read is ordered after it.
	 */
	if (want == pci_num_vf(dev->pdev))
		return 0;
	ret = gpuctl_nl_sriov_busy(info, dev->pdev);
	if (ret)
		return ret;

	/* @dev may go while the lock is dropped; the PF may not. */
	gpuctl_sriov_change_begin(&change, dev->pdev);
	mutex_unlock(&gpuctl_lock);

	ret = gpuctl_sriov_configure(change.pf, want, &res);

	mutex_lock(&gpuctl_lock);
	gpuctl_nl_sriov_tell(info, change.pf, want, &res);
	if (!ret && want != res.had)
		gpuctl_nl_sriov_changed(change.pf);
	gpuctl_sriov_change_end(&change);
	return ret;
}

/**
 * gpuctl_nl_group_get_doit() - reply with one IOMMU group
 * @skb: the request
 * @info: the request; user_ptr[0] holds the group pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_group_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr,
				    gpuctl_nl_group_fill(msg, info->user_ptr[0]));
}

/*
 * A dump resumes at the first object whose key (device address, group id,
 * rule id) is at least @next. The inventory generation goes into cb->seq on
 * every pass, so a dump that spans a change is flagged NLM_F_DUMP_INTR.
 */
struct gpuctl_nl_dump_ctx {
	unsigned long next;
};

/**
 * gpuctl_nl_dump() - the dumpit loop shared by every object type
 * @skb: the message to fill
 * @cb: the dump; the cursor lives in cb->ctx
 * @cmd: the command of each message
 * @fill_next: fills the next object
 * @flags: GPUCTL_NL_DUMP_ADMIN for objects only CAP_SYS_ADMIN may read,
 *	GPUCTL_NL_DUMP_WATCH for objects that show who has devices open
 *
 * Context: takes gpuctl_lock.
 * Return: the length of @skb, 0 when the dump is complete, or a negative
 * errno.
 */
int gpuctl_nl_dump(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		   gpuctl_nl_fill_next_t fill_next, unsigned int flags)
{
	struct gpuctl_nl_dump_ctx *ctx = (struct gpuctl_nl_dump_ctx *)cb->ctx;
	bool admin = gpuctl_nl_admin(cb->skb);
	unsigned long key = ctx->next;
	void *hdr;
	int ret;

	NL_ASSERT_DUMP_CTX_FITS(struct gpuctl_nl_dump_ctx);

	/* Dumps skip pre_doit, and GENL_ADMIN_PERM asks for CAP_NET_ADMIN. */
	if ((flags & GPUCTL_NL_DUMP_ADMIN) && !admin) {
		NL_SET_ERR_MSG(cb->extack, "needs CAP_SYS_ADMIN");
		return -EPERM;
	}

	mutex_lock(&gpuctl_lock);
	/* as in pre_doit: only for those who see what it changes */
	if ((flags & GPUCTL_NL_DUMP_WATCH) && !key && admin)
		gpuctl_vfio_watch_sync();
	cb->seq = gpuctl_inventory_generation();

	for (;; key++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &gpuctl_nl_family,
				  NLM_F_MULTI, cmd);
		if (!hdr) {
			ret = -EMSGSIZE;
			break;
		}

		ret = fill_next(skb, &key, admin);
		if (ret <= 0) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		/* Only on a message that is sent, or the flag is lost. */
		genl_dump_check_consistent(cb, hdr);
		genlmsg_end(skb, hdr);
	}
	ctx->next = key;

	mutex_unlock(&gpuctl_lock);

	/* A full skb is not an error: the dump goes on in the next one. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

static int gpuctl_nl_dev_fill_next(struct sk_buff *msg, unsigned long *key,
				   bool admin)
{
	struct gpuctl_dev *dev = gpuctl_inventory_next(key);

	return dev ? gpuctl_nl_dev_fill_reply(msg, dev, admin) ?: 1 : 0;
}

static int gpuctl_nl_group_fill_next(struct sk_buff *msg, unsigned long *key,
				     bool admin)
{
	struct gpuctl_group *group = gpuctl_group_next(key);

	return group ? gpuctl_nl_group_fill(msg, group) ?: 1 : 0;
}

/**
 * gpuctl_nl_dev_get_dumpit() - dump every tracked device
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_DEV_GET,
			      gpuctl_nl_dev_fill_next, GPUCTL_NL_DUMP_WATCH);
}

/**
 * gpuctl_nl_group_get_dumpit() - dump every IOMMU group that holds a GPU
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_group_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_GROUP_GET,
			      gpuctl_nl_group_fill_next, 0);
}

/*
 * A message for multicast group @group with its header put, or NULL when
 * nobody listens there (nothing is built then), the family is not
 * registered, or memory is short. A failure only costs listeners an event;
 * the tables are already updated.
 */
struct sk_buff *gpuctl_nl_ntf_new(u8 cmd, unsigned int group, void **hdr)
{
	struct sk_buff *msg;

	lockdep_assert_held(&gpuctl_lock);

	if (!gpuctl_nl_live ||
	    !genl_has_listeners(&gpuctl_nl_family, &init_net, group))
		return NULL;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;

	*hdr = genlmsg_put(msg, 0, 0, &gpuctl_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

void gpuctl_nl_ntf_send(struct sk_buff *msg, void *hdr, unsigned int group)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&gpuctl_nl_family, msg, 0, group, GFP_KERNEL);
}

/**
 * gpuctl_netlink_notify_dev() - announce a device
 * @dev: the device, still tracked (for a removal: not yet freed)
 * @cmd: GPUCTL_CMD_DEV_ADD_NTF, _DEL_NTF or _CHANGE_NTF
 * @action: enum gpuctl_dev_action value of what gpuctl did, or 0
 *
 * On "monitor" without the device's allocation and holder, and on
 * "ledger" with them.
 *
 * Context: gpuctl_lock held; sleeps.
 */
void gpuctl_netlink_notify_dev(const struct gpuctl_dev *dev, u8 cmd,
			       u32 action)
{
	static const unsigned int groups[] = {
		GPUCTL_NLGRP_MONITOR, GPUCTL_NLGRP_LEDGER,
	};
	struct sk_buff *msg;
	unsigned int i;
	void *hdr;

	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		msg = gpuctl_nl_ntf_new(cmd, groups[i], &hdr);
		if (!msg)
			continue;

		if (gpuctl_nl_dev_fill(msg, dev,
				       groups[i] == GPUCTL_NLGRP_LEDGER) ||
		    (action && nla_put_u32(msg, GPUCTL_A_DEV_ACTION, action))) {
			nlmsg_free(msg);
			continue;
		}
		gpuctl_nl_ntf_send(msg, hdr, groups[i]);
	}
}

/**
 * gpuctl_netlink_notify_rule() - announce a rule on the "ledger" group
 * @rule: the rule, still in the table
 * @cmd: GPUCTL_CMD_RULE_NEW_NTF or _DEL_NTF
 *
 * Context: gpuctl_lock held; sleeps.
 */
void gpuctl_netlink_notify_rule(const struct gpuctl_rule *rule, u8 cmd)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_ntf_new(cmd, GPUCTL_NLGRP_LEDGER, &hdr);
	if (!msg)
		return;

	if (gpuctl_nl_rule_fill(msg, rule)) {
		nlmsg_free(msg);
		return;
	}
	gpuctl_nl_ntf_send(msg, hdr, GPUCTL_NLGRP_LEDGER);
}

/**
 * gpuctl_netlink_notify_vfio() - announce a VFIO open or close on "ledger"
 * @dev: the device
 * @holder: the VFIO user that opened (or tried to open) or closed it
 * @cmd: GPUCTL_CMD_VFIO_OPEN_NTF or _CLOSE_NTF
 * @refused: why the enforcing driver refused the open, or NULL
 *
 * Context: gpuctl_lock held; sleeps.
 */
void gpuctl_netlink_notify_vfio(const struct gpuctl_dev *dev,
				const struct gpuctl_holder *holder, u8 cmd,
				const char *refused)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_ntf_new(cmd, GPUCTL_NLGRP_LEDGER, &hdr);
	if (!msg)
		return;

	/* The holder of the event, which may not be the device's (any more). */
	if (gpuctl_nl_dev_fill(msg, dev, false) ||
	    (dev->alloc &&
	     nla_put_u32(msg, GPUCTL_A_DEV_ALLOCATION, dev->alloc->info.id)) ||
	    gpuctl_nl_holder_fill(msg, dev, holder) ||
	    (refused && nla_put_string(msg, GPUCTL_A_DEV_REFUSED, refused))) {
		nlmsg_free(msg);
		return;
	}
	gpuctl_nl_ntf_send(msg, hdr, GPUCTL_NLGRP_LEDGER);
}

#ifndef NL_SET_ERR_MSG_FMT
/**
 * gpuctl_err_msg_buf() - a buffer for one formatted extack message (6.1)
 *
 * See GPUCTL_SET_ERR_MSG_FMT() in compat.h.
 *
 * Context: gpuctl_lock held.
 * Return: a buffer of GPUCTL_ERR_MSG_LEN bytes.
 */
char *gpuctl_err_msg_buf(void)
{
	static char bufs[64][GPUCTL_ERR_MSG_LEN];
	static unsigned int next;

	lockdep_assert_held(&gpuctl_lock);
	return bufs[next++ % ARRAY_SIZE(bufs)];
}
#endif

/**
 * gpuctl_netlink_init() - register the "gpuctl" family
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int gpuctl_netlink_init(void)
{
	int ret;

	ret = genl_register_family(&gpuctl_nl_family);
	if (ret)
		return ret;

	mutex_lock(&gpuctl_lock);
	gpuctl_nl_live = true;
	mutex_unlock(&gpuctl_lock);
	return 0;
}

/**
 * gpuctl_netlink_exit() - unregister the "gpuctl" family
 *
 * Returns once no handler runs any more; dumps pin the module, so none is
 * left by the time the module exits.
 *
 * Context: module exit.
 */
void gpuctl_netlink_exit(void)
{
	mutex_lock(&gpuctl_lock);
	gpuctl_nl_live = false;
	mutex_unlock(&gpuctl_lock);

	genl_unregister_family(&gpuctl_nl_family);
}
