/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuctl.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_GPUCTL_H
#define _UAPI_LINUX_GPUCTL_H

#define GPUCTL_FAMILY_NAME	"gpuctl"
#define GPUCTL_FAMILY_VERSION	1

#define GPUCTL_ADDRESS_LEN	12

/**
 * enum gpuctl_dev_role - Why gpuctl tracks a device.
 * @GPUCTL_DEV_ROLE_GPU: A display controller (class 0x03) or processing
 *   accelerator (0x12).
 * @GPUCTL_DEV_ROLE_COMPANION: Another function of a GPU's slot in the GPU's
 *   IOMMU group, such as its HDMI audio or USB-C controller.
 * @GPUCTL_DEV_ROLE_FOREIGN: Any other non-bridge member of a GPU's IOMMU
 *   group, such as a NIC behind the same PCI bridge. VFIO can only use the
 *   group when it is bound to a VFIO driver or to no driver.
 * @GPUCTL_DEV_ROLE_BRIDGE: A PCI bridge in a GPU's IOMMU group. VFIO ignores
 *   bridges.
 */
enum gpuctl_dev_role {
	GPUCTL_DEV_ROLE_GPU = 1,
	GPUCTL_DEV_ROLE_COMPANION,
	GPUCTL_DEV_ROLE_FOREIGN,
	GPUCTL_DEV_ROLE_BRIDGE,

	/* private: */
	__GPUCTL_DEV_ROLE_MAX,
	GPUCTL_DEV_ROLE_MAX = (__GPUCTL_DEV_ROLE_MAX - 1)
};

enum {
	GPUCTL_A_DEV_ADDRESS = 1,
	GPUCTL_A_DEV_VENDOR_ID,
	GPUCTL_A_DEV_DEVICE_ID,
	GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID,
	GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID,
	GPUCTL_A_DEV_CLASS,
	GPUCTL_A_DEV_REVISION,
	GPUCTL_A_DEV_DRIVER,
	GPUCTL_A_DEV_IOMMU_GROUP,
	GPUCTL_A_DEV_NUMA_NODE,
	GPUCTL_A_DEV_PCI_ROOT,
	GPUCTL_A_DEV_SRIOV_TOTALVFS,
	GPUCTL_A_DEV_SRIOV_NUMVFS,
	GPUCTL_A_DEV_PHYSFN,
	GPUCTL_A_DEV_ROLE,

	__GPUCTL_A_DEV_MAX,
	GPUCTL_A_DEV_MAX = (__GPUCTL_A_DEV_MAX - 1)
};

enum {
	GPUCTL_A_GROUP_ID = 1,
	GPUCTL_A_GROUP_DEVICE,
	GPUCTL_A_GROUP_VIABLE,
	GPUCTL_A_GROUP_REASON,

	__GPUCTL_A_GROUP_MAX,
	GPUCTL_A_GROUP_MAX = (__GPUCTL_A_GROUP_MAX - 1)
};

enum {
	GPUCTL_CMD_DEV_GET = 1,
	GPUCTL_CMD_GROUP_GET,
	GPUCTL_CMD_DEV_ADD_NTF,
	GPUCTL_CMD_DEV_DEL_NTF,
	GPUCTL_CMD_DEV_CHANGE_NTF,

	__GPUCTL_CMD_MAX,
	GPUCTL_CMD_MAX = (__GPUCTL_CMD_MAX - 1)
};

#define GPUCTL_MCGRP_MONITOR	"monitor"

#endif /* _UAPI_LINUX_GPUCTL_H */
