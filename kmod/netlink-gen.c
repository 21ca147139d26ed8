// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuctl.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink-gen.h"

#include <uapi/linux/gpuctl.h>

/* GPUCTL_CMD_DEV_GET - do */
const struct nla_policy gpuctl_dev_get_nl_policy[GPUCTL_A_DEV_ADDRESS + 1] = {
	[GPUCTL_A_DEV_ADDRESS] = { .type = NLA_NUL_STRING, .len = GPUCTL_ADDRESS_LEN, },
};

/* GPUCTL_CMD_GROUP_GET - do */
const struct nla_policy gpuctl_group_get_nl_policy[GPUCTL_A_GROUP_ID + 1] = {
	[GPUCTL_A_GROUP_ID] = { .type = NLA_U32, },
};

/* GPUCTL_CMD_RULE_NEW - do */
const struct nla_policy gpuctl_rule_new_nl_policy[GPUCTL_A_RULE_TAKE + 1] = {
	[GPUCTL_A_RULE_MATCH] = { .type = NLA_NUL_STRING, .len = GPUCTL_MATCH_LEN, },
	[GPUCTL_A_RULE_DRIVER] = { .type = NLA_NUL_STRING, .len = GPUCTL_DRIVER_LEN, },
	[GPUCTL_A_RULE_FORCE] = { .type = NLA_FLAG, },
	[GPUCTL_A_RULE_TAKE] = { .type = NLA_FLAG, },
};

/* GPUCTL_CMD_RULE_DEL - do */
const struct nla_policy gpuctl_rule_del_nl_policy[GPUCTL_A_RULE_MATCH + 1] = {
	[GPUCTL_A_RULE_ID] = { .type = NLA_U32, },
	[GPUCTL_A_RULE_MATCH] = { .type = NLA_NUL_STRING, .len = GPUCTL_MATCH_LEN, },
};

/* GPUCTL_CMD_RULE_GET - do */
const struct nla_policy gpuctl_rule_get_nl_policy[GPUCTL_A_RULE_ID + 1] = {
	[GPUCTL_A_RULE_ID] = { .type = NLA_U32, },
};

/* Ops table for gpuctl */
const struct genl_ops gpuctl_nl_ops[5] = {
	{
		.cmd		= GPUCTL_CMD_DEV_GET,
		.doit		= gpuctl_nl_dev_get_doit,
		.dumpit		= gpuctl_nl_dev_get_dumpit,
		.policy		= gpuctl_dev_get_nl_policy,
		.maxattr	= GPUCTL_A_DEV_ADDRESS,
	},
	{
		.cmd		= GPUCTL_CMD_GROUP_GET,
		.doit		= gpuctl_nl_group_get_doit,
		.dumpit		= gpuctl_nl_group_get_dumpit,
		.policy		= gpuctl_group_get_nl_policy,
		.maxattr	= GPUCTL_A_GROUP_ID,
	},
	{
		.cmd		= GPUCTL_CMD_RULE_NEW,
		.doit		= gpuctl_nl_rule_new_doit,
		.policy		= gpuctl_rule_new_nl_policy,
		.maxattr	= GPUCTL_A_RULE_TAKE,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_RULE_DEL,
		.doit		= gpuctl_nl_rule_del_doit,
		.policy		= gpuctl_rule_del_nl_policy,
		.maxattr	= GPUCTL_A_RULE_MATCH,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_RULE_GET,
		.doit		= gpuctl_nl_rule_get_doit,
		.dumpit		= gpuctl_nl_rule_get_dumpit,
		.policy		= gpuctl_rule_get_nl_policy,
		.maxattr	= GPUCTL_A_RULE_ID,
		.flags		= GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group gpuctl_nl_mcgrps[] = {
	[GPUCTL_NLGRP_MONITOR] = { "monitor", },
};
