/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_PARAM_H
#define _GPUCTL_PARAM_H

int gpuctl_param_load(void);

#endif /* _GPUCTL_PARAM_H */
