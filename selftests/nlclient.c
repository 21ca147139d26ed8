// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * libnl-genl-3 client for the gpuctl family. libnl builds messages, resolves
 * the family and parses attributes; the receive loop is our own so that the
 * tests see every datagram, every NLM_F_DUMP_INTR flag and every extack TLV,
 * which libnl's callback machinery hides.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nlclient.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static struct nla_policy dev_policy[GPUCTL_A_DEV_MAX + 1] = {
	[GPUCTL_A_DEV_ADDRESS] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_VENDOR_ID] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_DEVICE_ID] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_CLASS] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_REVISION] = { .type = NLA_U8 },
	[GPUCTL_A_DEV_DRIVER] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_IOMMU_GROUP] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_NUMA_NODE] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_PCI_ROOT] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_SRIOV_TOTALVFS] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_SRIOV_NUMVFS] = { .type = NLA_U16 },
	[GPUCTL_A_DEV_PHYSFN] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_ROLE] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_RESERVED] = { .type = NLA_U8 },
	[GPUCTL_A_DEV_STATE] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_STATE_REASON] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_RULE] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_ACTION] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_ALLOCATION] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_HOLDER_PID] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_HOLDER_COMM] = { .type = NLA_STRING },
	[GPUCTL_A_DEV_HOLDER_UID] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_HOLDER_SINCE] = { .type = NLA_U64 },
	[GPUCTL_A_DEV_OPEN_MATCH] = { .type = NLA_U32 },
	[GPUCTL_A_DEV_REFUSED] = { .type = NLA_STRING },
};

static struct nla_policy limit_policy[GPUCTL_A_LIMIT_MAX + 1] = {
	[GPUCTL_A_LIMIT_SCOPE] = { .type = NLA_U32 },
	[GPUCTL_A_LIMIT_NAME] = { .type = NLA_STRING },
	[GPUCTL_A_LIMIT_MAX_GPUS] = { .type = NLA_U32 },
	[GPUCTL_A_LIMIT_USED] = { .type = NLA_U32 },
};

static const char * const cmd_names[] = {
	[GPUCTL_CMD_DEV_GET] = "dev-get",
	[GPUCTL_CMD_GROUP_GET] = "group-get",
	[GPUCTL_CMD_DEV_ADD_NTF] = "dev-add-ntf",
	[GPUCTL_CMD_DEV_DEL_NTF] = "dev-del-ntf",
	[GPUCTL_CMD_DEV_CHANGE_NTF] = "dev-change-ntf",
	[GPUCTL_CMD_RULE_NEW] = "rule-new",
	[GPUCTL_CMD_RULE_DEL] = "rule-del",
	[GPUCTL_CMD_RULE_GET] = "rule-get",
	[GPUCTL_CMD_RULE_NEW_NTF] = "rule-new-ntf",
	[GPUCTL_CMD_RULE_DEL_NTF] = "rule-del-ntf",
	[GPUCTL_CMD_ALLOC_NEW] = "alloc-new",
	[GPUCTL_CMD_ALLOC_DEL] = "alloc-del",
	[GPUCTL_CMD_ALLOC_GET] = "alloc-get",
	[GPUCTL_CMD_ALLOC_NEW_NTF] = "alloc-new-ntf",
	[GPUCTL_CMD_ALLOC_DEL_NTF] = "alloc-del-ntf",
	[GPUCTL_CMD_ALLOC_CHANGE_NTF] = "alloc-change-ntf",
	[GPUCTL_CMD_LIMIT_SET] = "limit-set",
	[GPUCTL_CMD_LIMIT_GET] = "limit-get",
	[GPUCTL_CMD_VFIO_OPEN_NTF] = "vfio-open-ntf",
	[GPUCTL_CMD_VFIO_CLOSE_NTF] = "vfio-close-ntf",
};

static const char * const role_names[] = {
	[GPUCTL_DEV_ROLE_GPU] = "gpu",
	[GPUCTL_DEV_ROLE_COMPANION] = "companion",
	[GPUCTL_DEV_ROLE_FOREIGN] = "foreign",
	[GPUCTL_DEV_ROLE_BRIDGE] = "bridge",
};

static const char * const state_names[] = {
	[GPUCTL_DEV_STATE_FREE] = "free",
	[GPUCTL_DEV_STATE_RESERVED] = "reserved",
	[GPUCTL_DEV_STATE_HELD] = "held",
	[GPUCTL_DEV_STATE_BLOCKED] = "blocked",
};

static const char * const action_names[] = {
	[GPUCTL_DEV_ACTION_CLAIMED] = "claimed",
	[GPUCTL_DEV_ACTION_BOUND] = "bound",
	[GPUCTL_DEV_ACTION_RESTORED] = "restored",
	[GPUCTL_DEV_ACTION_TAKEN] = "taken",
	[GPUCTL_DEV_ACTION_RELEASED] = "released",
	[GPUCTL_DEV_ACTION_BLOCKED] = "blocked",
};

