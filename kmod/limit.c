// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Tenant limits: the most GPUs the allocations that carry one account,
 * project or domain label may hold together, as CloudStack's
 * max.account.gpus and its siblings. Every GPU counts as one, whole card,
 * VF or vGPU alike; companions do not count.
 *
 * Locking: gpuctl_lock protects the table and every limit. Usage is not
 * stored but counted from the ledger, so it cannot drift from it.
 */

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "alloc.h"
#include "inventory.h"
#include "limit.h"

/* Limit id -> struct gpuctl_limit, under gpuctl_lock. */
static DEFINE_XARRAY_ALLOC(gpuctl_limits);
static u32 gpuctl_limit_next_id;

/**
 * gpuctl_limit_scope_name() - the word for a scope in messages
 * @scope: enum gpuctl_limit_scope
 *
 * Context: any.
 * Return: "account", "project" or "domain".
 */
const char *gpuctl_limit_scope_name(u32 scope)
{
	switch (scope) {
	case GPUCTL_LIMIT_SCOPE_ACCOUNT:
		return "account";
	case GPUCTL_LIMIT_SCOPE_PROJECT:
		return "project";
	default:
		return "domain";
	}
}

/**
 * gpuctl_limit_find() - look up the limit of a label
 * @scope: enum gpuctl_limit_scope
 * @name: the label's value
 *
 * Context: gpuctl_lock held.
 * Return: the limit, or NULL when the label has none.
 */
struct gpuctl_limit *gpuctl_limit_find(u32 scope, const char *name)
{
	struct gpuctl_limit *limit;
	unsigned long id;

	lockdep_assert_held(&gpuctl_lock);

	xa_for_each(&gpuctl_limits, id, limit) {
		if (limit->scope == scope && !strcmp(limit->name, name))
			return limit;
	}
	return NULL;
}

/**
 * gpuctl_limit_next() - iterate over limits in the order they were set
 * @id: in: the first id to consider; out: the id of the one returned
 *
 * Context: gpuctl_lock held.
 * Return: the first limit with an id of at least *@id, or NULL.
 */
struct gpuctl_limit *gpuctl_limit_next(unsigned long *id)
{
	lockdep_assert_held(&gpuctl_lock);
	return xa_find(&gpuctl_limits, id, U32_MAX, XA_PRESENT);
}

/**
 * gpuctl_limit_set() - set or change the limit of a label
 * @scope: enum gpuctl_limit_scope
 * @name: the label's value
 * @max: the new limit; one below the usage only refuses new allocations
 *
 * Context: gpuctl_lock held.
 * Return: the limit, or an ERR_PTR() on allocation failure.
 */
struct gpuctl_limit *gpuctl_limit_set(u32 scope, const char *name, u32 max)
{
	struct gpuctl_limit *limit;
	int ret;

	lockdep_assert_held(&gpuctl_lock);

	/* A dump of the limits that spans this change must be retried. */
	gpuctl_inventory_changed();

	limit = gpuctl_limit_find(scope, name);
	if (limit) {
		limit->max = max;
		return limit;
	}

	limit = kzalloc(sizeof(*limit), GFP_KERNEL);
	if (!limit)
		return ERR_PTR(-ENOMEM);
	limit->scope = scope;
	strscpy(limit->name, name, sizeof(limit->name));
	limit->max = max;

	ret = xa_alloc_cyclic(&gpuctl_limits, &limit->id, limit,
			      XA_LIMIT(1, U32_MAX), &gpuctl_limit_next_id,
			      GFP_KERNEL);
	if (ret < 0) {
		kfree(limit);
		return ERR_PTR(ret);
	}
	return limit;
}

/**
 * gpuctl_limit_del() - remove a limit
 * @limit: the limit
 *
 * Context: gpuctl_lock held.
 */
void gpuctl_limit_del(struct gpuctl_limit *limit)
{
	lockdep_assert_held(&gpuctl_lock);
	xa_erase(&gpuctl_limits, limit->id);
	kfree(limit);
	gpuctl_inventory_changed();
}

/**
 * gpuctl_limit_used() - GPUs the allocations with a label hold
 * @scope: enum gpuctl_limit_scope
 * @name: the label's value
 *
 * Context: gpuctl_lock held.
 * Return: the sum of their GPUs.
 */
u32 gpuctl_limit_used(u32 scope, const char *name)
{
	struct gpuctl_alloc *alloc;
	unsigned long id = 0;
	u32 used = 0;

	for (; (alloc = gpuctl_alloc_next(&id)); id++) {
		if (!strcmp(alloc->info.labels[scope - 1], name))
			used += alloc->gpus;
	}
	return used;
}

/**
 * gpuctl_limit_check() - whether a new allocation fits its labels' limits
 * @info: the new allocation's labels
 * @gpus: how many GPUs it would hold
 * @scope: set to the scope of the limit it exceeds
 * @why: filled with the limit it exceeds, named
 * @len: size of @why
 *
 * Context: gpuctl_lock held.
 * Return: 0, or -EDQUOT.
 */
int gpuctl_limit_check(const struct gpuctl_alloc_info *info, u32 gpus,
		       u32 *scope, char *why, size_t len)
{
	const struct gpuctl_limit *limit;
	u32 s, used;

	lockdep_assert_held(&gpuctl_lock);

	for (s = GPUCTL_LIMIT_SCOPE_ACCOUNT; s <= GPUCTL_LIMIT_SCOPE_MAX; s++) {
		const char *name = info->labels[s - 1];

		if (!name[0])
			continue;
		limit = gpuctl_limit_find(s, name);
		if (!limit)
			continue;
		used = gpuctl_limit_used(s, name);
		if (used + gpus <= limit->max)
			continue;

		*scope = s;
		snprintf(why, len, "%s %s is limited to %u GPU%s, %u in use",
			 gpuctl_limit_scope_name(s), name, limit->max,
			 limit->max == 1 ? "" : "s", used);
		return -EDQUOT;
	}
	return 0;
}

/**
 * gpuctl_limit_flush() - forget every limit
 *
 * Context: module init failure or exit; takes gpuctl_lock.
 */
void gpuctl_limit_flush(void)
{
	struct gpuctl_limit *limit;
	unsigned long id;

	mutex_lock(&gpuctl_lock);
	xa_for_each(&gpuctl_limits, id, limit)
		gpuctl_limit_del(limit);
	mutex_unlock(&gpuctl_lock);
}
