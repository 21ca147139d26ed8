/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_NETLINK_H
#define _GPUCTL_NETLINK_H

#include <linux/types.h>

struct gpuctl_dev;

int gpuctl_netlink_init(void);
void gpuctl_netlink_exit(void);
void gpuctl_netlink_notify_dev(const struct gpuctl_dev *dev, u8 cmd);

#endif /* _GPUCTL_NETLINK_H */
