/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_GPUCTL_H
#define _GPUCTL_GPUCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc_args.h"
#include "nl.h"
#include "rule.h"
#include "utils.h"

/* Exit codes, one per failure class; documented in gpuctl.8 */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* bad command line or input file */
	EXIT_KERNEL = 2,	/* the kernel or netlink refused or failed */
	EXIT_NO_MODULE = 3,	/* the gpuctl module is not loaded */
	EXIT_DOCTOR_FAIL = 4,	/* gpuctl doctor: a check failed */
	EXIT_DEFERRED = 5,	/* module reload: a VM holds a device */
};

struct gpuctl {
	bool json;
	bool pretty;
	/* parse the command line only; test-cmdline runs without a kernel */
	bool dry_run;
	bool nl_ok;
	struct nl_ctx nl;
};

int gpuctl_run(int argc, char **argv, bool dry_run);
int gpuctl_nl(struct gpuctl *g, struct nl_ctx **nl);

/*
 * The grammar, written once: the parser dispatches on these tables and
 * "gpuctl help" and "gpuctl OBJECT help" are printed from them, so that a
 * command cannot be accepted and left out of the help or the other way
 * round. tests/check-grammar.sh holds the man page and the bash
 * completion to them.
 */

/* One command of an object ("show", "add") */
struct cmd_entry {
	const char *name;
	int (*fn)(struct gpuctl *g, struct args *a);
	const char *usage;	/* its arguments, after "gpuctl OBJECT NAME" */
	const char *desc;	/* NULL, or a line its object's help adds */
	bool json;		/* -j changes its format: "gpuctl [ -j ] ..." */
};

/* An object ("dev"): its commands, or the arguments of one without any */
struct object {
	const char *name;
	const char *desc;	/* one line, for "gpuctl help" */
	/* NULL: cmd_dispatch() on cmds; else its own parser, using cmds */
	int (*run)(struct gpuctl *g, struct args *a);
	const struct cmd_entry *cmds;	/* in the order its help lists them */
	size_t ncmds;
	const char *dflt;	/* the command "gpuctl OBJECT" alone runs */
	const char *usage;	/* without commands: its arguments */
	bool json;		/* without commands: as cmd_entry's */
	const char *notes;	/* NULL, or the help's last lines: "where ..." */
};

extern const struct object dev_object, group_object, vgpu_object,
	reserve_object, apply_object, alloc_object, limit_object,
	monitor_object, metrics_object, export_object, doctor_object,
	module_object;
/* Every object the parser accepts, in the order the help lists them */
extern const struct object *const gpuctl_objects[];
extern const size_t gpuctl_nobjects;

void object_help(FILE *fp, const struct object *o);
void cmd_help(FILE *fp, const struct object *o, const char *cmd);
const struct cmd_entry *cmd_find(const struct object *o, const char *word);
int cmd_dispatch(struct gpuctl *g, struct args *a, const struct object *o);
bool args_done(const struct args *a, const char *cmd);

/* What "OBJECT show [ ID ]" needs: group show, reserve show, alloc show. */
struct show_by_id {
	const char *cmd;	/* "alloc show", for messages */
	const char *id_name;	/* "allocation id": invalid "x", expected a number */
	const char *one_name;	/* "allocation": cannot show allocation 3 */
	const struct object *object;	/* whose help "show help" prints */
	u8 nl_cmd;		/* its get command; dumps without an ID */
	u16 id_attr;		/* the ID's attribute */
	bool by_uuid;		/* the ID is a UUID (a string), not a number */
};

int show_by_id(struct gpuctl *g, struct args *a, const struct show_by_id *s,
	       struct nl_list *list, bool *collected);

/* vgpu.c, vgpu_type.c: making instances; the mdev types, from sysfs */
struct mdev_type_info;
struct vgpu_spec;
int vgpu_make(struct nl_ctx *nl, const struct vgpu_spec *r, const char *cmd,
	      struct nl_list *list);
int vgpu_remove(struct nl_ctx *nl, const char *uuid, const char *cmd);
int vgpu_types_show(const char *parent);
int vgpu_type_find(const char *parent, const char *type,
		   struct mdev_type_info *t, const char *cmd);

/* "vfio-pci did not bind", "bound to snd_hda_intel" */
#define STATE_REASON_BUFSZ 128

/* QEMU's "-name guest=NAME": libvirt's domain name, Nova's instance name */
#define HOLDER_VM_BUFSZ 128

