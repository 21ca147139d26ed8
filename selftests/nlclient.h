/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * A small libnl-genl-3 client for the gpuctl family, written for the
 * selftests. It deliberately shares no code with tools/gpuctl, so the tests
 * do not trust the tool to check the module.
 */
#ifndef _GPUCTL_NLCLIENT_H
#define _GPUCTL_NLCLIENT_H

#include <stdbool.h>
#include <linux/types.h>
#include <stdio.h>

#include <linux/gpuctl.h>

struct nl_sock;
struct nl_msg;
struct nlmsghdr;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define NLC_ADDR_LEN	16
#define NLC_NAME_LEN	64
#define NLC_MAX_MEMBERS	64
#define NLC_MAX_WARNINGS	8
#define NLC_TEXT_LEN	256
#define NLC_UUID_LEN	40
#define NLC_LABEL_LEN	64

/* One dev-get reply or notification. @present has bit (1 << GPUCTL_A_DEV_x)
 * set for every attribute found in the message, so "absent" and "zero" stay
 * apart.
 */
struct nlc_dev {
	__u32 present;
	char address[NLC_ADDR_LEN];
	__u16 vendor_id;
	__u16 device_id;
	__u16 subsystem_vendor_id;
	__u16 subsystem_device_id;
	__u32 class;
	__u8 revision;
	char driver[NLC_NAME_LEN];
	__u32 iommu_group;
	__s32 numa_node;
	char pci_root[NLC_NAME_LEN];
	__u16 sriov_totalvfs;
	__u16 sriov_numvfs;
	char physfn[NLC_ADDR_LEN];
	__u32 role;
	__u8 reserved;
	__u32 state;
	char state_reason[NLC_TEXT_LEN];
	__u32 rule;
	__u32 action;
	__u32 allocation;
	__u32 holder_pid;
	char holder_comm[NLC_NAME_LEN];
	__u32 holder_uid;
	__u64 holder_since;
	__u32 open_match;
	char refused[NLC_TEXT_LEN];
	bool pending;
};

struct nlc_group {
	__u32 present;
	__u32 id;
	int ndevices;
	char devices[NLC_MAX_MEMBERS][NLC_ADDR_LEN];
	__u8 viable;
	char reason[NLC_TEXT_LEN];
};

/* One rule-get reply or rule notification; flags are their presence. */
struct nlc_rule {
	__u32 present;
	__u32 id;
	char match[NLC_NAME_LEN];
	char driver[NLC_NAME_LEN];
	bool force;
	bool take;
	__u32 source;
	int ndevices;
	char devices[NLC_MAX_MEMBERS][NLC_ADDR_LEN];
	int nwarnings;
	char warnings[NLC_MAX_WARNINGS][NLC_TEXT_LEN];
	int norphans;
	char orphans[NLC_MAX_MEMBERS][NLC_ADDR_LEN];
};

/* One alloc-get reply or allocation notification. */
struct nlc_alloc {
	__u32 present;
	__u32 id;
	char owner[NLC_UUID_LEN];
	char name[NLC_LABEL_LEN];
	char account[NLC_LABEL_LEN];
	char project[NLC_LABEL_LEN];
	char domain[NLC_LABEL_LEN];
	int ndevices;
	char devices[NLC_MAX_MEMBERS][NLC_ADDR_LEN];
	bool detach_on_stop;
	__u32 uid;
	__u32 gid;
	__u32 state;
	char state_reason[NLC_TEXT_LEN];
	__u32 gpus;
	__u32 end;
	int nmdevs;			/* "mdev" and "mdev-made", in order */
	char mdevs[NLC_MAX_MEMBERS][NLC_UUID_LEN];
	bool mdev_made[NLC_MAX_MEMBERS];
};

/*
 * An alloc-new request. Strings are sent when non-NULL, @devices[0..n) as
 * repeated "device" attributes, the u32 attributes and detach-on-stop when
 * @present has their bit (nlc_alloc_req_set()), so tests can also send
 * requests the kernel must refuse.
 */
struct nlc_alloc_req {
	__u32 present;
	__u32 id;
	const char *owner;
	const char *name;
	const char *account;
	const char *project;
	const char *domain;
	int ndevices;
	const char *devices[NLC_MAX_MEMBERS];
	__u32 count;
	const char *match;
	__u32 numa_node;
	__u32 numa_policy;
	__u32 uid;
	__u32 gid;
	int nmdevs;			/* as repeated "mdev" attributes */
	const char *mdevs[NLC_MAX_MEMBERS];
};

