/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_ALLOC_H
#define _GPUCTL_ALLOC_H

#include <linux/types.h>
#include <linux/uuid.h>
#include <uapi/linux/gpuctl.h>

#include "rule.h"

struct gpuctl_dev;
struct gpuctl_mdev;

/* Tenant labels, indexed by enum gpuctl_limit_scope - 1. */
#define GPUCTL_NR_LABELS GPUCTL_LIMIT_SCOPE_MAX

/* "0000:01:00.0 was removed", or an mdev's UUID in its place */
#define GPUCTL_ALLOC_REASON_LEN 64

/*
 * Longest reason alloc-new gives, within the 80 bytes netlink keeps of a
 * formatted extack message (NETLINK_MAX_FMTMSG_LEN).
 */
#define GPUCTL_ALLOC_WHY_LEN 80

/* Most GPUs one request may name or count; a host has far fewer. */
#define GPUCTL_ALLOC_MAX_GPUS 64

/**
 * struct gpuctl_alloc_dev - one device of an allocation
 * @address: its PCI address, kept for the ledger after it is removed
 * @dev: the tracked device; NULL once it was removed (the allocation is
 *	then lost)
 * @typed: a vendor VF given its vGPU type for the allocation, which its
 *	deleter takes away too; the module only keeps the mark
 */
struct gpuctl_alloc_dev {
	char address[GPUCTL_ADDRESS_LEN + 1];
	struct gpuctl_dev *dev;
	bool typed;
};

/**
 * struct gpuctl_alloc_mdev - one mdev instance (vGPU) of an allocation
 * @uuid: its UUID, kept for the ledger after it is removed
 * @mdev: the instance; NULL once it was removed (the allocation is then
 *	lost)
 * @made: it was made for the allocation, which its deleter removes too;
 *	the module only keeps the mark (the mdev core lets only sysfs create
 *	and remove instances)
 */
struct gpuctl_alloc_mdev {
	guid_t uuid;
	struct gpuctl_mdev *mdev;
	bool made;
};

/**
 * struct gpuctl_alloc_info - what alloc-new says about an allocation
 * @id: allocation id, never 0 in an allocation (0 in a request: any)
 * @owner: the VM's UUID, lower case
 * @name: the VM's name, "" when not given
 * @labels: tenant account, project and domain, "" when not given
 * @detach_on_stop: end the allocation when its devices' last user closes
 * @has_uid: @uid is set; VFIO opens by other uids do not match
 * @has_gid: @gid is set
 * @uid: the owner's uid, in the initial user namespace
 * @gid: the owner's gid, in the initial user namespace
 */
struct gpuctl_alloc_info {
	u32 id;
	char owner[GPUCTL_UUID_LEN + 1];
	char name[GPUCTL_LABEL_LEN + 1];
	char labels[GPUCTL_NR_LABELS][GPUCTL_LABEL_LEN + 1];
	bool detach_on_stop;
	bool has_uid;
	bool has_gid;
	u32 uid;
	u32 gid;
};

/**
 * struct gpuctl_alloc - devices given to one VM
 * @info: id, owner, labels, options
 * @state: enum gpuctl_alloc_state
 * @reason: why it is lost, "" otherwise
 * @gpus: how many GPUs it counts against limits: its GPUs and its mdevs
 * @nr_mdevs: number of @mdevs
 * @mdevs: its mdev instances, in the order of the request; NULL when none
 * @nr_devs: number of @devs
 * @devs: its GPUs and their companions, in address order
 *
 * Allocations live in a table under gpuctl_lock. Each holds a reference
 * on the module, so that it cannot be unloaded with the ledger in it.
 */
struct gpuctl_alloc {
	struct gpuctl_alloc_info info;
	u32 state;
	char reason[GPUCTL_ALLOC_REASON_LEN];
	u32 gpus;
	unsigned int nr_mdevs;
	struct gpuctl_alloc_mdev *mdevs;
	unsigned int nr_devs;
	struct gpuctl_alloc_dev devs[];
};

/**
 * struct gpuctl_alloc_req - what alloc-new asks for
 * @info: id (0: any), owner, name, labels, options and credentials
 * @gpus: the GPUs named, or those placement picked
 * @gpu_typed: which of @gpus are vendor VFs typed for the allocation
 * @nr_gpus: number of @gpus
 * @count: how many GPUs to pick, 0 when they are named
 * @has_match: pick only GPUs @match selects
 * @match: ids to pick
 * @numa_node: node to pick on, NUMA_NO_NODE for any
 * @numa_policy: enum gpuctl_numa_policy
 * @mdevs: the mdev instances named
 * @mdev_made: which of @mdevs were made for the allocation
 * @nr_mdevs: number of @mdevs
 */
struct gpuctl_alloc_req {
	struct gpuctl_alloc_info info;
	struct gpuctl_dev *gpus[GPUCTL_ALLOC_MAX_GPUS];
	bool gpu_typed[GPUCTL_ALLOC_MAX_GPUS];
	unsigned int nr_gpus;
	u32 count;
	bool has_match;
	struct gpuctl_match match;
	int numa_node;
	u32 numa_policy;
	struct gpuctl_mdev *mdevs[GPUCTL_ALLOC_MAX_GPUS];
	bool mdev_made[GPUCTL_ALLOC_MAX_GPUS];
	unsigned int nr_mdevs;
};

bool gpuctl_alloc_picked(const struct gpuctl_alloc_req *req,
			 const struct gpuctl_dev *dev);
int gpuctl_alloc_unfit(const struct gpuctl_dev *dev, char *why, size_t len);
int gpuctl_alloc_place(struct gpuctl_alloc_req *req, char *why, size_t len);
struct gpuctl_alloc *gpuctl_alloc_create(const struct gpuctl_alloc_req *req);
void gpuctl_alloc_destroy(struct gpuctl_alloc *alloc, u32 end);
struct gpuctl_alloc *gpuctl_alloc_find(u32 id);
struct gpuctl_alloc *gpuctl_alloc_next(unsigned long *id);
const struct gpuctl_dev *gpuctl_alloc_open_dev(const struct gpuctl_alloc *alloc);
const struct gpuctl_mdev *
gpuctl_alloc_open_mdev(const struct gpuctl_alloc *alloc);
bool gpuctl_alloc_in_use(const struct gpuctl_alloc *alloc);
bool gpuctl_alloc_update_state(struct gpuctl_alloc *alloc, bool notify);
void gpuctl_alloc_dev_gone(struct gpuctl_dev *dev);
void gpuctl_alloc_mdev_gone(struct gpuctl_mdev *m);

#endif /* _GPUCTL_ALLOC_H */
