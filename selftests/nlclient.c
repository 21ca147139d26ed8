// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * libnl-genl-3 client for the gpuctl family: the socket, requests and
 * replies, errors, devices, groups, rules and the monitor (allocations and
 * limits are in nlclient_alloc.c). libnl builds messages, resolves
 * the family and parses attributes; the receive loop is our own so that the
 * tests see every datagram, every NLM_F_DUMP_INTR flag and every extack TLV,
 * which libnl's callback machinery hides.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nlclient.h"
#include "nlclient_priv.h"

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
	[GPUCTL_A_DEV_PENDING] = { .type = NLA_FLAG },
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

const char *nlc_name_of(const char * const *table, size_t n, long v)
{
	return v >= 0 && (size_t)v < n && table[v] ? table[v] : "unknown";
}

const char *nlc_cmd_name(__u8 cmd)
{
	return nlc_name_of(cmd_names, ARRAY_SIZE(cmd_names), cmd);
}

const char *nlc_role_name(__u32 role)
{
	return nlc_name_of(role_names, ARRAY_SIZE(role_names), role);
}

const char *nlc_state_name(__u32 state)
{
	return nlc_name_of(state_names, ARRAY_SIZE(state_names), state);
}

const char *nlc_action_name(__u32 action)
{
	return nlc_name_of(action_names, ARRAY_SIZE(action_names), action);
}

const char *nlc_source_name(__u32 source)
{
	return nlc_name_of(source_names, ARRAY_SIZE(source_names), source);
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
	d->pending = !!tb[GPUCTL_A_DEV_PENDING];
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
	/* Walked by hand: DEVICE, WARNING and ORPHAN repeat. */
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
		case GPUCTL_A_RULE_ORPHAN:
			if (r->norphans >= NLC_MAX_MEMBERS)
				return -E2BIG;
			nla_strlcpy(r->orphans[r->norphans++], a, NLC_ADDR_LEN);
			break;
		}
	}
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

int nlc_dev_set(struct nlc *c, const char *address, __u16 numvfs)
{
	struct nl_msg *msg = nlc_msg_new(c, GPUCTL_CMD_DEV_SET, NLM_F_ACK);

	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, GPUCTL_A_DEV_ADDRESS, address) ||
	    nla_put_u16(msg, GPUCTL_A_DEV_SRIOV_NUMVFS, numvfs)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlc_exchange(c, msg, NULL, NULL, NULL);
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

/*
 * rule-new and rule-del return before gpuctl's worker acted on the rule's
 * devices; until it did, dev-get shows them "pending". Waits for none of
 * the rule's devices to be, up to NLC_SETTLE_MS. A device no longer
 * tracked counts as done.
 */
static long nlc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int nlc_rule_settle(struct nlc *c, const struct nlc_rule *r)
{
	long deadline = nlc_now_ms() + NLC_SETTLE_MS;
	struct nlc_dev d;
	bool pending;
	int i, ret;

	for (;;) {
		pending = false;
		for (i = 0; i < r->ndevices && !pending; i++) {
			ret = nlc_dev_get(c, r->devices[i], &d);
			if (ret && ret != -ENODEV)
				return ret;
			pending = !ret && d.pending;
		}
		if (!pending)
			return 0;
		if (nlc_now_ms() >= deadline)
			return -ETIMEDOUT;
		usleep(NLC_SETTLE_POLL_MS * 1000);
	}
}

int nlc_rule_new(struct nlc *c, const char *match, const char *driver,
		 bool force, bool take, struct nlc_rule *r)
{
	struct nlc_rule now;
	int ret;

	ret = nlc_rule_new_nowait(c, match, driver, force, take, r);
	if (ret)
		return ret;
	ret = nlc_rule_settle(c, r);
	if (ret)
		return ret;
	/* the rule as it is now, its warnings after the worker acted */
	if (!nlc_rule_get(c, r->id, &now))
		*r = now;
	return 0;
}

int nlc_rule_new_nowait(struct nlc *c, const char *match, const char *driver,
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
	struct nlc_rule *rules, gone = { 0 };
	const struct nlc_rule *r;
	int n, ret;

	/* the rule's devices, to wait for their release */
	if (id) {
		nlc_rule_get(c, *id, &gone);
	} else if (match && !nlc_rule_dump(c, &rules, &n, NULL)) {
		r = nlc_rule_find(rules, n, match);
		if (r)
			gone = *r;
		free(rules);
	}
	ret = nlc_rule_del_nowait(c, id, match);
	if (ret)
		return ret;
	return nlc_rule_settle(c, &gone);
}

int nlc_rule_del_nowait(struct nlc *c, const __u32 *id, const char *match)
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

const struct nlc_rule *nlc_rule_find(const struct nlc_rule *rules, int n,
				     const char *match)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(rules[i].match, match))
			return &rules[i];
	return NULL;
}

