// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Reading the state back through dumps and checking it: the ledger's
 * invariants, the reservation invariants, replies and notifications
 * against the spec, and the cleanup at the end. The names the checks need
 * are looked up in the spec once, so a renumbered attribute still works
 * and a removed one is reported instead of silently never matching.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"
#include "fuzz.h"

struct fz_known fz_k;

#define FZ_SET_DEVS	64

struct fz_salloc {
	__u32 id;
	__u32 gpus;
	__u32 state;
	int ndev;
	char dev[FZ_SET_DEVS][FZ_ADDR_LEN];
	char label[FZ_NR_SCOPES][FZ_STR_LEN];
};

struct fz_slimit {
	__u32 scope;
	char name[FZ_STR_LEN];
	__u32 used;
};

struct fz_srule {
	__u32 id;
	char driver[FZ_STR_LEN];
	int ndev;
	char dev[FZ_SET_DEVS][FZ_ADDR_LEN];
};

struct fz_state {
	struct fz_dev devs[FZ_MAX_DEVS];
	int ndevs;
	struct fz_salloc *allocs;
	int nallocs;
	struct fz_slimit *limits;
	int nlimits;
	struct fz_srule *rules;
	int nrules;
	bool overflow;		/* more than the arrays hold */
};

static const char *const fz_secret_names[] = {
	"allocation", "holder-pid", "holder-comm", "holder-uid",
	"holder-since", "open-match",
};

static int fz_need(unsigned int *out, const char *set, const char *attr,
		   char *why, size_t len)
{
	*out = fz_attr_type(set, attr);
	if (!*out)
		snprintf(why, len, "the spec has no attribute %s.%s", set, attr);
	return *out ? 0 : -1;
}

static int fz_need_enum(long long *out, const char *set, const char *attr,
			const char *entry, char *why, size_t len)
{
	*out = fz_enum_value(set, attr, entry);
	if (*out < 0)
		snprintf(why, len, "the spec has no %s.%s value %s", set, attr, entry);
	return *out < 0 ? -1 : 0;
}

static int fz_need_op(int *out, const char *name, char *why, size_t len)
{
	*out = fz_op_index(name);
	if (*out < 0)
		snprintf(why, len, "the spec has no op %s", name);
	return *out < 0 ? -1 : 0;
}

