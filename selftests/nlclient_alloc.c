// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The allocation ledger and tenant limits in the libnl client: alloc-new,
 * alloc-del, alloc-get, limit-set and limit-get requests, their replies
 * and notifications, and how gpuctl-nl prints them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "nlclient.h"
#include "nlclient_priv.h"

static struct nla_policy limit_policy[GPUCTL_A_LIMIT_MAX + 1] = {
	[GPUCTL_A_LIMIT_SCOPE] = { .type = NLA_U32 },
	[GPUCTL_A_LIMIT_NAME] = { .type = NLA_STRING },
	[GPUCTL_A_LIMIT_MAX_GPUS] = { .type = NLA_U32 },
	[GPUCTL_A_LIMIT_USED] = { .type = NLA_U32 },
};

static const char * const alloc_state_names[] = {
	[GPUCTL_ALLOC_STATE_IDLE] = "idle",
	[GPUCTL_ALLOC_STATE_RUNNING] = "running",
	[GPUCTL_ALLOC_STATE_LOST] = "lost",
};

static const char * const alloc_end_names[] = {
	[GPUCTL_ALLOC_END_DELETED] = "deleted",
	[GPUCTL_ALLOC_END_DETACHED] = "detached",
	[GPUCTL_ALLOC_END_HANDED_OVER] = "handed-over",
};

static const char * const numa_policy_names[] = {
	[GPUCTL_NUMA_POLICY_REQUIRED] = "required",
	[GPUCTL_NUMA_POLICY_PREFERRED] = "preferred",
	[GPUCTL_NUMA_POLICY_LEGACY] = "legacy",
};

static const char * const open_match_names[] = {
	[GPUCTL_OPEN_MATCH_OWNER] = "owner",
	[GPUCTL_OPEN_MATCH_OTHER] = "other",
	[GPUCTL_OPEN_MATCH_UNALLOCATED] = "unallocated",
	[GPUCTL_OPEN_MATCH_UNKNOWN] = "unknown",
};

static const char * const limit_scope_names[] = {
	[GPUCTL_LIMIT_SCOPE_ACCOUNT] = "account",
	[GPUCTL_LIMIT_SCOPE_PROJECT] = "project",
	[GPUCTL_LIMIT_SCOPE_DOMAIN] = "domain",
};

static const char * const alloc_attr_names[] = {
	[GPUCTL_A_ALLOC_ID] = "id",
	[GPUCTL_A_ALLOC_OWNER] = "owner",
	[GPUCTL_A_ALLOC_NAME] = "name",
	[GPUCTL_A_ALLOC_ACCOUNT] = "account",
	[GPUCTL_A_ALLOC_PROJECT] = "project",
	[GPUCTL_A_ALLOC_DOMAIN] = "domain",
	[GPUCTL_A_ALLOC_DEVICE] = "device",
	[GPUCTL_A_ALLOC_COUNT] = "count",
	[GPUCTL_A_ALLOC_MATCH] = "match",
	[GPUCTL_A_ALLOC_NUMA_NODE] = "numa-node",
	[GPUCTL_A_ALLOC_NUMA_POLICY] = "numa-policy",
	[GPUCTL_A_ALLOC_DETACH_ON_STOP] = "detach-on-stop",
	[GPUCTL_A_ALLOC_UID] = "uid",
	[GPUCTL_A_ALLOC_GID] = "gid",
	[GPUCTL_A_ALLOC_MDEV] = "mdev",
	[GPUCTL_A_ALLOC_MDEV_MADE] = "mdev-made",
};

static const char * const limit_attr_names[] = {
	[GPUCTL_A_LIMIT_SCOPE] = "scope",
	[GPUCTL_A_LIMIT_NAME] = "name",
	[GPUCTL_A_LIMIT_MAX_GPUS] = "max-gpus",
};

const char *nlc_alloc_state_name(__u32 state)
{
	return nlc_name_of(alloc_state_names, ARRAY_SIZE(alloc_state_names), state);
}

