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
const struct nla_policy gpuctl_rule_new_nl_policy[GPUCTL_A_RULE_ORPHAN + 1] = {
	[GPUCTL_A_RULE_ID] = { .type = NLA_U32, },
	[GPUCTL_A_RULE_MATCH] = { .type = NLA_NUL_STRING, .len = GPUCTL_MATCH_LEN, },
	[GPUCTL_A_RULE_DRIVER] = { .type = NLA_NUL_STRING, .len = GPUCTL_DRIVER_LEN, },
	[GPUCTL_A_RULE_FORCE] = { .type = NLA_FLAG, },
	[GPUCTL_A_RULE_TAKE] = { .type = NLA_FLAG, },
	[GPUCTL_A_RULE_ORPHAN] = { .type = NLA_STRING, .len = GPUCTL_MATCH_LEN, },
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

/* GPUCTL_CMD_ALLOC_NEW - do */
const struct nla_policy gpuctl_alloc_new_nl_policy[GPUCTL_A_ALLOC_DEVICE_TYPED + 1] = {
	[GPUCTL_A_ALLOC_ID] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_OWNER] = { .type = NLA_NUL_STRING, .len = GPUCTL_UUID_LEN, },
	[GPUCTL_A_ALLOC_NAME] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
	[GPUCTL_A_ALLOC_ACCOUNT] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
	[GPUCTL_A_ALLOC_PROJECT] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
	[GPUCTL_A_ALLOC_DOMAIN] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
	[GPUCTL_A_ALLOC_DEVICE] = { .type = NLA_STRING, .len = GPUCTL_ADDRESS_LEN, },
	[GPUCTL_A_ALLOC_COUNT] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_MATCH] = { .type = NLA_NUL_STRING, .len = GPUCTL_MATCH_LEN, },
	[GPUCTL_A_ALLOC_NUMA_NODE] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_NUMA_POLICY] = NLA_POLICY_RANGE(NLA_U32, 1, 3),
	[GPUCTL_A_ALLOC_DETACH_ON_STOP] = { .type = NLA_FLAG, },
	[GPUCTL_A_ALLOC_UID] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_GID] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_MDEV] = { .type = NLA_STRING, .len = GPUCTL_UUID_LEN, },
	[GPUCTL_A_ALLOC_MDEV_MADE] = { .type = NLA_STRING, .len = GPUCTL_UUID_LEN, },
	[GPUCTL_A_ALLOC_DEVICE_TYPED] = { .type = NLA_STRING, .len = GPUCTL_ADDRESS_LEN, },
};

/* GPUCTL_CMD_ALLOC_DEL - do */
const struct nla_policy gpuctl_alloc_del_nl_policy[GPUCTL_A_ALLOC_HANDOVER + 1] = {
	[GPUCTL_A_ALLOC_ID] = { .type = NLA_U32, },
	[GPUCTL_A_ALLOC_OWNER] = { .type = NLA_NUL_STRING, .len = GPUCTL_UUID_LEN, },
	[GPUCTL_A_ALLOC_HANDOVER] = { .type = NLA_FLAG, },
};

/* GPUCTL_CMD_ALLOC_GET - do */
const struct nla_policy gpuctl_alloc_get_nl_policy[GPUCTL_A_ALLOC_ID + 1] = {
	[GPUCTL_A_ALLOC_ID] = { .type = NLA_U32, },
};

/* GPUCTL_CMD_LIMIT_SET - do */
const struct nla_policy gpuctl_limit_set_nl_policy[GPUCTL_A_LIMIT_MAX_GPUS + 1] = {
	[GPUCTL_A_LIMIT_SCOPE] = NLA_POLICY_RANGE(NLA_U32, 1, 3),
	[GPUCTL_A_LIMIT_NAME] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
	[GPUCTL_A_LIMIT_MAX_GPUS] = { .type = NLA_U32, },
};

/* GPUCTL_CMD_LIMIT_GET - do */
const struct nla_policy gpuctl_limit_get_nl_policy[GPUCTL_A_LIMIT_NAME + 1] = {
	[GPUCTL_A_LIMIT_SCOPE] = NLA_POLICY_RANGE(NLA_U32, 1, 3),
	[GPUCTL_A_LIMIT_NAME] = { .type = NLA_NUL_STRING, .len = GPUCTL_LABEL_LEN, },
};

/* GPUCTL_CMD_DEV_SET - do */
const struct nla_policy gpuctl_dev_set_nl_policy[GPUCTL_A_DEV_SRIOV_NUMVFS + 1] = {
	[GPUCTL_A_DEV_ADDRESS] = { .type = NLA_NUL_STRING, .len = GPUCTL_ADDRESS_LEN, },
	[GPUCTL_A_DEV_SRIOV_NUMVFS] = { .type = NLA_U16, },
};

/* GPUCTL_CMD_MDEV_GET - do */
const struct nla_policy gpuctl_mdev_get_nl_policy[GPUCTL_A_MDEV_UUID + 1] = {
	[GPUCTL_A_MDEV_UUID] = { .type = NLA_NUL_STRING, .len = GPUCTL_UUID_LEN, },
};

/* Ops table for gpuctl */
const struct genl_ops gpuctl_nl_ops[12] = {
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
		.maxattr	= GPUCTL_A_RULE_ORPHAN,
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
	{
		.cmd		= GPUCTL_CMD_ALLOC_NEW,
		.doit		= gpuctl_nl_alloc_new_doit,
		.policy		= gpuctl_alloc_new_nl_policy,
		.maxattr	= GPUCTL_A_ALLOC_DEVICE_TYPED,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_ALLOC_DEL,
		.doit		= gpuctl_nl_alloc_del_doit,
		.policy		= gpuctl_alloc_del_nl_policy,
		.maxattr	= GPUCTL_A_ALLOC_HANDOVER,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_ALLOC_GET,
		.doit		= gpuctl_nl_alloc_get_doit,
		.dumpit		= gpuctl_nl_alloc_get_dumpit,
		.policy		= gpuctl_alloc_get_nl_policy,
		.maxattr	= GPUCTL_A_ALLOC_ID,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_LIMIT_SET,
		.doit		= gpuctl_nl_limit_set_doit,
		.policy		= gpuctl_limit_set_nl_policy,
		.maxattr	= GPUCTL_A_LIMIT_MAX_GPUS,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_LIMIT_GET,
		.doit		= gpuctl_nl_limit_get_doit,
		.dumpit		= gpuctl_nl_limit_get_dumpit,
		.policy		= gpuctl_limit_get_nl_policy,
		.maxattr	= GPUCTL_A_LIMIT_NAME,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_DEV_SET,
		.doit		= gpuctl_nl_dev_set_doit,
		.policy		= gpuctl_dev_set_nl_policy,
		.maxattr	= GPUCTL_A_DEV_SRIOV_NUMVFS,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= GPUCTL_CMD_MDEV_GET,
		.doit		= gpuctl_nl_mdev_get_doit,
		.dumpit		= gpuctl_nl_mdev_get_dumpit,
		.policy		= gpuctl_mdev_get_nl_policy,
		.maxattr	= GPUCTL_A_MDEV_UUID,
	},
};

static const struct genl_multicast_group gpuctl_nl_mcgrps[] = {
	[GPUCTL_NLGRP_MONITOR] = { "monitor", },
	[GPUCTL_NLGRP_LEDGER] = { "ledger", },
};
