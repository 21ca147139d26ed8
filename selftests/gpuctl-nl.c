// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * gpuctl-nl: the selftests' own command-line client, for shell tests. One
 * line per object, "KIND key=value ...", absent attributes and flags left
 * out; a value with spaces (state_reason, reason, warning, refused) ends
 * the line. Allocation labels are printed as given. The monitor prints each
 * notification under its name: device (vfio-open/close-ntf included), rule
 * and allocation notifications in the dev, rule and alloc forms. Errors go
 * to stderr as
 * "error: STRERROR (errno N): EXTACK [bad attribute NAME]".
 * Exit status: 0 success, 1 usage, 2 netlink or kernel error, 3 monitor
 * timeout before --count events. "mcast-group NAME" prints the id of the
 * family's multicast group NAME, as the kernel's nlctrl resolves it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nlclient.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: gpuctl-nl dev-dump\n"
		"       gpuctl-nl dev-get ADDRESS\n"
		"       gpuctl-nl dev-set ADDRESS NUMVFS\n"
		"       gpuctl-nl group-dump\n"
		"       gpuctl-nl group-get ID\n"
		"       gpuctl-nl rule-new MATCH [driver NAME] [force] [take]\n"
		"       gpuctl-nl rule-del [id ID] [match MATCH]\n"
		"       gpuctl-nl rule-get ID\n"
		"       gpuctl-nl rule-dump\n"
		"       gpuctl-nl alloc-new [owner UUID] [id ID] [name NAME]\n"
		"                 [account A] [project P] [domain D]\n"
		"                 [device ADDR]... [count N] [match M]\n"
		"                 [numa-node N] [numa-policy POLICY|NUM]\n"
		"                 [detach-on-stop] [uid UID] [gid GID]\n"
		"       gpuctl-nl alloc-del [id ID] [owner UUID]\n"
		"       gpuctl-nl alloc-get ID\n"
		"       gpuctl-nl alloc-dump\n"
		"       gpuctl-nl limit-set [scope SCOPE|NUM] [name NAME] [max-gpus N]\n"
		"       gpuctl-nl limit-get SCOPE|NUM NAME\n"
		"       gpuctl-nl limit-dump\n"
		"       gpuctl-nl monitor [--count N] [--timeout SECONDS] [--group ledger|monitor]\n"
		"       gpuctl-nl mcast-group NAME\n");
}

static int fail(struct nlc *c, int ret)
{
	if (!c->err)
		c->err = -ret;
	nlc_print_error(stderr, c);
	return 2;
}

static int cmd_dev_dump(struct nlc *c)
{
	struct nlc_dump_info info;
	struct nlc_dev *devs;
	int i, n, ret;

	do {
		ret = nlc_dev_dump(c, &devs, &n, &info);
		if (!ret && info.intr) {
			/* Interrupted by a change: the kernel's advice is to retry. */
			free(devs);
			ret = -EINTR;
		}
	} while (ret == -EINTR);
	if (ret)
		return fail(c, ret);
	for (i = 0; i < n; i++)
		nlc_print_dev(stdout, "dev", &devs[i]);
	free(devs);
	return 0;
}

static int cmd_group_dump(struct nlc *c)
{
	struct nlc_dump_info info;
	struct nlc_group *groups;
	int i, n, ret;

	do {
		ret = nlc_group_dump(c, &groups, &n, &info);
		if (!ret && info.intr) {
			free(groups);
			ret = -EINTR;
		}
	} while (ret == -EINTR);
	if (ret)
		return fail(c, ret);
	for (i = 0; i < n; i++)
		nlc_print_group(stdout, "group", &groups[i]);
	free(groups);
	return 0;
}

static int cmd_rule_dump(struct nlc *c)
{
	struct nlc_dump_info info;
	struct nlc_rule *rules;
	int i, n, ret;

	do {
		ret = nlc_rule_dump(c, &rules, &n, &info);
		if (!ret && info.intr) {
			free(rules);
			ret = -EINTR;
		}
	} while (ret == -EINTR);
	if (ret)
		return fail(c, ret);
	for (i = 0; i < n; i++)
		nlc_print_rule(stdout, "rule", &rules[i]);
	free(rules);
	return 0;
}

static bool parse_u32(const char *s, __u32 *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 0);
	if (!*s || *end || errno || n > 0xffffffffUL)
		return false;
	*v = n;
	return true;
}

/* An enum by name, or any number so tests can send values out of range. */
static bool parse_enum(const char *s, __u32 (*num)(const char *), __u32 *v)
{
	*v = num(s);
	return *v || parse_u32(s, v);
}