/* A device as the kernel describes it, shared by dev show and monitor */
struct dev_info {
	char address[ADDR_BUFSZ];
	u16 vendor_id;
	u16 device_id;
	u16 subsystem_vendor_id;
	u16 subsystem_device_id;
	u32 class;
	u8 revision;
	bool has_driver;
	char driver[64];
	bool has_iommu_group;
	u32 iommu_group;
	s32 numa_node;
	char pci_root[32];
	u16 sriov_totalvfs;
	u16 sriov_numvfs;
	bool has_physfn;
	char physfn[ADDR_BUFSZ];
	u32 role;
	bool reserved;
	u32 state;		/* 0: the module did not say */
	bool has_state_reason;
	char state_reason[STATE_REASON_BUFSZ];
	bool has_rule;
	u32 rule;
	u32 action;		/* 0: not an action notification */
	bool pending;		/* the kernel's worker has yet to act on it */
	bool has_allocation;
	u32 allocation;
	bool has_holder;	/* a VFIO user has it open */
	u32 holder_pid;		/* 0: it was open before gpuctl loaded */
	bool has_holder_comm;
	char holder_comm[32];
	bool has_holder_uid;
	u32 holder_uid;
	bool has_holder_since;
	uint64_t holder_since;
	u32 open_match;		/* 0: the module did not say */
	bool holder_from_proc;	/* the tool found the holder: holders.c */
	char holder_vm[HOLDER_VM_BUFSZ];	/* QEMU's -name, "": none */
	bool has_refused;	/* only in vfio-open-ntf */
	char refused[STATE_REASON_BUFSZ];
	bool has_vgpu_type;	/* a vendor VF: dev_vgpu_type_read() */
	u32 vgpu_type;		/* 0: none */
	bool has_migration;	/* on a VFIO driver that registered it */
	u32 migration;		/* enum gpuctl_migration_caps flags */
};

int dev_info_parse(const struct nlmsghdr *nlh, struct dev_info *d);
void dev_vgpu_type_read(struct dev_info *d);
const struct dev_info *dev_find(const struct nl_list *devs, const char *addr);
bool dev_is_vf_of(const struct dev_info *d, const char *pf);
void dev_info_print(const struct dev_info *d, const int *widths);
int dev_get(struct nl_ctx *nl, const char *addr, struct dev_info *d);
int dev_get_quiet(struct nl_ctx *nl, const char *addr, struct dev_info *d);
int dev_dump(struct nl_ctx *nl, struct nl_list *list);
int dev_show_quiet(struct nl_ctx *nl, const char *addr);
int dev_set_numvfs(struct nl_ctx *nl, const char *addr, u16 numvfs);

/* A rule as the kernel describes it, shared by reserve, apply and monitor */
struct rule_info {
	u32 id;
	char match[GPUCTL_MATCH_LEN + 1];
	char driver[GPUCTL_DRIVER_LEN + 1];
	bool force;
	bool take;
	u32 source;
	size_t ndevs;
	char (*devs)[ADDR_BUFSZ];
	size_t nwarnings;
	char **warnings;
	size_t norphans;
	char (*orphans)[ADDR_BUFSZ];	/* kept on its driver, GPU gone */
};

enum rule_form {
	RULE_FORM_BLOCK,	/* reserve show: lines, warnings included */
	RULE_FORM_ADDED,	/* reserve add: warnings go to stderr */
	RULE_FORM_LINE,		/* monitor: one line */
};

int rule_info_parse(const struct nlmsghdr *nlh, struct rule_info *r);
void rule_info_release(struct rule_info *r);
void rule_info_print(const struct rule_info *r, enum rule_form form);

void reserve_list_init(struct nl_list *list);
int reserve_new(struct nl_ctx *nl, const struct rule_spec *r,
		struct nl_list *list);
int reserve_del(struct nl_ctx *nl, u32 id, const char *match);
int reserve_dump(struct nl_ctx *nl, struct nl_list *list);
void reserve_list_print(const struct nl_list *list, enum rule_form form);
void reserve_rules_print(const struct nl_list *list, enum rule_form form);

/* An allocation as the kernel describes it, for alloc, save and monitor */
struct alloc_info {
	u32 id;
	char owner[GPUCTL_UUID_LEN + 1];
	char name[GPUCTL_LABEL_LEN + 1];	/* "": none */
	char labels[ALLOC_NR_LABELS][GPUCTL_LABEL_LEN + 1];
	size_t ndevs;
	char (*devs)[ADDR_BUFSZ];
	size_t ntyped;
	char (*typed)[ADDR_BUFSZ];	/* its vendor VFs typed for it */
	size_t nvgpus;
	struct alloc_vgpu *vgpus;	/* its mdev instances */
	bool detach_on_stop;
	bool has_uid;
	bool has_gid;
	u32 uid;
	u32 gid;
	u32 state;
	bool has_state_reason;
	char state_reason[STATE_REASON_BUFSZ];
	u32 gpus;
	u32 end;		/* 0: not an alloc-del-ntf */
	bool holders_read;	/* alloc show, for root: alloc_holders_read() */
	size_t nholders;
	struct alloc_holder *holders;
	bool migration_read;	/* alloc show: alloc_migration_read() */
	size_t nblockers;	/* devices and vGPUs that cannot migrate */
	char (*blockers)[GPUCTL_UUID_LEN + 1];
};

