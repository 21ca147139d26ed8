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
#include "netlink.h"

/*
 * The family goes first and the notifier second: every notification is
 * then sent on a registered family, and exit undoes them in reverse before
 * the table is freed.
 */
static int __init gpuctl_mod_init(void)
{
	int ret;

	ret = gpuctl_netlink_init();
	if (ret)
		return ret;

	ret = gpuctl_inventory_start();
	if (ret)
		goto err_netlink_exit;

	pr_info("version " GPUCTL_VERSION " loaded\n");
	return 0;

err_netlink_exit:
	gpuctl_netlink_exit();
	return ret;
}

static void __exit gpuctl_mod_exit(void)
{
	gpuctl_inventory_stop();
	gpuctl_netlink_exit();
	gpuctl_inventory_flush();
}

module_init(gpuctl_mod_init);
module_exit(gpuctl_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GPU and IOMMU group inventory over generic netlink");
MODULE_AUTHOR("The gpuctl authors");
MODULE_VERSION(GPUCTL_VERSION);
MODULE_ALIAS_GENL_FAMILY(GPUCTL_FAMILY_NAME);