const char *nlc_alloc_end_name(__u32 end)
{
	return nlc_name_of(alloc_end_names, ARRAY_SIZE(alloc_end_names), end);
}

const char *nlc_numa_policy_name(__u32 policy)
{
	return nlc_name_of(numa_policy_names, ARRAY_SIZE(numa_policy_names),
		       policy);
}

const char *nlc_open_match_name(__u32 match)
{
	return nlc_name_of(open_match_names, ARRAY_SIZE(open_match_names), match);
}

const char *nlc_limit_scope_name(__u32 scope)
{
	return nlc_name_of(limit_scope_names, ARRAY_SIZE(limit_scope_names),
		       scope);
}

static __u32 num_of(const char * const *table, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (table[i] && !strcmp(table[i], name))
			return i;
	return 0;
}

__u32 nlc_numa_policy_num(const char *name)
{
	return num_of(numa_policy_names, ARRAY_SIZE(numa_policy_names), name);
}

__u32 nlc_limit_scope_num(const char *name)
{
	return num_of(limit_scope_names, ARRAY_SIZE(limit_scope_names), name);
}

static int get_u32(const struct nlattr *a, __u32 *v)
{
	if (nla_len(a) != 4)
		return -EPROTO;
	*v = nla_get_u32(a);
	return 0;
}

int nlc_parse_alloc(const struct nlmsghdr *nlh, struct nlc_alloc *al)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a;
	int rem, ret;

	memset(al, 0, sizeof(*al));
	/* Walked by hand: DEVICE repeats. */
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		int type = nla_type(a);

		if (type > 0 && type <= GPUCTL_A_ALLOC_MAX)
			al->present |= 1u << type;
		ret = 0;
		switch (type) {
		case GPUCTL_A_ALLOC_ID:
			ret = get_u32(a, &al->id);
			break;
		case GPUCTL_A_ALLOC_OWNER:
			nla_strlcpy(al->owner, a, sizeof(al->owner));
			break;
		case GPUCTL_A_ALLOC_NAME:
			nla_strlcpy(al->name, a, sizeof(al->name));
			break;
		case GPUCTL_A_ALLOC_ACCOUNT:
			nla_strlcpy(al->account, a, sizeof(al->account));
			break;
		case GPUCTL_A_ALLOC_PROJECT:
			nla_strlcpy(al->project, a, sizeof(al->project));
			break;
		case GPUCTL_A_ALLOC_DOMAIN:
			nla_strlcpy(al->domain, a, sizeof(al->domain));
			break;
		case GPUCTL_A_ALLOC_DEVICE:
			if (al->ndevices >= NLC_MAX_MEMBERS)
				return -E2BIG;
			nla_strlcpy(al->devices[al->ndevices++], a, NLC_ADDR_LEN);
			break;
		case GPUCTL_A_ALLOC_DETACH_ON_STOP:
			al->detach_on_stop = true;
			break;
		case GPUCTL_A_ALLOC_UID:
			ret = get_u32(a, &al->uid);
			break;
		case GPUCTL_A_ALLOC_GID:
			ret = get_u32(a, &al->gid);
			break;
		case GPUCTL_A_ALLOC_STATE:
			ret = get_u32(a, &al->state);
			break;
		case GPUCTL_A_ALLOC_STATE_REASON:
			nla_strlcpy(al->state_reason, a, sizeof(al->state_reason));
			break;
		case GPUCTL_A_ALLOC_GPUS:
			ret = get_u32(a, &al->gpus);
			break;
		case GPUCTL_A_ALLOC_END:
			ret = get_u32(a, &al->end);
			break;
		case GPUCTL_A_ALLOC_MDEV:
		case GPUCTL_A_ALLOC_MDEV_MADE:
			if (al->nmdevs >= NLC_MAX_MEMBERS)
				return -E2BIG;
			al->mdev_made[al->nmdevs] =
				type == GPUCTL_A_ALLOC_MDEV_MADE;
			nla_strlcpy(al->mdevs[al->nmdevs++], a, NLC_UUID_LEN);
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

int nlc_parse_limit(const struct nlmsghdr *nlh, struct nlc_limit *l)
{
	struct nlattr *tb[GPUCTL_A_LIMIT_MAX + 1];
	int i;

	memset(l, 0, sizeof(*l));
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, GPUCTL_A_LIMIT_MAX,
			  limit_policy))
		return -EPROTO;
	for (i = 1; i <= GPUCTL_A_LIMIT_MAX; i++)
		if (tb[i])
			l->present |= 1u << i;
	if (tb[GPUCTL_A_LIMIT_SCOPE])
		l->scope = nla_get_u32(tb[GPUCTL_A_LIMIT_SCOPE]);
	if (tb[GPUCTL_A_LIMIT_NAME])
		nla_strlcpy(l->name, tb[GPUCTL_A_LIMIT_NAME], sizeof(l->name));
	if (tb[GPUCTL_A_LIMIT_MAX_GPUS])
		l->max_gpus = nla_get_u32(tb[GPUCTL_A_LIMIT_MAX_GPUS]);
	if (tb[GPUCTL_A_LIMIT_USED])
		l->used = nla_get_u32(tb[GPUCTL_A_LIMIT_USED]);
	return 0;
}

