// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Messages built from the spec tables: well-formed requests of every op
 * with values that reach the handlers' deep paths (addresses of devices
 * that exist, UUIDs, ids the kernel handed out), then mutated: wrong types
 * and lengths, bad nesting, attributes dropped, repeated or unknown,
 * strings unterminated or too long, random flags, commands and do/dump
 * confusion. Nothing here names an op or an attribute: values come from
 * pools keyed by the spec's own names and length constants.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

/* One attribute of a message being built; its payload lives in data[]. */
struct fz_item {
	__u16 type;		/* on the wire, flag bits included */
	int len_delta;		/* added to nla_len: a lying length */
	unsigned int off;
	unsigned int len;
};

struct fz_msgb {
	__u16 nl_type;
	__u16 nl_flags;
	__u32 nl_pid;
	__u8 cmd;
	__u8 version;
	__u16 reserved;
	int n;
	struct fz_item it[FZ_MAX_ITEMS];
	unsigned int dlen;
	unsigned char data[FZ_MSG_MAX];
};

static struct fz_msgb msgb;

/* Interesting numbers for a scalar without a pool or a check. */
static const __u64 fz_edges[] = {
	0, 1, 2, 3, 4, 7, 8, 63, 64, 255, 256, 4095, 65535, 65536,
	0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0xffffffffffffffffULL,
	0x8000000000000000ULL,
};

static const char *const fz_seed_drivers[] = {
	"vfio-pci", "vfio-pci", "vfio-pci", "gpuctl-vfio-pci", "pci-stub",
};

static const char *const fz_seed_labels[] = {
	"acme", "globex", "initech", "umbrella",
};

/* ---- pools ---- */

static struct fz_pool *fz_pool_get(struct fz_ctx *c, const char *key,
				   bool create)
{
	int i;

	for (i = 0; i < c->n_pools; i++) {
		if (!strcmp(c->pools[i].key, key))
			return &c->pools[i];
	}
	if (!create || c->n_pools == FZ_MAX_POOLS)
		return NULL;
	snprintf(c->pools[c->n_pools].key, sizeof(c->pools[0].key), "%s", key);
	c->pools[c->n_pools].n = 0;
	return &c->pools[c->n_pools++];
}

static void fz_pool_add(struct fz_ctx *c, const char *key,
			const struct fz_val *v)
{
	struct fz_pool *p = fz_pool_get(c, key, true);
	int i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		if (p->v[i].is_str == v->is_str &&
		    (v->is_str ? !strcmp(p->v[i].str, v->str) :
				 p->v[i].num == v->num))
			return;
	}
	if (p->n < FZ_POOL_VALS)
		p->v[p->n++] = *v;
	else
		p->v[fz_below(&c->rng, FZ_POOL_VALS)] = *v;
}

static void fz_pool_str(struct fz_ctx *c, const char *key, const char *s)
{
	struct fz_val v = { .is_str = true };

	snprintf(v.str, sizeof(v.str), "%s", s);
	fz_pool_add(c, key, &v);
}

static void fz_uuid(struct fz_ctx *c, char *buf, size_t len)
{
	__u64 a = fz_rand(&c->rng), b = fz_rand(&c->rng);

	snprintf(buf, len, "%08x-%04x-%04x-%04x-%012llx", (unsigned int)a,
		 (unsigned int)(a >> 32) & 0xffff, (unsigned int)(a >> 48),
		 (unsigned int)b & 0xffff,
		 (unsigned long long)(b >> 16) & 0xffffffffffffULL);
}

/*
 * What the fuzzer knows about values the spec only names: strings bounded
 * by "address-len" are PCI addresses, "uuid-len" UUIDs, "match-len" rule
 * matches, "driver-len" driver names and "label-len" tenant labels.
 */
