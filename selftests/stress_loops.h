/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The racing operations of the stress programs, each a stress_fn to run
 * in a worker (stress_spawn()) until the test says stop. Each counts its
 * runs by outcome under its own names ("rmmod", "unbind 0000:01:00.0").
 *
 * In strict mode a worker also checks the invariants its operation has
 * (an answer that is not documented, an alloc-del that succeeds while the
 * device is open) and reports each broken one with stress_violation().
 * stress_dump runs them without: with the module coming and going under
 * them, only the dumps' own invariants are checked there.
 */
#ifndef _GPUCTL_STRESS_LOOPS_H
#define _GPUCTL_STRESS_LOOPS_H

#include "stress.h"

/* Memory the test and its workers share; NULL when mmap() failed. */
void *stress_shared(size_t size);

/*
 * Makes @c usable: (re)opens it when it is closed or the module was
 * unloaded since *@unloads, waiting for the module to come back. False
 * once the test says stop.
 */
bool stress_nl_ready(struct stress *s, struct nlc *c, long *unloads);

/* --- stress_sys.c: the module and sysfs ----------------------------- */

/*
 * rmmod racing everything: unload (0, or "in use": EWOULDBLOCK), and after
 * each unload load $GPUCTL_KO again with @params. With @balance (and
 * dyndbg=+p in @params) every "dev ADDR created" line of the kernel log
 * must have its "dev ADDR destroyed" by the time an unload returns.
 */
struct stress_rmmod_arg {
	const char *params;
	bool strict;
	bool balance;
};

void stress_loop_rmmod(struct stress *s, void *arg);

/*
 * Unbinds @addr from whatever has it, probes it again, and writes
 * @intruder (a host driver) or nothing into its driver_override before a
 * probe: what an admin or libvirt does to a reserved device.
 */
struct stress_rebind_arg {
	const char *addr;
	const char *intruder;
};

void stress_loop_rebind(struct stress *s, void *arg);

/* Removes one of @addrs through sysfs and rescans the bus. */
struct stress_remove_arg {
	const char *addrs[4];
	int n;
};

void stress_loop_remove(struct stress *s, void *arg);

/*
 * QMP device_add of a @driver device (one QEMU unplugs completely, such
 * as "edu") into the empty root port @bus at PCI address @port, until it
 * shows in sysfs, then device_del until QEMU says DEVICE_DELETED.
 */
struct stress_hotplug_arg {
	const char *bus;
	const char *port;
	const char *driver;
};

void stress_loop_hotplug(struct stress *s, void *arg);

/* --- stress_vfio.c: VFIO opens against the ledger ------------------- */

enum stress_open_state {
	STRESS_OPEN_NONE,	/* no vfio_open runs */
	STRESS_OPEN_STARTING,	/* one runs, has not said "open" yet */
	STRESS_OPEN_HELD,	/* it said "open" and was not told to close */
	STRESS_OPEN_CLOSING,	/* told to close, not yet reaped */
};

enum stress_alloc_state {
	STRESS_ALLOC_NONE,	/* alloc-del succeeded, or nothing made yet */
	STRESS_ALLOC_MAKING,	/* alloc-new sent */
	STRESS_ALLOC_HELD,	/* alloc-new succeeded, or alloc-del refused */
	STRESS_ALLOC_DELETING,	/* alloc-del sent */
};

#define STRESS_RECENT_HOLDERS	8

/*
 * One device raced by an opener and an allocator, in shared memory
 * (stress_shared()). Each side publishes its state under a sequence
 * count of its own (odd while it changes), so the other can tell that a
 * state held for the whole of a request: the states are set after the
 * fact they describe began (HELD after "open", NONE after the reap) and
 * left before it ends (CLOSING before the close).
 */
struct stress_vfio_dev {
	const char *addr;
	const char *owner;
	bool enforcing;		/* on gpuctl-vfio-pci, else plain vfio-pci */
	bool strict;
	long open_seq;
	int open_state;
	pid_t recent[STRESS_RECENT_HOLDERS];	/* the last vfio_open pids */
	int nrecent;
	long alloc_seq;
	int alloc_state;
	__u32 alloc_id;
};

/*
 * Runs selftests/bin/vfio_open on the device and closes it again, by a
 * close of the device fd or by the process's exit. Strict: on
 * gpuctl-vfio-pci an open succeeds only with an allocation (dev-get then
 * names it and the opener as holder) and is refused only with EPERM; on
 * vfio-pci every open succeeds.
 */
void stress_loop_open(struct stress *s, void *arg);
/*
 * alloc-new and alloc-del of the device for its owner. Strict: alloc-new
 * succeeds; alloc-del succeeds unless the device is open, and then fails
 * with EBUSY naming the device (and on gpuctl-vfio-pci its holder's pid).
 */
void stress_loop_alloc(struct stress *s, void *arg);

/* --- stress_nl.c: rules, limits and dumps ----------------------------- */

/*
 * rule-new of @match (with and without take, for vfio-pci or
 * gpuctl-vfio-pci), then rule-del of it. Strict: both succeed (no VFIO
 * user and no allocation gives a documented error a cause) and the
 * rule-new reply is the rule asked for. The worker leaves its rule in
 * place or not, as the stop finds it.
 */
struct stress_rule_arg {
	const char *match;
	bool strict;
};

void stress_loop_rule(struct stress *s, void *arg);

/* limit-set and limit removal of account @name. */
struct stress_limit_arg {
	const char *name;
};

void stress_loop_limit(struct stress *s, void *arg);

/*
 * dev-get, group-get, rule-get, alloc-get and limit-get dumps in turn.
 * Each dump must complete (retried while it comes back NLM_F_DUMP_INTR),
 * every message must be a reply to the dump that parses and carries its
 * key attributes, no key may come twice within one dump, and devices
 * (by address), groups, rules and allocations (by id) come in ascending
 * order, as the dump cursor is documented to go. A dump refused because
 * the module was unloaded meanwhile is counted as such.
 */
void stress_loop_dump(struct stress *s, void *arg);

#endif /* _GPUCTL_STRESS_LOOPS_H */