static int one_alloc_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
			void *arg)
{
	return nlc_parse_alloc(nlh, arg);
}

static int one_limit_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
			void *arg)
{
	return nlc_parse_limit(nlh, arg);
}

void nlc_alloc_req_set(struct nlc_alloc_req *req, int attr, __u32 val)
{
	switch (attr) {
	case GPUCTL_A_ALLOC_ID:
		req->id = val;
		break;
	case GPUCTL_A_ALLOC_COUNT:
		req->count = val;
		break;
	case GPUCTL_A_ALLOC_NUMA_NODE:
		req->numa_node = val;
		break;
	case GPUCTL_A_ALLOC_NUMA_POLICY:
		req->numa_policy = val;
		break;
	case GPUCTL_A_ALLOC_UID:
		req->uid = val;
		break;
	case GPUCTL_A_ALLOC_GID:
		req->gid = val;
		break;
	}
	req->present |= 1u << attr;
}

static bool req_has(const struct nlc_alloc_req *req, int attr)
{
	return req->present & (1u << attr);
}

static int put_alloc_req(struct nl_msg *msg, const struct nlc_alloc_req *req)
{
	static const struct {
		int attr;
		size_t off;
	} u32s[] = {
		{ GPUCTL_A_ALLOC_ID, offsetof(struct nlc_alloc_req, id) },
		{ GPUCTL_A_ALLOC_COUNT, offsetof(struct nlc_alloc_req, count) },
		{ GPUCTL_A_ALLOC_NUMA_NODE,
		  offsetof(struct nlc_alloc_req, numa_node) },
		{ GPUCTL_A_ALLOC_NUMA_POLICY,
		  offsetof(struct nlc_alloc_req, numa_policy) },
		{ GPUCTL_A_ALLOC_UID, offsetof(struct nlc_alloc_req, uid) },
		{ GPUCTL_A_ALLOC_GID, offsetof(struct nlc_alloc_req, gid) },
	};
	const struct {
		int attr;
		const char *s;
	} strs[] = {
		{ GPUCTL_A_ALLOC_OWNER, req->owner },
		{ GPUCTL_A_ALLOC_NAME, req->name },
		{ GPUCTL_A_ALLOC_ACCOUNT, req->account },
		{ GPUCTL_A_ALLOC_PROJECT, req->project },
		{ GPUCTL_A_ALLOC_DOMAIN, req->domain },
		{ GPUCTL_A_ALLOC_MATCH, req->match },
	};
	size_t i;
	int d;

	for (i = 0; i < ARRAY_SIZE(u32s); i++)
		if (req_has(req, u32s[i].attr) &&
		    nla_put_u32(msg, u32s[i].attr,
				*(const __u32 *)((const char *)req +
						 u32s[i].off)))
			return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(strs); i++)
		if (strs[i].s && nla_put_string(msg, strs[i].attr, strs[i].s))
			return -EMSGSIZE;
	for (d = 0; d < req->ndevices; d++)
		if (nla_put_string(msg, GPUCTL_A_ALLOC_DEVICE, req->devices[d]))
			return -EMSGSIZE;
	for (d = 0; d < req->nmdevs; d++)
		if (nla_put_string(msg, GPUCTL_A_ALLOC_MDEV, req->mdevs[d]))
			return -EMSGSIZE;
	if (req_has(req, GPUCTL_A_ALLOC_DETACH_ON_STOP) &&
	    nla_put_flag(msg, GPUCTL_A_ALLOC_DETACH_ON_STOP))
		return -EMSGSIZE;
	return 0;
}