void fz_pools_seed(struct fz_ctx *c)
{
	char buf[FZ_STR_LEN];
	unsigned int i;
	int d;

	for (d = 0; d < c->n_devs; d++) {
		const struct fz_dev *dev = &c->devs[d];

		fz_pool_str(c, "address-len", dev->addr);
		/* Rules select GPUs; the guard would drop the others. */
		if (dev->role != fz_k.role_gpu || fz_dev_protected(c, dev))
			continue;
		fz_pool_str(c, "match-len", dev->addr);
		snprintf(buf, sizeof(buf), "%04x:%04x", dev->vendor, dev->device);
		fz_pool_str(c, "match-len", buf);
		snprintf(buf, sizeof(buf), "%04x:*", dev->vendor);
		fz_pool_str(c, "match-len", buf);
		snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", dev->vendor,
			 dev->device, dev->subvendor, dev->subdevice);
		fz_pool_str(c, "match-len", buf);
	}
	/* Rules that match nothing: cheap, and they fill the rule table. */
	for (i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), "%04x:%04x",
			 0xa000 + fz_below(&c->rng, 0x1000), fz_below(&c->rng, 0x10000));
		fz_pool_str(c, "match-len", buf);
	}
	fz_pool_str(c, "address-len", "0000:7e:1f.6");
	for (i = 0; i < 6; i++) {
		fz_uuid(c, buf, sizeof(buf));
		fz_pool_str(c, "uuid-len", buf);
	}
	fz_pool_str(c, "uuid-len", "00000000-0000-0000-0000-000000000000");
	for (i = 0; i < ARRAY_SIZE(fz_seed_drivers); i++)
		fz_pool_str(c, "driver-len", fz_seed_drivers[i]);
	for (i = 0; i < ARRAY_SIZE(fz_seed_labels); i++)
		fz_pool_str(c, "label-len", fz_seed_labels[i]);
}

/* Every string and scalar of a reply goes into the pools of its name. */
void fz_pools_learn(struct fz_ctx *c, int set, const struct nlmsghdr *nlh)
{
	const struct fz_set *s = &fz_spec.sets[set];
	const struct nlattr *na;
	char key[48];
	struct fz_iter it;

	for (na = fz_first_genl(&it, nlh); na; na = fz_next(&it)) {
		const struct fz_attr *a = fz_attr_by_type(set, na->nla_type & NLA_TYPE_MASK);
		struct fz_val v = {};

		if (!a || a->kind == FZ_PAD || a->kind == FZ_NEST ||
		    a->kind == FZ_FLAG || a->kind == FZ_BINARY)
			continue;
		if (a->kind == FZ_STRING) {
			v.is_str = true;
			fz_nla_str(na, v.str, sizeof(v.str));
		} else {
			v.num = fz_nla_uint(na);
		}
		snprintf(key, sizeof(key), "%s.%s", s->name, a->name);
		fz_pool_add(c, key, &v);
		fz_pool_add(c, a->name, &v);
		if (a->len_const)
			fz_pool_add(c, a->len_const, &v);
	}
}

/* A value from one of the pools an attribute may draw on, or NULL. */
static const struct fz_val *fz_pool_pick(struct fz_ctx *c, int set,
					 const struct fz_attr *a)
{
	const struct fz_pool *p[3];
	char key[48];
	int n = 0, i, start;

	snprintf(key, sizeof(key), "%s.%s", fz_spec.sets[set].name, a->name);
	p[n] = fz_pool_get(c, key, false);
	n += p[n] && p[n]->n;
	if (a->len_const) {
		p[n] = fz_pool_get(c, a->len_const, false);
		n += p[n] && p[n]->n;
	}
	p[n] = fz_pool_get(c, a->name, false);
	n += p[n] && p[n]->n;
	if (!n)
		return NULL;
	/* The most specific pool first, more often. */
	start = fz_chance(&c->rng, 60) ? 0 : (int)fz_below(&c->rng, n);
	for (i = 0; i < n; i++) {
		const struct fz_pool *q = p[(start + i) % n];
		const struct fz_val *v = &q->v[fz_below(&c->rng, q->n)];

		bool want_str = a->kind == FZ_STRING;

		if (v->is_str == want_str)
			return v;
	}
	return NULL;
}

/* ---- building ---- */

static struct fz_item *fz_item_add(struct fz_msgb *m, __u16 type,
				   const void *data, unsigned int len)
{
	struct fz_item *it;

	if (m->n == FZ_MAX_ITEMS || m->dlen + len > sizeof(m->data))
		return NULL;
	it = &m->it[m->n++];
	it->type = type;
	it->len_delta = 0;
	it->off = m->dlen;
	it->len = len;
	if (len)
		memcpy(m->data + m->dlen, data, len);
	m->dlen += len;
	return it;
}

static int fz_width(enum fz_kind k)
{
	switch (k) {
	case FZ_U8:
	case FZ_S8:
		return 1;
	case FZ_U16:
	case FZ_S16:
		return 2;
	case FZ_U32:
	case FZ_S32:
	case FZ_BITFIELD32:
		return 4;
	case FZ_U64:
	case FZ_S64:
		return 8;
	default:
		return 0;
	}
}

