/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The holders of devices on any VFIO driver, found in /proc.
 */
#ifndef _GPUCTL_HOLDERS_H
#define _GPUCTL_HOLDERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "gpuctl.h"

/**
 * struct holder_proc - a process that has a VFIO device open
 * @pid: its pid
 * @comm: its /proc/PID/comm
 * @uid: its effective uid, as the module records an opener's
 * @vm: QEMU's guest name from its command line, "" for none
 */
struct holder_proc {
	pid_t pid;
	char comm[32];
	unsigned int uid;
	char vm[HOLDER_VM_BUFSZ];
};

/* A /proc/PID/fd entry that is a VFIO node */
struct vfio_fd {
	pid_t pid;
	bool cdev;			/* else a group node */
	unsigned long group;
	char dev[64];			/* a cdev's device: its sysfs name */
};

/*
 * The open VFIO nodes of every process, read from /proc at the first
 * lookup (holders_pid()); zero it before use, holders_free() after.
 */
struct holders {
	struct vfio_fd *v;
	size_t n;
	bool scanned;
};

void holders_free(struct holders *f);
pid_t holders_pid(struct holders *f, const char *name, bool has_group,
		  unsigned int group);
int holder_proc_read(pid_t pid, struct holder_proc *p);
int holder_vm_name(const char *cmdline, size_t len, char *buf, size_t size);
bool holders_wanted(const struct nl_list *devs);
void holders_fill(struct nl_list *devs, const struct nl_list *allocs,
		  struct holders *f);
void holders_fill_vgpus(struct nl_list *vgpus, const struct nl_list *allocs,
			struct holders *f);

#endif /* _GPUCTL_HOLDERS_H */
