// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Sending one generated datagram and accounting for what came back: the
 * outcome of each message per op and errno, replies checked against the
 * spec and mined for values, successful requests kept as a corpus, and,
 * for the unprivileged sender, every admin op refused with EPERM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "fuzz.h"

#define FZ_REPLY_TIMEOUT_MS	60000
#define FZ_SHOW_BAD		5	/* bad replies printed in full */

static void fz_hex(const char *prefix, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len && i < 256; i++) {
		if (!(i % 32))
			printf("%s# %s%04zx:", i ? "\n" : "", prefix, i);
		printf(" %02x", b[i]);
	}
	printf("%s\n", len > 256 ? " ..." : "");
}

struct fz_rx {
	struct fz_ctx *c;
	const struct fz_plan *p;
};

static void fz_rx_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_rx *rx = arg;
	struct fz_ctx *c = rx->c;
	int op = rx->p->m[idx].op;
	int mode = rx->p->m[idx].dump ? FZ_DUMP : FZ_DO;
	char why[160] = "no such op";

	c->stats->replies++;
	if (op < 0 || !fz_reply_ok(op, mode, nlh, why, sizeof(why))) {
		if (c->stats->bad_replies++ < FZ_SHOW_BAD) {
			printf("# %s: reply to command %u breaks the spec: %s\n",
			       c->unpriv ? "unprivileged" : "root",
			       rx->p->m[idx].cmd, why);
			fz_hex("  reply ", nlh, nlh->nlmsg_len);
		}
		return;
	}
	if (!c->unpriv)
		fz_pools_learn(c, fz_spec.ops[op].set, nlh);
	if (c->rep && op == fz_k.op_dev_get) {
		c->rep->devget_replies++;
		if (fz_dev_secrets(nlh))
			c->rep->devget_secret++;
	}
}

static int fz_row(unsigned int cmd)
{
	const struct fz_op *o = fz_op_by_cmd(cmd);
	int i;

	if (o)
		return (int)(o - fz_spec.ops);
	for (i = 0; i < fz_spec.n_ntfs; i++) {
		if (fz_spec.ntfs[i].cmd == cmd)
			return FZ_MAX_OPS + FZ_ROW_NTF;
	}
	return FZ_MAX_OPS + FZ_ROW_UNKNOWN;
}

static int fz_outcome(const struct fz_plan *p, int k, const struct fz_res *r)
{
	if (!(p->m[k].flags & NLM_F_REQUEST))
		return FZ_E_IGNORED;
	if (r->term && r->err)
		return r->err > 0 && r->err < FZ_NR_ERRNO ? r->err : EPROTO;
	if (r->term)
		return r->dump ? FZ_E_DUMP : FZ_E_OK;
	return r->ndata ? FZ_E_OK : FZ_E_SILENT;
}

/*
 * An admin op reached by an unprivileged sender must fail with EPERM.
 * The genl core checks the permission right after finding the op, before
 * any attribute is parsed, except that 6.12 first refuses a mode the op
 * lacks (EOPNOTSUPP) and a non-zero reserved header field (EINVAL).
 */
static void fz_unpriv_admin(struct fz_ctx *c, const struct fz_plan *p, int k,
			    const struct fz_res *r)
{
	const struct fz_op *o = &fz_spec.ops[p->m[k].op];
	int outcome = fz_outcome(p, k, r);
	bool has_mode = o->mode[p->m[k].dump ? FZ_DUMP : FZ_DO].present;
	bool bad;

	if (!o->admin || !(p->m[k].flags & NLM_F_REQUEST))
		return;
	if (outcome != FZ_E_OK && outcome != FZ_E_DUMP && !p->m[k].sane)
		return;
	/* It ran, or it failed otherwise than it must. */
	bad = outcome == FZ_E_OK || outcome == FZ_E_DUMP ||
	      (outcome != EPERM && !(outcome == EOPNOTSUPP && !has_mode));
	c->rep->admin_checked++;
	if (!bad)
		return;
	if (!c->rep->admin_bad++)
		snprintf(c->rep->admin_first, sizeof(c->rep->admin_first),
			 "%s %s flags 0x%x: %s%s%s", o->name,
			 p->m[k].dump ? "dump" : "do", p->m[k].flags,
			 fz_outcome_name(outcome), r->extack[0] ? ", " : "",
			 r->extack);
	if (c->rep->admin_bad > FZ_SHOW_BAD)
		return;
	printf("# unprivileged %s %s: %s, not EPERM\n", o->name,
	       p->m[k].dump ? "dump" : "do", fz_outcome_name(outcome));
	fz_hex("  msg ", p->buf + p->m[k].off, p->len - p->m[k].off);
}

/* A missing attribute the kernel named is required from now on. */
static void fz_learn_required(struct fz_ctx *c, const struct fz_plan_msg *m,
			      const struct fz_res *r)
{
	int mode = m->dump ? FZ_DUMP : FZ_DO, i;
	const struct fz_mode *md;

	if (m->op < 0 || !r->miss_type || r->miss_nest)
		return;
	md = &fz_spec.ops[m->op].mode[mode];
	for (i = 0; md->present && i < md->n_req && i < 64; i++) {
		if (fz_spec.sets[fz_spec.ops[m->op].set].attrs[md->req[i]].type ==
		    r->miss_type)
			c->required[m->op][mode] |= 1ULL << i;
	}
}