int nlc_alloc_new(struct nlc *c, const struct nlc_alloc_req *req,
		  struct nlc_alloc *a)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_ALLOC_NEW, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	if (put_alloc_req(msg, req)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_alloc_cb, a, NULL);
}

int nlc_alloc_del(struct nlc *c, const __u32 *id, const char *owner)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_ALLOC_DEL, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	if ((id && nla_put_u32(msg, GPUCTL_A_ALLOC_ID, *id)) ||
	    (owner && nla_put_string(msg, GPUCTL_A_ALLOC_OWNER, owner))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, NULL, NULL, NULL);
}

int nlc_alloc_get(struct nlc *c, __u32 id, struct nlc_alloc *a)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_ALLOC_GET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	if (nla_put_u32(msg, GPUCTL_A_ALLOC_ID, id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_alloc_cb, a, NULL);
}

static int put_limit_key(struct nl_msg *msg, __u32 scope, const char *name)
{
	if ((scope && nla_put_u32(msg, GPUCTL_A_LIMIT_SCOPE, scope)) ||
	    (name && nla_put_string(msg, GPUCTL_A_LIMIT_NAME, name)))
		return -EMSGSIZE;
	return 0;
}

int nlc_limit_set(struct nlc *c, __u32 scope, const char *name,
		  const __u32 *max_gpus, struct nlc_limit *l)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_LIMIT_SET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	if (put_limit_key(msg, scope, name) ||
	    (max_gpus &&
	     nla_put_u32(msg, GPUCTL_A_LIMIT_MAX_GPUS, *max_gpus))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_limit_cb, l, NULL);
}

int nlc_limit_get(struct nlc *c, __u32 scope, const char *name,
		  struct nlc_limit *l)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_LIMIT_GET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	if (put_limit_key(msg, scope, name)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_limit_cb, l, NULL);
}

static int parse_alloc_slot(const struct nlmsghdr *nlh, void *slot)
{
	return nlc_parse_alloc(nlh, slot);
}

static int parse_limit_slot(const struct nlmsghdr *nlh, void *slot)
{
	return nlc_parse_limit(nlh, slot);
}

int nlc_alloc_dump(struct nlc *c, struct nlc_alloc **allocs, int *n,
		   struct nlc_dump_info *info)
{
	return nlc_dump(c, GPUCTL_CMD_ALLOC_GET, sizeof(**allocs),
			parse_alloc_slot, (void **)allocs, n, info);
}

int nlc_limit_dump(struct nlc *c, struct nlc_limit **limits, int *n,
		   struct nlc_dump_info *info)
{
	return nlc_dump(c, GPUCTL_CMD_LIMIT_GET, sizeof(**limits),
			parse_limit_slot, (void **)limits, n, info);
}

bool nlc_is_alloc_cmd(__u8 cmd)
{
	return cmd == GPUCTL_CMD_ALLOC_NEW_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_DEL_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_CHANGE_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_NEW || cmd == GPUCTL_CMD_ALLOC_GET;
}

