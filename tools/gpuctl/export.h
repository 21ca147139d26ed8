/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl export: the module's view in the formats the cloud stacks read.
 */
#ifndef _GPUCTL_EXPORT_H
#define _GPUCTL_EXPORT_H

#include <stdbool.h>

struct args;
struct gpuctl;
struct nl_ctx;

int export_cloudstack(struct nl_ctx *nl, bool pretty);
int export_kubevirt(struct nl_ctx *nl, bool json, bool pretty);
int export_nova(struct nl_ctx *nl);
int cmd_export_libvirt(struct gpuctl *g, struct args *a);

#endif /* _GPUCTL_EXPORT_H */
