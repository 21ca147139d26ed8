/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */
#ifndef _GPUCTL_CONF_H
#define _GPUCTL_CONF_H

#include <stdio.h>
#include <linux/gpuctl.h>

#include "mdev_sysfs.h"
#include "rule.h"
#include "utils.h"

/* "dev DEV numvfs NUM": the VFs an SR-IOV PF is to have */
struct vfs_spec {
	char address[ADDR_BUFSZ];
	u16 numvfs;
	unsigned int line;		/* in its config file */
};

/*
 * "vgpu PARENT type TYPE uuid UUID": an mdev instance that is to exist;
 * "gpuctl vgpu add" takes the same words, with the UUID optional there.
 */
struct vgpu_spec {
	char parent[MDEV_PARENT_BUFSZ];
	char type[MDEV_TYPE_BUFSZ];
	char uuid[GPUCTL_UUID_LEN + 1];
	bool has_uuid;
	unsigned int line;		/* in its config file */
};

/* "vf VF type ID": the vGPU type a vendor VF is to have */
struct vf_type_spec {
	char address[ADDR_BUFSZ];
	u32 type;
	unsigned int line;		/* in its config file */
};

/* What a config file declares, each kind in file order */
struct conf {
	struct rule_set rules;
	struct vfs_spec *vfs;
	size_t n_vfs;
	struct vf_type_spec *vf_types;
	size_t n_vf_types;
	struct vgpu_spec *vgpus;
	size_t n_vgpus;
};

/* What one line of a config file holds */
enum conf_kind {
	CONF_BLANK,
	CONF_RULE,
	CONF_VFS,
	CONF_VGPU,
	CONF_VF_TYPE,
};

struct conf_line {
	struct rule_spec rule;		/* CONF_RULE */
	struct vfs_spec vfs;		/* CONF_VFS */
	struct vgpu_spec vgpu;		/* CONF_VGPU */
	struct vf_type_spec vf_type;	/* CONF_VF_TYPE */
};

int vfs_numvfs_parse(struct args *a, struct vfs_spec *v, char *err,
		     size_t errsz);
int vgpu_spec_parse(struct args *a, struct vgpu_spec *v, char *err,
		    size_t errsz);
int conf_line_parse(char *line, struct conf_line *cl, char *err,
		    size_t errsz);
int conf_file_parse(FILE *fp, const char *name, struct conf *conf);
void conf_free(struct conf *conf);

#endif /* _GPUCTL_CONF_H */