int fz_known_init(char *why, size_t len)
{
	const struct fz_attr *scope;
	int i, s;

	if (fz_need(&fz_k.dev_address, "dev", "address", why, len) ||
	    fz_need(&fz_k.dev_vendor, "dev", "vendor-id", why, len) ||
	    fz_need(&fz_k.dev_device, "dev", "device-id", why, len) ||
	    fz_need(&fz_k.dev_subvendor, "dev", "subsystem-vendor-id", why, len) ||
	    fz_need(&fz_k.dev_subdevice, "dev", "subsystem-device-id", why, len) ||
	    fz_need(&fz_k.dev_class, "dev", "class", why, len) ||
	    fz_need(&fz_k.dev_driver, "dev", "driver", why, len) ||
	    fz_need(&fz_k.dev_group, "dev", "iommu-group", why, len) ||
	    fz_need(&fz_k.dev_role, "dev", "role", why, len) ||
	    fz_need(&fz_k.dev_reserved, "dev", "reserved", why, len) ||
	    fz_need(&fz_k.dev_state, "dev", "state", why, len) ||
	    fz_need(&fz_k.dev_reason, "dev", "state-reason", why, len) ||
	    fz_need(&fz_k.dev_rule, "dev", "rule", why, len) ||
	    fz_need(&fz_k.dev_alloc, "dev", "allocation", why, len) ||
	    fz_need(&fz_k.alloc_id, "alloc", "id", why, len) ||
	    fz_need(&fz_k.alloc_owner, "alloc", "owner", why, len) ||
	    fz_need(&fz_k.alloc_device, "alloc", "device", why, len) ||
	    fz_need(&fz_k.alloc_gpus, "alloc", "gpus", why, len) ||
	    fz_need(&fz_k.alloc_state, "alloc", "state", why, len) ||
	    fz_need(&fz_k.limit_scope, "limit", "scope", why, len) ||
	    fz_need(&fz_k.limit_name, "limit", "name", why, len) ||
	    fz_need(&fz_k.limit_max, "limit", "max-gpus", why, len) ||
	    fz_need(&fz_k.limit_used, "limit", "used", why, len) ||
	    fz_need(&fz_k.rule_id, "rule", "id", why, len) ||
	    fz_need(&fz_k.rule_match, "rule", "match", why, len) ||
	    fz_need(&fz_k.rule_force, "rule", "force", why, len) ||
	    fz_need(&fz_k.rule_driver, "rule", "driver", why, len) ||
	    fz_need(&fz_k.rule_device, "rule", "device", why, len) ||
	    fz_need_enum(&fz_k.role_gpu, "dev", "role", "gpu", why, len) ||
	    fz_need_enum(&fz_k.role_companion, "dev", "role", "companion", why, len) ||
	    fz_need_enum(&fz_k.role_bridge, "dev", "role", "bridge", why, len) ||
	    fz_need_enum(&fz_k.st_free, "dev", "state", "free", why, len) ||
	    fz_need_enum(&fz_k.st_reserved, "dev", "state", "reserved", why, len) ||
	    fz_need_enum(&fz_k.st_held, "dev", "state", "held", why, len) ||
	    fz_need_enum(&fz_k.st_blocked, "dev", "state", "blocked", why, len) ||
	    fz_need_enum(&fz_k.alloc_lost, "alloc", "state", "lost", why, len) ||
	    fz_need_op(&fz_k.op_dev_get, "dev-get", why, len) ||
	    fz_need_op(&fz_k.op_alloc_new, "alloc-new", why, len) ||
	    fz_need_op(&fz_k.op_alloc_get, "alloc-get", why, len) ||
	    fz_need_op(&fz_k.op_alloc_del, "alloc-del", why, len) ||
	    fz_need_op(&fz_k.op_limit_get, "limit-get", why, len) ||
	    fz_need_op(&fz_k.op_limit_set, "limit-set", why, len) ||
	    fz_need_op(&fz_k.op_rule_new, "rule-new", why, len) ||
	    fz_need_op(&fz_k.op_rule_get, "rule-get", why, len) ||
	    fz_need_op(&fz_k.op_rule_del, "rule-del", why, len))
		return -1;
	for (i = 0; i < FZ_NR_SECRETS; i++) {
		if (fz_need(&fz_k.dev_secret[i], "dev", fz_secret_names[i], why, len))
			return -1;
	}
	/* A limit's scope names the allocation attribute that holds its label. */
	s = fz_set_index("limit");
	for (i = 0; i < fz_spec.sets[s].n; i++) {
		if (fz_spec.sets[s].attrs[i].type == fz_k.limit_scope)
			break;
	}
	scope = &fz_spec.sets[s].attrs[i];
	if (!scope->n_enum || scope->n_enum > FZ_NR_SCOPES) {
		snprintf(why, len, "limit.scope is not an enum of up to %d", FZ_NR_SCOPES);
		return -1;
	}
	fz_k.n_scopes = scope->n_enum;
	for (i = 0; i < scope->n_enum; i++) {
		fz_k.scope_val[i] = scope->enum_vals[i];
		if (fz_need(&fz_k.alloc_label[i], "alloc", scope->enum_names[i],
			    why, len))
			return -1;
	}
	return 0;
}

/* ---- parsing replies ---- */