static void fz_put_num(unsigned char *out, int width, __u64 v, bool be)
{
	int i;

	for (i = 0; i < width; i++) {
		int shift = be ? (width - 1 - i) * 8 : i * 8;

		out[i] = (unsigned char)(v >> shift);
	}
}

static __u64 fz_scalar(struct fz_ctx *c, int set, const struct fz_attr *a,
		       bool good)
{
	const struct fz_val *v;

	if (a->n_enum) {
		__u64 e = a->enum_vals[fz_below(&c->rng, a->n_enum)];

		if (good || fz_chance(&c->rng, 50))
			return a->enum_flags && fz_chance(&c->rng, 30) ?
			       e | a->enum_vals[fz_below(&c->rng, a->n_enum)] : e;
		return a->enum_flags ? fz_rand(&c->rng) :
		       fz_chance(&c->rng, 50) ? 0 : a->enum_vals[a->n_enum - 1] + 1;
	}
	if (a->has_min || a->has_max) {
		long long lo = a->has_min ? a->min : 0;
		long long hi = a->has_max ? a->max : lo + 100;

		if (!good && fz_chance(&c->rng, 50))
			return fz_chance(&c->rng, 50) ? lo - 1 : hi + 1;
		if (hi >= lo)
			return lo + fz_below(&c->rng, (unsigned int)(hi - lo + 1));
		return lo;
	}
	v = fz_pool_pick(c, set, a);
	if (v && (good ? fz_chance(&c->rng, 85) : fz_chance(&c->rng, 40)))
		return v->num;
	if (fz_chance(&c->rng, 50))
		return fz_below(&c->rng, 5);
	if (fz_chance(&c->rng, 60))
		return fz_edges[fz_below(&c->rng, ARRAY_SIZE(fz_edges))];
	return fz_rand(&c->rng);
}

/* A string the attribute does not accept, or barely does. */
static unsigned int fz_bad_string(struct fz_ctx *c, const struct fz_attr *a,
				  unsigned char *buf, unsigned int cap)
{
	unsigned int len, i, max = a->max_len ? a->max_len : 64;

	switch (fz_below(&c->rng, 6)) {
	case 0:			/* one too long, terminated */
		len = max + 1;
		break;
	case 1:			/* exactly the limit */
		len = max;
		break;
	case 2:			/* far too long */
		len = 256 + fz_below(&c->rng, 4000);
		break;
	case 3:			/* empty */
		buf[0] = '\0';
		return 1;
	case 4:			/* unterminated */
		len = 1 + fz_below(&c->rng, max + 2);
		if (len > cap)
			len = cap;
		for (i = 0; i < len; i++)
			buf[i] = 'a' + fz_below(&c->rng, 26);
		return len;
	default:		/* random bytes, NULs included */
		len = 1 + fz_below(&c->rng, max + 8);
		if (len > cap)
			len = cap;
		for (i = 0; i < len; i++)
			buf[i] = (unsigned char)fz_rand(&c->rng);
		return len;
	}
	if (len + 1 > cap)
		len = cap - 1;
	for (i = 0; i < len; i++)
		buf[i] = "0123456789abcdef:.-*"[fz_below(&c->rng, 20)];
	buf[len] = '\0';
	return len + 1;
}

static unsigned int fz_string(struct fz_ctx *c, int set,
			      const struct fz_attr *a, bool good,
			      unsigned char *buf, unsigned int cap)
{
	const struct fz_val *v = fz_pool_pick(c, set, a);
	unsigned int len, i;

	if (!good && fz_chance(&c->rng, 50))
		return fz_bad_string(c, a, buf, cap);
	if (v && fz_chance(&c->rng, good ? 90 : 60)) {
		len = strlen(v->str);
		memcpy(buf, v->str, len + 1);
		/* Upper case: the kernel takes hex and UUIDs in either. */
		if (fz_chance(&c->rng, 10))
			for (i = 0; i < len; i++)
				if (buf[i] >= 'a' && buf[i] <= 'f')
					buf[i] -= 'a' - 'A';
		return len + 1;
	}
	len = fz_below(&c->rng, a->max_len ? a->max_len + 1 : 24);
	for (i = 0; i < len; i++)
		buf[i] = 'a' + fz_below(&c->rng, 26);
	buf[len] = '\0';
	return len + 1;
}

