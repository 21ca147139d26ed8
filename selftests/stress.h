/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The stress programs' common ground: racing workers (forked processes)
 * that loop one operation each until told to stop, count every outcome by
 * errno in memory they share with the test, and report a broken invariant
 * as a violation; the kernel log watched for reports; the PCI state
 * recorded before and compared after, so each program leaves the
 * topology as it found it.
 */
#ifndef _GPUCTL_STRESS_H
#define _GPUCTL_STRESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "kselftest.h"	/* __printf() */
#include "nlclient.h"

#define STRESS_MAX_OPS		32
#define STRESS_MAX_WORKERS	16
#define STRESS_NERR		134	/* errnos counted one by one */
/* GPUCTL_STRESS_SECONDS when unset: short enough for make check. */
#define STRESS_DEFAULT_SECONDS	6
/* How long a worker may take to finish its iteration once told to stop. */
#define STRESS_STOP_GRACE_MS	60000

/* One racing operation: how often it ran and how each run ended. */
struct stress_op {
	char name[64];
	long runs;
	long by_errno[STRESS_NERR];	/* [0]: successes */
	long other;			/* errnos beyond the table */
};

/* Lives in MAP_SHARED memory: the test and its workers see one copy. */
struct stress {
	int stop;
	int violations;
	char first[1024];		/* the first violation, for TH_LOG */
	bool ops_lock;
	int nops;
	struct stress_op ops[STRESS_MAX_OPS];
	struct stress_op overflow;
	int nworkers;
	pid_t workers[STRESS_MAX_WORKERS];
	char worker_names[STRESS_MAX_WORKERS][48];
	/* Bumped by the rmmod worker at every successful unload. */
	long unloads;
};

/* The shared state; NULL when mmap() failed. */
struct stress *stress_new(void);
void stress_free(struct stress *s);

/* GPUCTL_STRESS_SECONDS, else STRESS_DEFAULT_SECONDS. */
int stress_seconds(void);

/*
 * Registers the operation named by @fmt, as printf() formats it (the
 * device or account it works on), also from a worker: never NULL (past
 * STRESS_MAX_OPS every run is counted in one uncounted slot).
 */
__printf(2, 3)
struct stress_op *stress_op(struct stress *s, const char *fmt, ...);
/* Counts one run of @op that returned @ret (0 or -errno). */
void stress_count(struct stress_op *op, int ret);
/* Reports a broken invariant: printed at once, counted, first one kept. */
void stress_violation(struct stress *s, const char *fmt, ...);
bool stress_running(const struct stress *s);
/* Sleeps up to @max_ms, a random part of it: spreads the race windows. */
void stress_pause(int max_ms);

typedef void (*stress_fn)(struct stress *s, void *arg);
/* Forks a worker that runs @fn(@s, @arg) and exits; its pid or -errno. */
pid_t stress_spawn(struct stress *s, const char *name, stress_fn fn,
		   void *arg);
/*
 * Lets the workers race for @seconds, tells them to stop and waits for
 * each to finish its iteration. A worker still running after
 * STRESS_STOP_GRACE_MS is stuck (its kernel stack is printed) and counts
 * as a violation. Returns the number of stuck workers.
 */
int stress_run(struct stress *s, int seconds);
/* The same without the race: for a test that ends early. */
int stress_stop(struct stress *s);
/* "# NAME: N runs (ok A, EAGAIN B)" for every operation. */
void stress_report(const struct stress *s);
/* Runs of @name that ended with @err (0 = success), summed. */
long stress_count_of(const struct stress *s, const char *name, int err);

/*
 * Every record of the kernel log since tl_kmsg_open() that a clean run
 * must not have: WARN, BUG, oops, KASAN, lockdep, kmemleak, a hung task.
 * Each is printed; returns how many.
 */
int stress_kmsg_reports(int fd);

/* modprobe of what $GPUCTL_KO depends on and of the VFIO type1 backend. */
int stress_module_deps(void);
/* The module's reference count, or -errno. */
long stress_module_refcnt(void);

/* A sysfs write that says nothing; 0 or -errno. */
int stress_write(const char *path, const char *val);

/*
 * The room for tl_pci_snapshot() with groups, the PCI state a program
 * must leave behind as it found it.
 */
#define STRESS_SNAPSHOT_LEN	16384
/*
 * Waits up to @timeout_ms for the PCI state to equal @before, rescanning
 * the bus once first (a removed device comes back). 0, or -ETIMEDOUT with
 * the first difference in @why.
 */
int stress_wait_snapshot(const char *before, int timeout_ms, char *why,
			 size_t len);

/*
 * Rewrites @addr's line of snapshot @snap (STRESS_SNAPSHOT_LEN bytes) to
 * say @driver and @override: the state a program expects to leave.
 */
int stress_snapshot_set(char *snap, const char *addr, const char *driver,
			const char *override);

/* Deletes every allocation, rule and limit; the first error or 0. */
int stress_clear_all(struct nlc *c);

/*
 * Waits up to @timeout_ms until dev-get reports @addr reserved on @driver
 * and sysfs agrees, with its driver_override naming @driver. 0 or
 * -ETIMEDOUT with what was seen last in @why.
 */
int stress_wait_reserved(struct nlc *c, const char *addr, const char *driver,
			 int timeout_ms, char *why, size_t len);

/* How long the programs give a device to settle: a probe, a take. */
#define STRESS_SETTLE_MS	30000

/* A device a program has reserved, and the driver its rule names. */
struct stress_reserved {
	const char *addr;
	const char *driver;
};

/*
 * What every program starts from and gives back: the module loaded with
 * no rule, allocation or limit, and the PCI state in @before.
 */
struct stress_env {
	struct nlc c;
	char before[STRESS_SNAPSHOT_LEN];
	int kmsg;
	char why[4096];
	/* What stress_env_reload() loaded the module with; NULL: as found. */
	const char *params;
};

/*
 * Loads what the module needs, opens @e->c, checks that nothing was left
 * by an earlier program and records the PCI state. 0 or -errno, with
 * @e->why saying what is wrong.
 */
int stress_env_setup(struct stress_env *e);
/*
 * Waits up to STRESS_SETTLE_MS for each of the @n devices of @want to be
 * reserved on its driver (stress_wait_reserved()). 0 or -ETIMEDOUT with
 * the first that was not in @e->why.
 */
int stress_env_wait_reserved(struct stress_env *e,
			     const struct stress_reserved *want, size_t n);
/*
 * Loads the module again with @params, whose "reserve=" rules reserve
 * the @n devices of @want, and waits for them as
 * stress_env_wait_reserved() does. Remembers @params: from here on
 * stress_env_restore() reloads the module the way run_tests.sh loads it.
 * 0 or -errno (@e->why).
 */
int stress_env_reload(struct stress_env *e, const char *params,
		      const struct stress_reserved *want, size_t n);
/*
 * Deletes what the program made and waits for the PCI state it found,
 * after a reload the way run_tests.sh loads the module when
 * stress_env_reload() loaded it otherwise. 0 or -errno (@e->why).
 */
int stress_env_restore(struct stress_env *e);
/*
 * A test's teardown: stops workers a failed assertion left running,
 * restores what stress_env_restore() did not yet, and frees @s.
 */
void stress_env_teardown(struct stress_env *e, struct stress *s);

#endif /* _GPUCTL_STRESS_H */