static const char * const source_names[] = {
	[GPUCTL_RULE_SOURCE_PARAM] = "param",
	[GPUCTL_RULE_SOURCE_NETLINK] = "netlink",
};

static const char * const alloc_state_names[] = {
	[GPUCTL_ALLOC_STATE_IDLE] = "idle",
	[GPUCTL_ALLOC_STATE_RUNNING] = "running",
	[GPUCTL_ALLOC_STATE_LOST] = "lost",
};

static const char * const alloc_end_names[] = {
	[GPUCTL_ALLOC_END_DELETED] = "deleted",
	[GPUCTL_ALLOC_END_DETACHED] = "detached",
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

/* Attribute names as the spec spells them, for extack offsets. */
static const char * const dev_attr_names[] = {
	[GPUCTL_A_DEV_ADDRESS] = "address",
};

static const char * const group_attr_names[] = {
	[GPUCTL_A_GROUP_ID] = "id",
};

static const char * const rule_attr_names[] = {
	[GPUCTL_A_RULE_ID] = "id",
	[GPUCTL_A_RULE_MATCH] = "match",
	[GPUCTL_A_RULE_DRIVER] = "driver",
	[GPUCTL_A_RULE_FORCE] = "force",
	[GPUCTL_A_RULE_TAKE] = "take",
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
};

static const char * const limit_attr_names[] = {
	[GPUCTL_A_LIMIT_SCOPE] = "scope",
	[GPUCTL_A_LIMIT_NAME] = "name",
	[GPUCTL_A_LIMIT_MAX_GPUS] = "max-gpus",
};

static const char *name_of(const char * const *table, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && table[v] ? table[v] : "unknown";
}

const char *nlc_cmd_name(__u8 cmd)
{
	return name_of(cmd_names, ARRAY_SIZE(cmd_names), cmd);
}

const char *nlc_role_name(__u32 role)
{
	return name_of(role_names, ARRAY_SIZE(role_names), role);
}

const char *nlc_state_name(__u32 state)
{
	return name_of(state_names, ARRAY_SIZE(state_names), state);
}

const char *nlc_action_name(__u32 action)
{
	return name_of(action_names, ARRAY_SIZE(action_names), action);
}

const char *nlc_source_name(__u32 source)
{
	return name_of(source_names, ARRAY_SIZE(source_names), source);
}

const char *nlc_alloc_state_name(__u32 state)
{
	return name_of(alloc_state_names, ARRAY_SIZE(alloc_state_names), state);
}

const char *nlc_alloc_end_name(__u32 end)
{
	return name_of(alloc_end_names, ARRAY_SIZE(alloc_end_names), end);
}

const char *nlc_numa_policy_name(__u32 policy)
{
	return name_of(numa_policy_names, ARRAY_SIZE(numa_policy_names),
		       policy);
}

const char *nlc_open_match_name(__u32 match)
{
	return name_of(open_match_names, ARRAY_SIZE(open_match_names), match);
}

const char *nlc_limit_scope_name(__u32 scope)
{
	return name_of(limit_scope_names, ARRAY_SIZE(limit_scope_names),
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

/* libnl reports its own error codes; the tests reason in errno. */
static int nle_to_errno(int nle)
{
	switch (-nle) {
	case NLE_NOMEM:
		return -ENOBUFS;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_INTR:
		return -EINTR;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	default:
		return -EIO;
	}
}

int nlc_open(struct nlc *c)
{
	int one = 1;
	int ret;

	memset(c, 0, sizeof(*c));
	c->bad_offset = -1;
	c->bad_attr = -1;
	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -ENOMEM;
	ret = genl_connect(c->sk);
	if (ret < 0) {
		ret = nle_to_errno(ret);
		goto err_free;
	}
	nl_socket_disable_auto_ack(c->sk);
	nl_socket_disable_seq_check(c->sk);
	nl_socket_enable_msg_peek(c->sk);
	/* Ask for the kernel's error text, without the echoed request. */
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	c->family = genl_ctrl_resolve(c->sk, GPUCTL_FAMILY_NAME);
	if (c->family < 0) {
		ret = -ENOENT;
		goto err_free;
	}
	return 0;

err_free:
	nl_socket_free(c->sk);
	c->sk = NULL;
	return ret;
}

void nlc_close(struct nlc *c)
{
	if (c->sk)
		nl_socket_free(c->sk);
	free(c->buf);
	c->sk = NULL;
	c->buf = NULL;
}

int nlc_set_rcvbuf(struct nlc *c, int bytes)
{
	return setsockopt(nl_socket_get_fd(c->sk), SOL_SOCKET, SO_RCVBUF,
			  &bytes, sizeof(bytes)) ? -errno : 0;
}

struct nl_msg *nlc_msg_new(struct nlc *c, __u8 cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, flags,
			 cmd, GPUCTL_FAMILY_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Sends and frees @msg. */
int nlc_send(struct nlc *c, struct nl_msg *msg)
{
	int ret = nl_send_auto(c->sk, msg);
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	c->seq = nlh->nlmsg_seq;
	c->reqlen = nlh->nlmsg_len < sizeof(c->req) ? nlh->nlmsg_len : 0;
	memcpy(c->req, nlh, c->reqlen);
	nlmsg_free(msg);
	return ret < 0 ? nle_to_errno(ret) : 0;
}

static void reset_error(struct nlc *c)
{
	c->err = 0;
	c->extack[0] = '\0';
	c->miss_type = 0;
	c->bad_offset = -1;
	c->bad_attr = -1;
}

/* The type of the request's top-level attribute at the kernel's offset. */
static void find_bad_attr(struct nlc *c)
{
	const struct nlattr *a;

	if (c->bad_offset < (int)(NLMSG_HDRLEN + GENL_HDRLEN) ||
	    c->bad_offset + (int)sizeof(*a) > c->reqlen)
		return;
	a = (const struct nlattr *)(c->req + c->bad_offset);
	c->bad_attr = nla_type(a);
}

static void parse_ext_ack(struct nlc *c, void *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strlcpy(c->extack, tb[NLMSGERR_ATTR_MSG], sizeof(c->extack));
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		c->miss_type = nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	if (tb[NLMSGERR_ATTR_OFFS]) {
		c->bad_offset = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
		find_bad_attr(c);
	}
}

/* NLMSG_ERROR: error 0 is the ACK of a do request. */
static void handle_error(struct nlc *c, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = nlmsg_data(nlh);
	int off = sizeof(*e);

	if (nlmsg_datalen(nlh) < (int)sizeof(*e)) {
		c->err = EPROTO;
		return;
	}
	c->err = -e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		parse_ext_ack(c, (char *)e + NLMSG_ALIGN(off),
			      nlmsg_datalen(nlh) - NLMSG_ALIGN(off));
}

/* NLMSG_DONE carries the dump's final errno, and extack since 4.20. */
static void handle_done(struct nlc *c, const struct nlmsghdr *nlh)
{
	const int *err = nlmsg_data(nlh);

	if (nlmsg_datalen(nlh) < (int)sizeof(int))
		return;
	c->err = -*err;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		parse_ext_ack(c, (char *)err + NLMSG_ALIGN(sizeof(int)),
			      nlmsg_datalen(nlh) - NLMSG_ALIGN(sizeof(int)));
}

static int recv_datagram(struct nlc *c, unsigned char **buf)
{
	struct sockaddr_nl peer;
	int n;

	do {
		n = nl_recv(c->sk, &peer, buf, NULL);
	} while (n == -NLE_INTR);
	if (n < 0)
		return nle_to_errno(n);
	if (n == 0)
		return -ECONNRESET;
	return n;
}

int nlc_recv_reply(struct nlc *c, nlc_msg_cb cb, void *arg,
		   struct nlc_dump_info *info)
{
	struct nlc_dump_info dummy;
	int cb_ret = 0;
	bool done = false;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	reset_error(c);
	while (!done) {
		unsigned char *buf = NULL;
		struct nlmsghdr *nlh;
		bool data = false;
		int n = recv_datagram(c, &buf);

		if (n < 0)
			return n;
		for (nlh = (struct nlmsghdr *)buf; nlmsg_ok(nlh, n);
		     nlh = nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_seq != c->seq)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				info->intr = true;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				handle_done(c, nlh);
				done = true;
				break;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				handle_error(c, nlh);
				done = true;
				break;
			}
			if (nlh->nlmsg_type != c->family)
				continue;
			data = true;
			info->messages++;
			if (cb && !cb_ret) {
				struct genlmsghdr *g = nlmsg_data(nlh);

				cb_ret = cb(c, g->cmd, nlh, arg);
			}
		}
		if (data)
			info->datagrams++;
		free(buf);
	}
	if (c->err)
		return -c->err;
	return cb_ret;
}

int nlc_exchange(struct nlc *c, struct nl_msg *msg, nlc_msg_cb cb, void *arg,
		 struct nlc_dump_info *info)
{
	int ret = nlc_send(c, msg);

	if (ret)
		return ret;
	return nlc_recv_reply(c, cb, arg, info);
}

int nlc_parse_dev(const struct nlmsghdr *nlh, struct nlc_dev *d)
{
	struct nlattr *tb[GPUCTL_A_DEV_MAX + 1];
	int i, ret;

	memset(d, 0, sizeof(*d));
	ret = genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, GPUCTL_A_DEV_MAX,
			    dev_policy);
	if (ret)
		return -EPROTO;
	for (i = 1; i <= GPUCTL_A_DEV_MAX; i++)
		if (tb[i])
			d->present |= 1u << i;
	if (tb[GPUCTL_A_DEV_ADDRESS])
		nla_strlcpy(d->address, tb[GPUCTL_A_DEV_ADDRESS],
			    sizeof(d->address));
	if (tb[GPUCTL_A_DEV_VENDOR_ID])
		d->vendor_id = nla_get_u16(tb[GPUCTL_A_DEV_VENDOR_ID]);
	if (tb[GPUCTL_A_DEV_DEVICE_ID])
		d->device_id = nla_get_u16(tb[GPUCTL_A_DEV_DEVICE_ID]);
	if (tb[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID])
		d->subsystem_vendor_id =
			nla_get_u16(tb[GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID]);
	if (tb[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID])
		d->subsystem_device_id =
			nla_get_u16(tb[GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID]);
	if (tb[GPUCTL_A_DEV_CLASS])
		d->class = nla_get_u32(tb[GPUCTL_A_DEV_CLASS]);
	if (tb[GPUCTL_A_DEV_REVISION])
		d->revision = nla_get_u8(tb[GPUCTL_A_DEV_REVISION]);
	if (tb[GPUCTL_A_DEV_DRIVER])
		nla_strlcpy(d->driver, tb[GPUCTL_A_DEV_DRIVER],
			    sizeof(d->driver));
	if (tb[GPUCTL_A_DEV_IOMMU_GROUP])
		d->iommu_group = nla_get_u32(tb[GPUCTL_A_DEV_IOMMU_GROUP]);
	if (tb[GPUCTL_A_DEV_NUMA_NODE])
		d->numa_node = (__s32)nla_get_u32(tb[GPUCTL_A_DEV_NUMA_NODE]);
	if (tb[GPUCTL_A_DEV_PCI_ROOT])
		nla_strlcpy(d->pci_root, tb[GPUCTL_A_DEV_PCI_ROOT],
			    sizeof(d->pci_root));
	if (tb[GPUCTL_A_DEV_SRIOV_TOTALVFS])
		d->sriov_totalvfs = nla_get_u16(tb[GPUCTL_A_DEV_SRIOV_TOTALVFS]);
	if (tb[GPUCTL_A_DEV_SRIOV_NUMVFS])
		d->sriov_numvfs = nla_get_u16(tb[GPUCTL_A_DEV_SRIOV_NUMVFS]);
	if (tb[GPUCTL_A_DEV_PHYSFN])
		nla_strlcpy(d->physfn, tb[GPUCTL_A_DEV_PHYSFN],
			    sizeof(d->physfn));
	if (tb[GPUCTL_A_DEV_ROLE])
		d->role = nla_get_u32(tb[GPUCTL_A_DEV_ROLE]);
	if (tb[GPUCTL_A_DEV_RESERVED])
		d->reserved = nla_get_u8(tb[GPUCTL_A_DEV_RESERVED]);
	if (tb[GPUCTL_A_DEV_STATE])
		d->state = nla_get_u32(tb[GPUCTL_A_DEV_STATE]);
	if (tb[GPUCTL_A_DEV_STATE_REASON])
		nla_strlcpy(d->state_reason, tb[GPUCTL_A_DEV_STATE_REASON],
			    sizeof(d->state_reason));
	if (tb[GPUCTL_A_DEV_RULE])
		d->rule = nla_get_u32(tb[GPUCTL_A_DEV_RULE]);
	if (tb[GPUCTL_A_DEV_ACTION])
		d->action = nla_get_u32(tb[GPUCTL_A_DEV_ACTION]);
	if (tb[GPUCTL_A_DEV_ALLOCATION])
		d->allocation = nla_get_u32(tb[GPUCTL_A_DEV_ALLOCATION]);
	if (tb[GPUCTL_A_DEV_HOLDER_PID])
		d->holder_pid = nla_get_u32(tb[GPUCTL_A_DEV_HOLDER_PID]);
	if (tb[GPUCTL_A_DEV_HOLDER_COMM])
		nla_strlcpy(d->holder_comm, tb[GPUCTL_A_DEV_HOLDER_COMM],
			    sizeof(d->holder_comm));
	if (tb[GPUCTL_A_DEV_HOLDER_UID])
		d->holder_uid = nla_get_u32(tb[GPUCTL_A_DEV_HOLDER_UID]);
	if (tb[GPUCTL_A_DEV_HOLDER_SINCE])
		d->holder_since = nla_get_u64(tb[GPUCTL_A_DEV_HOLDER_SINCE]);
	if (tb[GPUCTL_A_DEV_OPEN_MATCH])
		d->open_match = nla_get_u32(tb[GPUCTL_A_DEV_OPEN_MATCH]);
	if (tb[GPUCTL_A_DEV_REFUSED])
		nla_strlcpy(d->refused, tb[GPUCTL_A_DEV_REFUSED],
			    sizeof(d->refused));
	return 0;
}

int nlc_parse_group(const struct nlmsghdr *nlh, struct nlc_group *g)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a;
	int rem;

	memset(g, 0, sizeof(*g));
	/* Walked by hand: GROUP_DEVICE repeats, which nla_parse() folds. */
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		int type = nla_type(a);

		if (type > 0 && type <= GPUCTL_A_GROUP_MAX)
			g->present |= 1u << type;
		switch (type) {
		case GPUCTL_A_GROUP_ID:
			if (nla_len(a) != 4)
				return -EPROTO;
			g->id = nla_get_u32(a);
			break;
		case GPUCTL_A_GROUP_DEVICE:
			if (g->ndevices >= NLC_MAX_MEMBERS)
				return -E2BIG;
			nla_strlcpy(g->devices[g->ndevices++], a, NLC_ADDR_LEN);
			break;
		case GPUCTL_A_GROUP_VIABLE:
			if (nla_len(a) != 1)
				return -EPROTO;
			g->viable = nla_get_u8(a);
			break;
		case GPUCTL_A_GROUP_REASON:
			nla_strlcpy(g->reason, a, sizeof(g->reason));
			break;
		}
	}
	return 0;
}

