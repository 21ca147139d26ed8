// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * VFIO opens racing the allocation ledger: a worker that opens and closes
 * a device with selftests/bin/vfio_open and one that allocates and frees
 * it, each checking what the other's published state allows; see
 * stress_loops.h.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress_loops.h"
#include "testlib.h"

#define VFIO_OPEN_TIMEOUT_MS	20000

/* A state and the sequence count it was read under. */
struct seen {
	long seq;
	int state;
};

static void publish(long *seq, int *state, int val)
{
	__atomic_add_fetch(seq, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(state, val, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(seq, 1, __ATOMIC_SEQ_CST);
}

static struct seen look(long *seq, int *state)
{
	struct seen v;

	v.seq = __atomic_load_n(seq, __ATOMIC_SEQ_CST);
	v.state = __atomic_load_n(state, __ATOMIC_SEQ_CST);
	return v;
}

/* @a and @b were read with no change in between: @a's state held. */
static bool held_throughout(struct seen a, long *seq)
{
	return !(a.seq & 1) && a.seq == __atomic_load_n(seq, __ATOMIC_SEQ_CST);
}

static bool recent_holder(struct stress_vfio_dev *d, pid_t pid)
{
	int i;

	for (i = 0; i < STRESS_RECENT_HOLDERS; i++)
		if (__atomic_load_n(&d->recent[i], __ATOMIC_SEQ_CST) == pid)
			return true;
	return false;
}

/* vfio_open lives next to the test programs in bin/. */
static void vfio_open_path(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	char *slash;

	path[n > 0 ? n : 0] = '\0';
	slash = strrchr(path, '/');
	strscpy(slash ? slash + 1 : path, "vfio_open",
		len - (slash ? slash + 1 - path : 0));
}

struct opener {
	pid_t pid;
	int out;		/* its stdout and stderr */
	char buf[1024];
	size_t used;
};

static pid_t start(struct stress_vfio_dev *d, const char *prog,
		   struct opener *o)
{
	int fds[2];

	if (pipe(fds))
		return -errno;
	o->used = 0;
	o->buf[0] = '\0';
	o->pid = fork();
	if (o->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	if (!o->pid) {
		int slot = __atomic_fetch_add(&d->nrecent, 1, __ATOMIC_SEQ_CST);

		/* Published before the open can happen. */
		__atomic_store_n(&d->recent[slot % STRESS_RECENT_HOLDERS],
				 getpid(), __ATOMIC_SEQ_CST);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execl(prog, "vfio_open", d->addr, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	o->out = fds[0];
	return o->pid;
}

/* Reads until a line starts with @prefix (1), EOF (0) or the timeout. */
static int wait_line(struct opener *o, const char *prefix)
{
	long deadline = tl_now_ms() + VFIO_OPEN_TIMEOUT_MS;

	for (;;) {
		struct pollfd pfd = { .fd = o->out, .events = POLLIN };
		char *line = o->buf, *nl;
		long left = deadline - tl_now_ms();
		ssize_t n;

		while ((nl = strchr(line, '\n'))) {
			if (!strncmp(line, prefix, strlen(prefix)))
				return 1;
			line = nl + 1;
		}
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left) <= 0)
			continue;
		if (o->used >= sizeof(o->buf) - 1)
			return -E2BIG;
		n = read(o->out, o->buf + o->used, sizeof(o->buf) - 1 - o->used);
		if (n <= 0)
			return 0;
		o->used += n;
		o->buf[o->used] = '\0';
	}
}

/* vfio_open's "(errno N)", as -N; -EIO when it named none. */
static int failure_errno(const char *out)
{
	const char *p = strstr(out, "(errno ");

	return p ? -atoi(p + 7) : -EIO;
}

static int reap(struct opener *o)
{
	int status = 0;

	waitpid(o->pid, &status, 0);
	close(o->out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* What dev-get says about an open the opener holds. */
static void check_holder(struct stress *s, struct nlc *c,
			 struct stress_vfio_dev *d, pid_t pid)
{
	struct nlc_dev dev;
	int ret = nlc_dev_get(c, d->addr, &dev);

	if (ret) {
		stress_violation(s, "dev-get %s while vfio_open (pid %d) holds it: %s '%s'",
				 d->addr, pid, strerror(-ret), c->extack);
		return;
	}
	if (!d->enforcing) {
		/* vfio-pci: the holder may be unknown (pid 0), never another. */
		if (NLC_HAS(&dev, GPUCTL_A_DEV_HOLDER_PID) && dev.holder_pid &&
		    (pid_t)dev.holder_pid != pid)
			stress_violation(s, "%s open by vfio_open pid %d, dev-get names pid %u",
					 d->addr, pid, dev.holder_pid);
		return;
	}
	/* No alloc-del can succeed while it is open: the allocation stays. */
	if (!NLC_HAS(&dev, GPUCTL_A_DEV_ALLOCATION))
		stress_violation(s, "%s on gpuctl-vfio-pci open by pid %d, no allocation",
				 d->addr, pid);
	/*
	 * The opener is the owner (uid/gid 0). "unallocated" means it was
	 * let in, and the allocation was gone by the time the open was
	 * recorded: an alloc-del succeeded in between.
	 */
	if (dev.open_match == GPUCTL_OPEN_MATCH_UNALLOCATED)
		stress_violation(s, "%s: pid %d let in, then its allocation deleted",
				 d->addr, pid);
	else if (!NLC_HAS(&dev, GPUCTL_A_DEV_HOLDER_PID) ||
		 (pid_t)dev.holder_pid != pid ||
		 dev.open_match != GPUCTL_OPEN_MATCH_OWNER)
		stress_violation(s, "%s open by pid %d: dev-get holder pid %u open_match %s",
				 d->addr, pid, dev.holder_pid,
				 nlc_open_match_name(dev.open_match));
}

/* One open and close; 0 or the open's -errno. */
static int open_once(struct stress *s, struct nlc *c,
		     struct stress_vfio_dev *d, const char *prog,
		     struct stress_op *op_close)
{
	struct opener o;
	struct seen alloc;
	int ret, rc;

	publish(&d->open_seq, &d->open_state, STRESS_OPEN_STARTING);
	alloc = look(&d->alloc_seq, &d->alloc_state);
	ret = start(d, prog, &o);
	if (ret < 0) {
		publish(&d->open_seq, &d->open_state, STRESS_OPEN_NONE);
		return ret;
	}
	ret = wait_line(&o, "open ");
	if (ret == 1) {
		publish(&d->open_seq, &d->open_state, STRESS_OPEN_HELD);
		if (d->strict && d->enforcing && alloc.state == STRESS_ALLOC_NONE &&
		    held_throughout(alloc, &d->alloc_seq))
			stress_violation(s, "vfio_open (pid %d) opened %s, no allocation",
					 o.pid, d->addr);
		if (d->strict)
			check_holder(s, c, d, o.pid);
		stress_pause(20);
		publish(&d->open_seq, &d->open_state, STRESS_OPEN_CLOSING);
		/* Half the time the VM closes the device and lives on. */
		if (rand() % 2) {
			kill(o.pid, SIGUSR1);
			stress_count(op_close, wait_line(&o, "closed ") == 1 ?
				     0 : -ETIMEDOUT);
		}
		kill(o.pid, SIGTERM);
		rc = reap(&o);
		publish(&d->open_seq, &d->open_state, STRESS_OPEN_NONE);
		if (rc && d->strict)
			stress_violation(s, "vfio_open %s exited %d after holding it: %s",
					 d->addr, rc, o.buf);
		return 0;
	}
	if (ret < 0)
		kill(o.pid, SIGKILL);
	rc = reap(&o);
	publish(&d->open_seq, &d->open_state, STRESS_OPEN_NONE);
	if (ret < 0) {
		stress_violation(s, "vfio_open %s said nothing within %d s",
				 d->addr, VFIO_OPEN_TIMEOUT_MS / 1000);
		return ret;
	}
	ret = failure_errno(o.buf);
	if (!d->strict)
		return ret;
	if (!d->enforcing || ret != -EPERM || rc != 2)
		stress_violation(s, "vfio_open %s on %s: exit %d, %s", d->addr,
				 d->enforcing ? "gpuctl-vfio-pci" : "vfio-pci",
				 rc, o.buf);
	else if (alloc.state == STRESS_ALLOC_HELD &&
		 held_throughout(alloc, &d->alloc_seq))
		stress_violation(s, "vfio_open %s: EPERM, allocation %u (uid/gid 0) held: %s",
				 d->addr, d->alloc_id, o.buf);
	return ret;
}

void stress_loop_open(struct stress *s, void *arg)
{
	struct stress_vfio_dev *d = arg;
	struct stress_op *op_open, *op_close;
	char prog[PATH_MAX];
	struct nlc c;

	op_open = stress_op(s, "vfio open %s", d->addr);
	op_close = stress_op(s, "vfio close of the fd alone %s", d->addr);
	vfio_open_path(prog, sizeof(prog));
	/* Only the strict checks ask the module. */
	memset(&c, 0, sizeof(c));
	if (d->strict && nlc_open(&c)) {
		stress_violation(s, "opener %s: gpuctl family not registered", d->addr);
		return;
	}
	while (stress_running(s)) {
		stress_count(op_open, open_once(s, &c, d, prog, op_close));
		stress_pause(5);
	}
	nlc_close(&c);
}

/* An EBUSY from alloc-del must name the device and, if any, a holder. */
static void check_busy(struct stress *s, struct nlc *c,
		       struct stress_vfio_dev *d, struct seen open)
{
	char want[64];
	const char *pid;

	if (open.state == STRESS_OPEN_NONE &&
	    held_throughout(open, &d->open_seq)) {
		stress_violation(s, "alloc-del %u refused EBUSY, no VFIO user had %s open: '%s'",
				 d->alloc_id, d->addr, c->extack);
		return;
	}
	snprintf(want, sizeof(want), "%s is open by ", d->addr);
	if (strncmp(c->extack, want, strlen(want))) {
		stress_violation(s, "alloc-del %u EBUSY says '%s', want '%s...'",
				 d->alloc_id, c->extack, want);
		return;
	}
	pid = strstr(c->extack, "(pid ");
	if (!pid) {
		/* An unknown holder; gpuctl-vfio-pci always knows its own. */
		if (d->enforcing)
			stress_violation(s, "alloc-del %u EBUSY on %s, no holder: '%s'",
					 d->alloc_id, d->addr, c->extack);
		return;
	}
	if (!recent_holder(d, atoi(pid + 5)))
		stress_violation(s, "alloc-del %u EBUSY names no recent vfio_open: '%s'",
				 d->alloc_id, c->extack);
}

static void alloc_new(struct stress *s, struct nlc *c,
		      struct stress_vfio_dev *d, struct stress_op *op)
{
	struct nlc_alloc_req req = { .owner = d->owner };
	struct nlc_alloc a;
	int ret;

	req.devices[req.ndevices++] = d->addr;
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_UID, 0);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_GID, 0);
	publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_MAKING);
	ret = nlc_alloc_new(c, &req, &a);
	stress_count(op, ret);
	if (ret) {
		publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_NONE);
		if (d->strict)
			stress_violation(s, "alloc-new %s: %s '%s'", d->addr,
					 strerror(-ret), c->extack);
		return;
	}
	d->alloc_id = a.id;
	publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_HELD);
}