static void fz_parse_dev(const struct nlmsghdr *nlh, struct fz_dev *d)
{
	const struct nlattr *a;
	struct fz_iter it;
	int i;

	memset(d, 0, sizeof(*d));
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		unsigned int t = a->nla_type & NLA_TYPE_MASK;
		__u64 v = fz_nla_uint(a);

		if (t == fz_k.dev_address)
			fz_nla_str(a, d->addr, sizeof(d->addr));
		else if (t == fz_k.dev_vendor)
			d->vendor = v;
		else if (t == fz_k.dev_device)
			d->device = v;
		else if (t == fz_k.dev_subvendor)
			d->subvendor = v;
		else if (t == fz_k.dev_subdevice)
			d->subdevice = v;
		else if (t == fz_k.dev_class)
			d->class = v;
		else if (t == fz_k.dev_driver)
			fz_nla_str(a, d->driver, sizeof(d->driver));
		else if (t == fz_k.dev_group)
			d->has_group = true, d->group = v;
		else if (t == fz_k.dev_role)
			d->role = v;
		else if (t == fz_k.dev_reserved)
			d->reserved = v;
		else if (t == fz_k.dev_state)
			d->state = v;
		else if (t == fz_k.dev_reason)
			d->has_reason = true;
		else if (t == fz_k.dev_rule)
			d->has_rule = true, d->rule = v;
		if (t == fz_k.dev_alloc)
			d->has_alloc = true, d->alloc = v;
		for (i = 0; i < FZ_NR_SECRETS; i++)
			d->secret += t == fz_k.dev_secret[i];
	}
}

int fz_dev_secrets(const struct nlmsghdr *nlh)
{
	struct fz_dev d;

	fz_parse_dev(nlh, &d);
	return d.secret;
}

static void fz_dev_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_state *st = arg;

	if (st->ndevs == FZ_MAX_DEVS) {
		st->overflow = true;
		return;
	}
	fz_parse_dev(nlh, &st->devs[st->ndevs++]);
}

static void *fz_grow(void *arr, int n, size_t size)
{
	void *p;

	if (n & (n - 1) && n > 16)
		return arr;
	p = realloc(arr, (n < 16 ? 16 : n * 2) * size);
	if (!p) {
		fprintf(stderr, "fuzz: out of memory\n");
		exit(1);
	}
	return p;
}

static void fz_alloc_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_state *st = arg;
	const struct nlattr *a;
	struct fz_salloc *al;
	struct fz_iter it;
	int i;

	st->allocs = fz_grow(st->allocs, st->nallocs, sizeof(*al));
	al = &st->allocs[st->nallocs++];
	memset(al, 0, sizeof(*al));
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		unsigned int t = a->nla_type & NLA_TYPE_MASK;

		if (t == fz_k.alloc_id)
			al->id = fz_nla_uint(a);
		else if (t == fz_k.alloc_gpus)
			al->gpus = fz_nla_uint(a);
		else if (t == fz_k.alloc_state)
			al->state = fz_nla_uint(a);
		else if (t == fz_k.alloc_device && al->ndev < FZ_SET_DEVS)
			fz_nla_str(a, al->dev[al->ndev++], FZ_ADDR_LEN);
		else if (t == fz_k.alloc_device)
			st->overflow = true;
		for (i = 0; i < fz_k.n_scopes; i++) {
			if (t == fz_k.alloc_label[i])
				fz_nla_str(a, al->label[i], FZ_STR_LEN);
		}
	}
}

static void fz_limit_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_state *st = arg;
	const struct nlattr *a;
	struct fz_slimit *l;
	struct fz_iter it;

	st->limits = fz_grow(st->limits, st->nlimits, sizeof(*l));
	l = &st->limits[st->nlimits++];
	memset(l, 0, sizeof(*l));
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		unsigned int t = a->nla_type & NLA_TYPE_MASK;

		if (t == fz_k.limit_scope)
			l->scope = fz_nla_uint(a);
		else if (t == fz_k.limit_name)
			fz_nla_str(a, l->name, sizeof(l->name));
		else if (t == fz_k.limit_used)
			l->used = fz_nla_uint(a);
	}
}

