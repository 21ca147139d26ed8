// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Netlink requests on the allocation ledger: alloc-new, alloc-del and
 * alloc-get (limit-set and limit-get, on the tenant limits alloc-new
 * checks, are netlink-limit.c's). All of them, reads too, need CAP_NET_ADMIN
 * (GENL_ADMIN_PERM in the generated ops table) and CAP_SYS_ADMIN (pre_doit
 * and gpuctl_nl_dump() check it): the ledger names tenants' VMs. A request
 * either changes nothing and says why in its extack, or is applied whole:
 * every check runs before the first change, under one hold of gpuctl_lock.
 */

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/numa.h>
#include <linux/uuid.h>
#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "inventory.h"
#include "limit.h"
#include "mdev.h"
#include "netlink.h"
#include "netlink-gen.h"
#include "vfio-track.h"

static const u16 gpuctl_nl_label_attrs[GPUCTL_NR_LABELS] = {
	[GPUCTL_LIMIT_SCOPE_ACCOUNT - 1] = GPUCTL_A_ALLOC_ACCOUNT,
	[GPUCTL_LIMIT_SCOPE_PROJECT - 1] = GPUCTL_A_ALLOC_PROJECT,
	[GPUCTL_LIMIT_SCOPE_DOMAIN - 1] = GPUCTL_A_ALLOC_DOMAIN,
};

/**
 * gpuctl_nl_alloc_fill() - put an allocation's attributes into a message
 * @msg: the message
 * @alloc: the allocation
 *
 * Context: gpuctl_lock held.
 * Return: 0 or -EMSGSIZE.
 */
int gpuctl_nl_alloc_fill(struct sk_buff *msg, const struct gpuctl_alloc *alloc)
{
	const struct gpuctl_alloc_info *info = &alloc->info;
	unsigned int i;

	if (nla_put_u32(msg, GPUCTL_A_ALLOC_ID, info->id) ||
	    nla_put_string(msg, GPUCTL_A_ALLOC_OWNER, info->owner) ||
	    (info->name[0] &&
	     nla_put_string(msg, GPUCTL_A_ALLOC_NAME, info->name)))
		return -EMSGSIZE;

	for (i = 0; i < GPUCTL_NR_LABELS; i++) {
		if (info->labels[i][0] &&
		    nla_put_string(msg, gpuctl_nl_label_attrs[i],
				   info->labels[i]))
			return -EMSGSIZE;
	}
	for (i = 0; i < alloc->nr_devs; i++) {
		if (nla_put_string(msg, GPUCTL_A_ALLOC_DEVICE,
				   alloc->devs[i].address))
			return -EMSGSIZE;
	}
	for (i = 0; i < alloc->nr_devs; i++) {
		if (alloc->devs[i].typed &&
		    nla_put_string(msg, GPUCTL_A_ALLOC_DEVICE_TYPED,
				   alloc->devs[i].address))
			return -EMSGSIZE;
	}
	for (i = 0; i < alloc->nr_mdevs; i++) {
		char uuid[UUID_STRING_LEN + 1];

		snprintf(uuid, sizeof(uuid), "%pUl", &alloc->mdevs[i].uuid);
		if (nla_put_string(msg, alloc->mdevs[i].made ?
					GPUCTL_A_ALLOC_MDEV_MADE :
					GPUCTL_A_ALLOC_MDEV, uuid))
			return -EMSGSIZE;
	}

	if ((info->detach_on_stop &&
	     nla_put_flag(msg, GPUCTL_A_ALLOC_DETACH_ON_STOP)) ||
	    (info->has_uid && nla_put_u32(msg, GPUCTL_A_ALLOC_UID, info->uid)) ||
	    (info->has_gid && nla_put_u32(msg, GPUCTL_A_ALLOC_GID, info->gid)) ||
	    nla_put_u32(msg, GPUCTL_A_ALLOC_STATE, alloc->state) ||
	    (alloc->reason[0] &&
	     nla_put_string(msg, GPUCTL_A_ALLOC_STATE_REASON, alloc->reason)) ||
	    nla_put_u32(msg, GPUCTL_A_ALLOC_GPUS, alloc->gpus))
		return -EMSGSIZE;
	return 0;
}

/**
 * gpuctl_nl_alloc_lookup() - resolve the allocation of an alloc-get request
 * @info: the request; user_ptr[0] is set to the allocation
 *
 * Context: gpuctl_lock held (pre_doit).
 * Return: 0, -EINVAL or -ENOENT.
 */
int gpuctl_nl_alloc_lookup(struct genl_info *info)
{
	struct gpuctl_alloc *alloc;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_ALLOC_ID))
		return -EINVAL;

	alloc = gpuctl_alloc_find(nla_get_u32(info->attrs[GPUCTL_A_ALLOC_ID]));
	if (!alloc) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUCTL_A_ALLOC_ID],
				    "no such allocation");
		return -ENOENT;
	}
	info->user_ptr[0] = alloc;
	return 0;
}

