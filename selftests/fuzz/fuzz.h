/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The spec-driven fuzzer of the gpuctl family: what its parts share.
 * nl.c talks netlink, gen.c builds messages from the spec tables, guard.c
 * keeps them off devices the rig cannot rebind, check.c reads the state
 * back and checks it, unpriv.c is the unprivileged sender and main.c runs
 * the whole and reports it as KTAP.
 */
#ifndef _GPUCTL_FUZZ_H
#define _GPUCTL_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/types.h>

#include "spec.h"

#define FZ_MSG_MAX	65536	/* one datagram we send */
#define FZ_RECV_LEN	(256 * 1024)
#define FZ_MAX_ITEMS	4096	/* attributes of one message */
#define FZ_MAX_CMDS	256
#define FZ_MAX_GRPS	16
#define FZ_ADDR_LEN	16
#define FZ_STR_LEN	72
#define FZ_NR_ERRNO	160	/* errno buckets; FZ_E_* above them */
#define FZ_MAX_MSGS	4	/* messages in one datagram */
#define FZ_RING		8	/* last datagrams kept for a post-mortem */

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Outcome buckets besides errnos: success, nothing (not processed). */
enum {
	FZ_E_OK = 0,
	FZ_E_SILENT = FZ_NR_ERRNO,	/* no reply: not processed or no ack asked */
	FZ_E_DUMP,			/* a dump ran to NLMSG_DONE */
	FZ_E_IGNORED,			/* no NLM_F_REQUEST: acked unread */
	FZ_NR_OUTCOMES,
};

/* Rows of the outcome table besides the spec's ops. */
enum {
	FZ_ROW_NTF = 0,		/* a notification's command */
	FZ_ROW_UNKNOWN,		/* a command the spec does not have */
	FZ_NR_XROWS,
};

#define FZ_MAX_OPS	64
#define FZ_ROWS		(FZ_MAX_OPS + FZ_NR_XROWS)

struct fz_rng {
	__u64 s;
};

__u64 fz_rand(struct fz_rng *r);
/* Uniform in [0, n); 0 when n is 0. */
unsigned int fz_below(struct fz_rng *r, unsigned int n);
/* True with probability pct/100. */
bool fz_chance(struct fz_rng *r, unsigned int pct);

/* What the kernel says the family is (CTRL_CMD_GETFAMILY). */
struct fz_family {
	__u16 id;
	__u32 version;
	int n_ops;
	struct {
		__u32 cmd;
		__u32 flags;	/* GENL_ADMIN_PERM, GENL_CMD_CAP_DO, ... */
	} ops[FZ_MAX_CMDS];
	int n_grps;
	struct {
		char name[GENL_NAMSIZ];
		__u32 id;
	} grps[FZ_MAX_GRPS];
};

struct fz_sock {
	int fd;
	__u32 seq;
	unsigned char *rbuf;
};

/* The outcome of one message of a datagram. */
struct fz_res {
	__u32 seq;
	bool term;		/* an NLMSG_ERROR or NLMSG_DONE arrived */
	bool dump;		/* NLM_F_MULTI data arrived: a dump started */
	bool intr;		/* NLM_F_DUMP_INTR */
	int err;		/* positive errno, 0 for an ack or a DONE */
	int ndata;		/* data messages */
	__u32 miss_type;	/* NLMSGERR_ATTR_MISS_TYPE: a required attribute */
	bool miss_nest;		/* ... missing inside a nest */
	char extack[128];
};

/* Called for each data message of a transaction, with its index. */
typedef void (*fz_data_cb)(const struct nlmsghdr *nlh, int idx, void *arg);

/* Set to the time of every reply received; the supervisor watches it. */
extern long *fz_heartbeat;
long fz_now_ms(void);
double fz_now_s(void);

