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
 * @GPUCTL_DEV_ROLE_GPU: A unit: a display controller (class 0x03), a
 *   processing accelerator (0x12), or another function a rule names.
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

#define GPUCTL_UUID_LEN		36
#define GPUCTL_LABEL_LEN	63

/**
 * enum gpuctl_alloc_state - Where an allocation stands.
 * @GPUCTL_ALLOC_STATE_IDLE: No VFIO user has any of its devices open.
 * @GPUCTL_ALLOC_STATE_RUNNING: A VFIO user (the VM's QEMU) has at least one of
 *   its devices open.
 * @GPUCTL_ALLOC_STATE_LOST: One of its devices was removed from the host
 *   (hot-unplug); "state-reason" names it. The allocation stays until it is
 *   deleted.
 */
enum gpuctl_alloc_state {
	GPUCTL_ALLOC_STATE_IDLE = 1,
	GPUCTL_ALLOC_STATE_RUNNING,
	GPUCTL_ALLOC_STATE_LOST,

	/* private: */
	__GPUCTL_ALLOC_STATE_MAX,
	GPUCTL_ALLOC_STATE_MAX = (__GPUCTL_ALLOC_STATE_MAX - 1)
};

/**
 * enum gpuctl_alloc_end - Why an allocation ended, in alloc-del-ntf.
 * @GPUCTL_ALLOC_END_DELETED: An alloc-del request.
 * @GPUCTL_ALLOC_END_DETACHED: "detach-on-stop": the last VFIO user of its
 *   devices closed them.
 * @GPUCTL_ALLOC_END_HANDED_OVER: An alloc-del with "handover": the module is
 *   being replaced, and the next one takes the allocation over with its id
 *   (gpuctl module reload). Its VM may go on running.
 */
enum gpuctl_alloc_end {
	GPUCTL_ALLOC_END_DELETED = 1,
	GPUCTL_ALLOC_END_DETACHED,
	GPUCTL_ALLOC_END_HANDED_OVER,

	/* private: */
	__GPUCTL_ALLOC_END_MAX,
	GPUCTL_ALLOC_END_MAX = (__GPUCTL_ALLOC_END_MAX - 1)
};

/**
 * enum gpuctl_numa_policy - How alloc-new treats "numa-node", after Nova's PCI
 *   NUMA affinity policies.
 * @GPUCTL_NUMA_POLICY_REQUIRED: Only GPUs on the node.
 * @GPUCTL_NUMA_POLICY_PREFERRED: GPUs on the node first, then any other.
 * @GPUCTL_NUMA_POLICY_LEGACY: GPUs on the node, or GPUs whose platform reports
 *   no node. The default when "numa-node" comes without a policy.
 */
enum gpuctl_numa_policy {
	GPUCTL_NUMA_POLICY_REQUIRED = 1,
	GPUCTL_NUMA_POLICY_PREFERRED,
	GPUCTL_NUMA_POLICY_LEGACY,

	/* private: */
	__GPUCTL_NUMA_POLICY_MAX,
	GPUCTL_NUMA_POLICY_MAX = (__GPUCTL_NUMA_POLICY_MAX - 1)
};

/**
 * enum gpuctl_migration_caps - What a VFIO device's driver registered it able
 *   to do for live migration (struct vfio_device: migration_flags, mig_ops and
 *   log_ops; include/linux/vfio.h, 6.1 and 6.12). The host's side only: a
 *   migration also needs the destination's driver, firmware and device to take
 *   the stream.
 * @GPUCTL_MIGRATION_CAPS_STOP_COPY: VFIO_MIGRATION_STOP_COPY: the device state
 *   can be saved while stopped and loaded on another device (migration v2), so
 *   the VM can live-migrate.
 * @GPUCTL_MIGRATION_CAPS_P2P: VFIO_MIGRATION_P2P, the intermediate state for
 *   peer-to-peer DMA.
 * @GPUCTL_MIGRATION_CAPS_PRE_COPY: VFIO_MIGRATION_PRE_COPY, state sent while
 *   the VM still runs.
 * @GPUCTL_MIGRATION_CAPS_DIRTY_TRACKING: The driver tracks the pages the
 *   device writes (log_ops), as otherwise the IOMMU must.
 */
enum gpuctl_migration_caps {
	GPUCTL_MIGRATION_CAPS_STOP_COPY = 1,
	GPUCTL_MIGRATION_CAPS_P2P = 2,
	GPUCTL_MIGRATION_CAPS_PRE_COPY = 4,
	GPUCTL_MIGRATION_CAPS_DIRTY_TRACKING = 8,
};

/**
 * enum gpuctl_open_match - Whether a VFIO open matched the device's
 *   allocation.
 * @GPUCTL_OPEN_MATCH_OWNER: The device is allocated and the opener's
 *   credentials match the allocation's "uid" and "gid" (or the allocation sets
 *   none).
 * @GPUCTL_OPEN_MATCH_OTHER: The device is allocated, but to credentials the
 *   opener lacks.
 * @GPUCTL_OPEN_MATCH_UNALLOCATED: The device has no allocation.
 * @GPUCTL_OPEN_MATCH_UNKNOWN: The device was already open when gpuctl loaded;
 *   the opener is not known.
 */
enum gpuctl_open_match {
	GPUCTL_OPEN_MATCH_OWNER = 1,
	GPUCTL_OPEN_MATCH_OTHER,
	GPUCTL_OPEN_MATCH_UNALLOCATED,
	GPUCTL_OPEN_MATCH_UNKNOWN,