/* Who has one of an allocation's devices or vGPUs open */
struct alloc_holder {
	char dev[GPUCTL_UUID_LEN + 1];	/* a PCI address or an mdev UUID */
	u32 pid;			/* 0: not known */
	char comm[32];
	char vm[HOLDER_VM_BUFSZ];
	u32 match;
};

enum alloc_form {
	ALLOC_FORM_BLOCK,	/* alloc show: two lines */
	ALLOC_FORM_LINE,	/* monitor: one line */
};

int alloc_info_parse(const struct nlmsghdr *nlh, struct alloc_info *al);
void alloc_info_release(struct alloc_info *al);
void alloc_info_print(const struct alloc_info *al, enum alloc_form form);
void alloc_list_init(struct nl_list *list);
void alloc_list_print(const struct nl_list *list);
int alloc_new(struct nl_ctx *nl, const struct alloc_spec *s,
	      struct nl_list *list);
int alloc_del(struct nl_ctx *nl, u32 id, const char *owner);
int alloc_handover(struct nl_ctx *nl, u32 id);
int alloc_dump(struct nl_ctx *nl, struct nl_list *list);

/* alloc_vgpu.c: the vGPUs an allocation makes, and removes again */
/* Where what alloc_vgpus_make() made starts in the request */
struct alloc_made {
	size_t vgpu_first;	/* in its vgpus */
	size_t dev_first;	/* in its devs: vendor VFs */
};

int alloc_vgpus_make(struct nl_ctx *nl, struct alloc_spec *s,
		     struct alloc_made *made);
bool alloc_vfs_lost(struct nl_ctx *nl, const struct alloc_spec *s,
		    const struct alloc_made *made);
void alloc_vgpus_unmake(struct nl_ctx *nl, struct alloc_spec *s,
			const struct alloc_made *made);
bool alloc_typed(const struct alloc_info *al, const char *addr);
int alloc_vgpus_remove(struct nl_ctx *nl, const struct nl_list *allocs);

/* An mdev instance as the kernel describes it, for vgpu show and monitor */
struct vgpu_info {
	char uuid[GPUCTL_UUID_LEN + 1];
	char type[NAME_BUFSZ];
	char type_name[NAME_BUFSZ];
	char parent[NAME_BUFSZ];
	char driver[NAME_BUFSZ];	/* "": unbound */
	bool has_group;
	u32 group;
	bool has_allocation;	/* only for CAP_SYS_ADMIN */
	u32 allocation;
	bool has_open;		/* only for CAP_SYS_ADMIN */
	bool open;
	bool has_holder;	/* found in /proc by root: holders.c */
	u32 holder_pid;
	char holder_comm[32];
	u32 holder_uid;
	char holder_vm[HOLDER_VM_BUFSZ];
	u32 holder_match;	/* enum gpuctl_open_match, or mismatch */
	bool has_migration;	/* its VFIO device's, from the module */
	u32 migration;		/* enum gpuctl_migration_caps flags */
};

int vgpu_info_parse(const struct nlmsghdr *nlh, struct vgpu_info *v);
void vgpu_info_print(const struct vgpu_info *v);
int vgpu_dump(struct nl_ctx *nl, struct nl_list *list);
const struct vgpu_info *vgpu_find(const struct nl_list *vgpus,
				  const char *uuid);

/* A tenant limit as the kernel describes it */
struct limit_info {
	u32 scope;
	char name[GPUCTL_LABEL_LEN + 1];
	bool has_max;
	u32 max;
	u32 used;
};

void limit_list_init(struct nl_list *list);
void limit_list_print(const struct nl_list *list);
void limit_info_print(const struct limit_info *l);
int limit_set(struct nl_ctx *nl, const struct limit_spec *l,
	      struct nl_list *list);
int limit_dump(struct nl_ctx *nl, struct nl_list *list);

void ledger_write(FILE *fp, const struct nl_list *allocs,
		  const struct nl_list *devs, const struct nl_list *limits);
int alloc_save(struct gpuctl *g, const char *file);
int alloc_restore(struct gpuctl *g, const char *file);

#endif /* _GPUCTL_GPUCTL_H */
