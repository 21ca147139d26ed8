// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Netlink requests and events on mdev instances: mdev-get, mdev-add-ntf
 * and mdev-del-ntf. The instances are inventory, open to every user like
 * the devices; only the allocation that holds one, which names a tenant's
 * VM, is for CAP_SYS_ADMIN, as a device's is.
 */

#include <linux/uuid.h>
#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "inventory.h"
#include "mdev.h"
#include "netlink.h"
#include "netlink-gen.h"

static int gpuctl_nl_mdev_fill(struct sk_buff *msg, const struct gpuctl_mdev *m,
			       bool admin)
{
	char uuid[UUID_STRING_LEN + 1];

	snprintf(uuid, sizeof(uuid), "%pUl", &m->uuid);
	if (nla_put_string(msg, GPUCTL_A_MDEV_UUID, uuid) ||
	    nla_put_string(msg, GPUCTL_A_MDEV_TYPE, m->type) ||
	    nla_put_string(msg, GPUCTL_A_MDEV_TYPE_NAME, m->type_name) ||
	    nla_put_string(msg, GPUCTL_A_MDEV_PARENT, m->parent))
		return -EMSGSIZE;
	if (m->group >= 0 &&
	    nla_put_u32(msg, GPUCTL_A_MDEV_IOMMU_GROUP, m->group))
		return -EMSGSIZE;
	if (m->driver[0] &&
	    nla_put_string(msg, GPUCTL_A_MDEV_DRIVER, m->driver))
		return -EMSGSIZE;
	if (!admin)
		return 0;
	if ((m->alloc &&
	     nla_put_u32(msg, GPUCTL_A_MDEV_ALLOCATION, m->alloc->info.id)) ||
	    nla_put_u8(msg, GPUCTL_A_MDEV_OPEN, m->open))
		return -EMSGSIZE;
	return 0;
}

/*
 * A reply or a dump also says what the instance's VFIO device can do for
 * migration; events do not, as for devices (gpuctl_nl_dev_fill_reply()).
 */
static int gpuctl_nl_mdev_fill_reply(struct sk_buff *msg,
				     const struct gpuctl_mdev *m, bool admin)
{
	int ret = gpuctl_nl_mdev_fill(msg, m, admin);

	if (!ret && m->mig.known &&
	    nla_put_u32(msg, GPUCTL_A_MDEV_MIGRATION, m->mig.caps))
		ret = -EMSGSIZE;
	return ret;
}

/**
 * gpuctl_nl_mdev_lookup() - resolve the request's UUID into user_ptr[0]
 * @info: the request
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0, -EINVAL for a missing or malformed UUID, -ENODEV for none.
 */
int gpuctl_nl_mdev_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[GPUCTL_A_MDEV_UUID];
	struct gpuctl_mdev *m;
	guid_t uuid;

	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_MDEV_UUID))
		return -EINVAL;

	if (guid_parse(nla_data(attr), &uuid)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "malformed uuid, expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
		return -EINVAL;
	}

	m = gpuctl_mdev_find(&uuid);
	if (!m) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such mdev");
		return -ENODEV;
	}
	info->user_ptr[0] = m;
	return 0;
}

/**
 * gpuctl_nl_mdev_get_doit() - reply with one mdev instance
 * @skb: the request
 * @info: the request; user_ptr[0] holds the instance pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_mdev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr,
				    gpuctl_nl_mdev_fill_reply(msg, info->user_ptr[0],
							      gpuctl_nl_admin(skb)));
}

static int gpuctl_nl_mdev_fill_next(struct sk_buff *msg, unsigned long *key,
				    bool admin)
{
	struct gpuctl_mdev *m = gpuctl_mdev_next(key);

	return m ? gpuctl_nl_mdev_fill_reply(msg, m, admin) ?: 1 : 0;
}

/**
 * gpuctl_nl_mdev_get_dumpit() - dump every mdev instance
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_mdev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_MDEV_GET,
			      gpuctl_nl_mdev_fill_next, GPUCTL_NL_DUMP_WATCH);
}

/**
 * gpuctl_netlink_notify_mdev() - announce an mdev instance
 * @m: the instance
 * @cmd: GPUCTL_CMD_MDEV_ADD_NTF or _DEL_NTF
 *
 * On both groups, as device events: "monitor" for everyone, "ledger" for
 * the listeners that follow everything there, with the allocation.
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_netlink_notify_mdev(const struct gpuctl_mdev *m, u8 cmd)
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
		if (gpuctl_nl_mdev_fill(msg, m,
					groups[i] == GPUCTL_NLGRP_LEDGER)) {
			nlmsg_free(msg);
			continue;
		}
		gpuctl_nl_ntf_send(msg, hdr, groups[i]);
	}
}