int nlc_parse_rule(const struct nlmsghdr *nlh, struct nlc_rule *r)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a;
	int rem;

	memset(r, 0, sizeof(*r));
	/* Walked by hand: DEVICE and WARNING repeat. */
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		int type = nla_type(a);

		if (type > 0 && type <= GPUCTL_A_RULE_MAX)
			r->present |= 1u << type;
		switch (type) {
		case GPUCTL_A_RULE_ID:
		case GPUCTL_A_RULE_SOURCE:
			if (nla_len(a) != 4)
				return -EPROTO;
			if (type == GPUCTL_A_RULE_ID)
				r->id = nla_get_u32(a);
			else
				r->source = nla_get_u32(a);
			break;
		case GPUCTL_A_RULE_MATCH:
			nla_strlcpy(r->match, a, sizeof(r->match));
			break;
		case GPUCTL_A_RULE_DRIVER:
			nla_strlcpy(r->driver, a, sizeof(r->driver));
			break;
		case GPUCTL_A_RULE_FORCE:
			r->force = true;
			break;
		case GPUCTL_A_RULE_TAKE:
			r->take = true;
			break;
		case GPUCTL_A_RULE_DEVICE:
			if (r->ndevices >= NLC_MAX_MEMBERS)
				return -E2BIG;
			nla_strlcpy(r->devices[r->ndevices++], a, NLC_ADDR_LEN);
			break;
		case GPUCTL_A_RULE_WARNING:
			if (r->nwarnings >= NLC_MAX_WARNINGS)
				return -E2BIG;
			nla_strlcpy(r->warnings[r->nwarnings++], a, NLC_TEXT_LEN);
			break;
		}
	}
	return 0;
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

