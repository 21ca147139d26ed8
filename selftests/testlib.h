/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Helpers shared by the C selftests: sysfs writes that say what they do,
 * waiting for notifications, comparing the inventory with the model.
 */
#ifndef _GPUCTL_TESTLIB_H
#define _GPUCTL_TESTLIB_H

#include <stdbool.h>

#include "nlclient.h"
#include "sysfs_model.h"

#define EVENT_MAX	256

struct event {
	__u8 cmd;
	struct nlc_dev dev;
};

/* Kernel-style bounded copy: -E2BIG when @src was cut short. */
long strscpy(char *dst, const char *src, size_t size);
long tl_now_ms(void);
/* Writes @val to @path, printing the write first as a TAP comment. */
int tl_write(const char *path, const char *val);
int tl_writef(const char *val, const char *fmt, ...);

/* The first notification @cmd for @addr within @timeout_ms; with @driver
 * non-NULL it must also carry that driver ("" = no driver attribute).
 * Returns 1 when found, 0 on timeout, -errno on error.
 */
int tl_wait_ntf(struct nlc *mon, __u8 cmd, const char *addr,
		const char *driver, int timeout_ms, struct nlc_dev *out);
/* Every notification until @quiet_ms pass without one or @max_ms pass. */
int tl_collect(struct nlc *mon, int quiet_ms, int max_ms, struct event *ev,
	       int max);

/*
 * Compare the dump with the model, retrying for up to @settle_ms while the
 * system may still be settling (drivers probing after a rescan). Returns
 * the mismatch count of the last attempt; @why says what differed.
 */
int tl_inventory_diff(struct nlc *c, int settle_ms, char *why, size_t len);
int tl_groups_diff(struct nlc *c, int settle_ms, char *why, size_t len);

int tl_modprobe(const char *module);
/*
 * The module: $GPUCTL_KO loaded with @params (NULL: none), as insmod
 * loads it, without its dependencies; unloaded without waiting, as rmmod
 * does (-EWOULDBLOCK while in use). 0 or -errno; -ENOENT without
 * GPUCTL_KO.
 */
int tl_module_load(const char *params);
int tl_module_unload(void);
/* Whether the module is loaded (its /sys/module directory is there). */
bool tl_module_loaded(void);
/* The kernel log from now on: /dev/kmsg, read non-blocking; fd or -1. */
int tl_kmsg_open(void);
/*
 * Whether the machine has an IOMMU: any group at all. A test that needs a
 * GPU in a group may skip without one, and must fail with one.
 */
bool tl_have_iommu(void);

/* The driver bound to @addr per sysfs, "" when none; 0 or -errno. */
int tl_driver_of(const char *addr, char *drv, size_t len);
/* The driver_override of @addr, "" when cleared ("(null)"); 0 or -errno. */
int tl_override_of(const char *addr, char *ovr, size_t len);
/* Poll sysfs until @addr is bound to @drv ("" = unbound): 1, or 0 on timeout. */
int tl_wait_driver(const char *addr, const char *drv, int timeout_ms);
/*
 * Every PCI function, sorted, with its driver and driver_override, one
 * line each, "ADDR driver=DRIVER override=OVERRIDE"; @with_groups adds
 * " group+=PEERS", the other members of its IOMMU group. Compared before
 * and after, it shows that a request changed nothing, or that a program
 * left the PCI state as it found it. 0, or -E2BIG when @len is too short.
 */
int tl_pci_snapshot(char *buf, size_t len, bool with_groups);

#endif /* _GPUCTL_TESTLIB_H */