int fz_sock_open(struct fz_sock *s, int rcvbuf);
void fz_sock_close(struct fz_sock *s);
int fz_family_get(struct fz_sock *s, const char *name, struct fz_family *f);
/* The kernel's group id of @name, 0 when the family has no such group. */
__u32 fz_family_grp(const struct fz_family *f, const char *name);
/*
 * Sends @len bytes holding @n messages with sequence numbers res[i].seq,
 * then a NOOP with NLM_F_ACK as a sentinel, and reads until the sentinel is
 * acked and every dump that started is done. 0, or -ETIMEDOUT after
 * @timeout_ms without a reply, or another -errno.
 */
int fz_xact(struct fz_sock *s, const void *buf, size_t len,
	    struct fz_res *res, int n, fz_data_cb cb, void *arg,
	    int timeout_ms);
/* A well-formed dump of @cmd; retried while NLM_F_DUMP_INTR. */
int fz_dump(struct fz_sock *s, __u16 family, __u8 cmd, fz_data_cb cb,
	    void *arg, struct fz_res *res);
/* A well-formed do request of @cmd with @attrs (@alen bytes of nlattrs). */
int fz_do(struct fz_sock *s, __u16 family, __u8 cmd, const void *attrs,
	  size_t alen, fz_data_cb cb, void *arg, struct fz_res *res);

/*
 * Walking attributes as the kernel's nla_for_each_attr() does: stops at
 * the first malformed one; @rem is then what is left.
 */
struct fz_iter {
	const struct nlattr *a;
	int rem;
};

const struct nlattr *fz_first(struct fz_iter *it, const void *head, int len);
const struct nlattr *fz_next(struct fz_iter *it);
/* The first attribute of a genetlink message. */
const struct nlattr *fz_first_genl(struct fz_iter *it,
				   const struct nlmsghdr *nlh);
const struct nlattr *fz_genl_attrs(const struct nlmsghdr *nlh, int *len);
static inline const void *fz_nla_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static inline int fz_nla_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* A u8/u16/u32/u64 attribute's value by its length; 0 when none fits. */
__u64 fz_nla_uint(const struct nlattr *a);
/* Copies a string attribute, NUL-terminated, cut to @size. */
void fz_nla_str(const struct nlattr *a, char *buf, size_t size);

/* Spec lookups. */
int fz_op_index(const char *name);
const struct fz_op *fz_op_by_cmd(unsigned int cmd);
int fz_set_index(const char *name);
/* The wire type of attribute @attr of set @set, 0 when the spec lacks it. */
unsigned int fz_attr_type(const char *set, const char *attr);
const struct fz_attr *fz_attr_by_type(int set, unsigned int type);
/* The value of enum entry @entry of attribute @attr, -1 when none. */
long long fz_enum_value(const char *set, const char *attr, const char *entry);

/* Allocation and holder attributes: the ledger's, not the inventory's. */
#define FZ_NR_SECRETS	6
#define FZ_NR_SCOPES	8

/* Attribute types, enum values and ops the checks name, from the spec. */
struct fz_known {
	unsigned int dev_address, dev_vendor, dev_device, dev_subvendor,
		     dev_subdevice, dev_class, dev_driver, dev_group, dev_role,
		     dev_reserved, dev_state, dev_reason, dev_rule, dev_alloc;
	unsigned int dev_secret[FZ_NR_SECRETS];
	unsigned int alloc_id, alloc_owner, alloc_device, alloc_gpus,
		     alloc_state;
	unsigned int limit_scope, limit_name, limit_max, limit_used;
	unsigned int rule_id, rule_match, rule_force, rule_driver, rule_device;
	/* Limit scopes, and the allocation attribute named like each. */
	int n_scopes;
	long long scope_val[FZ_NR_SCOPES];
	unsigned int alloc_label[FZ_NR_SCOPES];
	long long role_gpu, role_companion, role_bridge;
	long long st_free, st_reserved, st_held, st_blocked, alloc_lost;
	int op_dev_get, op_alloc_new, op_alloc_get, op_alloc_del, op_limit_get,
	    op_limit_set, op_rule_new, op_rule_get, op_rule_del;
};