	/* private: */
	__GPUCTL_OPEN_MATCH_MAX,
	GPUCTL_OPEN_MATCH_MAX = (__GPUCTL_OPEN_MATCH_MAX - 1)
};

/**
 * enum gpuctl_limit_scope - The tenant label a limit applies to (CloudStack's
 *   max.*.gpus).
 */
enum gpuctl_limit_scope {
	GPUCTL_LIMIT_SCOPE_ACCOUNT = 1,
	GPUCTL_LIMIT_SCOPE_PROJECT,
	GPUCTL_LIMIT_SCOPE_DOMAIN,

	/* private: */
	__GPUCTL_LIMIT_SCOPE_MAX,
	GPUCTL_LIMIT_SCOPE_MAX = (__GPUCTL_LIMIT_SCOPE_MAX - 1)
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
	GPUCTL_A_DEV_ALLOCATION,
	GPUCTL_A_DEV_HOLDER_PID,
	GPUCTL_A_DEV_HOLDER_COMM,
	GPUCTL_A_DEV_HOLDER_UID,
	GPUCTL_A_DEV_HOLDER_SINCE,
	GPUCTL_A_DEV_OPEN_MATCH,
	GPUCTL_A_DEV_REFUSED,
	GPUCTL_A_DEV_PAD,
	GPUCTL_A_DEV_PENDING,
	GPUCTL_A_DEV_MIGRATION,

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
	GPUCTL_A_RULE_ORPHAN,

	__GPUCTL_A_RULE_MAX,
	GPUCTL_A_RULE_MAX = (__GPUCTL_A_RULE_MAX - 1)
};

enum {
	GPUCTL_A_ALLOC_ID = 1,
	GPUCTL_A_ALLOC_OWNER,
	GPUCTL_A_ALLOC_NAME,
	GPUCTL_A_ALLOC_ACCOUNT,
	GPUCTL_A_ALLOC_PROJECT,
	GPUCTL_A_ALLOC_DOMAIN,
	GPUCTL_A_ALLOC_DEVICE,
	GPUCTL_A_ALLOC_COUNT,
	GPUCTL_A_ALLOC_MATCH,
	GPUCTL_A_ALLOC_NUMA_NODE,
	GPUCTL_A_ALLOC_NUMA_POLICY,
	GPUCTL_A_ALLOC_DETACH_ON_STOP,
	GPUCTL_A_ALLOC_UID,
	GPUCTL_A_ALLOC_GID,
	GPUCTL_A_ALLOC_STATE,
	GPUCTL_A_ALLOC_STATE_REASON,
	GPUCTL_A_ALLOC_GPUS,
	GPUCTL_A_ALLOC_END,
	GPUCTL_A_ALLOC_MDEV,
	GPUCTL_A_ALLOC_MDEV_MADE,
	GPUCTL_A_ALLOC_DEVICE_TYPED,
	GPUCTL_A_ALLOC_HANDOVER,

	__GPUCTL_A_ALLOC_MAX,
	GPUCTL_A_ALLOC_MAX = (__GPUCTL_A_ALLOC_MAX - 1)
};

enum {
	GPUCTL_A_LIMIT_SCOPE = 1,
	GPUCTL_A_LIMIT_NAME,
	GPUCTL_A_LIMIT_MAX_GPUS,
	GPUCTL_A_LIMIT_USED,

	__GPUCTL_A_LIMIT_MAX,
	GPUCTL_A_LIMIT_MAX = (__GPUCTL_A_LIMIT_MAX - 1)
};

enum {
	GPUCTL_A_MDEV_UUID = 1,
	GPUCTL_A_MDEV_TYPE,
	GPUCTL_A_MDEV_TYPE_NAME,
	GPUCTL_A_MDEV_PARENT,
	GPUCTL_A_MDEV_IOMMU_GROUP,
	GPUCTL_A_MDEV_DRIVER,
	GPUCTL_A_MDEV_ALLOCATION,
	GPUCTL_A_MDEV_OPEN,
	GPUCTL_A_MDEV_MIGRATION,

	__GPUCTL_A_MDEV_MAX,
	GPUCTL_A_MDEV_MAX = (__GPUCTL_A_MDEV_MAX - 1)
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
	GPUCTL_CMD_ALLOC_NEW,
	GPUCTL_CMD_ALLOC_DEL,
	GPUCTL_CMD_ALLOC_GET,
	GPUCTL_CMD_ALLOC_NEW_NTF,
	GPUCTL_CMD_ALLOC_DEL_NTF,
	GPUCTL_CMD_ALLOC_CHANGE_NTF,
	GPUCTL_CMD_LIMIT_SET,
	GPUCTL_CMD_LIMIT_GET,
	GPUCTL_CMD_VFIO_OPEN_NTF,
	GPUCTL_CMD_VFIO_CLOSE_NTF,
	GPUCTL_CMD_DEV_SET,
	GPUCTL_CMD_MDEV_GET,
	GPUCTL_CMD_MDEV_ADD_NTF,
	GPUCTL_CMD_MDEV_DEL_NTF,

	__GPUCTL_CMD_MAX,
	GPUCTL_CMD_MAX = (__GPUCTL_CMD_MAX - 1)
};

#define GPUCTL_MCGRP_MONITOR	"monitor"
#define GPUCTL_MCGRP_LEDGER	"ledger"

#endif /* _UAPI_LINUX_GPUCTL_H */
