/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The netlink family as the YNL spec describes it, in tables that
 * spec2c.py generates at build time: attribute sets with each attribute's
 * type and checks, and every op's do and dump request and reply lists.
 */
#ifndef _GPUCTL_FUZZ_SPEC_H
#define _GPUCTL_FUZZ_SPEC_H

#include <stdbool.h>

enum fz_kind {
	FZ_OTHER,
	FZ_FLAG,
	FZ_U8,
	FZ_U16,
	FZ_U32,
	FZ_U64,
	FZ_S8,
	FZ_S16,
	FZ_S32,
	FZ_S64,
	FZ_STRING,
	FZ_BINARY,
	FZ_NEST,
	FZ_PAD,
	FZ_BITFIELD32,
};

struct fz_attr {
	const char *name;
	unsigned int type;		/* the attribute's type on the wire */
	enum fz_kind kind;
	bool multi;			/* multi-attr: may repeat */
	bool big_endian;
	bool unterminated_ok;
	int max_len;			/* checks; 0 when the spec sets none */
	int min_len;
	int exact_len;
	const char *len_const;		/* the constant that bounds the length */
	bool has_min, has_max;
	long long min, max;
	const long long *enum_vals;	/* valid values (masks for flags) */
	const char *const *enum_names;
	int n_enum;
	bool enum_flags;
	int nest;			/* FZ_NEST: index into fz_spec.sets */
};

struct fz_set {
	const char *name;
	const struct fz_attr *attrs;
	int n;
	unsigned int max_type;
};

enum fz_mode_kind { FZ_DO, FZ_DUMP, FZ_NR_MODES };

struct fz_mode {
	bool present;
	const unsigned short *req;	/* indexes into the op's set */
	int n_req;
	const unsigned short *rsp;
	int n_rsp;
	bool has_reply;
};

struct fz_op {
	const char *name;
	unsigned int cmd;
	bool admin;			/* flags: [admin-perm] */
	int set;
	struct fz_mode mode[FZ_NR_MODES];
};

/* A notification: its command and the op whose reply it repeats. */
struct fz_ntf {
	const char *name;
	unsigned int cmd;
	int op;				/* notify: index into fz_spec.ops, or -1 */
	int set;
};

struct fz_spec {
	const char *family;
	const struct fz_set *sets;
	int n_sets;
	const struct fz_op *ops;
	int n_ops;
	const struct fz_ntf *ntfs;
	int n_ntfs;
	const char *const *mcgrps;
	int n_mcgrps;
};

extern const struct fz_spec fz_spec;

#endif /* _GPUCTL_FUZZ_SPEC_H */