static void fz_rule_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_state *st = arg;
	const struct nlattr *a;
	struct fz_srule *r;
	struct fz_iter it;

	st->rules = fz_grow(st->rules, st->nrules, sizeof(*r));
	r = &st->rules[st->nrules++];
	memset(r, 0, sizeof(*r));
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		unsigned int t = a->nla_type & NLA_TYPE_MASK;

		if (t == fz_k.rule_id)
			r->id = fz_nla_uint(a);
		else if (t == fz_k.rule_driver)
			fz_nla_str(a, r->driver, sizeof(r->driver));
		else if (t == fz_k.rule_device && r->ndev < FZ_SET_DEVS)
			fz_nla_str(a, r->dev[r->ndev++], FZ_ADDR_LEN);
	}
}

static void fz_state_free(struct fz_state *st)
{
	free(st->allocs);
	free(st->limits);
	free(st->rules);
	memset(st, 0, sizeof(*st));
}

/* Learns from what a dump brought, for the generator's pools. */
struct fz_learn {
	struct fz_ctx *c;
	int set;
	void (*parse)(const struct nlmsghdr *nlh, int idx, void *arg);
	void *arg;
};

static void fz_learn_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_learn *l = arg;

	fz_pools_learn(l->c, l->set, nlh);
	l->parse(nlh, idx, l->arg);
}

static int fz_dump_into(struct fz_ctx *c, int op,
			void (*parse)(const struct nlmsghdr *, int, void *),
			struct fz_state *st)
{
	struct fz_learn l = { c, fz_spec.ops[op].set, parse, st };
	struct fz_res res;

	return fz_dump(&c->sk, c->fam.id, fz_spec.ops[op].cmd, fz_learn_cb, &l,
		       &res);
}

static int fz_state_load(struct fz_ctx *c, struct fz_state *st)
{
	int ret;

	memset(st, 0, sizeof(*st));
	ret = fz_dump_into(c, fz_k.op_dev_get, fz_dev_cb, st) ?:
	      fz_dump_into(c, fz_k.op_alloc_get, fz_alloc_cb, st) ?:
	      fz_dump_into(c, fz_k.op_limit_get, fz_limit_cb, st) ?:
	      fz_dump_into(c, fz_k.op_rule_get, fz_rule_cb, st);
	return ret;
}

int fz_inventory_load(struct fz_ctx *c)
{
	static struct fz_state st;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = fz_dump_into(c, fz_k.op_dev_get, fz_dev_cb, &st);
	if (ret)
		return ret;
	memcpy(c->devs, st.devs, sizeof(st.devs[0]) * st.ndevs);
	c->n_devs = st.ndevs;
	return 0;
}

int fz_ledger_counts(struct fz_ctx *c, int *allocs, int *limits, int *rules)
{
	static struct fz_state st;
	int ret = fz_state_load(c, &st);

	*allocs = st.nallocs;
	*limits = st.nlimits;
	*rules = st.nrules;
	fz_state_free(&st);
	return ret;
}

/* ---- invariants ---- */

struct fz_report {
	char *why;
	size_t len;
	int n;
};

static __printf(2, 3) void fz_violation(struct fz_report *r, const char *fmt, ...)
{
	size_t used = strlen(r->why);
	va_list ap;

	if (r->n++ < 6 && used + 2 < r->len) {
		va_start(ap, fmt);
		vsnprintf(r->why + used, r->len - used, fmt, ap);
		va_end(ap);
		used = strlen(r->why);
		if (used + 2 < r->len)
			strcat(r->why, "; ");
	}
}

static const struct fz_dev *fz_find_dev(const struct fz_state *st,
					const char *addr)
{
	int i;

	for (i = 0; i < st->ndevs; i++) {
		if (!strcmp(st->devs[i].addr, addr))
			return &st->devs[i];
	}
	return NULL;
}

static const struct fz_salloc *fz_find_alloc(const struct fz_state *st,
					     __u32 id)
{
	int i;

	for (i = 0; i < st->nallocs; i++) {
		if (st->allocs[i].id == id)
			return &st->allocs[i];
	}
	return NULL;
}

