// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Raw generic netlink for the fuzzer: a socket, the family as the kernel
 * reports it, and one transaction that accounts for every reply. Raw
 * sockets rather than libnl, so that any byte can be sent.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

long *fz_heartbeat;

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

long fz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double fz_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int fz_sock_open(struct fz_sock *s, int rcvbuf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->rbuf = malloc(FZ_RECV_LEN);
	if (!s->rbuf)
		return -ENOMEM;
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		goto err;
	/* Errors carry the kernel's text, not a copy of the request. */
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (rcvbuf &&
	    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err;
	s->seq = (__u32)random();
	return 0;
err:
	free(s->rbuf);
	s->rbuf = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	return -errno;
}

void fz_sock_close(struct fz_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->rbuf);
	s->fd = -1;
	s->rbuf = NULL;
}

const struct nlattr *fz_genl_attrs(const struct nlmsghdr *nlh, int *len)
{
	*len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	if (*len < 0)
		*len = 0;
	return (const struct nlattr *)((const char *)nlh + NLMSG_HDRLEN +
				       GENL_HDRLEN);
}

static const struct nlattr *fz_ok(struct fz_iter *it)
{
	if (it->rem < (int)sizeof(struct nlattr) ||
	    it->a->nla_len < sizeof(struct nlattr) || it->a->nla_len > it->rem)
		return NULL;
	return it->a;
}

const struct nlattr *fz_first(struct fz_iter *it, const void *head, int len)
{
	it->a = head;
	it->rem = len;
	return fz_ok(it);
}

const struct nlattr *fz_next(struct fz_iter *it)
{
	int step = NLA_ALIGN(it->a->nla_len);

	it->rem = step > it->rem ? 0 : it->rem - step;
	it->a = (const struct nlattr *)((const char *)it->a + step);
	return fz_ok(it);
}

const struct nlattr *fz_first_genl(struct fz_iter *it,
				   const struct nlmsghdr *nlh)
{
	int len;
	const struct nlattr *head = fz_genl_attrs(nlh, &len);

	return fz_first(it, head, len);
}

__u64 fz_nla_uint(const struct nlattr *a)
{
	const void *d = fz_nla_data(a);
	__u64 v64;
	__u32 v32;
	__u16 v16;

	switch (fz_nla_len(a)) {
	case 1:
		return *(const __u8 *)d;
	case 2:
		memcpy(&v16, d, 2);
		return v16;
	case 4:
		memcpy(&v32, d, 4);
		return v32;
	case 8:
		memcpy(&v64, d, 8);
		return v64;
	}
	return 0;
}

void fz_nla_str(const struct nlattr *a, char *buf, size_t size)
{
	size_t n = fz_nla_len(a);

	if (n >= size)
		n = size - 1;
	memcpy(buf, fz_nla_data(a), n);
	buf[n] = '\0';
}

/* Parses the error of an NLMSG_ERROR into @r, with its extack text. */
static void fz_parse_error(const struct nlmsghdr *nlh, struct fz_res *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	const struct nlattr *a;
	struct fz_iter it;
	size_t off;

	r->term = true;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
		r->err = EPROTO;
		return;
	}
	r->err = -e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = NLMSG_HDRLEN + sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (off >= nlh->nlmsg_len)
		return;
	for (a = fz_first(&it, (const char *)nlh + off, nlh->nlmsg_len - off); a;
	     a = fz_next(&it)) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case NLMSGERR_ATTR_MSG:
			fz_nla_str(a, r->extack, sizeof(r->extack));
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			r->miss_type = fz_nla_uint(a);
			break;
		case NLMSGERR_ATTR_MISS_NEST:
			r->miss_nest = true;
			break;
		}
	}
}

/* Whether every message of the transaction has had its last word. */
static bool fz_xact_done(const struct fz_res *res, int n, bool sentinel)
{
	int i;

	if (!sentinel)
		return false;
	for (i = 0; i < n; i++) {
		if (res[i].dump && !res[i].term)
			return false;
	}
	return true;
}

static int fz_send_sentinel(struct fz_sock *s, __u32 seq)
{
	struct nlmsghdr h = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = NLMSG_NOOP,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		.nlmsg_seq = seq,
	};

	return send(s->fd, &h, sizeof(h), 0) < 0 ? -errno : 0;
}

int fz_xact(struct fz_sock *s, const void *buf, size_t len,
	    struct fz_res *res, int n, fz_data_cb cb, void *arg,
	    int timeout_ms)
{
	__u32 sentinel = s->seq++;
	bool seen = false;
	int i, ret;

	for (i = 0; i < n; i++) {
		__u32 seq = res[i].seq;

		memset(&res[i], 0, sizeof(res[i]));
		res[i].seq = seq;
	}
	/* A datagram refused as a whole is that errno for each message. */
	if (send(s->fd, buf, len, 0) < 0) {
		for (i = 0; i < n; i++) {
			res[i].term = true;
			res[i].err = errno;
		}
		return 0;
	}
	ret = fz_send_sentinel(s, sentinel);
	if (ret)
		return ret;

	while (!fz_xact_done(res, n, seen)) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		const struct nlmsghdr *nlh;
		ssize_t got;
		int rem;

		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return ret ? -errno : -ETIMEDOUT;
		got = recv(s->fd, s->rbuf, FZ_RECV_LEN, MSG_DONTWAIT);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (fz_heartbeat)
			__atomic_store_n(fz_heartbeat, fz_now_ms(), __ATOMIC_RELAXED);
		rem = (int)got;
		for (nlh = (const struct nlmsghdr *)s->rbuf; NLMSG_OK(nlh, rem);
		     nlh = NLMSG_NEXT(nlh, rem)) {
			struct fz_res *r = NULL;

			if (nlh->nlmsg_seq == sentinel) {
				seen = true;
				continue;
			}
			for (i = 0; i < n; i++) {
				if (res[i].seq == nlh->nlmsg_seq)
					r = &res[i];
			}
			if (!r)
				continue;	/* a reply to an earlier, abandoned request */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				fz_parse_error(nlh, r);
			} else if (nlh->nlmsg_type == NLMSG_DONE) {
				r->term = true;
				r->dump = true;
				if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					r->err = -*(const int *)NLMSG_DATA(nlh);
			} else {
				r->ndata++;
				if (nlh->nlmsg_flags & NLM_F_MULTI)
					r->dump = true;
				if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
					r->intr = true;
				if (cb)
					cb(nlh, (int)(r - res), arg);
			}
		}
	}
	return 0;
}