static int one_dev_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
		      void *arg)
{
	return nlc_parse_dev(nlh, arg);
}

static int one_group_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
			void *arg)
{
	return nlc_parse_group(nlh, arg);
}

static int one_rule_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
		       void *arg)
{
	return nlc_parse_rule(nlh, arg);
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

int nlc_dev_get(struct nlc *c, const char *address, struct nlc_dev *d)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_DEV_GET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(d, 0, sizeof(*d));
	if (nla_put_string(msg, GPUCTL_A_DEV_ADDRESS, address)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_dev_cb, d, NULL);
}

int nlc_group_get(struct nlc *c, __u32 id, struct nlc_group *g)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_GROUP_GET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	if (nla_put_u32(msg, GPUCTL_A_GROUP_ID, id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_group_cb, g, NULL);
}

int nlc_rule_new(struct nlc *c, const char *match, const char *driver,
		 bool force, bool take, struct nlc_rule *r)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_RULE_NEW, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	if ((match && nla_put_string(msg, GPUCTL_A_RULE_MATCH, match)) ||
	    (driver && nla_put_string(msg, GPUCTL_A_RULE_DRIVER, driver)) ||
	    (force && nla_put_flag(msg, GPUCTL_A_RULE_FORCE)) ||
	    (take && nla_put_flag(msg, GPUCTL_A_RULE_TAKE))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_rule_cb, r, NULL);
}