static unsigned int fz_serialize_items(const struct fz_msgb *m, int from,
				       int to, unsigned char *out,
				       unsigned int cap);

static void fz_add_attr(struct fz_ctx *c, struct fz_msgb *m, int set,
			const struct fz_attr *a, bool good, int depth);

/* A nest's payload: some of its set's attributes, built in place. */
static void fz_add_nest(struct fz_ctx *c, struct fz_msgb *m,
			const struct fz_attr *a, bool good, int depth)
{
	const struct fz_set *s = &fz_spec.sets[a->nest];
	unsigned char tmp[2048];
	int first = m->n, i;
	unsigned int len;

	for (i = 0; i < s->n && depth < 4; i++) {
		if (s->attrs[i].kind != FZ_PAD && fz_chance(&c->rng, 50))
			fz_add_attr(c, m, a->nest, &s->attrs[i], good, depth + 1);
	}
	len = fz_serialize_items(m, first, m->n, tmp, sizeof(tmp));
	m->n = first;
	fz_item_add(m, a->type | NLA_F_NESTED, tmp, len);
}

static void fz_add_attr(struct fz_ctx *c, struct fz_msgb *m, int set,
			const struct fz_attr *a, bool good, int depth)
{
	unsigned char buf[4400];
	unsigned int len = 0, i;
	int width = fz_width(a->kind);

	switch (a->kind) {
	case FZ_FLAG:
	case FZ_PAD:
		break;
	case FZ_STRING:
		len = fz_string(c, set, a, good, buf, sizeof(buf));
		break;
	case FZ_NEST:
		fz_add_nest(c, m, a, good, depth);
		return;
	case FZ_BINARY:
	case FZ_OTHER:
		len = a->exact_len ? a->exact_len :
		      a->min_len + fz_below(&c->rng, (a->max_len ? a->max_len : 32) + 1);
		if (len > sizeof(buf))
			len = sizeof(buf);
		for (i = 0; i < len; i++)
			buf[i] = (unsigned char)fz_rand(&c->rng);
		break;
	case FZ_BITFIELD32:
		fz_put_num(buf, 4, fz_scalar(c, set, a, good), false);
		fz_put_num(buf + 4, 4, fz_rand(&c->rng), false);
		len = 8;
		break;
	default:
		fz_put_num(buf, width, fz_scalar(c, set, a, good), a->big_endian);
		len = width;
		break;
	}
	fz_item_add(m, a->type, buf, len);
}

static void fz_msgb_init(struct fz_ctx *c, struct fz_msgb *m, unsigned int cmd,
			 bool dump)
{
	m->nl_type = c->fam.id;
	m->nl_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	m->nl_pid = 0;
	m->cmd = cmd;
	m->version = 1;
	m->reserved = 0;
	m->n = 0;
	m->dlen = 0;
}

/* A request of @op in @mode: each listed attribute with some probability. */
static void fz_build_valid(struct fz_ctx *c, struct fz_msgb *m, int op,
			   int mode, bool good)
{
	const struct fz_op *o = &fz_spec.ops[op];
	const struct fz_mode *md = &o->mode[mode];
	static const unsigned int pcts[] = { 15, 30, 60, 90 };
	unsigned int pct = pcts[fz_below(&c->rng, 4)];
	int i, k, copies;

	fz_msgb_init(c, m, o->cmd, mode == FZ_DUMP);
	for (i = 0; i < md->n_req; i++) {
		const struct fz_attr *a = &fz_spec.sets[o->set].attrs[md->req[i]];
		bool required = i < 64 && c->required[op][mode] & 1ULL << i;

		if (!(good && required) && !fz_chance(&c->rng, pct))
			continue;
		copies = a->multi ? 1 + fz_below(&c->rng, 3) : 1;
		for (k = 0; k < copies; k++)
			fz_add_attr(c, m, o->set, a, good, 0);
	}
}

/* A message from the corpus of an op, back into items. */
static bool fz_build_corpus(struct fz_ctx *c, struct fz_msgb *m, int op)
{
	const struct nlmsghdr *nlh;
	const struct genlmsghdr *g;
	const struct nlattr *a;
	struct fz_iter it;
	int k;

	if (!c->corpus[op].n)
		return false;
	k = fz_below(&c->rng, c->corpus[op].n);
	nlh = (const struct nlmsghdr *)c->corpus[op].buf[k];
	g = (const struct genlmsghdr *)((const char *)nlh + NLMSG_HDRLEN);
	fz_msgb_init(c, m, g->cmd, (nlh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP);
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it))
		fz_item_add(m, a->nla_type, fz_nla_data(a), fz_nla_len(a));
	return true;
}

