// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * The generic netlink socket: family and multicast group resolution,
 * requests with the kernel's extended ack, and dumps retried when the
 * inventory changed under them.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/gpuctl.h>

#include "nl.h"

/* Big enough for the kernel's largest dump skb, so nothing is truncated */
#define NL_RECV_BUFSZ 32768
/* The inventory changes on hot-plug only; a few retries always settle */
#define NL_DUMP_RETRIES 10

struct nl_req {
	struct nl_ctx *nl;
	u16 type;
	mnl_cb_t cb;
	void *data;
	int err;
	bool intr;
};

/* The one place where libmnl's -1 and errno become a negative errno */
static int nl_errno(void)
{
	return errno ? -errno : -EIO;
}

static void nl_extack(struct nl_ctx *nl, const struct nlmsghdr *nlh,
		      unsigned int offset)
{
	const struct nlattr *attr;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(attr, nlh, offset) {
		if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			continue;
		snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
			 mnl_attr_get_str(attr));
	}
}

static int nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nl_req *req = data;
	unsigned int offset = sizeof(*e);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		req->err = -EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;

	/* without NETLINK_CAP_ACK the request is echoed before the TLVs */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += NLMSG_ALIGN(e->msg.nlmsg_len - sizeof(e->msg));
	nl_extack(req->nl, nlh, offset);
	req->err = e->error;
	return MNL_CB_ERROR;
}

/* A dump that failed half-way reports the error in NLMSG_DONE */
static int nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_req *req = data;
	int err;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		req->intr = true;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(int)))
		return MNL_CB_STOP;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err >= 0)
		return MNL_CB_STOP;
	nl_extack(req->nl, nlh, sizeof(int));
	req->err = err;
	return MNL_CB_ERROR;
}

/* not const: libmnl 1.0.4 takes a non-const array */
static mnl_cb_t nl_ctl_cb[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = nl_error_cb,
	[NLMSG_DONE] = nl_done_cb,
};

static int nl_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_req *req = data;
	int ret;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		req->intr = true;
	if (nlh->nlmsg_type != req->type || !req->cb)
		return MNL_CB_OK;
	errno = 0;
	ret = req->cb(nlh, req->data);
	if (ret == MNL_CB_ERROR)
		req->err = nl_errno();
	return ret;
}

/* Send once and read until the ack, the end of the dump or an error */
static int nl_exchange(struct nl_ctx *nl, struct nlmsghdr *nlh,
		       struct nl_req *req)
{
	int n, ret;

	nl->ext_msg[0] = '\0';
	nlh->nlmsg_seq = ++nl->seq;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return nl_errno();

