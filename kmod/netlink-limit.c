// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Netlink requests on tenant limits: limit-set and limit-get. Like the
 * ledger's (netlink-alloc.c), they need CAP_NET_ADMIN (GENL_ADMIN_PERM in
 * the generated ops table) and CAP_SYS_ADMIN (pre_doit and gpuctl_nl_dump()
 * check it), reads too: a limit names a tenant. The table itself is
 * limit.c's, under gpuctl_lock, which pre_doit or gpuctl_nl_dump() holds
 * around every handler here.
 */

#include <net/genetlink.h>
#include <uapi/linux/gpuctl.h>

#include "alloc.h"
#include "compat.h"
#include "limit.h"
#include "netlink.h"
#include "netlink-gen.h"

static const char *const gpuctl_nl_label_names[GPUCTL_NR_LABELS] = {
	"account", "project", "domain",
};

static int gpuctl_nl_limit_fill(struct sk_buff *msg,
				const struct gpuctl_limit *limit)
{
	if (nla_put_u32(msg, GPUCTL_A_LIMIT_SCOPE, limit->scope) ||
	    nla_put_string(msg, GPUCTL_A_LIMIT_NAME, limit->name) ||
	    nla_put_u32(msg, GPUCTL_A_LIMIT_MAX_GPUS, limit->max) ||
	    nla_put_u32(msg, GPUCTL_A_LIMIT_USED,
			gpuctl_limit_used(limit->scope, limit->name)))
		return -EMSGSIZE;
	return 0;
}

static int gpuctl_nl_limit_reply(struct genl_info *info,
				 const struct gpuctl_limit *limit)
{
	struct sk_buff *msg;
	void *hdr;

	msg = gpuctl_nl_reply_new(info, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	return gpuctl_nl_reply_send(info, msg, hdr, gpuctl_nl_limit_fill(msg, limit));
}

/* Scope and name of a limit request; the name may not be empty. */
static int gpuctl_nl_limit_key(struct genl_info *info, u32 *scope,
			       const char **name)
{
	if (GENL_REQ_ATTR_CHECK(info, GPUCTL_A_LIMIT_SCOPE) ||
	    GENL_REQ_ATTR_CHECK(info, GPUCTL_A_LIMIT_NAME))
		return -EINVAL;

	*scope = nla_get_u32(info->attrs[GPUCTL_A_LIMIT_SCOPE]);
	*name = nla_data(info->attrs[GPUCTL_A_LIMIT_NAME]);
	if (!**name) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GPUCTL_A_LIMIT_NAME],
				    "empty name");
		return -EINVAL;
	}
	return 0;
}

/**
 * gpuctl_nl_limit_lookup() - resolve the limit of a limit-get request
 * @info: the request; user_ptr[0] is set to the limit
 *
 * Context: gpuctl_lock held (pre_doit).
 * Return: 0, -EINVAL or -ENOENT.
 */
int gpuctl_nl_limit_lookup(struct genl_info *info)
{
	struct gpuctl_limit *limit;
	const char *name;
	u32 scope;
	int ret;

	ret = gpuctl_nl_limit_key(info, &scope, &name);
	if (ret)
		return ret;

	limit = gpuctl_limit_find(scope, name);
	if (!limit) {
		GPUCTL_SET_ERR_MSG_FMT(info->extack,
				       info->attrs[GPUCTL_A_LIMIT_NAME],
				       "no limit on %s %s",
				       gpuctl_nl_label_names[scope - 1], name);
		return -ENOENT;
	}
	info->user_ptr[0] = limit;
	return 0;
}

/**
 * gpuctl_nl_limit_set_doit() - set a limit and reply with it, or remove it
 * @skb: the request
 * @info: the request
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_limit_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *max = info->attrs[GPUCTL_A_LIMIT_MAX_GPUS];
	struct gpuctl_limit *limit;
	const char *name;
	u32 scope;
	int ret;

	if (!max) {
		ret = gpuctl_nl_limit_lookup(info);
		if (ret)
			return ret;
		gpuctl_limit_del(info->user_ptr[0]);
		return 0;
	}

	ret = gpuctl_nl_limit_key(info, &scope, &name);
	if (ret)
		return ret;

	limit = gpuctl_limit_set(scope, name, nla_get_u32(max));
	if (IS_ERR(limit))
		return PTR_ERR(limit);
	return gpuctl_nl_limit_reply(info, limit);
}

/**
 * gpuctl_nl_limit_get_doit() - reply with one limit
 * @skb: the request
 * @info: the request; user_ptr[0] holds the limit pre_doit found
 *
 * Context: gpuctl_lock held by pre_doit.
 * Return: 0 or a negative errno.
 */
int gpuctl_nl_limit_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return gpuctl_nl_limit_reply(info, info->user_ptr[0]);
}

static int gpuctl_nl_limit_fill_next(struct sk_buff *msg, unsigned long *key,
				     bool admin)
{
	struct gpuctl_limit *limit = gpuctl_limit_next(key);

	return limit ? gpuctl_nl_limit_fill(msg, limit) ?: 1 : 0;
}

/**
 * gpuctl_nl_limit_get_dumpit() - dump every limit
 * @skb: the message to fill
 * @cb: the dump
 *
 * Context: takes gpuctl_lock.
 * Return: see gpuctl_nl_dump().
 */
int gpuctl_nl_limit_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return gpuctl_nl_dump(skb, cb, GPUCTL_CMD_LIMIT_GET,
			      gpuctl_nl_limit_fill_next, GPUCTL_NL_DUMP_ADMIN);
}