void fz_corpus_add(struct fz_ctx *c, const struct fz_plan *p, int i)
{
	const struct nlmsghdr *nlh = (const void *)(p->buf + p->m[i].off);
	int op = p->m[i].op, k;

	if (op < 0 || nlh->nlmsg_len > sizeof(c->corpus[0].buf[0]))
		return;
	k = c->corpus[op].n < 8 ? c->corpus[op].n++ : (int)fz_below(&c->rng, 8);
	memcpy(c->corpus[op].buf[k], nlh, nlh->nlmsg_len);
	c->corpus[op].len[k] = nlh->nlmsg_len;
}

/* ---- mutating ---- */

static void fz_random_payload(struct fz_ctx *c, struct fz_msgb *m, __u16 type)
{
	static const unsigned int lens[] = { 0, 1, 2, 4, 8, 3, 13, 40 };
	unsigned int len = lens[fz_below(&c->rng, 8)], i;
	unsigned char buf[64];

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)fz_rand(&c->rng);
	fz_item_add(m, type, buf, len);
}

static unsigned int fz_unknown_type(struct fz_ctx *c, int set)
{
	unsigned int max = set >= 0 ? fz_spec.sets[set].max_type : 32;

	switch (fz_below(&c->rng, 4)) {
	case 0:
		return 0;
	case 1:
		return max + 1 + fz_below(&c->rng, 4);
	case 2:
		return NLA_TYPE_MASK;
	default:
		return fz_below(&c->rng, NLA_TYPE_MASK + 1);
	}
}

static int fz_op_set(unsigned int cmd)
{
	const struct fz_op *o = fz_op_by_cmd(cmd);

	return o ? o->set : -1;
}

static void fz_mutate(struct fz_ctx *c, struct fz_msgb *m)
{
	unsigned char buf[4400];
	struct fz_item *it = m->n ? &m->it[fz_below(&c->rng, m->n)] : NULL;
	int set = fz_op_set(m->cmd);
	unsigned int i, k, len;

	switch (fz_below(&c->rng, 16)) {
	case 0:		/* missing */
		if (it) {
			*it = m->it[m->n - 1];
			m->n--;
		}
		break;
	case 1:		/* duplicated */
		for (k = 1 + fz_below(&c->rng, 3); it && k; k--)
			fz_item_add(m, it->type, m->data + it->off, it->len);
		break;
	case 2:		/* wrong type: another width, or none */
		if (it) {
			static const unsigned int w[] = { 0, 1, 2, 4, 8, 16 };

			it->len = w[fz_below(&c->rng, 6)];
			if (it->off + it->len > m->dlen)
				it->len = m->dlen - it->off;
		}
		break;
	case 3:		/* lying length */
		if (it)
			it->len_delta = fz_chance(&c->rng, 50) ?
					-(int)fz_below(&c->rng, 8) - 1 :
					(int)fz_below(&c->rng, 64) + 1;
		break;
	case 4:		/* nested where it is not, or inside a nest */
		if (it && fz_chance(&c->rng, 50)) {
			it->type |= NLA_F_NESTED;
		} else if (it) {
			len = fz_serialize_items(m, (int)(it - m->it),
						 (int)(it - m->it) + 1, buf,
						 sizeof(buf));
			fz_item_add(m, it->type | NLA_F_NESTED, buf, len);
		}
		break;
	case 5:		/* byte-order flag */
		if (it)
			it->type |= NLA_F_NET_BYTEORDER;
		break;
	case 6:		/* a bad string in a string's place */
		if (set >= 0 && it) {
			const struct fz_attr *a = fz_attr_by_type(set, it->type & NLA_TYPE_MASK);

			if (a && a->kind == FZ_STRING) {
				len = fz_bad_string(c, a, buf, sizeof(buf));
				fz_item_add(m, it->type, buf, len);
				*it = m->it[--m->n];
			}
		}
		break;
	case 7:		/* a huge count of one attribute */
		for (k = 100 + fz_below(&c->rng, 3000); it && k; k--)
			if (!fz_item_add(m, it->type, m->data + it->off, it->len))
				break;
		break;
	case 8:		/* unknown attribute */
		fz_random_payload(c, m, fz_unknown_type(c, set));
		break;
	case 9:		/* random nlmsg flags */
		m->nl_flags = (__u16)fz_rand(&c->rng);
		if (fz_chance(&c->rng, 90))
			m->nl_flags |= NLM_F_REQUEST;
		break;
	case 10:	/* do/dump confusion */
		m->nl_flags ^= NLM_F_DUMP;
		break;
	case 11:	/* the request of one op sent as another */
		if (fz_chance(&c->rng, 60))
			m->cmd = fz_spec.ops[fz_below(&c->rng, fz_spec.n_ops)].cmd;
		else if (fz_spec.n_ntfs && fz_chance(&c->rng, 50))
			m->cmd = fz_spec.ntfs[fz_below(&c->rng, fz_spec.n_ntfs)].cmd;
		else
			m->cmd = (__u8)fz_rand(&c->rng);
		break;
	case 12:	/* genl header fields */
		m->version = (__u8)fz_rand(&c->rng);
		if (fz_chance(&c->rng, 20))
			m->reserved = (__u16)fz_rand(&c->rng);
		m->nl_pid = fz_chance(&c->rng, 50) ? (__u32)fz_rand(&c->rng) : 0;
		break;
	case 13:	/* an attribute with random content */
		if (it)
			for (i = 0; i < it->len; i++)
				m->data[it->off + i] = (unsigned char)fz_rand(&c->rng);
		break;
	case 14:	/* no ack asked */
		m->nl_flags &= ~NLM_F_ACK;
		break;
	default:	/* a well-formed attribute of the op's set, maybe not its own */
		if (set >= 0) {
			const struct fz_set *s = &fz_spec.sets[set];

			fz_add_attr(c, m, set, &s->attrs[fz_below(&c->rng, s->n)],
				    fz_chance(&c->rng, 50), 0);
		}
		break;
	}
}