static int cmd_alloc_dump(struct nlc *c)
{
	struct nlc_dump_info info;
	struct nlc_alloc *allocs;
	int i, n, ret;

	do {
		ret = nlc_alloc_dump(c, &allocs, &n, &info);
		if (!ret && info.intr) {
			free(allocs);
			ret = -EINTR;
		}
	} while (ret == -EINTR);
	if (ret)
		return fail(c, ret);
	for (i = 0; i < n; i++)
		nlc_print_alloc(stdout, "alloc", &allocs[i]);
	free(allocs);
	return 0;
}

static int cmd_limit_dump(struct nlc *c)
{
	struct nlc_limit *limits;
	int i, n, ret;

	ret = nlc_limit_dump(c, &limits, &n, NULL);
	if (ret)
		return fail(c, ret);
	for (i = 0; i < n; i++)
		nlc_print_limit(stdout, "limit", &limits[i]);
	free(limits);
	return 0;
}

/* KEY VALUE pairs of alloc-new that carry a u32. */
static const struct {
	const char *key;
	int attr;
} alloc_u32_args[] = {
	{ "id", GPUCTL_A_ALLOC_ID },
	{ "count", GPUCTL_A_ALLOC_COUNT },
	{ "numa-node", GPUCTL_A_ALLOC_NUMA_NODE },
	{ "uid", GPUCTL_A_ALLOC_UID },
	{ "gid", GPUCTL_A_ALLOC_GID },
};

/* KEY VALUE pairs of alloc-new that carry a string. */
static const struct {
	const char *key;
	size_t off;
} alloc_str_args[] = {
	{ "owner", offsetof(struct nlc_alloc_req, owner) },
	{ "name", offsetof(struct nlc_alloc_req, name) },
	{ "account", offsetof(struct nlc_alloc_req, account) },
	{ "project", offsetof(struct nlc_alloc_req, project) },
	{ "domain", offsetof(struct nlc_alloc_req, domain) },
	{ "match", offsetof(struct nlc_alloc_req, match) },
};

/* One KEY [VALUE] of alloc-new at argv[*i]; false when it is not one. */
static bool parse_alloc_arg(struct nlc_alloc_req *req, int argc, char **argv,
			    int *i)
{
	const char *key = argv[*i];
	size_t k;
	__u32 v;

	if (!strcmp(key, "detach-on-stop")) {
		nlc_alloc_req_set(req, GPUCTL_A_ALLOC_DETACH_ON_STOP, 0);
		return true;
	}
	if (*i + 1 >= argc)
		return false;
	if (!strcmp(key, "device")) {
		if (req->ndevices >= NLC_MAX_MEMBERS)
			return false;
		req->devices[req->ndevices++] = argv[++*i];
		return true;
	}
	if (!strcmp(key, "numa-policy")) {
		if (!parse_enum(argv[++*i], nlc_numa_policy_num, &v))
			return false;
		nlc_alloc_req_set(req, GPUCTL_A_ALLOC_NUMA_POLICY, v);
		return true;
	}
	for (k = 0; k < ARRAY_SIZE(alloc_str_args); k++) {
		if (strcmp(key, alloc_str_args[k].key))
			continue;
		*(const char **)((char *)req + alloc_str_args[k].off) =
			argv[++*i];
		return true;
	}
	for (k = 0; k < ARRAY_SIZE(alloc_u32_args); k++) {
		if (strcmp(key, alloc_u32_args[k].key))
			continue;
		if (!parse_u32(argv[++*i], &v))
			return false;
		nlc_alloc_req_set(req, alloc_u32_args[k].attr, v);
		return true;
	}
	return false;
}

/* Any subset of the request attributes: the kernel judges what is missing. */
static int cmd_alloc_new(struct nlc *c, int argc, char **argv)
{
	struct nlc_alloc_req req = { 0 };
	struct nlc_alloc a;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!parse_alloc_arg(&req, argc, argv, &i)) {
			help(stderr);
			return 1;
		}
	}
	ret = nlc_alloc_new(c, &req, &a);
	if (ret)
		return fail(c, ret);
	nlc_print_alloc(stdout, "alloc", &a);
	return 0;
}

static int cmd_alloc_del(struct nlc *c, int argc, char **argv)
{
	const char *owner = NULL;
	bool by_id = false;
	__u32 id;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "id") && i + 1 < argc &&
		    parse_u32(argv[i + 1], &id)) {
			by_id = true;
			i++;
		} else if (!strcmp(argv[i], "owner") && i + 1 < argc) {
			owner = argv[++i];
		} else {
			help(stderr);
			return 1;
		}
	}
	ret = nlc_alloc_del(c, by_id ? &id : NULL, owner);
	return ret ? fail(c, ret) : 0;
}