int nlc_rule_del(struct nlc *c, const __u32 *id, const char *match)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_RULE_DEL, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	if ((id && nla_put_u32(msg, GPUCTL_A_RULE_ID, *id)) ||
	    (match && nla_put_string(msg, GPUCTL_A_RULE_MATCH, match))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, NULL, NULL, NULL);
}

int nlc_rule_get(struct nlc *c, __u32 id, struct nlc_rule *r)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_RULE_GET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	if (nla_put_u32(msg, GPUCTL_A_RULE_ID, id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, one_rule_cb, r, NULL);
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

const struct nlc_rule *nlc_rule_find(const struct nlc_rule *rules, int n,
				     const char *match)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(rules[i].match, match))
			return &rules[i];
	return NULL;
}

enum collect_kind {
	COLLECT_DEV,
	COLLECT_GROUP,
	COLLECT_RULE,
	COLLECT_ALLOC,
	COLLECT_LIMIT,
};

struct collect {
	void *v;
	int n;
	int cap;
	size_t size;
	enum collect_kind kind;
};

static int collect_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
		      void *arg)
{
	struct collect *col = arg;
	void *slot;

	if (col->n == col->cap) {
		int cap = col->cap ? 2 * col->cap : 16;
		void *v = realloc(col->v, cap * col->size);

		if (!v)
			return -ENOMEM;
		col->v = v;
		col->cap = cap;
	}
	slot = (char *)col->v + col->n * col->size;
	col->n++;
	switch (col->kind) {
	case COLLECT_GROUP:
		return nlc_parse_group(nlh, slot);
	case COLLECT_RULE:
		return nlc_parse_rule(nlh, slot);
	case COLLECT_ALLOC:
		return nlc_parse_alloc(nlh, slot);
	case COLLECT_LIMIT:
		return nlc_parse_limit(nlh, slot);
	default:
		return nlc_parse_dev(nlh, slot);
	}
}