/* Random attributes of any type and length. */
static void fz_build_random(struct fz_ctx *c, struct fz_msgb *m)
{
	int k = fz_below(&c->rng, 8), set;
	unsigned int cmd;

	if (fz_chance(&c->rng, 80))
		cmd = fz_spec.ops[fz_below(&c->rng, fz_spec.n_ops)].cmd;
	else
		cmd = fz_below(&c->rng, 256);
	fz_msgb_init(c, m, cmd, fz_chance(&c->rng, 30));
	set = fz_op_set(cmd);
	while (k--) {
		unsigned int type = set >= 0 && fz_chance(&c->rng, 70) ?
				    1 + fz_below(&c->rng, fz_spec.sets[set].max_type) :
				    fz_unknown_type(c, set);

		fz_random_payload(c, m, type);
	}
}

static unsigned int fz_serialize_items(const struct fz_msgb *m, int from,
				       int to, unsigned char *out,
				       unsigned int cap)
{
	unsigned int pos = 0;
	int i;

	for (i = from; i < to; i++) {
		const struct fz_item *it = &m->it[i];
		struct nlattr a;
		int nla_len = NLA_HDRLEN + (int)it->len + it->len_delta;

		if (pos + NLA_HDRLEN + NLA_ALIGN(it->len) > cap)
			break;
		a.nla_type = it->type;
		a.nla_len = (__u16)(nla_len < 0 ? 0 : nla_len > 0xffff ? 0xffff : nla_len);
		memcpy(out + pos, &a, sizeof(a));
		memcpy(out + pos + NLA_HDRLEN, m->data + it->off, it->len);
		memset(out + pos + NLA_HDRLEN + it->len, 0,
		       NLA_ALIGN(it->len) - it->len);
		pos += NLA_HDRLEN + NLA_ALIGN(it->len);
	}
	return pos;
}

/*
 * Appends @m to the datagram. Only lengths that keep the kernel inside
 * this message: a message that claims less than it holds would make the
 * rest a message of its own, with a type (a family) we do not choose.
 */
