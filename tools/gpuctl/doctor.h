/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl doctor: the preflight of a GPU passthrough host. Each check says
 * pass, warn, fail or skip, what it read (evidence) and what to do about
 * it (fix); doctor.c runs them and prints the results.
 */
#ifndef _GPUCTL_DOCTOR_H
#define _GPUCTL_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "nl.h"

struct args;
struct gpuctl;

/* In the order of severity: a check ends in the worst it found */
enum doctor_status {
	DOCTOR_PASS,
	DOCTOR_SKIP,		/* could not look: no privilege, no module */
	DOCTOR_WARN,
	DOCTOR_FAIL,
};

#define DOCTOR_SUMMARY_LEN 160

/**
 * struct doctor_check - the result of one check
 * @id: its name in the output ("iommu")
 * @status: the worst finding
 * @summary: one line, for the worst finding
 * @evidence: what was read: a file and its value, one line each
 * @nevidence: how many
 * @fix: what to do, one line per finding that is not a pass
 * @nfix: how many
 */
struct doctor_check {
	const char *id;
	enum doctor_status status;
	char summary[DOCTOR_SUMMARY_LEN];
	char **evidence;
	size_t nevidence;
	char **fix;
	size_t nfix;
};

/**
 * struct doctor - what the checks share, read once
 * @root: prefixed to every file read ("" for the host itself)
 * @release: the running kernel's release
 * @module: the gpuctl family answered
 * @devs: the devices the module tracks (struct dev_info), when @module
 * @rules: the reservation rules (struct rule_info), when @ledger
 * @allocs: the allocations (struct alloc_info), when @ledger
 * @ledger: the rules and the ledger could be read (CAP_SYS_ADMIN)
 * @ledger_err: why not, a negative errno, when !@ledger
 */
struct doctor {
	const char *root;
	char release[65];
	bool module;
	struct nl_list devs;
	struct nl_list rules;
	struct nl_list allocs;
	bool ledger;
	int ledger_err;
};

void doctor_set(struct doctor_check *c, enum doctor_status status,
		const char *fmt, ...);
void doctor_evidence(struct doctor_check *c, const char *fmt, ...);
void doctor_fix(struct doctor_check *c, const char *fmt, ...);
char *doctor_path(const struct doctor *dr, const char *path, char *buf,
		  size_t size);
int doctor_read(const struct doctor *dr, const char *path, char *buf,
		size_t size);
bool doctor_exists(const struct doctor *dr, const char *path);
int doctor_link_name(const struct doctor *dr, const char *link, char *buf,
		     size_t size);
int doctor_run(const char *const argv[],
	       int (*line)(void *ctx, const char *text), void *ctx);

/* doctor_iommu.c */
void doctor_iommu(const struct doctor *dr, struct doctor_check *c);
void doctor_intremap(const struct doctor *dr, struct doctor_check *c);
void doctor_cmdline(const struct doctor *dr, struct doctor_check *c);
void doctor_groups(const struct doctor *dr, struct doctor_check *c);

/* doctor_boot.c */
void doctor_vfio_modules(const struct doctor *dr, struct doctor_check *c);
void doctor_initramfs(const struct doctor *dr, struct doctor_check *c);
void doctor_softdeps(const struct doctor *dr, struct doctor_check *c);
void doctor_signature(const struct doctor *dr, struct doctor_check *c);

/* doctor_gpuctl.c */
void doctor_module(const struct doctor *dr, struct doctor_check *c);
void doctor_reserved(const struct doctor *dr, struct doctor_check *c);
void doctor_ledger(const struct doctor *dr, struct doctor_check *c);
void doctor_holders(const struct doctor *dr, struct doctor_check *c);
void doctor_migration(const struct doctor *dr, struct doctor_check *c);

#endif /* _GPUCTL_DOCTOR_H */