static int dump(struct nlc *c, __u8 cmd, struct collect *col,
		struct nlc_dump_info *info)
{
	struct nl_msg *msg = nlc_msg_new(c, cmd, NLM_F_DUMP);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = nlc_exchange(c, msg, collect_cb, col, info);
	if (ret) {
		free(col->v);
		col->v = NULL;
		col->n = 0;
	}
	return ret;
}

int nlc_dev_dump(struct nlc *c, struct nlc_dev **devs, int *n,
		 struct nlc_dump_info *info)
{
	struct collect col = { .size = sizeof(struct nlc_dev) };
	int ret = dump(c, GPUCTL_CMD_DEV_GET, &col, info);

	*devs = col.v;
	*n = col.n;
	return ret;
}

int nlc_group_dump(struct nlc *c, struct nlc_group **groups, int *n,
		   struct nlc_dump_info *info)
{
	struct collect col = { .size = sizeof(struct nlc_group),
			       .kind = COLLECT_GROUP };
	int ret = dump(c, GPUCTL_CMD_GROUP_GET, &col, info);

	*groups = col.v;
	*n = col.n;
	return ret;
}

int nlc_rule_dump(struct nlc *c, struct nlc_rule **rules, int *n,
		  struct nlc_dump_info *info)
{
	struct collect col = { .size = sizeof(struct nlc_rule),
			       .kind = COLLECT_RULE };
	int ret = dump(c, GPUCTL_CMD_RULE_GET, &col, info);

	*rules = col.v;
	*n = col.n;
	return ret;
}

int nlc_alloc_dump(struct nlc *c, struct nlc_alloc **allocs, int *n,
		   struct nlc_dump_info *info)
{
	struct collect col = { .size = sizeof(struct nlc_alloc),
			       .kind = COLLECT_ALLOC };
	int ret = dump(c, GPUCTL_CMD_ALLOC_GET, &col, info);

	*allocs = col.v;
	*n = col.n;
	return ret;
}

int nlc_limit_dump(struct nlc *c, struct nlc_limit **limits, int *n,
		   struct nlc_dump_info *info)
{
	struct collect col = { .size = sizeof(struct nlc_limit),
			       .kind = COLLECT_LIMIT };
	int ret = dump(c, GPUCTL_CMD_LIMIT_GET, &col, info);

	*limits = col.v;
	*n = col.n;
	return ret;
}

int nlc_monitor_join(struct nlc *c)
{
	int grp = genl_ctrl_resolve_grp(c->sk, GPUCTL_FAMILY_NAME,
					GPUCTL_MCGRP_MONITOR);

	if (grp < 0)
		return -ENOENT;
	c->mcgrp = grp;
	return nl_socket_add_membership(c->sk, grp) ? -EIO : 0;
}

static bool is_rule_cmd(__u8 cmd)
{
	return cmd == GPUCTL_CMD_RULE_NEW_NTF || cmd == GPUCTL_CMD_RULE_DEL_NTF ||
	       cmd == GPUCTL_CMD_RULE_NEW || cmd == GPUCTL_CMD_RULE_GET;
}

static bool is_alloc_cmd(__u8 cmd)
{
	return cmd == GPUCTL_CMD_ALLOC_NEW_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_DEL_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_CHANGE_NTF ||
	       cmd == GPUCTL_CMD_ALLOC_NEW || cmd == GPUCTL_CMD_ALLOC_GET;
}

int nlc_monitor_next(struct nlc *c, int timeout_ms, __u8 *cmd,
		     struct nlc_dev *d)
{
	struct nlc_ntf *n = malloc(sizeof(*n));
	int ret;

	if (!n)
		return -ENOMEM;
	ret = nlc_monitor_next_ntf(c, timeout_ms, n);
	if (ret > 0) {
		*cmd = n->cmd;
		*d = n->dev;
	}
	free(n);
	return ret;
}