	for (;;) {
		n = mnl_socket_recvfrom(nl->sk, nl->rbuf, NL_RECV_BUFSZ);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return nl_errno();
		}
		ret = mnl_cb_run2(nl->rbuf, n, nlh->nlmsg_seq, nl->portid,
				  nl_data_cb, req, nl_ctl_cb, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			return req->err ? req->err : nl_errno();
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

/**
 * nl_perror() - tell the user why a request failed
 * @nl: the socket the request went through
 * @err: negative errno
 *
 * Prints the kernel's extack message when there is one, as ethtool does.
 */
void nl_perror(const struct nl_ctx *nl, int err)
{
	if (nl->ext_msg[0])
		fprintf(stderr, "Error: %s: %s\n", nl->ext_msg, strerror(-err));
	else
		fprintf(stderr, "Error: %s\n", strerror(-err));
}

/* nl_request() without the message: the caller explains the failure */
static int nl_request_quiet(struct nl_ctx *nl, struct nlmsghdr *nlh,
			    mnl_cb_t cb, void (*reset)(void *data), void *data)
{
	struct nl_req req;
	int tries, ret;

	for (tries = 0;; tries++) {
		req = (struct nl_req){ .nl = nl, .type = nl->family,
				       .cb = cb, .data = data };
		ret = nl_exchange(nl, nlh, &req);
		/* a do request may change state, so it is never sent twice */
		if (!(nlh->nlmsg_flags & NLM_F_DUMP) ||
		    (ret != -EINTR && !(!ret && req.intr)))
			break;
		if (tries == NL_DUMP_RETRIES) {
			ret = -EINTR;
			break;
		}
		if (reset)
			reset(data);
	}
	return ret;
}

/**
 * nl_request() - send a request to the gpuctl family and read the reply
 * @nl: an open socket
 * @nlh: the request, from nl_msg_start()
 * @cb: called for each reply message
 * @reset: called before a dump is retried, to drop what @cb collected
 * @data: passed to @cb and @reset
 *
 * Dumps that raced with an inventory change (NLM_F_DUMP_INTR) or were
 * interrupted are retried a bounded number of times. Errors are printed.
 *
 * Return: 0 or a negative errno.
 */
int nl_request(struct nl_ctx *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void (*reset)(void *data), void *data)
{
	int ret = nl_request_quiet(nl, nlh, cb, reset, data);

	if (ret)
		nl_perror(nl, ret);
	return ret;
}

static void *nl_list_elem(const struct nl_list *list, size_t i)
{
	return (char *)list->v + i * list->size;
}

static int nl_collect_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_list *list = data;
	size_t cap;
	void *elem;
	void *v;

	if (list->n == list->cap) {
		cap = list->cap ? 2 * list->cap : 16;
		v = realloc(list->v, cap * list->size);
		if (!v)
			return MNL_CB_ERROR;
		list->v = v;
		list->cap = cap;
	}
	elem = nl_list_elem(list, list->n);
	memset(elem, 0, list->size);
	if (list->parse(nlh, elem)) {
		/* an element parsed half-way may hold memory already */
		if (list->release)
			list->release(elem);
		return MNL_CB_ERROR;
	}
	list->n++;
	return MNL_CB_OK;
}

/* A retried dump starts over, so what the failed try collected goes */
static void nl_list_reset(void *data)
{
	struct nl_list *list = data;
	size_t i;

	if (list->release)
		for (i = 0; i < list->n; i++)
			list->release(nl_list_elem(list, i));
	list->n = 0;
}

/**
 * nl_collect() - send a get or dump request and keep every reply
 * @nl: an open socket
 * @nlh: the request, from nl_msg_start()
 * @list: the list the replies are appended to, with its element size and
 *	parser set; empty for a dump, which starts over when it is retried
 *
 * Return: 0 or a negative errno, which has been printed; @list holds what
 * was collected either way, for nl_list_free().
 */
int nl_collect(struct nl_ctx *nl, struct nlmsghdr *nlh, struct nl_list *list)
{
	return nl_request(nl, nlh, nl_collect_cb, nl_list_reset, list);
}

/**
 * nl_collect_quiet() - nl_collect() for a request whose failure the caller
 *	explains, or expects: nothing is printed
 * @nl: an open socket
 * @nlh: the request
 * @list: as for nl_collect()
 *
 * Return: 0 or a negative errno; @nl->ext_msg holds the kernel's message.
 */
int nl_collect_quiet(struct nl_ctx *nl, struct nlmsghdr *nlh,
		     struct nl_list *list)
{
	return nl_request_quiet(nl, nlh, nl_collect_cb, nl_list_reset, list);
}

void nl_list_free(struct nl_list *list)
{
	nl_list_reset(list);
	free(list->v);
	list->v = NULL;
	list->cap = 0;
}

static void nl_mcgrps_parse(struct nl_ctx *nl, const struct nlattr *nest)
{
	const struct nlattr *grp, *attr;

	mnl_attr_for_each_nested(grp, nest) {
		const char *name = NULL;
		u32 id = 0;

		mnl_attr_for_each_nested(attr, grp) {
			switch (mnl_attr_get_type(attr)) {
			case CTRL_ATTR_MCAST_GRP_NAME:
				if (mnl_attr_validate(attr,
						      MNL_TYPE_NUL_STRING) >= 0)
					name = mnl_attr_get_str(attr);
				break;
			case CTRL_ATTR_MCAST_GRP_ID:
				if (mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
					id = mnl_attr_get_u32(attr);
				break;
			}
		}
		if (name && !strcmp(name, GPUCTL_MCGRP_MONITOR))
			nl->mcgrp_monitor = id;
		else if (name && !strcmp(name, GPUCTL_MCGRP_LEDGER))
			nl->mcgrp_ledger = id;
	}
}

static int nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_ctx *nl = data;
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(attr)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
				nl->family = mnl_attr_get_u16(attr);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) >= 0)
				nl_mcgrps_parse(nl, attr);
			break;
		}
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *nl_genl_start(struct nl_ctx *nl, u16 type,
				      u8 cmd, u8 version,
				      u16 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->sbuf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

/* Resolve the family and its multicast groups by name, once at start-up */
static int nl_resolve(struct nl_ctx *nl)
{
	struct nl_req req = { .nl = nl, .type = GENL_ID_CTRL,
			      .cb = nl_family_cb, .data = nl };
	struct nlmsghdr *nlh;
	int ret;

	nlh = nl_genl_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			    NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, GPUCTL_FAMILY_NAME);
	ret = nl_exchange(nl, nlh, &req);
	if (!ret && !nl->family)
		ret = -ENOENT;
	return ret;
}

/**
 * nl_open() - open a generic netlink socket and resolve the gpuctl family
 * @nl: the context to fill
 *
 * Return: 0, -ENOENT when the family is not registered (module not
 * loaded), or another negative errno, which has been printed.
 */
