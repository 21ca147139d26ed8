// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The stress programs' workers, counters, kernel log watch and PCI
 * snapshots; see stress.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ledger.h"
#include "stress.h"
#include "testlib.h"

struct stress *stress_new(void)
{
	struct stress *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	memset(s, 0, sizeof(*s));
	return s;
}

void stress_free(struct stress *s)
{
	if (s)
		munmap(s, sizeof(*s));
}

int stress_seconds(void)
{
	const char *v = getenv("GPUCTL_STRESS_SECONDS");
	int n = v ? atoi(v) : 0;

	return n > 0 ? n : STRESS_DEFAULT_SECONDS;
}

struct stress_op *stress_op(struct stress *s, const char *fmt, ...)
{
	struct stress_op *op = &s->overflow;
	char name[sizeof(op->name)];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	/* Workers register their own; two of a kind share one. */
	while (__atomic_test_and_set(&s->ops_lock, __ATOMIC_ACQUIRE))
		usleep(100);
	for (i = 0; i < s->nops; i++)
		if (!strcmp(s->ops[i].name, name))
			break;
	if (i < STRESS_MAX_OPS) {
		op = &s->ops[i];
		if (i == s->nops) {
			strscpy(op->name, name, sizeof(op->name));
			s->nops++;
		}
	}
	__atomic_clear(&s->ops_lock, __ATOMIC_RELEASE);
	return op;
}

void stress_count(struct stress_op *op, int ret)
{
	int err = ret < 0 ? -ret : ret;

	__atomic_add_fetch(&op->runs, 1, __ATOMIC_RELAXED);
	if (err < STRESS_NERR)
		__atomic_add_fetch(&op->by_errno[err], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&op->other, 1, __ATOMIC_RELAXED);
}

void stress_violation(struct stress *s, const char *fmt, ...)
{
	char msg[sizeof(s->first)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("# VIOLATION: %s\n", msg);
	/* The first to count is the one that writes the summary. */
	if (__atomic_fetch_add(&s->violations, 1, __ATOMIC_SEQ_CST) == 0)
		strscpy(s->first, msg, sizeof(s->first));
}

bool stress_running(const struct stress *s)
{
	return !__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST);
}

void stress_pause(int max_ms)
{
	if (max_ms > 0)
		usleep((rand() % (max_ms + 1)) * 1000);
}

pid_t stress_spawn(struct stress *s, const char *name, stress_fn fn,
		   void *arg)
{
	pid_t pid;

	if (s->nworkers == STRESS_MAX_WORKERS)
		return -ENOSPC;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		srand(getpid() ^ tl_now_ms());
		fn(s, arg);
		fflush(stdout);
		_exit(0);
	}
	strscpy(s->worker_names[s->nworkers], name,
		sizeof(s->worker_names[0]));
	s->workers[s->nworkers++] = pid;
	return pid;
}