int fz_send_one(struct fz_ctx *c, struct fz_plan *p)
{
	struct fz_res res[FZ_MAX_MSGS];
	struct fz_rx rx = { c, p };
	enum fz_guard g = fz_guard(c, p);
	double t0, waited;
	int k, ret;

	if (g == FZ_GUARD_DROP) {
		c->stats->guard_dropped++;
		return 0;
	}
	c->stats->guard_stripped += g == FZ_GUARD_STRIPPED;
	for (k = 0; k < p->n; k++) {
		const struct nlmsghdr *nlh = (const void *)(p->buf + p->m[k].off);

		res[k].seq = nlh->nlmsg_seq;
	}
	if (!c->unpriv) {
		int slot = c->sh->ring_pos++ % FZ_RING;
		size_t n = p->len < sizeof(c->sh->ring[0].buf) ?
			   p->len : sizeof(c->sh->ring[0].buf);

		memcpy(c->sh->ring[slot].buf, p->buf, n);
		c->sh->ring[slot].len = (int)p->len;
	}
	t0 = fz_now_s();
	ret = fz_xact(&c->sk, p->buf, p->len, res, p->n, fz_rx_cb, &rx,
		      FZ_REPLY_TIMEOUT_MS);
	if (ret)
		return ret;
	waited = fz_now_s() - t0;
	c->stats->sent += p->n;
	for (k = 0; k < p->n; k++) {
		int outcome = fz_outcome(p, k, &res[k]);
		int row = fz_row(p->m[k].cmd);

		c->stats->outcome[row][outcome]++;
		c->stats->row_seconds[row] += waited / p->n;
		if ((outcome == FZ_E_OK || outcome == FZ_E_DUMP) &&
		    p->m[k].sane && p->m[k].op >= 0)
			fz_corpus_add(c, p, k);
		if (c->unpriv && p->m[k].op >= 0)
			fz_unpriv_admin(c, p, k, &res[k]);
		fz_learn_required(c, &p->m[k], &res[k]);
	}
	return 0;
}

void fz_mon_drain(struct fz_ctx *c)
{
	char why[160];

	for (;;) {
		const struct nlmsghdr *nlh;
		ssize_t got = recv(c->mon.fd, c->mon.rbuf, FZ_RECV_LEN, MSG_DONTWAIT);
		int rem;

		if (got < 0 && errno == ENOBUFS)
			continue;	/* events lost to a full buffer: fine */
		if (got <= 0)
			return;
		rem = (int)got;
		for (nlh = (const void *)c->mon.rbuf; NLMSG_OK(nlh, rem);
		     nlh = NLMSG_NEXT(nlh, rem)) {
			c->stats->ntfs++;
			if (!fz_ntf_ok(nlh, why, sizeof(why)) &&
			    c->stats->bad_ntfs++ < FZ_SHOW_BAD) {
				printf("# %s: notification breaks the spec: %s\n",
				       c->unpriv ? "unprivileged" : "root", why);
				fz_hex("  ntf ", nlh, nlh->nlmsg_len);
			}
			if (c->rep && fz_ntf_secret(nlh))
				c->rep->ntf_secret++;
		}
	}
}

const char *fz_outcome_name(int o)
{
	const char *name;

	switch (o) {
	case FZ_E_OK:
		return "ok";
	case FZ_E_DUMP:
		return "dump-done";
	case FZ_E_SILENT:
		return "no-reply";
	case FZ_E_IGNORED:
		return "not-request";
	}
	name = strerrorname_np(o);
	return name ? name : "E?";
}

void fz_stats_print(const char *who, const struct fz_stats *s)
{
	char line[1024];
	int row, o;

	printf("# %s: %lu messages in %.1f s, %.0f messages/s\n", who, s->sent,
	       s->seconds, s->seconds > 0 ? s->sent / s->seconds : 0);
	printf("# %s: %lu replies, %lu notifications; against the spec: %lu, %lu\n",
	       who, s->replies, s->ntfs, s->bad_replies, s->bad_ntfs);
	printf("# %s: rule-new guard dropped %lu, took force out of %lu\n", who,
	       s->guard_dropped, s->guard_stripped);
	if (s->check_seconds > 0)
		printf("# %s: %.1f s reading back the invariants\n", who,
		       s->check_seconds);
	for (row = 0; row < FZ_ROWS; row++) {
		size_t len = 0;

		for (o = 0; o < FZ_NR_OUTCOMES; o++) {
			if (!s->outcome[row][o])
				continue;
			len += snprintf(line + len, sizeof(line) - len, " %s %lu",
					fz_outcome_name(o), s->outcome[row][o]);
			if (len >= sizeof(line))
				break;
		}
		if (!len)
			continue;
		if (len < sizeof(line))
			snprintf(line + len, sizeof(line) - len, ", %.1f s",
				 s->row_seconds[row]);
		printf("#   %-16s%s\n",
		       row < fz_spec.n_ops ? fz_spec.ops[row].name :
		       row == FZ_MAX_OPS + FZ_ROW_NTF ? "(notification)" :
		       "(unknown cmd)", line);
	}
}