static const struct fz_srule *fz_find_rule(const struct fz_state *st, __u32 id)
{
	int i;

	for (i = 0; i < st->nrules; i++) {
		if (st->rules[i].id == id)
			return &st->rules[i];
	}
	return NULL;
}

static bool fz_lists(const char (*devs)[FZ_ADDR_LEN], int n, const char *addr)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(devs[i], addr))
			return true;
	}
	return false;
}

/* No device in two allocations; the ledger agrees with dev-get. */
static void fz_check_ledger(const struct fz_state *st, struct fz_report *r)
{
	int i, j, k, l, gpus;

	for (i = 0; i < st->nallocs; i++) {
		const struct fz_salloc *a = &st->allocs[i];
		bool lost = a->state == fz_k.alloc_lost;

		for (j = 0; j < a->ndev; j++) {
			const struct fz_dev *d = fz_find_dev(st, a->dev[j]);

			for (k = i; k < st->nallocs; k++) {
				for (l = k == i ? j + 1 : 0; l < st->allocs[k].ndev; l++) {
					if (!strcmp(a->dev[j], st->allocs[k].dev[l]))
						fz_violation(r, "%s is in allocations %u and %u",
							     a->dev[j], a->id,
							     st->allocs[k].id);
				}
			}
			if (lost)
				continue;
			if (!d)
				fz_violation(r, "allocation %u lists unknown %s",
					     a->id, a->dev[j]);
			else if (!d->has_alloc || d->alloc != a->id)
				fz_violation(r, "allocation %u lists %s, dev-get says %s %u",
					     a->id, d->addr,
					     d->has_alloc ? "allocation" : "none", d->alloc);
		}
		if (lost)
			continue;
		for (j = 0, gpus = 0; j < a->ndev; j++) {
			const struct fz_dev *d = fz_find_dev(st, a->dev[j]);

			gpus += d && d->role == fz_k.role_gpu;
		}
		if (gpus != (int)a->gpus)
			fz_violation(r, "allocation %u counts %u GPUs but lists %d",
				     a->id, a->gpus, gpus);
	}
	for (i = 0; i < st->ndevs; i++) {
		const struct fz_dev *d = &st->devs[i];
		const struct fz_salloc *a;

		if (!d->has_alloc)
			continue;
		a = fz_find_alloc(st, d->alloc);
		if (!a || !fz_lists(a->dev, a->ndev, d->addr))
			fz_violation(r, "dev-get puts %s in allocation %u, which %s",
				     d->addr, d->alloc,
				     a ? "does not list it" : "alloc-get does not know");
		if (!d->reserved)
			fz_violation(r, "%s is allocated but not reserved", d->addr);
	}
}

/* Each limit's "used" is the GPUs of the allocations with its label. */
static void fz_check_limits(const struct fz_state *st, struct fz_report *r)
{
	int i, j, s;

	for (i = 0; i < st->nlimits; i++) {
		const struct fz_slimit *l = &st->limits[i];
		__u32 sum = 0;

		for (s = 0; s < fz_k.n_scopes; s++) {
			if (fz_k.scope_val[s] == l->scope)
				break;
		}
		if (s == fz_k.n_scopes) {
			fz_violation(r, "limit %s has scope %u, not in the spec",
				     l->name, l->scope);
			continue;
		}
		for (j = 0; j < st->nallocs; j++) {
			if (!strcmp(st->allocs[j].label[s], l->name))
				sum += st->allocs[j].gpus;
		}
		if (sum != l->used)
			fz_violation(r, "limit %u/%s says %u used, its allocations hold %u",
				     l->scope, l->name, l->used, sum);
	}
}

/*
 * Every reserved device is on its rule's driver (or on none, with the
 * override in place), or reported held or blocked with a reason; rules
 * and devices agree on who reserves what.
 */