static int cmd_alloc_get(struct nlc *c, const char *arg)
{
	struct nlc_alloc a;
	__u32 id;
	int ret;

	if (!parse_u32(arg, &id)) {
		help(stderr);
		return 1;
	}
	ret = nlc_alloc_get(c, id, &a);
	if (ret)
		return fail(c, ret);
	nlc_print_alloc(stdout, "alloc", &a);
	return 0;
}

/* [scope SCOPE] [name NAME] [max-gpus N]; without max-gpus, removal. */
static int cmd_limit_set(struct nlc *c, int argc, char **argv)
{
	const char *name = NULL;
	__u32 scope = 0, max;
	bool has_max = false;
	struct nlc_limit l;
	int i, ret;

	for (i = 0; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "scope") &&
		    parse_enum(argv[i + 1], nlc_limit_scope_num, &scope))
			continue;
		if (!strcmp(argv[i], "name")) {
			name = argv[i + 1];
			continue;
		}
		if (!strcmp(argv[i], "max-gpus") &&
		    parse_u32(argv[i + 1], &max)) {
			has_max = true;
			continue;
		}
		break;
	}
	if (i != argc) {
		help(stderr);
		return 1;
	}
	ret = nlc_limit_set(c, scope, name, has_max ? &max : NULL, &l);
	if (ret)
		return fail(c, ret);
	nlc_print_limit(stdout, "limit", &l);
	return 0;
}

static int cmd_limit_get(struct nlc *c, const char *scope_s, const char *name)
{
	struct nlc_limit l;
	__u32 scope;
	int ret;

	if (!parse_enum(scope_s, nlc_limit_scope_num, &scope)) {
		help(stderr);
		return 1;
	}
	ret = nlc_limit_get(c, scope, name, &l);
	if (ret)
		return fail(c, ret);
	nlc_print_limit(stdout, "limit", &l);
	return 0;
}

/* MATCH [driver NAME] [force] [take]; "" is sent as an empty match. */
static int cmd_rule_new(struct nlc *c, int argc, char **argv)
{
	const char *driver = NULL;
	bool force = false, take = false;
	struct nlc_rule r;
	int i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "driver") && i + 1 < argc) {
			driver = argv[++i];
		} else if (!strcmp(argv[i], "force")) {
			force = true;
		} else if (!strcmp(argv[i], "take")) {
			take = true;
		} else {
			help(stderr);
			return 1;
		}
	}
	ret = nlc_rule_new(c, argv[0], driver, force, take, &r);
	if (ret)
		return fail(c, ret);
	nlc_print_rule(stdout, "rule", &r);
	return 0;
}

/* Neither id nor match is a valid request too: the kernel must refuse it. */
static int cmd_rule_del(struct nlc *c, int argc, char **argv)
{
	const char *match = NULL;
	bool by_id = false;
	__u32 id;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "id") && i + 1 < argc &&
		    parse_u32(argv[i + 1], &id)) {
			by_id = true;
			i++;
		} else if (!strcmp(argv[i], "match") && i + 1 < argc) {
			match = argv[++i];
		} else {
			help(stderr);
			return 1;
		}
	}
	ret = nlc_rule_del(c, by_id ? &id : NULL, match);
	return ret ? fail(c, ret) : 0;
}

