// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Racing netlink operations: rule-new/rule-del, limits, and dumps of
 * every object type checked message by message; see stress_loops.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/msg.h>

#include "stress_loops.h"
#include "testlib.h"

/* How long an unload may take to be counted after the family went. */
#define VANISH_MS		2000
#define DUMP_MAX_TRIES		200
#define DUMP_MAX_KEYS		256
#define KEY_LEN			(NLC_LABEL_LEN + 16)

bool stress_nl_ready(struct stress *s, struct nlc *c, long *unloads)
{
	long now = __atomic_load_n(&s->unloads, __ATOMIC_SEQ_CST);

	if (!stress_running(s))
		return false;
	if (c->sk && now == *unloads)
		return true;
	/* A new module, a new family id: resolve it again. */
	nlc_close(c);
	while (stress_running(s)) {
		now = __atomic_load_n(&s->unloads, __ATOMIC_SEQ_CST);
		if (!nlc_open(c)) {
			*unloads = now;
			return true;
		}
		usleep(10 * 1000);
	}
	return false;
}

/* The module went away under the request that failed. */
static bool vanished(struct stress *s, long unloads)
{
	long deadline = tl_now_ms() + VANISH_MS;

	do {
		if (__atomic_load_n(&s->unloads, __ATOMIC_SEQ_CST) != unloads)
			return true;
		usleep(10 * 1000);
	} while (tl_now_ms() < deadline);
	return false;
}

static const char *err_kind(int err, const int *documented)
{
	for (; *documented; documented++)
		if (*documented == err)
			return "documented, but nothing here gives it a cause";
	return "not a documented error";
}

static const int rule_new_errors[] = {
	EINVAL, EEXIST, EBUSY, ENOENT, EPERM, 0
};

static const int rule_del_errors[] = { EINVAL, ENOENT, EBUSY, EPERM, 0 };

/* The rule-new reply is the rule asked for. */
static void check_rule_reply(struct stress *s, const struct nlc_rule *r,
			     const char *match, const char *driver, bool take)
{
	const char *want = driver ?: "vfio-pci";

	if (strcmp(r->match, match) || strcmp(r->driver, want) ||
	    r->take != take || r->force ||
	    r->source != GPUCTL_RULE_SOURCE_NETLINK)
		stress_violation(s, "rule-new %s %s%s: reply %s %s take %d force %d source %s",
				 match, want, take ? " take" : "", r->match,
				 r->driver, r->take, r->force,
				 nlc_source_name(r->source));
}

void stress_loop_rule(struct stress *s, void *arg)
{
	const struct stress_rule_arg *a = arg;
	struct stress_op *op_new, *op_new_take, *op_del;
	struct nlc c = { 0 };
	long unloads = -1;

	op_new = stress_op(s, "rule-new %s", a->match);
	op_new_take = stress_op(s, "rule-new %s take", a->match);
	op_del = stress_op(s, "rule-del %s", a->match);

	while (stress_nl_ready(s, &c, &unloads)) {
		const char *driver = rand() % 2 ? NULL : "gpuctl-vfio-pci";
		bool take = rand() % 2;
		struct nlc_rule r;
		int ret;

		ret = nlc_rule_new(&c, a->match, driver, false, take, &r);
		stress_count(take ? op_new_take : op_new, ret);
		if (ret) {
			if (a->strict)
				stress_violation(s, "rule-new %s%s: %s (%s) '%s'",
						 a->match, take ? " take" : "",
						 strerror(-ret),
						 err_kind(-ret, rule_new_errors),
						 c.extack);
			stress_pause(40);
			continue;
		}
		if (a->strict)
			check_rule_reply(s, &r, a->match, driver, take);
		stress_pause(40);
		/* Stopped here, the rule stays for the final check. */
		if (!stress_running(s))
			break;
		ret = nlc_rule_del(&c, &r.id, NULL);
		stress_count(op_del, ret);
		if (ret && a->strict)
			stress_violation(s, "rule-del %u (%s): %s (%s) '%s'", r.id,
					 a->match, strerror(-ret),
					 err_kind(-ret, rule_del_errors), c.extack);
		stress_pause(40);
	}
	nlc_close(&c);
}