static void fz_check_reserve(const struct fz_state *st, struct fz_report *r)
{
	int i, j;

	for (i = 0; i < st->ndevs; i++) {
		const struct fz_dev *d = &st->devs[i];
		const struct fz_srule *rule;

		if (!d->reserved) {
			if (d->has_rule || d->state != fz_k.st_free)
				fz_violation(r, "%s is not reserved but has rule %u, state %u",
					     d->addr, d->rule, d->state);
			continue;
		}
		rule = d->has_rule ? fz_find_rule(st, d->rule) : NULL;
		if (!rule) {
			fz_violation(r, "%s is reserved by rule %u, which rule-get does not know",
				     d->addr, d->rule);
			continue;
		}
		if (!fz_lists(rule->dev, rule->ndev, d->addr))
			fz_violation(r, "rule %u does not list %s, which dev-get says it reserves",
				     rule->id, d->addr);
		if (d->state == fz_k.st_reserved) {
			if (d->driver[0] && strcmp(d->driver, rule->driver))
				fz_violation(r, "%s is reserved on %s, its rule %u wants %s",
					     d->addr, d->driver, rule->id, rule->driver);
		} else if (d->state == fz_k.st_held) {
			if (!d->has_reason || !d->driver[0] ||
			    !strcmp(d->driver, rule->driver))
				fz_violation(r, "%s is held (driver '%s', reason %s)",
					     d->addr, d->driver,
					     d->has_reason ? "given" : "missing");
		} else if (d->state == fz_k.st_blocked) {
			if (!d->has_reason)
				fz_violation(r, "%s is blocked without a state-reason",
					     d->addr);
		} else {
			fz_violation(r, "%s is reserved by rule %u but in state %u",
				     d->addr, rule->id, d->state);
		}
	}
	for (i = 0; i < st->nrules; i++) {
		const struct fz_srule *rule = &st->rules[i];

		for (j = 0; j < rule->ndev; j++) {
			const struct fz_dev *d = fz_find_dev(st, rule->dev[j]);

			if (!d || !d->has_rule || d->rule != rule->id)
				fz_violation(r, "rule %u lists %s, dev-get does not",
					     rule->id, rule->dev[j]);
		}
	}
}

/*
 * Reservation states settle after the worker's pass, which rule-new and
 * rule-del return before: a reservation violation counts only when it
 * outlasts twelve seconds. The ledger changes only on requests, and
 * none is sent meanwhile, so its invariants need no second look.
 */
int fz_invariants(struct fz_ctx *c, char *why, size_t len)
{
	static struct fz_state st;
	struct fz_report r = { why, len, 0 };
	int ret, waited;

	for (waited = 0;; waited += 250) {
		why[0] = '\0';
		r.n = 0;
		ret = fz_state_load(c, &st);
		if (ret) {
			snprintf(why, len, "reading the state back: %s",
				 strerror(-ret));
			fz_state_free(&st);
			return 1;
		}
		fz_check_reserve(&st, &r);
		if (!r.n || waited >= 12000)
			break;
		fz_state_free(&st);
		usleep(250000);
	}
	if (st.overflow)
		fz_violation(&r, "more objects than the checker holds");
	fz_check_ledger(&st, &r);
	fz_check_limits(&st, &r);
	/* Keep the guard's and the pools' view current. */
	memcpy(c->devs, st.devs, sizeof(st.devs[0]) * st.ndevs);
	c->n_devs = st.ndevs;
	fz_state_free(&st);
	return r.n;
}

/* ---- replies against the spec ---- */

static bool fz_attr_len_ok(const struct fz_attr *a, const struct nlattr *na)
{
	int len = fz_nla_len(na);

	switch (a->kind) {
	case FZ_FLAG:
		return len == 0;
	case FZ_U8:
	case FZ_S8:
		return len == 1;
	case FZ_U16:
	case FZ_S16:
		return len == 2;
	case FZ_U32:
	case FZ_S32:
		return len == 4;
	case FZ_U64:
	case FZ_S64:
		return len == 8;
	case FZ_BITFIELD32:
		return len == 8;
	case FZ_STRING:
		return len > 0 && memchr(fz_nla_data(na), '\0', len) ==
				  (const char *)fz_nla_data(na) + len - 1;
	default:
		return true;
	}
}