const char *nlc_alloc_attr_name(__u8 cmd, int type)
{
	switch (cmd) {
	case GPUCTL_CMD_ALLOC_NEW:
	case GPUCTL_CMD_ALLOC_DEL:
	case GPUCTL_CMD_ALLOC_GET:
		return nlc_name_of(alloc_attr_names,
				   ARRAY_SIZE(alloc_attr_names), type);
	case GPUCTL_CMD_LIMIT_SET:
	case GPUCTL_CMD_LIMIT_GET:
		return nlc_name_of(limit_attr_names,
				   ARRAY_SIZE(limit_attr_names), type);
	default:
		return NULL;
	}
}

/*
 * Labels are printed as given: tests use labels without spaces. The state
 * reason, which has spaces, ends the line.
 */
void nlc_print_alloc(FILE *f, const char *prefix, const struct nlc_alloc *a)
{
	static const struct {
		int attr;
		const char *key;
		size_t off;
	} labels[] = {
		{ GPUCTL_A_ALLOC_OWNER, "owner", offsetof(struct nlc_alloc, owner) },
		{ GPUCTL_A_ALLOC_NAME, "name", offsetof(struct nlc_alloc, name) },
		{ GPUCTL_A_ALLOC_ACCOUNT, "account",
		  offsetof(struct nlc_alloc, account) },
		{ GPUCTL_A_ALLOC_PROJECT, "project",
		  offsetof(struct nlc_alloc, project) },
		{ GPUCTL_A_ALLOC_DOMAIN, "domain",
		  offsetof(struct nlc_alloc, domain) },
	};
	size_t i;
	int d;

	fprintf(f, "%s id=%u", prefix, a->id);
	for (i = 0; i < ARRAY_SIZE(labels); i++)
		if (NLC_HAS(a, labels[i].attr))
			fprintf(f, " %s=%s", labels[i].key,
				(const char *)a + labels[i].off);
	fprintf(f, " devices=");
	for (d = 0; d < a->ndevices; d++)
		fprintf(f, "%s%s", d ? "," : "", a->devices[d]);
	if (NLC_HAS(a, GPUCTL_A_ALLOC_GPUS))
		fprintf(f, " gpus=%u", a->gpus);
	if (NLC_HAS(a, GPUCTL_A_ALLOC_STATE))
		fprintf(f, " state=%s", nlc_alloc_state_name(a->state));
	if (a->detach_on_stop)
		fprintf(f, " detach_on_stop=1");
	if (NLC_HAS(a, GPUCTL_A_ALLOC_UID))
		fprintf(f, " uid=%u", a->uid);
	if (NLC_HAS(a, GPUCTL_A_ALLOC_GID))
		fprintf(f, " gid=%u", a->gid);
	if (NLC_HAS(a, GPUCTL_A_ALLOC_END))
		fprintf(f, " end=%s", nlc_alloc_end_name(a->end));
	if (NLC_HAS(a, GPUCTL_A_ALLOC_STATE_REASON))
		fprintf(f, " state_reason=%s", a->state_reason);
	fputc('\n', f);
}

void nlc_print_limit(FILE *f, const char *prefix, const struct nlc_limit *l)
{
	fprintf(f, "%s", prefix);
	if (NLC_HAS(l, GPUCTL_A_LIMIT_SCOPE))
		fprintf(f, " scope=%s", nlc_limit_scope_name(l->scope));
	if (NLC_HAS(l, GPUCTL_A_LIMIT_NAME))
		fprintf(f, " name=%s", l->name);
	if (NLC_HAS(l, GPUCTL_A_LIMIT_MAX_GPUS))
		fprintf(f, " max_gpus=%u", l->max_gpus);
	if (NLC_HAS(l, GPUCTL_A_LIMIT_USED))
		fprintf(f, " used=%u", l->used);
	fputc('\n', f);
}