/* Sets the u32 attribute @attr (or the flag detach-on-stop) of @req. */
void nlc_alloc_req_set(struct nlc_alloc_req *req, int attr, __u32 val);

/* One limit-get or limit-set reply. */
struct nlc_limit {
	__u32 present;
	__u32 scope;
	char name[NLC_LABEL_LEN];
	__u32 max_gpus;
	__u32 used;
};

/* Any notification of the monitor group: @dev, @rule or @alloc, as @cmd
 * says (vfio-open/close-ntf are device notifications).
 */
struct nlc_ntf {
	__u8 cmd;
	struct nlc_dev dev;
	struct nlc_rule rule;
	struct nlc_alloc alloc;
};

#define NLC_HAS(obj, attr)	(!!((obj)->present & (1u << (attr))))

/* What a dump looked like on the wire. */
struct nlc_dump_info {
	int datagrams;		/* recvmsg() calls that returned dump data */
	int messages;		/* objects received */
	bool intr;		/* some message carried NLM_F_DUMP_INTR */
};

struct nlc {
	struct nl_sock *sk;
	int family;
	int mcgrp;
	/* The last request's outcome, filled from NLMSG_ERROR. */
	int err;		/* positive errno, 0 on success */
	char extack[256];	/* NLMSGERR_ATTR_MSG, "" when absent */
	__u32 miss_type;	/* NLMSGERR_ATTR_MISS_TYPE, 0 when absent */
	__s32 bad_offset;	/* NLMSGERR_ATTR_OFFS, -1 when absent */
	int bad_attr;		/* type of the attribute at bad_offset, or -1 */
	__u32 seq;		/* sequence number of the pending request */
	/* A copy of the pending request, to name the attribute at bad_offset. */
	unsigned char req[1024];
	int reqlen;
	/* A received datagram not yet handed out by nlc_monitor_next(). */
	unsigned char *buf;
	int buflen;
	int bufoff;
};

/* Called for every gpuctl message of a reply, a dump or the monitor. */
typedef int (*nlc_msg_cb)(struct nlc *c, __u8 cmd,
			  const struct nlmsghdr *nlh, void *arg);

int nlc_open(struct nlc *c);
void nlc_close(struct nlc *c);
int nlc_set_rcvbuf(struct nlc *c, int bytes);

struct nl_msg *nlc_msg_new(struct nlc *c, __u8 cmd, int flags);
int nlc_send(struct nlc *c, struct nl_msg *msg);
int nlc_recv_reply(struct nlc *c, nlc_msg_cb cb, void *arg,
		   struct nlc_dump_info *info);
int nlc_exchange(struct nlc *c, struct nl_msg *msg, nlc_msg_cb cb, void *arg,
		 struct nlc_dump_info *info);

int nlc_parse_dev(const struct nlmsghdr *nlh, struct nlc_dev *d);
int nlc_parse_group(const struct nlmsghdr *nlh, struct nlc_group *g);
int nlc_parse_rule(const struct nlmsghdr *nlh, struct nlc_rule *r);
int nlc_parse_alloc(const struct nlmsghdr *nlh, struct nlc_alloc *a);
int nlc_parse_limit(const struct nlmsghdr *nlh, struct nlc_limit *l);

int nlc_dev_get(struct nlc *c, const char *address, struct nlc_dev *d);
int nlc_dev_set(struct nlc *c, const char *address, __u16 numvfs);
int nlc_group_get(struct nlc *c, __u32 id, struct nlc_group *g);
int nlc_dev_dump(struct nlc *c, struct nlc_dev **devs, int *n,
		 struct nlc_dump_info *info);
int nlc_group_dump(struct nlc *c, struct nlc_group **groups, int *n,
		   struct nlc_dump_info *info);

/*
 * How long nlc_rule_new() and nlc_rule_del() wait for gpuctl's worker: a
 * bind under TCG on make check-debug's kernel takes seconds.
 */
#define NLC_SETTLE_MS		60000
#define NLC_SETTLE_POLL_MS	20

/*
 * rule-new: @driver NULL leaves the attribute out (the kernel's default).
 * On success @r holds the rule as the kernel has it once its worker acted
 * on the rule's devices (nlc_rule_settle(); -ETIMEDOUT after
 * NLC_SETTLE_MS). nlc_rule_new_nowait() returns the reply as it came.
 */
