/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Every shim for differences between the supported kernels (6.1 to 6.12+).
 * Feature probes in Kbuild define GPUCTL_HAVE_*; see the reasons there.
 */

#ifndef _GPUCTL_COMPAT_H
#define _GPUCTL_COMPAT_H

#include <linux/netlink.h>
#include <linux/pci_ids.h>
#include <net/genetlink.h>

/* 6.2 moved pre_doit/post_doit to struct genl_split_ops. */
#ifdef GPUCTL_HAVE_GENL_SPLIT_OPS
#define gpuctl_genl_ops genl_split_ops
#else
#define gpuctl_genl_ops genl_ops
#endif

/* 6.7 added a check that a dump context fits cb->ctx. */
#ifndef NL_ASSERT_DUMP_CTX_FITS
#define NL_ASSERT_DUMP_CTX_FITS(type_name) \
	BUILD_BUG_ON(sizeof(type_name) > sizeof_field(struct netlink_callback, ctx))
#endif

/* 6.2 named the processing accelerator base class. */
#ifndef PCI_BASE_CLASS_ACCELERATOR
#define PCI_BASE_CLASS_ACCELERATOR 0x12
#endif

#endif /* _GPUCTL_COMPAT_H */