/* What a stuck process is waiting for in the kernel. */
static void print_stack(pid_t pid, const char *name)
{
	char path[64], line[256];
	FILE *f;

	printf("# worker %s (pid %d) is stuck; its kernel stack:\n", name, pid);
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

int stress_run(struct stress *s, int seconds)
{
	sleep(seconds);
	return stress_stop(s);
}

int stress_stop(struct stress *s)
{
	long deadline;
	int i, left, status, stuck = 0;

	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	deadline = tl_now_ms() + STRESS_STOP_GRACE_MS;
	do {
		left = 0;
		for (i = 0; i < s->nworkers; i++) {
			if (!s->workers[i])
				continue;
			if (waitpid(s->workers[i], &status, WNOHANG) ==
			    s->workers[i])
				s->workers[i] = 0;
			else
				left++;
		}
		if (left)
			usleep(50 * 1000);
	} while (left && tl_now_ms() < deadline);
	for (i = 0; i < s->nworkers; i++) {
		if (!s->workers[i])
			continue;
		print_stack(s->workers[i], s->worker_names[i]);
		stress_violation(s, "worker %s did not stop within %d s",
				 s->worker_names[i], STRESS_STOP_GRACE_MS / 1000);
		kill(s->workers[i], SIGKILL);
		stuck++;
	}
	/* A worker stuck in the kernel may not die; do not wait for it. */
	for (i = 0; i < s->nworkers; i++)
		if (s->workers[i])
			waitpid(s->workers[i], &status, WNOHANG);
	s->nworkers = 0;
	return stuck;
}

static const char *errno_name(int err)
{
	static const char * const names[] = {
		[0] = "ok", [EPERM] = "EPERM", [ENOENT] = "ENOENT",
		[EINTR] = "EINTR", [EIO] = "EIO", [ENODEV] = "ENODEV",
		[EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM", [EBUSY] = "EBUSY",
		[EEXIST] = "EEXIST", [EINVAL] = "EINVAL", [ENOSPC] = "ENOSPC",
		[ENOBUFS] = "ENOBUFS", [ESHUTDOWN] = "ESHUTDOWN",
		[EPROTO] = "EPROTO", [ETIMEDOUT] = "ETIMEDOUT",
		[EDQUOT] = "EDQUOT", [ENXIO] = "ENXIO",
		[ECONNRESET] = "ECONNRESET", [E2BIG] = "E2BIG",
	};

	if (err >= 0 && err < (int)ARRAY_SIZE(names) && names[err])
		return names[err];
	return NULL;
}

/* One "NAME N" per outcome that happened, comma-separated. */
static void print_outcomes(const struct stress_op *op)
{
	const char *sep = "";
	int e;

	for (e = 0; e < STRESS_NERR; e++) {
		if (!op->by_errno[e])
			continue;
		if (errno_name(e))
			printf("%s%s %ld", sep, errno_name(e), op->by_errno[e]);
		else
			printf("%serrno %d %ld", sep, e, op->by_errno[e]);
		sep = ", ";
	}
	if (op->other)
		printf("%sother %ld", sep, op->other);
}

void stress_report(const struct stress *s)
{
	int i;

	for (i = 0; i < s->nops; i++) {
		printf("# %s: %ld runs (", s->ops[i].name, s->ops[i].runs);
		print_outcomes(&s->ops[i]);
		printf(")\n");
	}
	fflush(stdout);
}

long stress_count_of(const struct stress *s, const char *name, int err)
{
	long sum = 0;
	int i;

	for (i = 0; i < s->nops; i++)
		if (!strcmp(s->ops[i].name, name) && err >= 0 &&
		    err < STRESS_NERR)
			sum += s->ops[i].by_errno[err];
	return sum;
}

/* What qemu/run.sh fails a run on, and what lockdep and the hung task
 * detector print.
 */
static const char * const kmsg_bad[] = {
	"WARNING:", "BUG:", "Oops", "KASAN", "kmemleak", "general protection",
	"Call Trace", "RIP:", "possible circular locking",
	"inconsistent lock state", "blocked for more than", "UBSAN",
	"refcount_t:",
};

int stress_kmsg_reports(int fd)
{
	char rec[8192];
	int bad = 0;
	ssize_t n;
	size_t i;

	if (fd < 0)
		return 0;
	for (;;) {
		const char *msg;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records were overwritten; go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		for (i = 0; i < ARRAY_SIZE(kmsg_bad); i++) {
			if (strstr(msg, kmsg_bad[i])) {
				printf("# kernel: %s", msg);
				bad++;
				break;
			}
		}
	}
	return bad;
}

int stress_module_deps(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (!pid) {
		/* As lib.sh's gpuctl_load: insmod loads no dependencies. */
		execlp("sh", "sh", "-c",
		       "modprobe -a $(modinfo -F depends \"$GPUCTL_KO\" | tr , ' ') vfio_iommu_type1",
		       (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

long stress_module_refcnt(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/sys/module/gpuctl/refcnt", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

int stress_write(const char *path, const char *val)
{
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/* The first line of @a that @b lacks, or of @b that @a lacks. */
static void first_difference(const char *a, const char *b, char *why,
			     size_t len)
{
	const char *p = a, *q = b;

	while (*p && *q) {
		const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
		size_t pl = pe ? (size_t)(pe - p) : strlen(p);
		size_t ql = qe ? (size_t)(qe - q) : strlen(q);

		if (pl != ql || strncmp(p, q, pl)) {
			snprintf(why, len, "was '%.*s', now '%.*s'", (int)pl, p,
				 (int)ql, q);
			return;
		}
		p += pl + !!pe;
		q += ql + !!qe;
	}
	snprintf(why, len, "was '%.80s', now '%.80s'", p, q);
}

int stress_wait_snapshot(const char *before, int timeout_ms, char *why,
			 size_t len)
{
	long deadline = tl_now_ms() + timeout_ms;
	char *now = malloc(STRESS_SNAPSHOT_LEN);
	int ret;

	if (!now)
		return -ENOMEM;
	stress_write("/sys/bus/pci/rescan", "1");
	for (;;) {
		ret = tl_pci_snapshot(now, STRESS_SNAPSHOT_LEN, true);
		if (!ret && !strcmp(before, now))
			break;
		if (tl_now_ms() >= deadline) {
			if (!ret)
				first_difference(before, now, why, len);
			else
				snprintf(why, len, "snapshot: %s", strerror(-ret));
			ret = -ETIMEDOUT;
			break;
		}
		usleep(200 * 1000);
	}
	free(now);
	return ret;
}

/* The line that starts with @addr; others may name it as a peer. */
static char *snapshot_line(char *snap, const char *addr)
{
	size_t n = strlen(addr);
	char *line = snap;

	while (line && *line) {
		if (!strncmp(line, addr, n) && line[n] == ' ')
			return line;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int stress_snapshot_set(char *snap, const char *addr, const char *driver,
			const char *override)
{
	char *line = snapshot_line(snap, addr), *end, *group, *rest;
	size_t len = strlen(snap);
	char repl[256];

	if (!line)
		return -ENOENT;
	end = strchr(line, '\n');
	group = strstr(line, " group+=");
	if (!end || !group || group > end)
		return -EINVAL;
	rest = strdup(group);
	if (!rest)
		return -ENOMEM;
	snprintf(repl, sizeof(repl), "%s driver=%s override=%s", addr, driver,
		 override);
	if (len - (group - line) + strlen(repl) >= STRESS_SNAPSHOT_LEN) {
		free(rest);
		return -E2BIG;
	}
	memcpy(line, repl, strlen(repl));
	memcpy(line + strlen(repl), rest, strlen(rest) + 1);
	free(rest);
	return 0;
}

int stress_clear_all(struct nlc *c)
{
	struct nlc_limit *limits;
	struct nlc_rule *rules;
	int i, n, r, ret;

	ret = ledger_clear(c);
	if (ret < 0)
		return ret;
	ret = nlc_rule_dump(c, &rules, &n, NULL);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		r = nlc_rule_del(c, &rules[i].id, NULL);
		if (r && r != -ENOENT && !ret)
			ret = r;
	}
	free(rules);
	r = nlc_limit_dump(c, &limits, &n, NULL);
	if (r)
		return ret ?: r;
	for (i = 0; i < n; i++) {
		struct nlc_limit l;

		r = nlc_limit_set(c, limits[i].scope, limits[i].name, NULL, &l);
		if (r && r != -ENOENT && !ret)
			ret = r;
	}
	free(limits);
	return ret;
}

int stress_wait_reserved(struct nlc *c, const char *addr, const char *driver,
			 int timeout_ms, char *why, size_t len)
{
	long deadline = tl_now_ms() + timeout_ms;
	char sysdrv[NLC_NAME_LEN], ovr[NLC_NAME_LEN];
	struct nlc_dev d;
	int ret;

	for (;;) {
		ret = nlc_dev_get(c, addr, &d);
		tl_driver_of(addr, sysdrv, sizeof(sysdrv));
		tl_override_of(addr, ovr, sizeof(ovr));
		if (!ret && d.state == GPUCTL_DEV_STATE_RESERVED &&
		    !strcmp(d.driver, driver) && !strcmp(sysdrv, driver) &&
		    !strcmp(ovr, driver))
			return 0;
		if (tl_now_ms() >= deadline)
			break;
		usleep(100 * 1000);
	}
	if (ret)
		snprintf(why, len, "dev-get %s: %s '%s'", addr, strerror(-ret),
			 c->extack);
	else
		snprintf(why, len, "%s %s on '%s' (sysfs '%s', override '%s'), not reserved on %s",
			 addr, nlc_state_name(d.state), d.driver, sysdrv, ovr,
			 driver);
	return -ETIMEDOUT;
}

#define WHY(e, ...) snprintf((e)->why, sizeof((e)->why), __VA_ARGS__)

int stress_env_setup(struct stress_env *e)
{
	struct nlc_alloc *allocs;
	struct nlc_rule *rules;
	int ret, nallocs, nrules;

	e->why[0] = '\0';
	e->kmsg = -1;
	e->c.sk = NULL;
	e->params = NULL;
	if (!getenv("GPUCTL_KO")) {
		WHY(e, "GPUCTL_KO not set");
		return -ENOENT;
	}
	ret = stress_module_deps();
	if (ret) {
		WHY(e, "modprobe of gpuctl's dependencies and vfio_iommu_type1 failed");
		return ret;
	}
	ret = nlc_open(&e->c);
	if (ret) {
		WHY(e, "gpuctl family not registered");
		return ret;
	}
	ret = nlc_alloc_dump(&e->c, &allocs, &nallocs, NULL);
	if (!ret) {
		free(allocs);
		ret = nlc_rule_dump(&e->c, &rules, &nrules, NULL);
	}
	if (ret) {
		WHY(e, "dump: %s '%s'", strerror(-ret), e->c.extack);
		return ret;
	}
	free(rules);
	if (nallocs || nrules) {
		WHY(e, "%d allocations and %d rules left by an earlier test",
		    nallocs, nrules);
		return -EEXIST;
	}
	ret = tl_pci_snapshot(e->before, sizeof(e->before), true);
	if (ret) {
		WHY(e, "PCI snapshot: %s", strerror(-ret));
		return ret;
	}
	e->kmsg = tl_kmsg_open();
	return 0;
}

int stress_env_wait_reserved(struct stress_env *e,
			     const struct stress_reserved *want, size_t n)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++)
		ret = stress_wait_reserved(&e->c, want[i].addr, want[i].driver,
					   STRESS_SETTLE_MS, e->why,
					   sizeof(e->why));
	return ret;
}

int stress_env_reload(struct stress_env *e, const char *params,
		      const struct stress_reserved *want, size_t n)
{
	int ret;

	/* Set first: a reload that fails half-way is undone all the same. */
	e->params = params;
	nlc_close(&e->c);
	ret = tl_module_unload();
	if (!ret)
		ret = tl_module_load(params);
	if (!ret)
		ret = nlc_open(&e->c);
	if (ret) {
		WHY(e, "reload with %s: %s", params, strerror(-ret));
		return ret;
	}
	return stress_env_wait_reserved(e, want, n);
}

void stress_env_teardown(struct stress_env *e, struct stress *s)
{
	if (s && s->nworkers)
		stress_stop(s);
	if (e->before[0] && stress_env_restore(e))
		printf("# restore: %s\n", e->why);
	nlc_close(&e->c);
	if (e->kmsg >= 0)
		close(e->kmsg);
	e->kmsg = -1;
	stress_free(s);
}

int stress_env_restore(struct stress_env *e)
{
	int ret = 0;

	e->why[0] = '\0';
	/* Rules and overrides go with the module that knows them. */
	if (!tl_module_loaded())
		ret = tl_module_load(e->params ?: "dyndbg=+p");
	if (!ret && !e->c.sk)
		ret = nlc_open(&e->c);
	if (!ret)
		ret = stress_clear_all(&e->c);
	nlc_close(&e->c);
	if (ret) {
		WHY(e, "deleting allocations, rules and limits: %s",
		    strerror(-ret));
		return ret;
	}
	if (e->params) {
		ret = tl_module_unload();
		/* As run_tests.sh loads it. */
		if (!ret)
			ret = tl_module_load("dyndbg=+p");
		if (ret) {
			WHY(e, "reloading gpuctl: %s", strerror(-ret));
			return ret;
		}
		e->params = NULL;
	}
	ret = stress_wait_snapshot(e->before, STRESS_SETTLE_MS, e->why,
				   sizeof(e->why));
	/* Done once: a teardown after the test has nothing left to do. */
	e->before[0] = '\0';
	if (!ret && nlc_open(&e->c)) {
		WHY(e, "gpuctl family not registered after the restore");
		ret = -ENOENT;
	}
	return ret;
}