static int gpuctl_nl_alloc_reply(struct genl_info *info,
				 const struct gpuctl_alloc *alloc)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr, gpuctl_nl_alloc_fill(msg, alloc));
}

/* A UUID in its 36-character form, stored lower case. */
static int gpuctl_nl_parse_owner(struct genl_info *info, char *owner)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_ALLOC_OWNER];
	unsigned int i;

	if (!uuid_is_valid(nla_data(attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "owner is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
		return -EINVAL;
	}
	for (i = 0; i < GPUCTL_UUID_LEN; i++)
		owner[i] = tolower(((char *)nla_data(attr))[i]);
	owner[GPUCTL_UUID_LEN] = '\0';
	return 0;
}

/* The GPUs an alloc-new request names, each checked. */
static int gpuctl_nl_alloc_named(struct genl_info *info,
				 struct gpuctl_alloc_req *req)
{
	char addr[GPUCTL_ADDRESS_LEN + 1], why[GPUCTL_ALLOC_WHY_LEN];
	struct gpuctl_dev *dev;
	struct nlattr *attr;
	unsigned long key;
	int rem, ret;

	nla_for_each_attr(attr, genlmsg_data(info->genlhdr),
			  genlmsg_len(info->genlhdr), rem) {
		if (nla_type(attr) != GPUCTL_A_ALLOC_DEVICE &&
		    nla_type(attr) != GPUCTL_A_ALLOC_DEVICE_TYPED)
			continue;

		nla_strscpy(addr, attr, sizeof(addr));
		if (gpuctl_parse_address(addr, &key)) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "malformed pci address, expected DDDD:BB:DD.F");
			return -EINVAL;
		}
		dev = gpuctl_inventory_find(key);
		if (!dev) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%s: no such device", addr);
			return -ENODEV;
		}
		if (gpuctl_alloc_picked(req, dev)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%s is named twice", addr);
			return -EINVAL;
		}
		ret = gpuctl_alloc_unfit(dev, why, sizeof(why));
		if (ret) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr, "%s", why);
			return ret;
		}
		if (nla_type(attr) == GPUCTL_A_ALLOC_DEVICE_TYPED &&
		    !dev->pdev->is_virtfn) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%s is no VF: only a vendor VF is typed",
					       addr);
			return -EINVAL;
		}
		if (req->nr_gpus == GPUCTL_ALLOC_MAX_GPUS) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "too many devices in one allocation");
			return -E2BIG;
		}
		req->gpu_typed[req->nr_gpus] =
			nla_type(attr) == GPUCTL_A_ALLOC_DEVICE_TYPED;
		req->gpus[req->nr_gpus++] = dev;
	}
	return 0;
}

/*
 * The mdev instances an alloc-new request names, "mdev" and "mdev-made"
 * alike: each must be on the mdev bus, bound, and in no allocation.
 */
static int gpuctl_nl_alloc_mdevs(struct genl_info *info,
				 struct gpuctl_alloc_req *req)
{
	char str[UUID_STRING_LEN + 1];
	struct gpuctl_mdev *m;
	struct nlattr *attr;
	unsigned int i;
	guid_t uuid;
	int rem;

	nla_for_each_attr(attr, genlmsg_data(info->genlhdr),
			  genlmsg_len(info->genlhdr), rem) {
		if (nla_type(attr) != GPUCTL_A_ALLOC_MDEV &&
		    nla_type(attr) != GPUCTL_A_ALLOC_MDEV_MADE)
			continue;

		nla_strscpy(str, attr, sizeof(str));
		if (guid_parse(str, &uuid)) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "malformed uuid, expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
			return -EINVAL;
		}
		m = gpuctl_mdev_find(&uuid);
		if (!m) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%pUl: no such mdev", &uuid);
			return -ENODEV;
		}
		for (i = 0; i < req->nr_mdevs; i++) {
			if (req->mdevs[i] == m) {
				GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
						       "%pUl is named twice",
						       &uuid);
				return -EINVAL;
			}
		}
		if (m->alloc) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%pUl is in allocation %u",
					       &uuid, m->alloc->info.id);
			return -EBUSY;
		}
		if (!m->driver[0]) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, attr,
					       "%pUl has no driver", &uuid);
			return -EBUSY;
		}
		if (req->nr_gpus + req->nr_mdevs >= GPUCTL_ALLOC_MAX_GPUS) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "too many devices in one allocation");
			return -E2BIG;
		}
		req->mdev_made[req->nr_mdevs] =
			nla_type(attr) == GPUCTL_A_ALLOC_MDEV_MADE;
		req->mdevs[req->nr_mdevs++] = m;
	}
	return 0;
}