extern struct fz_known fz_k;
/* 0, or -1 with @why naming what the spec lacks. */
int fz_known_init(char *why, size_t len);

/* Values the generator draws from: learned from replies, and seeded. */
struct fz_val {
	bool is_str;
	__u64 num;
	char str[FZ_STR_LEN];
};

#define FZ_POOL_VALS	48
#define FZ_MAX_POOLS	96

struct fz_pool {
	char key[48];
	int n;
	struct fz_val v[FZ_POOL_VALS];
};

/* One tracked device as dev-get reports it. */
struct fz_dev {
	char addr[FZ_ADDR_LEN];
	__u16 vendor, device, subvendor, subdevice;
	__u32 class;
	char driver[FZ_STR_LEN];
	bool has_group;
	__u32 group;
	__u32 role;
	bool reserved;
	__u32 state;
	bool has_reason;
	bool has_rule;
	__u32 rule;
	bool has_alloc;
	__u32 alloc;
	int secret;		/* allocation and holder attributes seen */
};

#define FZ_MAX_DEVS	256

/* Messages sent and their outcomes, per op row and bucket. */
struct fz_stats {
	unsigned long sent;
	unsigned long outcome[FZ_ROWS][FZ_NR_OUTCOMES];
	/*
	 * Seconds waited for the kernel's answers, a datagram's wait shared
	 * among its messages: where a slow kernel spends the run.
	 */
	double row_seconds[FZ_ROWS];
	double check_seconds;		/* reading back the invariants */
	unsigned long guard_dropped;
	unsigned long guard_stripped;
	unsigned long replies;		/* data messages checked */
	unsigned long bad_replies;	/* replies the spec does not allow */
	unsigned long ntfs;
	unsigned long bad_ntfs;
	double seconds;
};

/* What the unprivileged sender found, for the parent to report. */
struct fz_unpriv_report {
	bool ran;
	bool dropped;			/* uid 65534, no capabilities */
	unsigned long admin_checked;	/* admin-op messages that reached the op */
	unsigned long admin_bad;	/* ... that did not fail with EPERM */
	char admin_first[256];
	unsigned long devget_replies;	/* dev-get replies it received */
	unsigned long devget_secret;	/* ... with allocation/holder attrs */
	unsigned long devget_alloc_seen; /* replies of allocated devices */
	unsigned long ntf_secret;	/* notifications it should not see */
	int grp_err[FZ_MAX_GRPS];	/* joining each kernel group: 0/errno */
	char grp_name[FZ_MAX_GRPS][GENL_NAMSIZ];
	int n_grps;
	struct fz_stats stats;
};

/* Memory shared by the supervisor, the root fuzzer and the child. */
struct fz_shared {
	long progress_ms;		/* last reply read, __atomic */
	int ring_pos;
	struct {
		int len;
		unsigned char buf[512];
	} ring[FZ_RING];
	struct fz_stats root;
	struct fz_unpriv_report unpriv;
	struct fz_unpriv_report probe;
};

/* The fuzzer's state in one process. */
struct fz_ctx {
	struct fz_rng rng;
	struct fz_sock sk;
	struct fz_sock mon;		/* subscribed to every group it may join */
	struct fz_family fam;
	bool unpriv;
	bool has_ledger;		/* the kernel has the "ledger" group */
	int holder;			/* vfio_open's pid; -1 before half-way */
	struct fz_pool pools[FZ_MAX_POOLS];
	int n_pools;
	struct fz_dev devs[FZ_MAX_DEVS];
	int n_devs;
	char prot[FZ_MAX_DEVS][FZ_ADDR_LEN];	/* see guard.c */
	int n_prot;
	/* PCI functions gpuctl does not track: address and ids (guard.c) */
	struct fz_dev untracked[FZ_MAX_DEVS];
	int n_untracked;
	struct fz_stats *stats;
	struct fz_shared *sh;
	struct fz_unpriv_report *rep;	/* the unprivileged process's report */
	/*
	 * Request attributes the kernel said are required (its extack's
	 * missing-attribute type), per op and mode, as bits of the mode's
	 * request list: well-formed requests always carry them.
	 */
	__u64 required[FZ_MAX_OPS][FZ_NR_MODES];
	/* A small corpus of messages that succeeded, per op. */
	struct {
		int n;
		int len[8];
		unsigned char buf[8][1024];
	} corpus[FZ_MAX_OPS];
};

