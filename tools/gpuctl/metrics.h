/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The module's view as Prometheus metrics: gpuctl metrics, and the file
 * gpuctl monitor --metrics keeps current.
 */
#ifndef _GPUCTL_METRICS_H
#define _GPUCTL_METRICS_H

#include <stdint.h>
#include <stdio.h>

struct nl_ctx;

/* The file gpuctl monitor --metrics DIR keeps current in DIR */
#define METRICS_FILE "gpuctl.prom"

int metrics_print(struct nl_ctx *nl, FILE *fp, const uint64_t *events_lost);
int metrics_write(struct nl_ctx *nl, const char *path,
		  const uint64_t *events_lost);

#endif /* _GPUCTL_METRICS_H */