/* What a "count" request asks for: how many, which ids, which node. */
static int gpuctl_nl_alloc_parse_count(struct genl_info *info,
				       struct gpuctl_alloc_req *req)
{
	struct nlattr *count = info->attrs[GPUCTL_A_ALLOC_COUNT];
	struct nlattr *match = info->attrs[GPUCTL_A_ALLOC_MATCH];
	struct nlattr *node = info->attrs[GPUCTL_A_ALLOC_NUMA_NODE];
	struct nlattr *policy = info->attrs[GPUCTL_A_ALLOC_NUMA_POLICY];
	const char *why;

	req->count = nla_get_u32(count);
	if (!req->count || req->count > GPUCTL_ALLOC_MAX_GPUS) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, count,
				       "count must be 1 to %u",
				       GPUCTL_ALLOC_MAX_GPUS);
		return -EINVAL;
	}

	if (match) {
		if (gpuctl_match_parse(nla_data(match), &req->match, &why)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, match, "%s", why);
			return -EINVAL;
		}
		if (req->match.by_address) {
			NL_SET_ERR_MSG_ATTR(info->extack, match,
					    "match takes ids; name devices with device");
			return -EINVAL;
		}
		req->has_match = true;
	}

	if (node) {
		if (nla_get_u32(node) >= MAX_NUMNODES) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, node,
					       "numa node must be below %u",
					       MAX_NUMNODES);
			return -EINVAL;
		}
		req->numa_node = nla_get_u32(node);
	}
	if (policy && !node) {
		NL_SET_ERR_MSG_ATTR(info->extack, policy,
				    "numa-policy needs numa-node");
		return -EINVAL;
	}
	req->numa_policy = policy ? nla_get_u32(policy) :
				    GPUCTL_NUMA_POLICY_LEGACY;
	return 0;
}

static int gpuctl_nl_alloc_parse(struct genl_info *info,
				 struct gpuctl_alloc_req *req)
{
	struct gpuctl_alloc_info *a = &req->info;
	struct nlattr **attrs = info->attrs;
	unsigned int i;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_ALLOC_OWNER))
		return -EINVAL;

	req->numa_node = NUMA_NO_NODE;
	ret = gpuctl_nl_parse_owner(info, a->owner);
	if (ret)
		return ret;

	if (attrs[GPUCTL_A_ALLOC_ID])
		a->id = nla_get_u32(attrs[GPUCTL_A_ALLOC_ID]);
	if (attrs[GPUCTL_A_ALLOC_NAME])
		nla_strscpy(a->name, attrs[GPUCTL_A_ALLOC_NAME],
			    sizeof(a->name));
	for (i = 0; i < GPUCTL_NR_LABELS; i++) {
		if (attrs[gpuctl_nl_label_attrs[i]])
			nla_strscpy(a->labels[i], attrs[gpuctl_nl_label_attrs[i]],
				    sizeof(a->labels[i]));
	}
	a->detach_on_stop = nla_get_flag(attrs[GPUCTL_A_ALLOC_DETACH_ON_STOP]);
	if (attrs[GPUCTL_A_ALLOC_UID]) {
		a->has_uid = true;
		a->uid = nla_get_u32(attrs[GPUCTL_A_ALLOC_UID]);
	}
	if (attrs[GPUCTL_A_ALLOC_GID]) {
		a->has_gid = true;
		a->gid = nla_get_u32(attrs[GPUCTL_A_ALLOC_GID]);
	}

	if (attrs[GPUCTL_A_ALLOC_MDEV] || attrs[GPUCTL_A_ALLOC_MDEV_MADE]) {
		ret = gpuctl_nl_alloc_mdevs(info, req);
		if (ret)
			return ret;
	}

	if (attrs[GPUCTL_A_ALLOC_DEVICE] || attrs[GPUCTL_A_ALLOC_DEVICE_TYPED]) {
		if (attrs[GPUCTL_A_ALLOC_COUNT] || attrs[GPUCTL_A_ALLOC_MATCH] ||
		    attrs[GPUCTL_A_ALLOC_NUMA_NODE] ||
		    attrs[GPUCTL_A_ALLOC_NUMA_POLICY]) {
			NL_SET_ERR_MSG(info->extack,
				       "name devices, or give a count with match and numa; not both");
			return -EINVAL;
		}
		return gpuctl_nl_alloc_named(info, req);
	}

	if (!attrs[GPUCTL_A_ALLOC_COUNT]) {
		if (req->nr_mdevs)
			return 0;
		NL_SET_ERR_MSG(info->extack,
			       "name devices or mdevs, or give a count");
		return -EINVAL;
	}
	return gpuctl_nl_alloc_parse_count(info, req);
}