int nlc_rule_new(struct nlc *c, const char *match, const char *driver,
		 bool force, bool take, struct nlc_rule *r);
int nlc_rule_new_nowait(struct nlc *c, const char *match, const char *driver,
			bool force, bool take, struct nlc_rule *r);
/*
 * rule-del by @id and/or @match; NULL leaves an attribute out. Waits, as
 * nlc_rule_new() does, for the rule's devices to be released;
 * nlc_rule_del_nowait() does not.
 */
int nlc_rule_del(struct nlc *c, const __u32 *id, const char *match);
int nlc_rule_del_nowait(struct nlc *c, const __u32 *id, const char *match);
/* Until none of @r's devices is "pending": 0, -ETIMEDOUT or an errno. */
int nlc_rule_settle(struct nlc *c, const struct nlc_rule *r);
int nlc_rule_get(struct nlc *c, __u32 id, struct nlc_rule *r);
int nlc_rule_dump(struct nlc *c, struct nlc_rule **rules, int *n,
		  struct nlc_dump_info *info);
/* The rule in @rules (@n of them) whose match is @match, or NULL. */
const struct nlc_rule *nlc_rule_find(const struct nlc_rule *rules, int n,
				     const char *match);

/* alloc-new; on success @a holds the reply, the allocation as made. */
int nlc_alloc_new(struct nlc *c, const struct nlc_alloc_req *req,
		  struct nlc_alloc *a);
/* alloc-del by @id and/or @owner; NULL leaves an attribute out. */
int nlc_alloc_del(struct nlc *c, const __u32 *id, const char *owner);
int nlc_alloc_get(struct nlc *c, __u32 id, struct nlc_alloc *a);
int nlc_alloc_dump(struct nlc *c, struct nlc_alloc **allocs, int *n,
		   struct nlc_dump_info *info);
/*
 * limit-set: @scope 0 or @name NULL leave the attribute out; @max_gpus NULL
 * removes the limit. On success @l holds the reply.
 */
int nlc_limit_set(struct nlc *c, __u32 scope, const char *name,
		  const __u32 *max_gpus, struct nlc_limit *l);
int nlc_limit_get(struct nlc *c, __u32 scope, const char *name,
		  struct nlc_limit *l);
int nlc_limit_dump(struct nlc *c, struct nlc_limit **limits, int *n,
		   struct nlc_dump_info *info);

int nlc_mcast_group_id(struct nlc *c, const char *name);
int nlc_monitor_join(struct nlc *c);
int nlc_monitor_join_group(struct nlc *c, const char *name);
/*
 * One notification within @timeout_ms: 1 when one arrived, 0 on timeout.
 * nlc_monitor_next() parses device notifications only: for a rule
 * notification @d is left empty and @cmd tells what it was.
 */
int nlc_monitor_next(struct nlc *c, int timeout_ms, __u8 *cmd,
		     struct nlc_dev *d);
int nlc_monitor_next_ntf(struct nlc *c, int timeout_ms, struct nlc_ntf *n);

const char *nlc_cmd_name(__u8 cmd);
const char *nlc_role_name(__u32 role);
const char *nlc_state_name(__u32 state);
const char *nlc_action_name(__u32 action);
const char *nlc_source_name(__u32 source);
const char *nlc_alloc_state_name(__u32 state);
const char *nlc_alloc_end_name(__u32 end);
const char *nlc_numa_policy_name(__u32 policy);
const char *nlc_open_match_name(__u32 match);
const char *nlc_limit_scope_name(__u32 scope);
/* The enum value of a name printed by the functions above, or 0. */
__u32 nlc_numa_policy_num(const char *name);
__u32 nlc_limit_scope_num(const char *name);
void nlc_print_dev(FILE *f, const char *prefix, const struct nlc_dev *d);
void nlc_print_group(FILE *f, const char *prefix, const struct nlc_group *g);
void nlc_print_rule(FILE *f, const char *prefix, const struct nlc_rule *r);
void nlc_print_alloc(FILE *f, const char *prefix, const struct nlc_alloc *a);
void nlc_print_limit(FILE *f, const char *prefix, const struct nlc_limit *l);
void nlc_print_ntf(FILE *f, const struct nlc_ntf *n);
void nlc_print_error(FILE *f, const struct nlc *c);

#endif /* _GPUCTL_NLCLIENT_H */
