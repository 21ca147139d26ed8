// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Helpers for the allocation tests; see ledger.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "testlib.h"

#define RESERVE_TIMEOUT_MS	20000

int ledger_reserve(struct nlc *c, const char *addr, bool force,
		   __u32 *rule_id)
{
	long deadline = tl_now_ms() + RESERVE_TIMEOUT_MS;
	struct nlc_rule r;
	struct nlc_dev d;
	int ret;

	*rule_id = 0;
	ret = nlc_rule_new(c, addr, NULL, force, true, &r);
	if (ret)
		return ret;
	*rule_id = r.id;
	/* rule-new waits for the worker at most 10 s; a slow bind goes on. */
	for (;;) {
		ret = nlc_dev_get(c, addr, &d);
		if (ret)
			return ret;
		if (d.state == GPUCTL_DEV_STATE_RESERVED &&
		    !strcmp(d.driver, "vfio-pci"))
			return 0;
		if (tl_now_ms() >= deadline)
			return -ETIMEDOUT;
		usleep(100 * 1000);
	}
}

/* A dump the kernel did not mark as interrupted by a change. */
static int dump_allocs(struct nlc *c, struct nlc_alloc **allocs, int *n)
{
	struct nlc_dump_info info;
	int ret, tries = 0;

	do {
		ret = nlc_alloc_dump(c, allocs, n, &info);
		if (!ret && info.intr) {
			free(*allocs);
			*allocs = NULL;
			ret = -EINTR;
		}
	} while (ret == -EINTR && ++tries < 100);
	return ret;
}

int ledger_snapshot(struct nlc *c, char *buf, size_t len)
{
	struct nlc_alloc *allocs;
	size_t used = 0;
	int i, j, n, ret;

	ret = dump_allocs(c, &allocs, &n);
	if (ret)
		return ret;
	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		used += snprintf(buf + used, len - used, "%u %s ", allocs[i].id,
				 allocs[i].owner);
		for (j = 0; j < allocs[i].ndevices && used < len; j++)
			used += snprintf(buf + used, len - used, "%s%s",
					 j ? "," : "", allocs[i].devices[j]);
		if (used < len)
			used += snprintf(buf + used, len - used, " gpus=%u;",
					 allocs[i].gpus);
	}
	free(allocs);
	return used < len ? 0 : -E2BIG;
}

/* 1 when allocation @id still exists, 0 when it is gone, or -errno. */
static int alloc_exists(struct nlc *c, __u32 id)
{
	struct nlc_alloc a;
	int ret = nlc_alloc_get(c, id, &a);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : 1;
}

#define WHY(...)							\
	snprintf(why + strlen(why), len - strlen(why), __VA_ARGS__)

static int check_twice(struct nlc *c, const struct nlc_alloc *allocs, int i,
		       int d, char *why, size_t len)
{
	const char *addr = allocs[i].devices[d];
	int j, k, bad = 0;

	for (j = 0; j < i; j++) {
		for (k = 0; k < allocs[j].ndevices; k++) {
			if (strcmp(addr, allocs[j].devices[k]))
				continue;
			/* One of the two may have ended while the dump ran. */
			if (alloc_exists(c, allocs[i].id) == 1 &&
			    alloc_exists(c, allocs[j].id) == 1) {
				WHY(" %s is in allocations %u and %u;", addr,
				    allocs[j].id, allocs[i].id);
				bad++;
			}
		}
	}
	return bad;
}

static int check_dev(struct nlc *c, const struct nlc_alloc *a, int d,
		     char *why, size_t len)
{
	const char *addr = a->devices[d];
	struct nlc_dev dev;
	int ret;

	ret = nlc_dev_get(c, addr, &dev);
	if (ret) {
		WHY(" dev-get %s: %s;", addr, strerror(-ret));
		return 1;
	}
	if (NLC_HAS(&dev, GPUCTL_A_DEV_ALLOCATION) && dev.allocation == a->id)
		return 0;
	ret = alloc_exists(c, a->id);
	if (ret < 0) {
		WHY(" alloc-get %u: %s;", a->id, strerror(-ret));
		return 1;
	}
	if (!ret)
		return 0;
	if (NLC_HAS(&dev, GPUCTL_A_DEV_ALLOCATION))
		WHY(" %s of allocation %u reports allocation %u;", addr, a->id,
		    dev.allocation);
	else
		WHY(" %s of allocation %u reports none;", addr, a->id);
	return 1;
}

int ledger_check(struct nlc *c, char *why, size_t len)
{
	struct nlc_alloc *allocs;
	int i, d, n, ret, bad = 0;

	why[0] = '\0';
	ret = dump_allocs(c, &allocs, &n);
	if (ret) {
		WHY(" alloc dump: %s %s;", strerror(-ret), c->extack);
		return ret;
	}
	for (i = 0; i < n; i++) {
		if (i && allocs[i].id <= allocs[i - 1].id) {
			WHY(" dump not in id order: %u after %u;",
			    allocs[i].id, allocs[i - 1].id);
			bad++;
		}
		for (d = 0; d < allocs[i].ndevices; d++) {
			bad += check_twice(c, allocs, i, d, why, len);
			bad += check_dev(c, &allocs[i], d, why, len);
		}
	}
	free(allocs);
	return bad;
}

int ledger_clear(struct nlc *c)
{
	struct nlc_alloc *allocs;
	int i, n, ret, deleted = 0;

	ret = dump_allocs(c, &allocs, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		ret = nlc_alloc_del(c, &allocs[i].id, NULL);
		if (!ret)
			deleted++;
		else if (ret != -ENOENT)
			break;
		ret = 0;
	}
	free(allocs);
	return ret ? ret : deleted;
}