/**
 * gpuctl_nl_alloc_new_doit() - make an allocation, reply with it
 * @skb: the request
 * @info: the request
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_alloc_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gpuctl_alloc_req *req;
	struct gpuctl_alloc *alloc;
	char why[GPUCTL_ALLOC_WHY_LEN];
	u32 scope;
	int ret;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;

	ret = gpuctl_nl_alloc_parse(info, req);
	if (ret)
		goto out;

	/* The tenant's limit first: it is the answer whether GPUs are free. */
	ret = gpuctl_limit_check(&req->info,
				 (req->count ?: req->nr_gpus) + req->nr_mdevs,
				 &scope, why, sizeof(why));
	if (ret) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack,
				       info->attrs[gpuctl_nl_label_attrs[scope - 1]],
				       "%s", why);
		goto out;
	}

	if (req->count) {
		ret = gpuctl_alloc_place(req, why, sizeof(why));
		if (ret) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack,
					       info->attrs[GPUCTL_A_ALLOC_COUNT],
					       "%s", why);
			goto out;
		}
	}

#ifdef GPUCTL_TEST_BREAK_ALLOC_NEW
	/*
	 * Test-only, off unless built with -DGPUCTL_TEST_BREAK_ALLOC_NEW
	 * (GPUCTL_VARIANT=NAME scripts/build-module.sh REL KCFLAGS=...): a
	 * request that passed every check fails, so that a selftest run can
	 * show which tests notice a broken alloc-new. Never in a module
	 * anyone loads for use.
	 */
	NL_SET_ERR_MSG(info->extack, "alloc-new broken for a test run");
	ret = -EIO;
	goto out;
#endif
	alloc = gpuctl_alloc_create(req);
	if (IS_ERR(alloc)) {
		ret = PTR_ERR(alloc);
		if (ret == -EEXIST)
			GPUCTL_SET_ERR_MSG_FMT(info->extack,
					       info->attrs[GPUCTL_A_ALLOC_ID],
					       "allocation %u exists",
					       req->info.id);
		goto out;
	}
	ret = gpuctl_nl_alloc_reply(info, alloc);
out:
	kfree(req);
	return ret;
}

/* -EBUSY, naming the device and its holder, while one is open. */
static int gpuctl_nl_alloc_busy(struct genl_info *info,
				const struct gpuctl_alloc *alloc)
{
	const struct gpuctl_dev *dev = gpuctl_alloc_open_dev(alloc);
	const struct gpuctl_mdev *m = gpuctl_alloc_open_mdev(alloc);

	if (!dev && m) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
				       "%pUl is open by a VFIO user", &m->uuid);
		return -EBUSY;
	}
	if (!dev)
		return 0;
	if (dev->holder.pid)
		GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
				       "%s is open by %s (pid %d)",
				       pci_name(dev->pdev), dev->holder.comm,
				       dev->holder.pid);
	else
		GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
				       "%s is open by a VFIO user",
				       pci_name(dev->pdev));
	return -EBUSY;
}

/*
 * -EBUSY, naming the device, when an allocation cannot outlive its module
 * (alloc-del with handover): a device open on gpuctl-vfio-pci, whose
 * unregistration waits for the VM, or a VF whose PF is on gpuctl-vfio-pci,
 * which the PF's unbind at unload destroys. Every other VFIO driver keeps
 * its devices bound and open while gpuctl is replaced.
 */
static int gpuctl_nl_alloc_handover_busy(struct genl_info *info,
					 const struct gpuctl_alloc *alloc)
{
	const struct gpuctl_dev *dev, *pf;
	unsigned int i;

	for (i = 0; i < alloc->nr_devs; i++) {
		dev = alloc->devs[i].dev;
		if (!dev)
			continue;
		if (dev->holder.open &&
		    !strcmp(dev->driver, GPUCTL_VFIO_DRIVER_NAME)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
					       "%s is open on %s, which an unload cannot keep",
					       pci_name(dev->pdev), dev->driver);
			return -EBUSY;
		}
		pf = dev->pdev->is_virtfn ?
		     gpuctl_inventory_find_pdev(pci_physfn(dev->pdev)) : NULL;
		if (pf && !strcmp(pf->driver, GPUCTL_VFIO_DRIVER_NAME)) {
			GPUCTL_SET_ERR_MSG_FMT(info->extack, NULL,
					       "%s: its PF %s is on %s, whose unload removes its VFs",
					       pci_name(dev->pdev),
					       pci_name(pf->pdev), pf->driver);
			return -EBUSY;
		}
	}
	return 0;
}