static bool fz_enum_ok(const struct fz_attr *a, __u64 v)
{
	__u64 mask = 0;
	int i;

	for (i = 0; i < a->n_enum; i++) {
		if (!a->enum_flags && (__u64)a->enum_vals[i] == v)
			return true;
		mask |= a->enum_vals[i];
	}
	return a->enum_flags && !(v & ~mask);
}

/* Attributes of @set in @head; @allowed (n) limits the types, or NULL. */
static bool fz_attrs_ok(int set, const struct nlattr *head, int len,
			const unsigned short *allowed, int n, char *why,
			size_t wlen)
{
	const struct fz_set *s = &fz_spec.sets[set];
	unsigned int seen[64] = {};
	const struct nlattr *na;
	struct fz_iter it;
	int i;

	for (na = fz_first(&it, head, len); na; na = fz_next(&it)) {
		unsigned int t = na->nla_type & NLA_TYPE_MASK;
		const struct fz_attr *a = fz_attr_by_type(set, t);
		bool listed = !allowed;

		for (i = 0; allowed && i < n; i++)
			listed |= s->attrs[allowed[i]].type == t;
		if (!a || (!listed && a->kind != FZ_PAD)) {
			snprintf(why, wlen, "%s attribute %u is not in the reply's list",
				 s->name, t);
			return false;
		}
		if (!fz_attr_len_ok(a, na)) {
			snprintf(why, wlen, "%s.%s has length %d", s->name, a->name,
				 fz_nla_len(na));
			return false;
		}
		if (t < 64 && seen[t]++ && !a->multi && a->kind != FZ_PAD) {
			snprintf(why, wlen, "%s.%s repeats but is no multi-attr",
				 s->name, a->name);
			return false;
		}
		if (a->n_enum && !fz_enum_ok(a, fz_nla_uint(na))) {
			snprintf(why, wlen, "%s.%s is %llu, not in its enum", s->name,
				 a->name, (unsigned long long)fz_nla_uint(na));
			return false;
		}
		if (a->kind == FZ_NEST &&
		    !fz_attrs_ok(a->nest, fz_nla_data(na), fz_nla_len(na), NULL, 0,
				 why, wlen))
			return false;
	}
	if (it.rem) {
		snprintf(why, wlen, "%d bytes after the last attribute", it.rem);
		return false;
	}
	return true;
}

bool fz_reply_ok(int op, int mode, const struct nlmsghdr *nlh, char *why,
		 size_t len)
{
	const struct fz_op *o = &fz_spec.ops[op];
	const struct fz_mode *m = &o->mode[mode];
	const struct nlattr *head;
	int alen;

	if (!m->present || !m->has_reply) {
		snprintf(why, len, "%s %s has no reply in the spec", o->name,
			 mode == FZ_DUMP ? "dump" : "do");
		return false;
	}
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		snprintf(why, len, "reply too short for a genl header");
		return false;
	}
	head = fz_genl_attrs(nlh, &alen);
	return fz_attrs_ok(o->set, head, alen, m->rsp, m->n_rsp, why, len);
}

static const struct fz_ntf *fz_ntf_of(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = NLMSG_DATA(nlh);
	int i;

	for (i = 0; i < fz_spec.n_ntfs; i++) {
		if (fz_spec.ntfs[i].cmd == g->cmd)
			return &fz_spec.ntfs[i];
	}
	return NULL;
}

bool fz_ntf_ok(const struct nlmsghdr *nlh, char *why, size_t len)
{
	const struct fz_ntf *n;
	const struct fz_mode *m;
	const struct nlattr *head;
	int alen;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		snprintf(why, len, "notification too short");
		return false;
	}
	n = fz_ntf_of(nlh);
	if (!n) {
		snprintf(why, len, "notification command %u is not in the spec",
			 ((const struct genlmsghdr *)NLMSG_DATA(nlh))->cmd);
		return false;
	}
	m = n->op >= 0 ? &fz_spec.ops[n->op].mode[FZ_DO] : NULL;
	head = fz_genl_attrs(nlh, &alen);
	return fz_attrs_ok(n->set, head, alen, m ? m->rsp : NULL,
			   m ? m->n_rsp : 0, why, len);
}

