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

#define GPUCTL_MATCH_LEN	40
#define GPUCTL_DRIVER_LEN	31

/**
 * enum gpuctl_dev_state - Where a device stands with respect to reservation.
 * @GPUCTL_DEV_STATE_FREE: No rule reserves the device.
 * @GPUCTL_DEV_STATE_RESERVED: A rule reserves the device and it is bound to
 *   the rule's driver, or unbound with a driver_override that lets only that
 *   driver bind.
 * @GPUCTL_DEV_STATE_HELD: A rule reserves the device, but a host driver (the
 *   "driver" attribute) had it before the rule came and still has it. A rule
 *   with "take" takes it over.
 * @GPUCTL_DEV_STATE_BLOCKED: A rule reserves the device, but gpuctl could not
 *   bind it to the rule's driver; "state-reason" says why.
 */
enum gpuctl_dev_state {
	GPUCTL_DEV_STATE_FREE = 1,
	GPUCTL_DEV_STATE_RESERVED,
	GPUCTL_DEV_STATE_HELD,
	GPUCTL_DEV_STATE_BLOCKED,

	/* private: */
	__GPUCTL_DEV_STATE_MAX,
	GPUCTL_DEV_STATE_MAX = (__GPUCTL_DEV_STATE_MAX - 1)
};

/**
 * enum gpuctl_dev_action - What gpuctl did to a reserved or released device.
 * @GPUCTL_DEV_ACTION_CLAIMED: Set its driver_override to the rule's driver.
 * @GPUCTL_DEV_ACTION_BOUND: Bound it to the rule's driver.
 * @GPUCTL_DEV_ACTION_RESTORED: Put it back on the rule's driver after it lost
 *   its override, was unbound, or was bound to another driver.
 * @GPUCTL_DEV_ACTION_TAKEN: Unbound it from a host driver and bound it to the
 *   rule's driver.
 * @GPUCTL_DEV_ACTION_RELEASED: Its rule is gone: cleared its driver_override
 *   and let the host's drivers probe it again.
 * @GPUCTL_DEV_ACTION_BLOCKED: Could not bind it to the rule's driver;
 *   "state-reason" says why.
 */
enum gpuctl_dev_action {
	GPUCTL_DEV_ACTION_CLAIMED = 1,
	GPUCTL_DEV_ACTION_BOUND,
	GPUCTL_DEV_ACTION_RESTORED,
	GPUCTL_DEV_ACTION_TAKEN,
	GPUCTL_DEV_ACTION_RELEASED,
	GPUCTL_DEV_ACTION_BLOCKED,

	/* private: */
	__GPUCTL_DEV_ACTION_MAX,
	GPUCTL_DEV_ACTION_MAX = (__GPUCTL_DEV_ACTION_MAX - 1)
};

/**
 * enum gpuctl_rule_source - Where a rule came from.
 * @GPUCTL_RULE_SOURCE_PARAM: The module parameter "reserve" (modprobe.d or the
 *   kernel command line).
 * @GPUCTL_RULE_SOURCE_NETLINK: A rule-new request ("gpuctl reserve add",
 *   "gpuctl apply").
 */
enum gpuctl_rule_source {
	GPUCTL_RULE_SOURCE_PARAM = 1,
	GPUCTL_RULE_SOURCE_NETLINK,

	/* private: */
	__GPUCTL_RULE_SOURCE_MAX,
	GPUCTL_RULE_SOURCE_MAX = (__GPUCTL_RULE_SOURCE_MAX - 1)
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
	GPUCTL_A_DEV_RESERVED,
	GPUCTL_A_DEV_STATE,
	GPUCTL_A_DEV_STATE_REASON,
	GPUCTL_A_DEV_RULE,
	GPUCTL_A_DEV_ACTION,

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
	GPUCTL_A_RULE_ID = 1,
	GPUCTL_A_RULE_MATCH,
	GPUCTL_A_RULE_DRIVER,
	GPUCTL_A_RULE_FORCE,
	GPUCTL_A_RULE_TAKE,
	GPUCTL_A_RULE_SOURCE,
	GPUCTL_A_RULE_DEVICE,
	GPUCTL_A_RULE_WARNING,

	__GPUCTL_A_RULE_MAX,
	GPUCTL_A_RULE_MAX = (__GPUCTL_A_RULE_MAX - 1)
};

enum {
	GPUCTL_CMD_DEV_GET = 1,
	GPUCTL_CMD_GROUP_GET,
	GPUCTL_CMD_DEV_ADD_NTF,
	GPUCTL_CMD_DEV_DEL_NTF,
	GPUCTL_CMD_DEV_CHANGE_NTF,
	GPUCTL_CMD_RULE_NEW,
	GPUCTL_CMD_RULE_DEL,
	GPUCTL_CMD_RULE_GET,
	GPUCTL_CMD_RULE_NEW_NTF,
	GPUCTL_CMD_RULE_DEL_NTF,

	__GPUCTL_CMD_MAX,
	GPUCTL_CMD_MAX = (__GPUCTL_CMD_MAX - 1)
};

#define GPUCTL_MCGRP_MONITOR	"monitor"

#endif /* _UAPI_LINUX_GPUCTL_H */