/**
 * gpuctl_nl_alloc_del_doit() - end an allocation, or all of an owner's
 * @skb: the request
 * @info: the request
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_alloc_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *id_attr = info->attrs[GPUCTL_A_ALLOC_ID];
	bool handover = nla_get_flag(info->attrs[GPUCTL_A_ALLOC_HANDOVER]);
	char owner[GPUCTL_UUID_LEN + 1];
	struct gpuctl_alloc *alloc;
	unsigned long id;
	unsigned int n = 0;
	int ret;

	if (!id_attr == !info->attrs[GPUCTL_A_ALLOC_OWNER]) {
		NL_SET_ERR_MSG(info->extack, "give an allocation id or an owner");
		return -EINVAL;
	}
	if (handover && !id_attr) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[GPUCTL_A_ALLOC_HANDOVER],
				    "a handover names one allocation by id");
		return -EINVAL;
	}

	if (id_attr) {
		ret = gpuctl_nl_alloc_lookup(info);
		if (ret)
			return ret;
		alloc = info->user_ptr[0];
		ret = handover ? gpuctl_nl_alloc_handover_busy(info, alloc) :
				 gpuctl_nl_alloc_busy(info, alloc);
		if (ret)
			return ret;
		gpuctl_alloc_destroy(alloc, handover ?
				     GPUCTL_ALLOC_END_HANDED_OVER :
				     GPUCTL_ALLOC_END_DELETED);
		return 0;
	}

	ret = gpuctl_nl_parse_owner(info, owner);
	if (ret)
		return ret;

	/* All of them or none: check every one before the first goes. */
	for (id = 0; (alloc = gpuctl_alloc_next(&id)); id++) {
		if (strcmp(alloc->info.owner, owner))
			continue;
		ret = gpuctl_nl_alloc_busy(info, alloc);
		if (ret)
			return ret;
		n++;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[GPUCTL_A_ALLOC_OWNER],
				    "owner has no allocation");
		return -ENOENT;
	}

	for (id = 0; (alloc = gpuctl_alloc_next(&id)); id++) {
		if (!strcmp(alloc->info.owner, owner))
			gpuctl_alloc_destroy(alloc, GPUCTL_ALLOC_END_DELETED);
	}
	return 0;
}

/**
 * gpuctl_nl_alloc_get_doit() - reply with one allocation
 * @skb: the request
 * @info: the request; user_ptr[0] holds the allocation pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_alloc_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return gpuctl_nl_alloc_reply(info, info->user_ptr[0]);
}

static int gpuctl_nl_alloc_fill_next(struct sk_buff *msg, unsigned long *key,
				     bool admin)
{
	struct gpuctl_alloc *alloc = gpuctl_alloc_next(key);

	return alloc ? gpuctl_nl_alloc_fill(msg, alloc) ?: 1 : 0;
}

/**
 * gpuctl_nl_alloc_get_dumpit() - dump every allocation in id order
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_alloc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_ALLOC_GET,
			      gpuctl_nl_alloc_fill_next,
			      GPUCTL_NL_DUMP_ADMIN | GPUCTL_NL_DUMP_WATCH);
}

/**
 * gpuctl_netlink_notify_alloc() - announce an allocation on "ledger"
 * @alloc: the allocation, still in the table
 * @cmd: GPUCTL_CMD_ALLOC_NEW_NTF, _DEL_NTF or _CHANGE_NTF
 * @end: for _DEL_NTF, enum gpuctl_alloc_end; 0 otherwise
 *
 * Context: gpuctl_lock held; sleeps.
 */
void gpuctl_netlink_notify_alloc(const struct gpuctl_alloc *alloc, u8 cmd,
				 u32 end)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_ntf_new(cmd, GPUCTL_NLGRP_LEDGER, &hdr);
	if (!msg)
		return;

	if (gpuctl_nl_alloc_fill(msg, alloc) ||
	    (end && nla_put_u32(msg, GPUCTL_A_ALLOC_END, end))) {
		nlmsg_free(msg);
		return;
	}
	gpuctl_nl_ntf_send(msg, hdr, GPUCTL_NLGRP_LEDGER);
}