static void fz_plan_add(struct fz_ctx *c, struct fz_plan *p,
			const struct fz_msgb *m, bool mangle, bool last)
{
	size_t off = p->len, hdr = NLMSG_HDRLEN + GENL_HDRLEN;
	struct nlmsghdr *nlh = (struct nlmsghdr *)(p->buf + off);
	struct genlmsghdr *g = (struct genlmsghdr *)(p->buf + off + NLMSG_HDRLEN);
	unsigned int alen, i, len;
	const struct fz_op *o;
	int k = p->n++;
	__u16 flags;

	alen = fz_serialize_items(m, 0, m->n, p->buf + off + hdr,
				  sizeof(p->buf) - off - hdr - 8);
	len = hdr + alen;
	if (mangle && alen && fz_chance(&c->rng, 15)) {
		/* Bytes flipped among the attributes. */
		for (i = 1 + fz_below(&c->rng, 4); i; i--)
			p->buf[off + hdr + fz_below(&c->rng, alen)] ^=
				1 << fz_below(&c->rng, 8);
	}
	if (mangle && fz_chance(&c->rng, 5)) {
		/* Trailing bytes too short for an attribute. */
		for (i = 1 + fz_below(&c->rng, 3); i; i--)
			p->buf[off + len++] = (unsigned char)fz_rand(&c->rng);
	}
	memset(nlh, 0, NLMSG_HDRLEN);
	nlh->nlmsg_len = len;
	nlh->nlmsg_type = m->nl_type;
	nlh->nlmsg_flags = m->nl_flags;
	nlh->nlmsg_seq = c->sk.seq++;
	nlh->nlmsg_pid = m->nl_pid;
	g->cmd = m->cmd;
	g->version = m->version;
	g->reserved = m->reserved;

	p->m[k].off = off;
	p->m[k].cmd = m->cmd;
	o = fz_op_by_cmd(m->cmd);
	p->m[k].op = o ? (int)(o - fz_spec.ops) : -1;
	p->m[k].flags = m->nl_flags;
	p->m[k].dump = (m->nl_flags & NLM_F_DUMP) == NLM_F_DUMP;
	/* What the genl core checks before the op's permission. */
	flags = m->nl_flags;
	if ((flags & NLM_F_DUMP) == NLM_F_DUMP)
		flags &= ~NLM_F_DUMP;
	p->m[k].sane = (m->nl_flags & NLM_F_REQUEST) && !m->reserved &&
		       !(flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO));
	if (last && mangle && fz_chance(&c->rng, 3)) {
		/* A header cut short: no room for the genl header. */
		len = NLMSG_HDRLEN + fz_below(&c->rng, GENL_HDRLEN);
		nlh->nlmsg_len = len;
		p->m[k].sane = false;
	} else if (last && mangle && fz_chance(&c->rng, 2)) {
		/* Longer than the datagram: the kernel ignores it. */
		nlh->nlmsg_len = len + 4 + fz_below(&c->rng, 64);
		p->m[k].sane = false;
	}
	memset(p->buf + off + len, 0, NLMSG_ALIGN(len) - len);
	p->len = off + NLMSG_ALIGN(len);
	if (last && nlh->nlmsg_len == len)
		p->len = off + len;
}

void fz_gen_valid(struct fz_ctx *c, struct fz_plan *p, int op, int mode)
{
	p->len = 0;
	p->n = 0;
	fz_build_valid(c, &msgb, op, mode, true);
	fz_plan_add(c, p, &msgb, false, true);
}

void fz_gen(struct fz_ctx *c, struct fz_plan *p)
{
	int nmsg = fz_chance(&c->rng, 4) ? 2 + fz_below(&c->rng, FZ_MAX_MSGS - 1) : 1;
	int k, op, mode, r, muts;

	p->len = 0;
	p->n = 0;
	for (k = 0; k < nmsg; k++) {
		bool mangle = true;

		op = fz_below(&c->rng, fz_spec.n_ops);
		mode = fz_spec.ops[op].mode[FZ_DO].present ? FZ_DO : FZ_DUMP;
		if (fz_spec.ops[op].mode[FZ_DUMP].present && fz_chance(&c->rng, 30))
			mode = FZ_DUMP;
		r = fz_below(&c->rng, 100);
		if (r < 35) {
			fz_build_valid(c, &msgb, op, mode, true);
			mangle = false;
		} else if (r < 85) {
			if (!fz_chance(&c->rng, 50) || !fz_build_corpus(c, &msgb, op))
				fz_build_valid(c, &msgb, op, mode,
					       fz_chance(&c->rng, 50));
			for (muts = 1 + fz_below(&c->rng, 3); muts; muts--)
				fz_mutate(c, &msgb);
		} else {
			fz_build_random(c, &msgb);
		}
		fz_plan_add(c, p, &msgb, mangle, k == nmsg - 1);
		if (p->len + 4096 > sizeof(p->buf))
			break;
	}
}
