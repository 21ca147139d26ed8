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
#include "netlink.h"
#include "param.h"
#include "reserve.h"
#include "rule.h"
#include "vfio-track.h"

/*
 * The worker and the family go first, then gpuctl-vfio-pci (a rule may
 * name it), the parameter's rules, the notifier, and the hooks on devices
 * vfio-pci has already: every notification is sent on a registered
 * family, and the load-time scan already applies the rules. Exit undoes
 * them in reverse, except that the worker stops before the VFIO parts go
 * (it binds devices) and before the family goes (it sends
 * notifications), and its queue is freed once no request can kick it;
 * the tables are freed last. No allocation and no open tracked device is
 * left by then: each holds a reference on the module.
 */
static int __init gpuctl_mod_init(void)
{
	int ret;

	ret = gpuctl_reserve_init();
	if (ret)
		return ret;

	ret = gpuctl_netlink_init();
	if (ret)
		goto err_reserve_exit;

	ret = gpuctl_vfio_driver_init();
	if (ret)
		goto err_netlink_exit;

	ret = gpuctl_param_load();
	if (ret)
		goto err_driver_exit;

	ret = gpuctl_inventory_start();
	if (ret)
		goto err_driver_exit;

	gpuctl_vfio_hook_scan();
	pr_info("version " GPUCTL_VERSION " loaded\n");
	return 0;

err_driver_exit:
	gpuctl_reserve_stop();
	gpuctl_vfio_driver_exit();
	goto err_family;
err_netlink_exit:
	gpuctl_reserve_stop();
err_family:
	gpuctl_netlink_exit();
err_reserve_exit:
	gpuctl_reserve_exit();
	gpuctl_rule_flush();
	return ret;
}

static void __exit gpuctl_mod_exit(void)
{
	gpuctl_inventory_stop();
	gpuctl_reserve_stop();
	gpuctl_vfio_hook_exit();
	gpuctl_vfio_driver_exit();
	gpuctl_netlink_exit();
	gpuctl_reserve_exit();
	gpuctl_inventory_flush();
	gpuctl_rule_flush();
	gpuctl_limit_flush();
}

module_init(gpuctl_mod_init);
module_exit(gpuctl_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GPU inventory and reservation for VFIO passthrough, over generic netlink");
MODULE_AUTHOR("The gpuctl authors");
MODULE_VERSION(GPUCTL_VERSION);
MODULE_ALIAS_GENL_FAMILY(GPUCTL_FAMILY_NAME);