void stress_loop_limit(struct stress *s, void *arg)
{
	const struct stress_limit_arg *a = arg;
	struct stress_op *op_set, *op_del;
	struct nlc c = { 0 };
	long unloads = -1;

	op_set = stress_op(s, "limit-set account %s", a->name);
	op_del = stress_op(s, "limit-set account %s without max-gpus", a->name);
	while (stress_nl_ready(s, &c, &unloads)) {
		__u32 max = 1 + rand() % 4;
		struct nlc_limit l;

		stress_count(op_set, nlc_limit_set(&c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
						   a->name, &max, &l));
		stress_pause(20);
		stress_count(op_del, nlc_limit_set(&c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
						   a->name, NULL, &l));
		stress_pause(20);
	}
	nlc_close(&c);
}

enum dump_type { DUMP_DEV, DUMP_GROUP, DUMP_RULE, DUMP_ALLOC, DUMP_LIMIT };

struct dump_kind {
	enum dump_type type;
	const char *name;
	__u8 cmd;
	bool ordered;		/* the cursor goes by ascending key */
};

static const struct dump_kind dump_kinds[] = {
	{ DUMP_DEV, "dev-get", GPUCTL_CMD_DEV_GET, true },
	{ DUMP_GROUP, "group-get", GPUCTL_CMD_GROUP_GET, true },
	{ DUMP_RULE, "rule-get", GPUCTL_CMD_RULE_GET, true },
	{ DUMP_ALLOC, "alloc-get", GPUCTL_CMD_ALLOC_GET, true },
	/* Limits have no documented order, only their key. */
	{ DUMP_LIMIT, "limit-get", GPUCTL_CMD_LIMIT_GET, false },
};

struct dump_check {
	const struct dump_kind *k;
	int n;
	char keys[DUMP_MAX_KEYS][KEY_LEN];
	int nbad;			/* a message that is wrong */
	char bad[512];
	int nrace;			/* a duplicate or a key out of order */
	char race[512];
};

/* Keeps the first problem of a dump; counts them all. */
#define BAD(ck, ...)							\
	do {								\
		struct dump_check *_ck = (ck);				\
									\
		if (!_ck->nbad++)					\
			snprintf(_ck->bad, sizeof(_ck->bad), __VA_ARGS__); \
	} while (0)

/*
 * A duplicate or a key out of order is what a dump interrupted by a change
 * may show: it only counts when the dump was not flagged NLM_F_DUMP_INTR.
 */
#define RACE(ck, ...)							\
	do {								\
		struct dump_check *_ck = (ck);				\
									\
		if (!_ck->nrace++)					\
			snprintf(_ck->race, sizeof(_ck->race), __VA_ARGS__); \
	} while (0)

/* The message's key, sortable as a string; false when it lacks one. */
static bool dump_key(struct dump_check *ck, const struct nlmsghdr *nlh,
		     char *key)
{
	union {
		struct nlc_dev dev;
		struct nlc_group group;
		struct nlc_rule rule;
		struct nlc_alloc alloc;
		struct nlc_limit limit;
	} *o = malloc(sizeof(*o));
	bool ok = false;
	int ret = -ENOMEM;

	if (!o)
		goto out;
	switch (ck->k->type) {
	case DUMP_DEV:
		ret = nlc_parse_dev(nlh, &o->dev);
		ok = !ret && NLC_HAS(&o->dev, GPUCTL_A_DEV_ADDRESS);
		snprintf(key, KEY_LEN, "%s", o->dev.address);
		break;
	case DUMP_GROUP:
		ret = nlc_parse_group(nlh, &o->group);
		ok = !ret && NLC_HAS(&o->group, GPUCTL_A_GROUP_ID);
		snprintf(key, KEY_LEN, "%010u", o->group.id);
		break;
	case DUMP_RULE:
		ret = nlc_parse_rule(nlh, &o->rule);
		ok = !ret && NLC_HAS(&o->rule, GPUCTL_A_RULE_ID) &&
		     NLC_HAS(&o->rule, GPUCTL_A_RULE_MATCH);
		snprintf(key, KEY_LEN, "%010u", o->rule.id);
		break;
	case DUMP_ALLOC:
		ret = nlc_parse_alloc(nlh, &o->alloc);
		ok = !ret && NLC_HAS(&o->alloc, GPUCTL_A_ALLOC_ID) &&
		     NLC_HAS(&o->alloc, GPUCTL_A_ALLOC_OWNER);
		snprintf(key, KEY_LEN, "%010u", o->alloc.id);
		break;
	case DUMP_LIMIT:
		ret = nlc_parse_limit(nlh, &o->limit);
		ok = !ret && NLC_HAS(&o->limit, GPUCTL_A_LIMIT_SCOPE) &&
		     NLC_HAS(&o->limit, GPUCTL_A_LIMIT_NAME);
		snprintf(key, KEY_LEN, "%u/%s", o->limit.scope, o->limit.name);
		break;
	}
out:
	if (ret)
		BAD(ck, "message %d does not parse: %s", ck->n, strerror(-ret));
	else if (!ok)
		BAD(ck, "message %d lacks its key attribute", ck->n);
	free(o);
	return ok;
}