int nlc_monitor_next_ntf(struct nlc *c, int timeout_ms, struct nlc_ntf *ntf)
{
	for (;;) {
		struct pollfd pfd = { .fd = nl_socket_get_fd(c->sk),
				      .events = POLLIN };
		int n;

		while (c->buf) {
			struct nlmsghdr *nlh = (void *)(c->buf + c->bufoff);
			int rem = c->buflen - c->bufoff;

			if (!nlmsg_ok(nlh, rem)) {
				free(c->buf);
				c->buf = NULL;
				break;
			}
			c->bufoff += NLMSG_ALIGN(nlh->nlmsg_len);
			if (nlh->nlmsg_type != c->family)
				continue;
			ntf->cmd = ((struct genlmsghdr *)nlmsg_data(nlh))->cmd;
			memset(&ntf->dev, 0, sizeof(ntf->dev));
			memset(&ntf->rule, 0, sizeof(ntf->rule));
			memset(&ntf->alloc, 0, sizeof(ntf->alloc));
			if (is_rule_cmd(ntf->cmd))
				return nlc_parse_rule(nlh, &ntf->rule) ?: 1;
			if (is_alloc_cmd(ntf->cmd))
				return nlc_parse_alloc(nlh, &ntf->alloc) ?: 1;
			return nlc_parse_dev(nlh, &ntf->dev) ?: 1;
		}
		n = poll(&pfd, 1, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		n = recv_datagram(c, &c->buf);
		if (n < 0) {
			c->buf = NULL;
			return n;
		}
		c->buflen = n;
		c->bufoff = 0;
	}
}

void nlc_print_dev(FILE *f, const char *prefix, const struct nlc_dev *d)
{
	fprintf(f, "%s address=%s", prefix, d->address);
	if (NLC_HAS(d, GPUCTL_A_DEV_VENDOR_ID))
		fprintf(f, " vendor=0x%04x", d->vendor_id);
	if (NLC_HAS(d, GPUCTL_A_DEV_DEVICE_ID))
		fprintf(f, " device=0x%04x", d->device_id);
	if (NLC_HAS(d, GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID))
		fprintf(f, " subsystem_vendor=0x%04x", d->subsystem_vendor_id);
	if (NLC_HAS(d, GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID))
		fprintf(f, " subsystem_device=0x%04x", d->subsystem_device_id);
	if (NLC_HAS(d, GPUCTL_A_DEV_CLASS))
		fprintf(f, " class=0x%06x", d->class);
	if (NLC_HAS(d, GPUCTL_A_DEV_REVISION))
		fprintf(f, " revision=0x%02x", d->revision);
	if (NLC_HAS(d, GPUCTL_A_DEV_DRIVER))
		fprintf(f, " driver=%s", d->driver);
	if (NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP))
		fprintf(f, " iommu_group=%u", d->iommu_group);
	if (NLC_HAS(d, GPUCTL_A_DEV_NUMA_NODE))
		fprintf(f, " numa_node=%d", d->numa_node);
	if (NLC_HAS(d, GPUCTL_A_DEV_PCI_ROOT))
		fprintf(f, " pci_root=%s", d->pci_root);
	if (NLC_HAS(d, GPUCTL_A_DEV_SRIOV_TOTALVFS))
		fprintf(f, " sriov_totalvfs=%u", d->sriov_totalvfs);
	if (NLC_HAS(d, GPUCTL_A_DEV_SRIOV_NUMVFS))
		fprintf(f, " sriov_numvfs=%u", d->sriov_numvfs);
	if (NLC_HAS(d, GPUCTL_A_DEV_PHYSFN))
		fprintf(f, " physfn=%s", d->physfn);
	if (NLC_HAS(d, GPUCTL_A_DEV_ROLE))
		fprintf(f, " role=%s", nlc_role_name(d->role));
	if (NLC_HAS(d, GPUCTL_A_DEV_RESERVED))
		fprintf(f, " reserved=%u", d->reserved);
	if (NLC_HAS(d, GPUCTL_A_DEV_STATE))
		fprintf(f, " state=%s", nlc_state_name(d->state));
	if (NLC_HAS(d, GPUCTL_A_DEV_RULE))
		fprintf(f, " rule=%u", d->rule);
	if (NLC_HAS(d, GPUCTL_A_DEV_ACTION))
		fprintf(f, " action=%s", nlc_action_name(d->action));
	if (NLC_HAS(d, GPUCTL_A_DEV_ALLOCATION))
		fprintf(f, " allocation=%u", d->allocation);
	if (NLC_HAS(d, GPUCTL_A_DEV_HOLDER_PID))
		fprintf(f, " holder_pid=%u", d->holder_pid);
	if (NLC_HAS(d, GPUCTL_A_DEV_HOLDER_COMM))
		fprintf(f, " holder_comm=%s", d->holder_comm);
	if (NLC_HAS(d, GPUCTL_A_DEV_HOLDER_UID))
		fprintf(f, " holder_uid=%u", d->holder_uid);
	if (NLC_HAS(d, GPUCTL_A_DEV_HOLDER_SINCE))
		fprintf(f, " holder_since=%llu",
			(unsigned long long)d->holder_since);
	if (NLC_HAS(d, GPUCTL_A_DEV_OPEN_MATCH))
		fprintf(f, " open_match=%s", nlc_open_match_name(d->open_match));
	/*
	 * Last: texts with spaces. A device has a refusal only in
	 * vfio-open-ntf, so at most one of them ends a line in practice.
	 */
	if (NLC_HAS(d, GPUCTL_A_DEV_REFUSED))
		fprintf(f, " refused=%s", d->refused);
	if (NLC_HAS(d, GPUCTL_A_DEV_STATE_REASON))
		fprintf(f, " state_reason=%s", d->state_reason);
	fputc('\n', f);
}