static void alloc_del(struct stress *s, struct nlc *c,
		      struct stress_vfio_dev *d, struct stress_op *op)
{
	struct seen open;
	int ret;

	publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_DELETING);
	open = look(&d->open_seq, &d->open_state);
	ret = nlc_alloc_del(c, &d->alloc_id, NULL);
	stress_count(op, ret);
	if (!ret) {
		publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_NONE);
		if (d->strict && open.state == STRESS_OPEN_HELD &&
		    held_throughout(open, &d->open_seq))
			stress_violation(s, "alloc-del %u succeeded while vfio_open had %s open",
					 d->alloc_id, d->addr);
		return;
	}
	if (!d->strict) {
		/* The module may have gone, and the allocation with it. */
		publish(&d->alloc_seq, &d->alloc_state,
			ret == -EBUSY ? STRESS_ALLOC_HELD : STRESS_ALLOC_NONE);
		return;
	}
	publish(&d->alloc_seq, &d->alloc_state, STRESS_ALLOC_HELD);
	if (ret == -EBUSY)
		check_busy(s, c, d, open);
	else
		stress_violation(s, "alloc-del %u of %s: %s '%s'", d->alloc_id,
				 d->addr, strerror(-ret), c->extack);
}

void stress_loop_alloc(struct stress *s, void *arg)
{
	struct stress_vfio_dev *d = arg;
	struct stress_op *op_new, *op_del;
	struct nlc c = { 0 };
	long unloads = -1;

	op_new = stress_op(s, "alloc-new %s", d->addr);
	op_del = stress_op(s, "alloc-del %s", d->addr);
	while (stress_nl_ready(s, &c, &unloads)) {
		if (d->alloc_state == STRESS_ALLOC_NONE)
			alloc_new(s, &c, d, op_new);
		else
			alloc_del(s, &c, d, op_del);
		stress_pause(5);
	}
	nlc_close(&c);
}