static int cmd_rule_get(struct nlc *c, const char *arg)
{
	struct nlc_rule r;
	__u32 id;
	int ret;

	if (!parse_u32(arg, &id)) {
		help(stderr);
		return 1;
	}
	ret = nlc_rule_get(c, id, &r);
	if (ret)
		return fail(c, ret);
	nlc_print_rule(stdout, "rule", &r);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int cmd_monitor(struct nlc *c, int count, int timeout_s,
		       const char *group)
{
	long deadline = timeout_s > 0 ? now_ms() + timeout_s * 1000L : 0;
	struct nlc_ntf *ntf = malloc(sizeof(*ntf));
	int seen = 0, ret = 0;

	if (!ntf)
		return fail(c, -ENOMEM);

	ret = nlc_monitor_join_group(c, group);
	if (ret)
		goto out;
	/* Tell a waiting shell test that the subscription is in place. */
	fprintf(stderr, "monitor: subscribed\n");
	while (!count || seen < count) {
		int wait = -1;

		if (deadline) {
			wait = deadline - now_ms();
			if (wait <= 0) {
				ret = 0;
				break;
			}
		}
		ret = nlc_monitor_next_ntf(c, wait, ntf);
		if (ret <= 0)
			break;
		nlc_print_ntf(stdout, ntf);
		fflush(stdout);
		seen++;
	}
out:
	free(ntf);
	if (ret < 0)
		return fail(c, ret);
	/* 0 here means the timeout ended the wait. */
	return ret ? 0 : 3;
}

int main(int argc, char **argv)
{
	struct nlc c;
	int ret;

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "-h")) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	ret = nlc_open(&c);
	if (ret) {
		fprintf(stderr, "gpuctl-nl: %s\n", ret == -ENOENT ?
			"gpuctl family not registered (module not loaded)" :
			strerror(-ret));
		return 2;
	}
	if (!strcmp(argv[1], "dev-dump") && argc == 2) {
		ret = cmd_dev_dump(&c);
	} else if (!strcmp(argv[1], "dev-get") && argc == 3) {
		struct nlc_dev d;

		ret = nlc_dev_get(&c, argv[2], &d);
		if (ret)
			ret = fail(&c, ret);
		else
			nlc_print_dev(stdout, "dev", &d);
	} else if (!strcmp(argv[1], "dev-set") && argc == 4) {
		char *end;
		unsigned long n = strtoul(argv[3], &end, 0);

		if (*end || !*argv[3] || n > 0xffff) {
			help(stderr);
			ret = 1;
		} else {
			ret = nlc_dev_set(&c, argv[2], n);
			if (ret)
				ret = fail(&c, ret);
		}
	} else if (!strcmp(argv[1], "group-dump") && argc == 2) {
		ret = cmd_group_dump(&c);
	} else if (!strcmp(argv[1], "group-get") && argc == 3) {
		struct nlc_group g;
		char *end;
		unsigned long id = strtoul(argv[2], &end, 0);

		if (*end || !*argv[2]) {
			help(stderr);
			ret = 1;
		} else {
			ret = nlc_group_get(&c, id, &g);
			if (ret)
				ret = fail(&c, ret);
			else
				nlc_print_group(stdout, "group", &g);
		}
	} else if (!strcmp(argv[1], "rule-new") && argc >= 3) {
		ret = cmd_rule_new(&c, argc - 2, argv + 2);
	} else if (!strcmp(argv[1], "rule-del")) {
		ret = cmd_rule_del(&c, argc - 2, argv + 2);
	} else if (!strcmp(argv[1], "rule-get") && argc == 3) {
		ret = cmd_rule_get(&c, argv[2]);
	} else if (!strcmp(argv[1], "rule-dump") && argc == 2) {
		ret = cmd_rule_dump(&c);
	} else if (!strcmp(argv[1], "alloc-new")) {
		ret = cmd_alloc_new(&c, argc - 2, argv + 2);
	} else if (!strcmp(argv[1], "alloc-del")) {
		ret = cmd_alloc_del(&c, argc - 2, argv + 2);
	} else if (!strcmp(argv[1], "alloc-get") && argc == 3) {
		ret = cmd_alloc_get(&c, argv[2]);
	} else if (!strcmp(argv[1], "alloc-dump") && argc == 2) {
		ret = cmd_alloc_dump(&c);
	} else if (!strcmp(argv[1], "limit-set")) {
		ret = cmd_limit_set(&c, argc - 2, argv + 2);
	} else if (!strcmp(argv[1], "limit-get") && argc == 4) {
		ret = cmd_limit_get(&c, argv[2], argv[3]);
	} else if (!strcmp(argv[1], "limit-dump") && argc == 2) {
		ret = cmd_limit_dump(&c);
	} else if (!strcmp(argv[1], "mcast-group") && argc == 3) {
		ret = nlc_mcast_group_id(&c, argv[2]);
		if (ret < 0) {
			fprintf(stderr, "error: family %s has no multicast group %s\n",
				GPUCTL_FAMILY_NAME, argv[2]);
			ret = 2;
		} else {
			printf("%d\n", ret);
			ret = 0;
		}
	} else if (!strcmp(argv[1], "monitor")) {
		const char *group = GPUCTL_MCGRP_LEDGER;
		int i, count = 0, timeout = 0;

		ret = 0;
		for (i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--count") && i + 1 < argc) {
				count = atoi(argv[++i]);
			} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
				timeout = atoi(argv[++i]);
			} else if (!strcmp(argv[i], "--group") && i + 1 < argc) {
				group = argv[++i];
			} else {
				help(stderr);
				ret = 1;
				break;
			}
		}
		if (!ret)
			ret = cmd_monitor(&c, count, timeout, group);
	} else {
		help(stderr);
		ret = 1;
	}
	nlc_close(&c);
	return ret;
}