static int dump_check_cb(struct nlc *c, __u8 cmd, const struct nlmsghdr *nlh,
			 void *arg)
{
	struct dump_check *ck = arg;
	char key[KEY_LEN];
	int i;

	if (cmd != ck->k->cmd)
		BAD(ck, "message %d is a %s", ck->n, nlc_cmd_name(cmd));
	if (dump_key(ck, nlh, key)) {
		for (i = 0; i < ck->n && i < DUMP_MAX_KEYS; i++)
			if (!strcmp(ck->keys[i], key))
				RACE(ck, "%s twice (messages %d and %d)", key,
				     i, ck->n);
		if (ck->k->ordered && ck->n && ck->n <= DUMP_MAX_KEYS &&
		    strcmp(ck->keys[ck->n - 1], key) > 0)
			RACE(ck, "%s after %s", key, ck->keys[ck->n - 1]);
		if (ck->n < DUMP_MAX_KEYS)
			strscpy(ck->keys[ck->n], key, KEY_LEN);
	}
	ck->n++;
	/* Go on: every message of the dump is checked. */
	return 0;
}

struct dump_ops {
	struct stress_op *done[ARRAY_SIZE(dump_kinds)];
	struct stress_op *intr;
	struct stress_op *gone;
};

/* One dump of @k, retried while it is interrupted by a change. */
static void dump_one(struct stress *s, struct nlc *c, long unloads,
		     const struct dump_kind *k, struct dump_ops *ops, int i)
{
	struct dump_check *ck = malloc(sizeof(*ck));
	int tries, ret;

	if (!ck)
		return;
	for (tries = 0; tries < DUMP_MAX_TRIES; tries++) {
		struct nl_msg *msg = nlc_msg_new(c, k->cmd, NLM_F_DUMP);
		struct nlc_dump_info info;

		memset(ck, 0, sizeof(*ck));
		ck->k = k;
		if (!msg)
			break;
		ret = nlc_exchange(c, msg, dump_check_cb, ck, &info);
		/*
		 * A dump that starts while rmmod is unloading the module gets
		 * -EPROTONOSUPPORT from the netlink core (its try_module_get()
		 * fails) rather than the -ENOENT of a family that is gone.
		 */
		if ((ret == -ENOENT || ret == -EPROTONOSUPPORT) &&
		    vanished(s, unloads)) {
			stress_count(ops->gone, 0);
			break;
		}
		if (ret) {
			stress_count(ops->done[i], ret);
			stress_violation(s, "%s dump: %s '%s'", k->name,
					 strerror(-ret), c->extack);
			break;
		}
		if (ck->nbad || (ck->nrace && !info.intr)) {
			stress_count(ops->done[i], -EPROTO);
			stress_violation(s, "%s dump of %d messages%s: %s",
					 k->name, ck->n,
					 info.intr ? " (NLM_F_DUMP_INTR)" : "",
					 ck->nbad ? ck->bad : ck->race);
			break;
		}
		if (!info.intr) {
			stress_count(ops->done[i], 0);
			break;
		}
		stress_count(ops->intr, 0);
	}
	if (tries == DUMP_MAX_TRIES)
		stress_violation(s, "%s dump came back NLM_F_DUMP_INTR %d times in a row",
				 k->name, DUMP_MAX_TRIES);
	free(ck);
}

void stress_loop_dump(struct stress *s, void *arg)
{
	struct dump_ops ops;
	struct nlc c = { 0 };
	long unloads = -1;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dump_kinds); i++)
		ops.done[i] = stress_op(s, "%s dump", dump_kinds[i].name);
	ops.intr = stress_op(s, "dump retried after NLM_F_DUMP_INTR");
	ops.gone = stress_op(s, "dump refused: module unloaded meanwhile");
	while (stress_nl_ready(s, &c, &unloads))
		for (i = 0; i < ARRAY_SIZE(dump_kinds) && stress_running(s); i++)
			dump_one(s, &c, unloads, &dump_kinds[i], &ops, i);
	nlc_close(&c);
}