/* The reason goes last: it holds spaces, and "the rest of the line" is
 * easy to cut in a shell.
 */
void nlc_print_group(FILE *f, const char *prefix, const struct nlc_group *g)
{
	int i;

	fprintf(f, "%s id=%u", prefix, g->id);
	if (NLC_HAS(g, GPUCTL_A_GROUP_VIABLE))
		fprintf(f, " viable=%u", g->viable);
	fprintf(f, " devices=");
	for (i = 0; i < g->ndevices; i++)
		fprintf(f, "%s%s", i ? "," : "", g->devices[i]);
	if (NLC_HAS(g, GPUCTL_A_GROUP_REASON))
		fprintf(f, " reason=%s", g->reason);
	fputc('\n', f);
}

/* Warnings go last, each as " warning=TEXT": they hold spaces. */
void nlc_print_rule(FILE *f, const char *prefix, const struct nlc_rule *r)
{
	int i;

	fprintf(f, "%s id=%u", prefix, r->id);
	if (NLC_HAS(r, GPUCTL_A_RULE_MATCH))
		fprintf(f, " match=%s", r->match);
	if (NLC_HAS(r, GPUCTL_A_RULE_DRIVER))
		fprintf(f, " driver=%s", r->driver);
	if (r->force)
		fprintf(f, " force=1");
	if (r->take)
		fprintf(f, " take=1");
	if (NLC_HAS(r, GPUCTL_A_RULE_SOURCE))
		fprintf(f, " source=%s", nlc_source_name(r->source));
	fprintf(f, " devices=");
	for (i = 0; i < r->ndevices; i++)
		fprintf(f, "%s%s", i ? "," : "", r->devices[i]);
	for (i = 0; i < r->nwarnings; i++)
		fprintf(f, " warning=%s", r->warnings[i]);
	fputc('\n', f);
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

void nlc_print_ntf(FILE *f, const struct nlc_ntf *n)
{
	if (is_rule_cmd(n->cmd))
		nlc_print_rule(f, nlc_cmd_name(n->cmd), &n->rule);
	else if (is_alloc_cmd(n->cmd))
		nlc_print_alloc(f, nlc_cmd_name(n->cmd), &n->alloc);
	else
		nlc_print_dev(f, nlc_cmd_name(n->cmd), &n->dev);
}

/* The request's attribute set follows from its command. */
static const char *req_attr_name(const struct nlc *c, int type)
{
	const struct genlmsghdr *g;

	if (c->reqlen < (int)(NLMSG_HDRLEN + GENL_HDRLEN))
		return "unknown";
	g = (const struct genlmsghdr *)(c->req + NLMSG_HDRLEN);
	switch (g->cmd) {
	case GPUCTL_CMD_DEV_GET:
		return name_of(dev_attr_names, ARRAY_SIZE(dev_attr_names), type);
	case GPUCTL_CMD_GROUP_GET:
		return name_of(group_attr_names, ARRAY_SIZE(group_attr_names), type);
	case GPUCTL_CMD_ALLOC_NEW:
	case GPUCTL_CMD_ALLOC_DEL:
	case GPUCTL_CMD_ALLOC_GET:
		return name_of(alloc_attr_names, ARRAY_SIZE(alloc_attr_names), type);
	case GPUCTL_CMD_LIMIT_SET:
	case GPUCTL_CMD_LIMIT_GET:
		return name_of(limit_attr_names, ARRAY_SIZE(limit_attr_names), type);
	default:
		return name_of(rule_attr_names, ARRAY_SIZE(rule_attr_names), type);
	}
}

void nlc_print_error(FILE *f, const struct nlc *c)
{
	fprintf(f, "error: %s (errno %d)", strerror(c->err), c->err);
	if (c->extack[0])
		fprintf(f, ": %s", c->extack);
	if (c->miss_type)
		fprintf(f, " [missing attribute %s]",
			req_attr_name(c, c->miss_type));
	if (c->bad_attr >= 0)
		fprintf(f, " [bad attribute %s]", req_attr_name(c, c->bad_attr));
	else if (c->bad_offset >= 0)
		fprintf(f, " [bad attribute at offset %d]", c->bad_offset);
	fputc('\n', f);
}
