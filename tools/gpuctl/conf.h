/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */
#ifndef _GPUCTL_CONF_H
#define _GPUCTL_CONF_H

#include <stdio.h>

#include "rule.h"
#include "utils.h"

/* "dev DEV numvfs NUM": the VFs an SR-IOV PF is to have */
struct vfs_spec {
	char address[ADDR_BUFSZ];
	u16 numvfs;
	unsigned int line;		/* in its config file */
};

/* What a config file declares, each kind in file order */
struct conf {
	struct rule_set rules;
	struct vfs_spec *vfs;
	size_t n_vfs;
};

/* What one line of a config file holds */
enum conf_kind {
	CONF_BLANK,
	CONF_RULE,
	CONF_VFS,
};

struct conf_line {
	struct rule_spec rule;		/* CONF_RULE */
	struct vfs_spec vfs;		/* CONF_VFS */
};

int vfs_numvfs_parse(struct args *a, struct vfs_spec *v, char *err,
		     size_t errsz);
int conf_line_parse(char *line, struct conf_line *cl, char *err,
		    size_t errsz);
int conf_file_parse(FILE *fp, const char *name, struct conf *conf);
void conf_free(struct conf *conf);

#endif /* _GPUCTL_CONF_H */
