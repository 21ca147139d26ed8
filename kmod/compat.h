/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Every shim for differences between the supported kernels (6.1 to 6.12+).
 * Feature probes in Kbuild define GPUCTL_HAVE_*; see the reasons there.
 */

#ifndef _GPUCTL_COMPAT_H
#define _GPUCTL_COMPAT_H

#include <linux/device.h>
#include <linux/netlink.h>
#include <linux/pci.h>
#include <linux/pci_ids.h>
#include <linux/string.h>
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

/*
 * Where a PCI device's driver_override lives: 6.1 keeps it in struct
 * pci_dev behind the device lock (drivers/base/driver.c,
 * driver_set_override()); 7.0 (and 6.12.91+) moved it to struct device
 * behind a spinlock of its own, with accessors (drivers/base/dd.c,
 * __device_set_driver_override(), and include/linux/device.h, 6.12). On 6.1
 * both the setter and the reader take the device lock, so neither may run
 * in the (UN)BOUND notifier events or under any lock of gpuctl's.
 */
#ifdef GPUCTL_HAVE_DEVICE_DRIVER_OVERRIDE
/* NULL clears; the setter itself wants "" for that. */
static inline int gpuctl_set_override(struct pci_dev *pdev, const char *name)
{
	return device_set_driver_override(&pdev->dev, name ?: "");
}

/* The accessor compares with a driver; only the driver's name is read. */
static inline bool gpuctl_override_is(struct pci_dev *pdev, const char *name)
{
	const struct device_driver drv = { .name = name };

	if (!name)
		return !device_has_driver_override(&pdev->dev);
	return device_match_driver_override(&pdev->dev, &drv) > 0;
}
#else
static inline int gpuctl_set_override(struct pci_dev *pdev, const char *name)
{
	return driver_set_override(&pdev->dev, &pdev->driver_override,
				   name ?: "", name ? strlen(name) : 0);
}

/* As the sysfs attribute reads it: under the device lock. */
static inline bool gpuctl_override_is(struct pci_dev *pdev, const char *name)
{
	bool ret;

	device_lock(&pdev->dev);
	ret = name ? pdev->driver_override &&
		     !strcmp(pdev->driver_override, name)
		   : !pdev->driver_override;
	device_unlock(&pdev->dev);
	return ret;
}
#endif

/*
 * 6.2 added the iommufd callbacks to struct vfio_device_ops; a variant
 * driver must set all four when CONFIG_IOMMUFD is on (6.12:
 * drivers/vfio/vfio_main.c, __vfio_register_dev()), and the names are
 * NULL when it is off (include/linux/vfio.h, 6.12; 6.1 has none of them).
 * Expanded after <linux/vfio.h>.
 */
#ifdef GPUCTL_HAVE_VFIO_IOMMUFD_OPS
#define GPUCTL_VFIO_IOMMUFD_OPS					\
	.bind_iommufd	= vfio_iommufd_physical_bind,		\
	.unbind_iommufd	= vfio_iommufd_physical_unbind,		\
	.attach_ioas	= vfio_iommufd_physical_attach_ioas,	\
	.detach_ioas	= vfio_iommufd_physical_detach_ioas,
#else
#define GPUCTL_VFIO_IOMMUFD_OPS
#endif

/*
 * Formatted extack messages came in 6.2. Before, extack->_msg must outlive
 * the handler, until netlink_ack() copies it right after the handler
 * returns; so 6.1 gets a small ring of buffers, advanced under gpuctl_lock
 * where every caller formats. A message would only be overwritten by 64
 * more errors within that instant.
 *
 * Both cut a message at 79 characters. 6.2's NL_SET_ERR_MSG_FMT() also
 * logs each cut message ("truncated extack"), which a label of 63
 * characters in "account NAME is limited to ..." would let any admin
 * request do; so the message is cut here first, as on 6.1, and the log
 * stays quiet.
 */
#ifdef NL_SET_ERR_MSG_FMT
#define GPUCTL_SET_ERR_MSG_FMT(extack, attr, fmt, args...) do {	\
	struct netlink_ext_ack *__gpuctl_extack = (extack);		\
	char __gpuctl_msg[NETLINK_MAX_FMTMSG_LEN];			\
									\
	snprintf(__gpuctl_msg, sizeof(__gpuctl_msg), fmt, ##args);	\
	NL_SET_ERR_MSG_FMT(__gpuctl_extack, "%s", __gpuctl_msg);	\
	NL_SET_BAD_ATTR(__gpuctl_extack, attr);				\
} while (0)
#else
#define GPUCTL_ERR_MSG_LEN 80	/* NETLINK_MAX_FMTMSG_LEN from 6.2 */
char *gpuctl_err_msg_buf(void);
#define GPUCTL_SET_ERR_MSG_FMT(extack, attr, fmt, args...) do {	\
	struct netlink_ext_ack *__extack = (extack);			\
	char *__buf = gpuctl_err_msg_buf();				\
									\
	snprintf(__buf, GPUCTL_ERR_MSG_LEN, fmt, ##args);		\
	if (__extack) {							\
		__extack->_msg = __buf;					\
		__extack->bad_attr = (attr);				\
	}								\
} while (0)
#endif

#endif /* _GPUCTL_COMPAT_H */
