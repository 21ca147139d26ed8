/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_ALLOC_ARGS_H
#define _GPUCTL_ALLOC_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/gpuctl.h>

#include "utils.h"

/* The kernel takes at most this many GPUs in one request */
#define ALLOC_DEVS_MAX 64
#define ALLOC_ERR_BUFSZ 256
/* Tenant labels, indexed by enum gpuctl_limit_scope - 1 */
#define ALLOC_NR_LABELS GPUCTL_LIMIT_SCOPE_MAX
/* The longest ledger line: every field quoted, every device named */
#define LEDGER_LINE_MAX 4096

/* "vgpu TYPE": a type id, as the directory under mdev_supported_types */
#define ALLOC_VGPU_TYPE_BUFSZ 64

/* An mdev instance named by "vgpu UUID [ made ]" */
struct alloc_vgpu {
	char uuid[GPUCTL_UUID_LEN + 1];	/* lower case */
	bool made;	/* made for the allocation: alloc del removes it */
};

/*
 * An allocation as a user writes it, on the command line or in a saved
 * ledger, before the kernel has seen it. Empty strings are absent fields.
 */
struct alloc_spec {
	bool has_id;
	u32 id;
	char owner[GPUCTL_UUID_LEN + 1];	/* lower case */
	char name[GPUCTL_LABEL_LEN + 1];
	char labels[ALLOC_NR_LABELS][GPUCTL_LABEL_LEN + 1];
	size_t ndevs;
	char devs[ALLOC_DEVS_MAX][ADDR_BUFSZ];	/* canonical addresses */
	bool dev_typed[ALLOC_DEVS_MAX];		/* vendor VFs it typed */
	u32 count;				/* 0: the GPUs are named */
	size_t nvgpus;
	struct alloc_vgpu vgpus[ALLOC_DEVS_MAX];	/* named instances */
	char vgpu_type[ALLOC_VGPU_TYPE_BUFSZ];	/* "": none to make */
	u32 vgpu_count;				/* how many to make */
	char match[GPUCTL_MATCH_LEN + 1];
	bool has_numa;
	u32 numa_node;
	u32 numa_policy;			/* 0: the kernel's default */
	bool detach_on_stop;
	bool has_uid;
	bool has_gid;
	u32 uid;
	u32 gid;
	unsigned int line;			/* in its ledger file */
};

/* A tenant limit as "limit set" takes it; no max removes the limit */
struct limit_spec {
	u32 scope;
	char name[GPUCTL_LABEL_LEN + 1];
	bool has_max;
	u32 max;
	unsigned int line;
};

/* A saved ledger: what "alloc restore" reads, in file order */
struct ledger {
	struct alloc_spec *allocs;
	size_t nallocs;
	struct limit_spec *limits;
	size_t nlimits;
};

/* What one ledger line holds */
enum ledger_kind {
	LEDGER_NONE,		/* blank or a comment */
	LEDGER_ALLOC,		/* "alloc add ..." */
	LEDGER_LIMIT,		/* "limit set ..." */
};

int uuid_parse(const char *arg, char *out, size_t size);
int alloc_args_parse(struct args *a, struct alloc_spec *s, char *err,
		     size_t errsz);
int limit_args_parse(struct args *a, struct limit_spec *l, char *err,
		     size_t errsz);
int ledger_line_parse(char *line, struct alloc_spec *s, struct limit_spec *l,
		      char *err, size_t errsz);
int ledger_file_parse(FILE *fp, const char *name, struct ledger *ledger);
void ledger_free(struct ledger *ledger);
int alloc_spec_format(const struct alloc_spec *s, char *buf, size_t size);
int limit_spec_format(const struct limit_spec *l, char *buf, size_t size);

#endif /* _GPUCTL_ALLOC_ARGS_H */