int nl_open(struct nl_ctx *nl)
{
	int one = 1;
	int ret;

	memset(nl, 0, sizeof(*nl));
	nl->rbuf = malloc(NL_RECV_BUFSZ);
	if (!nl->rbuf)
		return -ENOMEM;
	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk)
		goto err_print;
	/* extack text for the user; capped acks since we never need the echo */
	if (mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one,
				  sizeof(one)) < 0 ||
	    mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one,
				  sizeof(one)) < 0 ||
	    mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err_print;
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = time(NULL);

	ret = nl_resolve(nl);
	if (ret && ret != -ENOENT)
		nl_perror(nl, ret);
	if (ret)
		nl_close(nl);
	return ret;

err_print:
	ret = nl_errno();
	fprintf(stderr, "gpuctl: netlink socket: %s\n", strerror(-ret));
	nl_close(nl);
	return ret;
}

void nl_close(struct nl_ctx *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	nl->sk = NULL;
	free(nl->rbuf);
	nl->rbuf = NULL;
}

/**
 * nl_msg_start() - start a gpuctl request
 * @nl: an open socket
 * @cmd: GPUCTL_CMD_*
 * @dump: whether to dump every object rather than get one
 *
 * Return: the message, in @nl's send buffer; add attributes with libmnl.
 */
struct nlmsghdr *nl_msg_start(struct nl_ctx *nl, u8 cmd, bool dump)
{
	/* a get is acked so the reply loop knows when the answer is over */
	return nl_genl_start(nl, nl->family, cmd, GPUCTL_FAMILY_VERSION,
			     dump ? NLM_F_DUMP : NLM_F_ACK);
}

static int nl_group_join(struct nl_ctx *nl, u32 group)
{
	if (mnl_socket_setsockopt(nl->sk, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0)
		return nl_errno();
	return 0;
}

/**
 * nl_monitor_join() - subscribe to the gpuctl events the caller may see
 * @nl: an open socket
 *
 * The "ledger" group carries every event with all attributes, but only
 * CAP_SYS_ADMIN may join it; everyone else gets the device events of
 * "monitor", and is told so on stderr.
 *
 * Return: 0 or a negative errno, which has been printed.
 */
int nl_monitor_join(struct nl_ctx *nl)
{
	int ret;

	if (nl->mcgrp_ledger) {
		ret = nl_group_join(nl, nl->mcgrp_ledger);
		if (!ret)
			return 0;
		if (ret != -EPERM) {
			nl_perror(nl, ret);
			return ret;
		}
		fprintf(stderr,
			"gpuctl: monitor: device events only; the \"%s\" group's rule, allocation and VFIO events need CAP_SYS_ADMIN\n",
			GPUCTL_MCGRP_LEDGER);
	}
	if (!nl->mcgrp_monitor) {
		fprintf(stderr, "gpuctl: the module has no \"%s\" group\n",
			GPUCTL_MCGRP_MONITOR);
		return -ENOENT;
	}
	ret = nl_group_join(nl, nl->mcgrp_monitor);
	if (ret)
		nl_perror(nl, ret);
	return ret;
}

/**
 * nl_monitor_recv() - read one batch of notifications
 * @nl: a socket that joined a gpuctl multicast group
 * @cb: called for each gpuctl message
 * @data: passed to @cb
 *
 * Return: 0, or a negative errno; -ENOBUFS means events were lost and
 * the caller may carry on.
 */
int nl_monitor_recv(struct nl_ctx *nl, mnl_cb_t cb, void *data)
{
	struct nl_req req = { .nl = nl, .type = nl->family,
			      .cb = cb, .data = data };
	int n, ret;

	n = mnl_socket_recvfrom(nl->sk, nl->rbuf, NL_RECV_BUFSZ);
	if (n < 0)
		return errno == EINTR ? 0 : nl_errno();
	ret = mnl_cb_run2(nl->rbuf, n, 0, 0, nl_data_cb, &req, nl_ctl_cb,
			  NLMSG_MIN_TYPE);
	if (ret == MNL_CB_ERROR)
		return req.err ? req.err : nl_errno();
	return 0;
}

int nl_fd(const struct nl_ctx *nl)
{
	return mnl_socket_get_fd(nl->sk);
}

/**
 * nl_attr_str_append() - append a string attribute to an array of
 *	fixed-size strings, such as a rule's or an allocation's addresses
 * @v: the address of the array's pointer (char (**)[SIZE]), which is
 *	grown with realloc()
 * @n: its length, counted up
 * @size: the size of one element; a longer string is cut
 * @attr: the attribute, which must be a NUL-terminated string
 *
 * Return: 0, or -1 when the attribute is malformed or memory runs out.
 */
int nl_attr_str_append(void *v, size_t *n, size_t size,
		       const struct nlattr *attr)
{
	void **arr = v;
	char *grown;

	if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
		return -1;
	grown = realloc(*arr, (*n + 1) * size);
	if (!grown)
		return -1;
	*arr = grown;
	snprintf(grown + *n * size, size, "%s", mnl_attr_get_str(attr));
	(*n)++;
	return 0;
}
