/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Helpers for the allocation tests: reserve a GPU and wait until it can be
 * allocated, print the ledger as one string, and check the ledger's
 * invariant, also while other processes change it.
 */
#ifndef _GPUCTL_LEDGER_H
#define _GPUCTL_LEDGER_H

#include "nlclient.h"

/*
 * rule-new @addr with take (and @force), then wait until dev-get reports
 * the GPU reserved on vfio-pci. The rule's id goes to @rule_id as soon as
 * it exists, so the caller can delete it whatever happens next.
 * Returns 0, a -errno from rule-new, or -ETIMEDOUT.
 */
int ledger_reserve(struct nlc *c, const char *addr, bool force,
		   __u32 *rule_id);

/* "ID OWNER DEV,DEV gpus=N;" per allocation, in id order. */
int ledger_snapshot(struct nlc *c, char *buf, size_t len);

/*
 * The invariant: no device is in two allocations, and every device of an
 * allocation reports that allocation in dev-get. Safe while others change
 * the ledger: a disagreement counts only if the allocation still exists
 * afterwards (ids are never reused, so it existed all along).
 * Returns the number of violations, described in @why, or -errno.
 */
int ledger_check(struct nlc *c, char *why, size_t len);

/* Deletes every allocation; the number deleted, or -errno. */
int ledger_clear(struct nlc *c);

#endif /* _GPUCTL_LEDGER_H */
