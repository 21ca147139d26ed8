/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */

#ifndef _GPUCTL_NETLINK_H
#define _GPUCTL_NETLINK_H

#include <linux/types.h>
#include <net/genetlink.h>

struct gpuctl_alloc;
struct gpuctl_dev;
struct gpuctl_holder;
struct gpuctl_mdev;
struct gpuctl_rule;

int gpuctl_netlink_init(void);
void gpuctl_netlink_exit(void);
void gpuctl_netlink_notify_dev(const struct gpuctl_dev *dev, u8 cmd,
			       u32 action);
void gpuctl_netlink_notify_rule(const struct gpuctl_rule *rule, u8 cmd);
void gpuctl_netlink_notify_vfio(const struct gpuctl_dev *dev,
				const struct gpuctl_holder *holder, u8 cmd,
				const char *refused);
void gpuctl_netlink_notify_alloc(const struct gpuctl_alloc *alloc, u8 cmd,
				 u32 end);
void gpuctl_netlink_notify_mdev(const struct gpuctl_mdev *m, u8 cmd);

/* Shared by the handlers in netlink.c and netlink-rule.c. */
extern struct genl_family gpuctl_nl_family;

/*
 * Fills the first object whose key is at least *@key into @msg and sets
 * *@key to its key; @admin: the reader has CAP_SYS_ADMIN. Returns 1 when
 * it filled one, 0 when there is none left, or a negative errno
 * (-EMSGSIZE when @msg is full).
 */
typedef int (*gpuctl_nl_fill_next_t)(struct sk_buff *msg, unsigned long *key,
				     bool admin);

/* gpuctl_nl_dump() flags */
#define GPUCTL_NL_DUMP_ADMIN	BIT(0)	/* for CAP_SYS_ADMIN only */
#define GPUCTL_NL_DUMP_WATCH	BIT(1)	/* shows who has devices open */

int gpuctl_nl_dump(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		   gpuctl_nl_fill_next_t fill_next, unsigned int flags);
int gpuctl_nl_rule_fill(struct sk_buff *msg, const struct gpuctl_rule *rule);
int gpuctl_nl_rule_lookup(struct genl_info *info);
int gpuctl_nl_alloc_fill(struct sk_buff *msg, const struct gpuctl_alloc *alloc);
int gpuctl_nl_alloc_lookup(struct genl_info *info);
int gpuctl_nl_limit_lookup(struct genl_info *info);
int gpuctl_nl_mdev_lookup(struct genl_info *info);
bool gpuctl_nl_admin(struct sk_buff *skb);
struct sk_buff *gpuctl_nl_reply_new(struct genl_info *info, void **hdr);
int gpuctl_nl_reply_send(struct genl_info *info, struct sk_buff *msg,
			 void *hdr, int err);
struct sk_buff *gpuctl_nl_ntf_new(u8 cmd, unsigned int group, void **hdr);
void gpuctl_nl_ntf_send(struct sk_buff *msg, void *hdr, unsigned int group);

#endif /* _GPUCTL_NETLINK_H */