static size_t fz_put_req(unsigned char *buf, __u16 type, __u16 flags,
			 __u32 seq, __u8 cmd, const void *attrs, size_t alen)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + alen;
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	g->cmd = cmd;
	g->version = 1;
	if (alen)
		memcpy(buf + NLMSG_HDRLEN + GENL_HDRLEN, attrs, alen);
	return nlh->nlmsg_len;
}

int fz_dump(struct fz_sock *s, __u16 family, __u8 cmd, fz_data_cb cb,
	    void *arg, struct fz_res *res)
{
	unsigned char buf[64];
	int tries, ret;

	for (tries = 0; tries < 10; tries++) {
		res->seq = s->seq++;
		ret = fz_xact(s, buf,
			      fz_put_req(buf, family, NLM_F_REQUEST | NLM_F_DUMP,
					 res->seq, cmd, NULL, 0),
			      res, 1, cb, arg, 60000);
		if (ret)
			return ret;
		if (!res->intr)
			return res->err ? -res->err : 0;
	}
	return -EINTR;
}

int fz_do(struct fz_sock *s, __u16 family, __u8 cmd, const void *attrs,
	  size_t alen, fz_data_cb cb, void *arg, struct fz_res *res)
{
	unsigned char buf[1024];
	int ret;

	if (alen > sizeof(buf) - NLMSG_HDRLEN - GENL_HDRLEN)
		return -E2BIG;
	res->seq = s->seq++;
	ret = fz_xact(s, buf,
		      fz_put_req(buf, family, NLM_F_REQUEST | NLM_F_ACK,
				 res->seq, cmd, attrs, alen),
		      res, 1, cb, arg, 60000);
	return ret ?: -res->err;
}

/* CTRL_ATTR_OPS and CTRL_ATTR_MCAST_GROUPS of a GETFAMILY reply. */
static void fz_family_nested(const struct nlattr *a, struct fz_family *f)
{
	const struct nlattr *e, *x;
	struct fz_iter it, in;

	for (e = fz_first(&it, fz_nla_data(a), fz_nla_len(a)); e;
	     e = fz_next(&it)) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_OPS &&
		    f->n_ops < FZ_MAX_CMDS) {
			for (x = fz_first(&in, fz_nla_data(e), fz_nla_len(e)); x;
			     x = fz_next(&in)) {
				if (x->nla_type == CTRL_ATTR_OP_ID)
					f->ops[f->n_ops].cmd = fz_nla_uint(x);
				else if (x->nla_type == CTRL_ATTR_OP_FLAGS)
					f->ops[f->n_ops].flags = fz_nla_uint(x);
			}
			f->n_ops++;
		} else if (f->n_grps < FZ_MAX_GRPS) {
			for (x = fz_first(&in, fz_nla_data(e), fz_nla_len(e)); x;
			     x = fz_next(&in)) {
				if (x->nla_type == CTRL_ATTR_MCAST_GRP_ID)
					f->grps[f->n_grps].id = fz_nla_uint(x);
				else if (x->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
					fz_nla_str(x, f->grps[f->n_grps].name,
						   GENL_NAMSIZ);
			}
			f->n_grps++;
		}
	}
}

static void fz_family_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_family *f = arg;
	const struct nlattr *a;
	struct fz_iter it;

	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case CTRL_ATTR_FAMILY_ID:
			f->id = fz_nla_uint(a);
			break;
		case CTRL_ATTR_VERSION:
			f->version = fz_nla_uint(a);
			break;
		case CTRL_ATTR_OPS:
		case CTRL_ATTR_MCAST_GROUPS:
			fz_family_nested(a, f);
			break;
		}
	}
}

int fz_family_get(struct fz_sock *s, const char *name, struct fz_family *f)
{
	unsigned char attrs[NLA_HDRLEN + NLA_ALIGN(GENL_NAMSIZ)] = {};
	struct nlattr *a = (struct nlattr *)attrs;
	struct fz_res res;
	int ret;

	memset(f, 0, sizeof(*f));
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + strlen(name) + 1;
	memcpy(attrs + NLA_HDRLEN, name, strlen(name) + 1);
	ret = fz_do(s, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attrs,
		    NLA_ALIGN(a->nla_len), fz_family_cb, f, &res);
	if (!ret && !f->id)
		ret = -ENOENT;
	return ret;
}

__u32 fz_family_grp(const struct fz_family *f, const char *name)
{
	int i;

	for (i = 0; i < f->n_grps; i++) {
		if (!strcmp(f->grps[i].name, name))
			return f->grps[i].id;
	}
	return 0;
}
