/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuctl.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_GPUCTL_GEN_H
#define _LINUX_GPUCTL_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/gpuctl.h>

extern const struct nla_policy gpuctl_dev_get_nl_policy[GPUCTL_A_DEV_ADDRESS + 1];

extern const struct nla_policy gpuctl_group_get_nl_policy[GPUCTL_A_GROUP_ID + 1];

extern const struct nla_policy gpuctl_rule_new_nl_policy[GPUCTL_A_RULE_ORPHAN + 1];

extern const struct nla_policy gpuctl_rule_del_nl_policy[GPUCTL_A_RULE_MATCH + 1];

extern const struct nla_policy gpuctl_rule_get_nl_policy[GPUCTL_A_RULE_ID + 1];

extern const struct nla_policy gpuctl_alloc_new_nl_policy[GPUCTL_A_ALLOC_DEVICE_TYPED + 1];

extern const struct nla_policy gpuctl_alloc_del_nl_policy[GPUCTL_A_ALLOC_HANDOVER + 1];

extern const struct nla_policy gpuctl_alloc_get_nl_policy[GPUCTL_A_ALLOC_ID + 1];

extern const struct nla_policy gpuctl_limit_set_nl_policy[GPUCTL_A_LIMIT_MAX_GPUS + 1];

extern const struct nla_policy gpuctl_limit_get_nl_policy[GPUCTL_A_LIMIT_NAME + 1];

extern const struct nla_policy gpuctl_dev_set_nl_policy[GPUCTL_A_DEV_SRIOV_NUMVFS + 1];

extern const struct nla_policy gpuctl_mdev_get_nl_policy[GPUCTL_A_MDEV_UUID + 1];

/* Ops table for gpuctl */
extern const struct genl_ops gpuctl_nl_ops[12];

int gpuctl_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int gpuctl_nl_group_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_group_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int gpuctl_nl_rule_new_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_rule_del_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_rule_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int gpuctl_nl_alloc_new_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_alloc_del_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_alloc_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_alloc_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int gpuctl_nl_limit_set_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_limit_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_limit_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int gpuctl_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_mdev_get_doit(struct sk_buff *skb, struct genl_info *info);
int gpuctl_nl_mdev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

enum {
	GPUCTL_NLGRP_MONITOR,
	GPUCTL_NLGRP_LEDGER,
};

#endif /* _LINUX_GPUCTL_GEN_H */