/* One message of a datagram, as the generator meant it. */
struct fz_plan_msg {
	size_t off;			/* of its nlmsghdr */
	int op;				/* index into fz_spec.ops, or -1 */
	unsigned int cmd;
	__u16 flags;
	bool sane;			/* the genl core lets it reach the op */
	bool dump;			/* NLM_F_DUMP set */
};

/* A datagram being built. */
struct fz_plan {
	unsigned char buf[FZ_MSG_MAX];
	size_t len;
	int n;				/* messages in buf */
	struct fz_plan_msg m[FZ_MAX_MSGS];
};

/* gen.c */
void fz_pools_seed(struct fz_ctx *c);
void fz_pools_learn(struct fz_ctx *c, int set, const struct nlmsghdr *nlh);
void fz_gen(struct fz_ctx *c, struct fz_plan *p);
/* A well-formed message of op @op in @mode, attributes chosen at random. */
void fz_gen_valid(struct fz_ctx *c, struct fz_plan *p, int op, int mode);
void fz_corpus_add(struct fz_ctx *c, const struct fz_plan *p, int i);

/* guard.c */
enum fz_guard { FZ_GUARD_PASS, FZ_GUARD_STRIPPED, FZ_GUARD_DROP };
enum fz_guard fz_guard(const struct fz_ctx *c, struct fz_plan *p);
/* Makes the list of devices no rule may reach, from the drivers bound now. */
void fz_guard_init(struct fz_ctx *c);
bool fz_dev_protected(const struct fz_ctx *c, const struct fz_dev *d);

/* check.c */
int fz_inventory_load(struct fz_ctx *c);
/* Reads the state back; 0 when every invariant holds, else the count. */
int fz_invariants(struct fz_ctx *c, char *why, size_t len);
/* Checks one reply against the spec; false when the spec does not allow it. */
bool fz_reply_ok(int op, int mode, const struct nlmsghdr *nlh, char *why,
		 size_t len);
bool fz_ntf_ok(const struct nlmsghdr *nlh, char *why, size_t len);
/* Allocation and holder attributes of a dev-get reply. */
int fz_dev_secrets(const struct nlmsghdr *nlh);
/* Whether a notification carries what an unprivileged user may not see. */
bool fz_ntf_secret(const struct nlmsghdr *nlh);
int fz_ledger_counts(struct fz_ctx *c, int *allocs, int *limits, int *rules);
int fz_cleanup(struct fz_ctx *c, char *why, size_t len);

/* run.c */
/* Sends one generated datagram and accounts for its outcome. */
int fz_send_one(struct fz_ctx *c, struct fz_plan *p);
void fz_mon_drain(struct fz_ctx *c);
void fz_stats_print(const char *who, const struct fz_stats *s);
/* "ok", "no-reply", "EINVAL", ... */
const char *fz_outcome_name(int outcome);

/* holder.c */
int fz_holder_start(struct fz_ctx *c, char *addr, size_t len);
void fz_holder_stop(int pid);

/* unpriv.c */
int fz_drop_privileges(void);
void fz_unpriv_run(struct fz_ctx *c, unsigned long messages);
void fz_unpriv_probe(struct fz_ctx *c);

#endif /* _GPUCTL_FUZZ_H */