/*
 * Ledger data: a notification that repeats an admin-only read, or that
 * carries a device's allocation or holder.
 */
bool fz_ntf_secret(const struct nlmsghdr *nlh)
{
	const struct fz_ntf *n = fz_ntf_of(nlh);

	if (n && n->op >= 0 && fz_spec.ops[n->op].admin)
		return true;
	return n && n->set == fz_set_index("dev") && fz_dev_secrets(nlh);
}

/* ---- cleanup ---- */

static size_t fz_put_u32(unsigned char *buf, unsigned int type, __u32 v)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + 4, .nla_type = type };

	memcpy(buf, &a, sizeof(a));
	memcpy(buf + NLA_HDRLEN, &v, 4);
	return NLA_HDRLEN + 4;
}

static size_t fz_put_str(unsigned char *buf, unsigned int type, const char *s)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + strlen(s) + 1, .nla_type = type };

	memcpy(buf, &a, sizeof(a));
	memcpy(buf + NLA_HDRLEN, s, strlen(s) + 1);
	memset(buf + a.nla_len, 0, NLA_ALIGN(a.nla_len) - a.nla_len);
	return NLA_ALIGN(a.nla_len);
}

/* Deletes every allocation, limit and rule, then checks none is left. */
int fz_cleanup(struct fz_ctx *c, char *why, size_t len)
{
	static struct fz_state st;
	unsigned char attrs[256];
	struct fz_res res;
	int i, ret, fails = 0;

	why[0] = '\0';
	ret = fz_state_load(c, &st);
	if (ret) {
		snprintf(why, len, "reading the state: %s", strerror(-ret));
		return -1;
	}
	printf("# deleting %d allocations, %d limits, %d rules\n", st.nallocs,
	       st.nlimits, st.nrules);
	for (i = 0; i < st.nallocs; i++) {
		ret = fz_do(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_alloc_del].cmd,
			    attrs, fz_put_u32(attrs, fz_k.alloc_id, st.allocs[i].id),
			    NULL, NULL, &res);
		if (ret && !fails++)
			snprintf(why, len, "alloc-del %u: %s (%s)", st.allocs[i].id,
				 strerror(-ret), res.extack);
	}
	for (i = 0; i < st.nlimits; i++) {
		size_t n = fz_put_u32(attrs, fz_k.limit_scope, st.limits[i].scope);

		n += fz_put_str(attrs + n, fz_k.limit_name, st.limits[i].name);
		ret = fz_do(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_limit_set].cmd,
			    attrs, n, NULL, NULL, &res);
		if (ret && !fails++)
			snprintf(why, len, "limit-set %u/%s without max-gpus: %s (%s)",
				 st.limits[i].scope, st.limits[i].name,
				 strerror(-ret), res.extack);
	}
	for (i = 0; i < st.nrules; i++) {
		ret = fz_do(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_rule_del].cmd,
			    attrs, fz_put_u32(attrs, fz_k.rule_id, st.rules[i].id),
			    NULL, NULL, &res);
		if (ret && !fails++)
			snprintf(why, len, "rule-del %u: %s (%s)", st.rules[i].id,
				 strerror(-ret), res.extack);
	}
	fz_state_free(&st);
	if (fails)
		return -1;
	ret = fz_state_load(c, &st);
	if (!ret && (st.nallocs || st.nlimits || st.nrules)) {
		snprintf(why, len, "left after cleanup: %d allocations, %d limits, %d rules",
			 st.nallocs, st.nlimits, st.nrules);
		ret = -1;
	}
	fz_state_free(&st);
	return ret ? -1 : 0;
}
