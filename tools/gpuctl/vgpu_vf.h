/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 */
#ifndef _GPUCTL_VGPU_VF_H
#define _GPUCTL_VGPU_VF_H

#include <stdbool.h>
#include <stddef.h>

#include "vf_sysfs.h"

struct args;
struct conf;
struct gpuctl;
struct nl_ctx;
struct vf_type_spec;

/**
 * struct vgpu_vf_type - a type the vendor VFs of one PF can take now
 * @pf: the PF
 * @type: the type's id and name
 * @available: how many of the PF's VFs list it as creatable
 */
struct vgpu_vf_type {
	char pf[ADDR_BUFSZ];
	struct vf_vgpu_type type;
	u32 available;
};

int vgpu_vf_types_add(const char *vf, const char *pf,
		      struct vgpu_vf_type **types, size_t *n);
int vgpu_vf_types_read(const char *pf, struct vgpu_vf_type **types,
		       size_t *n, bool *found);
void vgpu_vf_type_print(const struct vgpu_vf_type *t);
int vgpu_vf_set(struct nl_ctx *nl, const char *vf, const char *type,
		const char *cmd);
void vf_write_error(const char *cmd, const char *vf, u32 id, int err);
int cmd_vgpu_set(struct gpuctl *g, struct args *a);

/* apply_vf.c: the config file's "vf VF type ID" lines */
const struct vf_type_spec *apply_vf_types(struct nl_ctx *nl, const char *file,
					  const struct conf *conf,
					  const struct vf_type_spec **set,
					  size_t *n_set);
void apply_vf_types_rollback(const struct vf_type_spec *const *set, size_t n);
void apply_vf_types_print(const struct vf_type_spec *const *set, size_t n);

#endif /* _GPUCTL_VGPU_VF_H */
