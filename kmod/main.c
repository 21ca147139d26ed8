// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl: an inventory of the host's GPUs and of the other members of
 * their IOMMU groups, exported over generic netlink.
 */

#include <linux/net.h>
#include <net/genetlink.h>
#include <linux/module.h>
#include <uapi/linux/gpuctl.h>

#include "inventory.h"
#include "limit.h"
#include "mdev.h"
#include "netlink.h"
#include "param.h"
#include "reserve.h"
#include "rule.h"
#include "vfio-track.h"

/*
 * Setup, in order: the enforcement worker's queue; gpuctl-vfio-pci (a rule
 * may name it); the parameter's rules; the bus notifier and the load-time
 * scan, which apply the rules; the mdev bus's notifier and scan; the
 * observer of VFIO opens; and last the netlink family, so that no request
 * sees a half-built module.
 *
 * Teardown mirrors it, like WireGuard's: the family goes first (no request
 * runs after it, and no notification is sent), then the observer, then the
 * notifiers. The worker, which those kicked, stops next, before the tables
 * and rules it reads are freed; then gpuctl-vfio-pci goes and the worker's
 * queue last. No allocation and no open on gpuctl-vfio-pci is left by
 * then: each pins the module. Devices stay where they are, overrides
 * included, so no reserved GPU falls to a host driver across a reload.
 */
static int __init gpuctl_mod_init(void)
{
	int ret;

	ret = gpuctl_reserve_init();
	if (ret)
		return ret;

	ret = gpuctl_vfio_driver_init();
	if (ret)
		goto err_reserve_exit;

	ret = gpuctl_param_load();
	if (ret)
		goto err_rule_flush;

	ret = gpuctl_inventory_start();
	if (ret)
		goto err_inventory_flush;

	ret = gpuctl_mdev_start();
	if (ret)
		goto err_inventory_stop;

	gpuctl_vfio_watch_start();

	ret = gpuctl_netlink_init();
	if (ret)
		goto err_watch_stop;

	pr_info("version " GPUCTL_VERSION " loaded\n");
	return 0;

err_watch_stop:
	gpuctl_vfio_watch_stop();
	gpuctl_mdev_stop();
err_inventory_stop:
	gpuctl_inventory_stop();
err_inventory_flush:
	gpuctl_reserve_stop();
	gpuctl_inventory_flush();
err_rule_flush:
	gpuctl_reserve_stop();
	gpuctl_rule_flush();
	gpuctl_vfio_driver_exit();
err_reserve_exit:
	gpuctl_reserve_exit();
	return ret;
}

static void __exit gpuctl_mod_exit(void)
{
	gpuctl_netlink_exit();
	gpuctl_limit_flush();
	gpuctl_vfio_watch_stop();
	gpuctl_mdev_stop();
	gpuctl_inventory_stop();
	gpuctl_reserve_stop();
	gpuctl_inventory_flush();
	gpuctl_rule_flush();
	gpuctl_vfio_driver_exit();
	gpuctl_reserve_exit();
}

module_init(gpuctl_mod_init);
module_exit(gpuctl_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GPU inventory and reservation for VFIO passthrough, over generic netlink");
MODULE_AUTHOR("The gpuctl authors");
MODULE_VERSION(GPUCTL_VERSION);
MODULE_ALIAS_GENL_FAMILY(GPUCTL_FAMILY_NAME);