struct collect {
	void *v;
	int n;
	int cap;
	size_t size;
	int (*parse)(const struct nlmsghdr *nlh, void *slot);
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
	return col->parse(nlh, slot);
}

int nlc_dump(struct nlc *c, __u8 cmd, size_t size,
	     int (*parse)(const struct nlmsghdr *nlh, void *slot), void **v,
	     int *n, struct nlc_dump_info *info)
{
	struct nl_msg *msg = nlc_msg_new(c, cmd, NLM_F_DUMP);
	struct collect col = { .size = size, .parse = parse };
	int ret;

	*v = NULL;
	*n = 0;
	if (!msg)
		return -ENOMEM;
	ret = nlc_exchange(c, msg, collect_cb, &col, info);
	if (ret) {
		free(col.v);
		return ret;
	}
	*v = col.v;
	*n = col.n;
	return 0;
}

static int parse_dev_slot(const struct nlmsghdr *nlh, void *slot)
{
	return nlc_parse_dev(nlh, slot);
}

static int parse_group_slot(const struct nlmsghdr *nlh, void *slot)
{
	return nlc_parse_group(nlh, slot);
}

static int parse_rule_slot(const struct nlmsghdr *nlh, void *slot)
{
	return nlc_parse_rule(nlh, slot);
}

int nlc_dev_dump(struct nlc *c, struct nlc_dev **devs, int *n,
		 struct nlc_dump_info *info)
{
	return nlc_dump(c, GPUCTL_CMD_DEV_GET, sizeof(**devs), parse_dev_slot,
			(void **)devs, n, info);
}

int nlc_group_dump(struct nlc *c, struct nlc_group **groups, int *n,
		   struct nlc_dump_info *info)
{
	return nlc_dump(c, GPUCTL_CMD_GROUP_GET, sizeof(**groups),
			parse_group_slot, (void **)groups, n, info);
}

int nlc_rule_dump(struct nlc *c, struct nlc_rule **rules, int *n,
		  struct nlc_dump_info *info)
{
	return nlc_dump(c, GPUCTL_CMD_RULE_GET, sizeof(**rules),
			parse_rule_slot, (void **)rules, n, info);
}

/*
 * The id of gpuctl's multicast group NAME, from the kernel's nlctrl:
 * -ENOENT when the family has no such group.
 */
int nlc_mcast_group_id(struct nlc *c, const char *name)
{
	int grp = genl_ctrl_resolve_grp(c->sk, GPUCTL_FAMILY_NAME, name);

	return grp < 0 ? -ENOENT : grp;
}

/*
 * Join one of gpuctl's multicast groups by name: -ENOENT when the family
 * has no such group, -EPERM when the caller may not join it.
 */
int nlc_monitor_join_group(struct nlc *c, const char *name)
{
	int grp = nlc_mcast_group_id(c, name);

	if (grp < 0)
		return grp;
	c->mcgrp = grp;
	if (setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK,
		       NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0)
		return -errno;
	return 0;
}

/* Every event, with all attributes: the "ledger" group (root only). */
int nlc_monitor_join(struct nlc *c)
{
	return nlc_monitor_join_group(c, GPUCTL_MCGRP_LEDGER);
}

static bool is_rule_cmd(__u8 cmd)
{
	return cmd == GPUCTL_CMD_RULE_NEW_NTF || cmd == GPUCTL_CMD_RULE_DEL_NTF ||
	       cmd == GPUCTL_CMD_RULE_NEW || cmd == GPUCTL_CMD_RULE_GET;
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
			if (nlc_is_alloc_cmd(ntf->cmd))
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
	if (NLC_HAS(d, GPUCTL_A_DEV_PENDING))
		fprintf(f, " pending=1");
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
	if (r->norphans)
		fprintf(f, " orphans=");
	for (i = 0; i < r->norphans; i++)
		fprintf(f, "%s%s", i ? "," : "", r->orphans[i]);
	fputc('\n', f);
}

void nlc_print_ntf(FILE *f, const struct nlc_ntf *n)
{
	if (is_rule_cmd(n->cmd))
		nlc_print_rule(f, nlc_cmd_name(n->cmd), &n->rule);
	else if (nlc_is_alloc_cmd(n->cmd))
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
	if (nlc_alloc_attr_name(g->cmd, type))
		return nlc_alloc_attr_name(g->cmd, type);
	switch (g->cmd) {
	case GPUCTL_CMD_DEV_GET:
		return nlc_name_of(dev_attr_names, ARRAY_SIZE(dev_attr_names), type);
	case GPUCTL_CMD_GROUP_GET:
		return nlc_name_of(group_attr_names, ARRAY_SIZE(group_attr_names), type);
	default:
		return nlc_name_of(rule_attr_names, ARRAY_SIZE(rule_attr_names), type);
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
