// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * fuzz: the spec-driven fuzzer of the gpuctl family, as a kselftest.
 *
 * Sends $GPUCTL_FUZZ_MESSAGES (default 10000) generated messages, three
 * quarters as root in batches with the invariants checked after each, one
 * quarter at the same time from an unprivileged child; then probes what an
 * unprivileged user can see and do while the ledger holds an allocation,
 * deletes everything it created, unloads the module and loads it again
 * ($GPUCTL_KO). $GPUCTL_FUZZ_SEED repeats a run.
 *
 * A supervisor process watches the fuzzer: when the family stops
 * answering, or the fuzzer dies, it prints the last datagrams sent and
 * the fuzzer's kernel stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "fuzz.h"

#define FZ_PLAN		11
#define FZ_SECRET_TEST \
	"unprivileged: no allocation or holder data in replies or notifications"

static struct fz_ctx ctx;
static struct fz_plan plan;

static unsigned long fz_env(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static void fz_ring_print(const struct fz_shared *sh)
{
	int i, k, len;

	printf("# last datagrams sent, oldest first:\n");
	for (i = 0; i < FZ_RING; i++) {
		int slot = (sh->ring_pos + i) % FZ_RING;

		len = sh->ring[slot].len;
		if (!len)
			continue;
		printf("#  [%d] %d bytes:", i, len);
		for (k = 0; k < len && k < (int)sizeof(sh->ring[0].buf); k++)
			printf("%s%02x", k % 32 ? " " : "\n#    ", sh->ring[slot].buf[k]);
		printf("\n");
	}
}

static void fz_cat(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

/* ---- the checks around the fuzzing ---- */

/* The kernel's ops, flags and groups are the spec's. */
static bool fz_check_family(const struct fz_family *f)
{
	int i, k, bad = 0;

	for (i = 0; i < fz_spec.n_ops; i++) {
		const struct fz_op *o = &fz_spec.ops[i];
		__u32 want = (o->admin ? GENL_ADMIN_PERM : 0) |
			     (o->mode[FZ_DO].present ? GENL_CMD_CAP_DO : 0) |
			     (o->mode[FZ_DUMP].present ? GENL_CMD_CAP_DUMP : 0);
		__u32 mask = GENL_ADMIN_PERM | GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP;

		for (k = 0; k < f->n_ops && f->ops[k].cmd != o->cmd; k++)
			;
		if (k == f->n_ops) {
			ksft_print_msg("kernel lacks op %s (%u)\n", o->name, o->cmd);
			bad++;
		} else if ((f->ops[k].flags & mask) != want) {
			ksft_print_msg("op %s: kernel flags 0x%x, spec 0x%x\n",
				       o->name, f->ops[k].flags & mask, want);
			bad++;
		}
	}
	for (k = 0; k < f->n_ops; k++) {
		if (!fz_op_by_cmd(f->ops[k].cmd)) {
			ksft_print_msg("kernel op %u is not in the spec\n",
				       f->ops[k].cmd);
			bad++;
		}
	}
	for (i = 0; i < fz_spec.n_mcgrps; i++) {
		if (!fz_family_grp(f, fz_spec.mcgrps[i])) {
			ksft_print_msg("kernel lacks group %s\n", fz_spec.mcgrps[i]);
			bad++;
		}
	}
	return !bad;
}

/* WARN, BUG, oops and sanitizer reports in the kernel log since @fd opened. */
static int fz_kmsg_scan(int fd)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "Oops", "general protection", "KASAN",
		"kmemleak", "circular locking", "Call Trace", "truncated extack",
	};
	char rec[8192];
	unsigned int i;
	int n = 0;
	ssize_t len;

	if (fd < 0)
		return 0;
	while ((len = read(fd, rec, sizeof(rec) - 1)) > 0 ||
	       (len < 0 && errno == EPIPE)) {
		if (len <= 0)
			continue;
		rec[len] = '\0';
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			if (strstr(rec, bad[i])) {
				if (n++ < 20)
					printf("# kmsg: %s", strchr(rec, ';') ?
					       strchr(rec, ';') + 1 : rec);
				break;
			}
		}
	}
	return n;
}

static int fz_unload(void)
{
	int i;

	for (i = 0; i < 20; i++) {
		if (!syscall(SYS_delete_module, "gpuctl", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			break;
		usleep(250000);
	}
	return -errno;
}

static int fz_load(void)
{
	const char *ko = getenv("GPUCTL_KO");
	char cmd[1024];
	int fd, ret;

	if (!ko)
		return -ENOENT;
	/* insmod loads no dependencies: as selftests/lib.sh, modprobe them. */
	snprintf(cmd, sizeof(cmd),
		 "modprobe -a $(modinfo -F depends '%s' | tr , ' ') >/dev/null 2>&1",
		 ko);
	if (system(cmd))
		ksft_print_msg("modprobe of gpuctl's dependencies failed\n");
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "dyndbg=+p", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* The unload test: everything deleted, then rmmod, then load again. */
static void fz_test_unload(struct fz_ctx *c)
{
	struct fz_family f;
	struct fz_sock s;
	int ret, before = c->n_devs;

	fz_sock_close(&c->sk);
	fz_sock_close(&c->mon);
	if (!getenv("GPUCTL_KO")) {
		ksft_test_result_skip("rmmod and load again: GPUCTL_KO not set\n");
		return;
	}
	ret = fz_unload();
	if (ret) {
		ksft_print_msg("rmmod gpuctl: %s; refcnt:\n", strerror(-ret));
		fz_cat("/sys/module/gpuctl/refcnt");
	}
	if (!ret && fz_sock_open(&s, 0) == 0) {
		if (fz_family_get(&s, fz_spec.family, &f) != -ENOENT) {
			ksft_print_msg("family %s still there after rmmod\n",
				       fz_spec.family);
			ret = -EEXIST;
		}
		fz_sock_close(&s);
	}
	if (access("/sys/module/gpuctl", F_OK)) {
		int lret = fz_load();

		if (lret) {
			ksft_print_msg("loading %s again: %s\n", getenv("GPUCTL_KO"),
				       strerror(-lret));
			ret = ret ?: lret;
		}
	}
	if (!ret && (fz_sock_open(&c->sk, 0) ||
		     fz_family_get(&c->sk, fz_spec.family, &c->fam) ||
		     fz_inventory_load(c) || c->n_devs != before)) {
		ksft_print_msg("after the reload: %d devices, %d before\n",
			       c->n_devs, before);
		ret = -EIO;
	}
	ksft_test_result(!ret, "rmmod gpuctl succeeds and the module loads again\n");
}

/*
 * An allocation for the probe, so that what an unprivileged user sees of
 * allocated devices is tested: a GPU with no foreign group member and out
 * of the guard's way is reserved (with take) and allocated.
 */
static bool fz_make_allocation(struct fz_ctx *c)
{
	unsigned int m_match = fz_k.rule_match;
	unsigned int take = fz_attr_type("rule", "take");
	unsigned int owner = fz_k.alloc_owner, dev = fz_attr_type("alloc", "device");
	unsigned char attrs[256];
	struct nlattr *a;
	struct fz_res res;
	int i, j;

	for (i = 0; i < c->n_devs; i++) {
		if (c->devs[i].has_alloc)
			return true;
	}
	for (i = 0; i < c->n_devs && take && dev; i++) {
		const struct fz_dev *g = &c->devs[i];
		const char *uuid = "f0220000-0000-4000-8000-00000000f022";
		size_t n = 0, l;

		if (g->role != fz_k.role_gpu || !g->has_group)
			continue;
		/* Nothing protected and no foreign member in its group. */
		for (j = 0; j < c->n_devs; j++) {
			const struct fz_dev *m = &c->devs[j];

			if (m->has_group && m->group == g->group &&
			    (fz_dev_protected(c, m) ||
			     (m->role != fz_k.role_gpu &&
			      m->role != fz_k.role_companion &&
			      m->role != fz_k.role_bridge)))
				break;
		}
		if (j < c->n_devs)
			continue;
		if (!g->reserved) {
			a = (struct nlattr *)attrs;
			l = strlen(g->addr) + 1;
			a->nla_type = m_match;
			a->nla_len = NLA_HDRLEN + l;
			memcpy(attrs + NLA_HDRLEN, g->addr, l);
			n = NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)(attrs + n);
			a->nla_type = take;
			a->nla_len = NLA_HDRLEN;
			n += NLA_HDRLEN;
			fz_do(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_rule_new].cmd,
			      attrs, n, NULL, NULL, &res);
		}
		a = (struct nlattr *)attrs;
		a->nla_type = owner;
		a->nla_len = NLA_HDRLEN + strlen(uuid) + 1;
		memcpy(attrs + NLA_HDRLEN, uuid, strlen(uuid) + 1);
		n = NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)(attrs + n);
		l = strlen(g->addr) + 1;
		a->nla_type = dev;
		a->nla_len = NLA_HDRLEN + l;
		memcpy(attrs + n + NLA_HDRLEN, g->addr, l);
		n += NLA_ALIGN(a->nla_len);
		memset(attrs + n - (NLA_ALIGN(a->nla_len) - a->nla_len), 0,
		       NLA_ALIGN(a->nla_len) - a->nla_len);
		if (!fz_do(&c->sk, c->fam.id,
			   fz_spec.ops[fz_k.op_alloc_new].cmd, attrs, n,
			   NULL, NULL, &res))
			return !fz_inventory_load(c);
		ksft_print_msg("probe: allocating %s: %s (%s)\n", g->addr,
			       strerror(res.err), res.extack);
	}
	return false;
}

/* From half-way on, a VFIO user holds an allocated GPU open. */
static void fz_holder(struct fz_ctx *c, char *addr, size_t len)
{
	c->holder = 0;
	if (fz_make_allocation(c))
		c->holder = fz_holder_start(c, addr, len);
	if (c->holder > 0)
		ksft_print_msg("from message %lu on, vfio_open holds %s open\n",
			       c->stats->sent, addr);
	else
		ksft_print_msg("no allocated GPU could be opened for the second half\n");
}

static int fz_fork_unpriv(struct fz_ctx *c, struct fz_unpriv_report *rep,
			  unsigned long messages, bool probe)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		c->rep = rep;
		c->rng.s ^= 0x9e3779b97f4a7c15ULL;
		if (probe)
			fz_unpriv_probe(c);
		fz_unpriv_run(c, messages);
	}
	return pid;
}

static bool fz_wait_child(pid_t pid, const char *what)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid)
		return false;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return true;
	ksft_print_msg("%s: %s %d\n", what,
		       WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return false;
}

static void fz_report_unpriv(struct fz_ctx *c, bool child_ok, bool probe_ok,
			     bool allocated)
{
	const struct fz_unpriv_report *u = &c->sh->unpriv, *p = &c->sh->probe;
	unsigned long checked = u->admin_checked + p->admin_checked;
	unsigned long bad = u->admin_bad + p->admin_bad;
	unsigned long secret = u->devget_secret + p->devget_secret + u->ntf_secret;
	int i, ledger = -1;

	fz_stats_print("unprivileged", &u->stats);
	if (bad)
		ksft_print_msg("first: %s\n", u->admin_bad ? u->admin_first :
			       p->admin_first);
	ksft_test_result(child_ok && probe_ok && u->dropped && p->dropped &&
			 checked && !bad && !u->stats.bad_replies,
			 "unprivileged (uid 65534, no capabilities): %lu admin-op messages, each refused with EPERM\n",
			 checked);

	for (i = 0; i < p->n_grps; i++) {
		ksft_print_msg("unprivileged join of group %s: %s\n", p->grp_name[i],
			       p->grp_err[i] ? strerror(p->grp_err[i]) : "joined");
		if (!strcmp(p->grp_name[i], "ledger"))
			ledger = i;
	}
	if (ledger < 0)
		ksft_test_result_skip("unprivileged: cannot join the ledger group (none yet)\n");
	else
		ksft_test_result(p->grp_err[ledger] == EPERM,
				 "unprivileged: cannot join the ledger group\n");

	ksft_print_msg("unprivileged: %lu dev-get replies, %lu of allocated devices\n",
		       u->devget_replies + p->devget_replies, p->devget_alloc_seen);
	ksft_print_msg("unprivileged: %lu with allocation or holder attributes\n",
		       u->devget_secret + p->devget_secret);
	ksft_print_msg("unprivileged: %lu notifications with ledger data\n",
		       u->ntf_secret);
	if (!c->has_ledger)
		ksft_test_result_skip("%s (no privilege split yet: %lu leaks)\n",
				      FZ_SECRET_TEST, secret);
	else
		ksft_test_result(allocated && p->devget_alloc_seen && !secret,
				 "%s\n", FZ_SECRET_TEST);
}

static int fz_main(struct fz_shared *sh)
{
	unsigned long total = fz_env("GPUCTL_FUZZ_MESSAGES", 10000);
	/* About 40 batches of at least 250 and at most 2500 messages. */
	unsigned long batch = fz_env("GPUCTL_FUZZ_BATCH",
				     total / 40 < 250 ? 250 :
				     total / 40 > 2500 ? 2500 : total / 40);
	unsigned long seed = fz_env("GPUCTL_FUZZ_SEED", time(NULL) ^ getpid());
	unsigned long root_n = total - total / 4, sent, batches = 0, violated = 0;
	int kmsg, allocs, limits, rules, ret;
	struct fz_ctx *c = &ctx;
	struct timespec t0, t1;
	double t_check;
	int broken;
	bool ok, child_ok, probe_ok, allocated;
	static char why[2048], last[2048];
	pid_t child;

	c->sh = sh;
	c->stats = &sh->root;
	fz_heartbeat = &sh->progress_ms;
	c->rng.s = seed * 0x9e3779b97f4a7c15ULL + 1;
	srandom(seed);
	ksft_print_header();
	ksft_set_plan(FZ_PLAN);
	ksft_print_msg("spec %s: %d ops, %d attribute sets\n", fz_spec.family,
		       fz_spec.n_ops, fz_spec.n_sets);
	ksft_print_msg("%lu messages, %lu as root, batches of %lu; GPUCTL_FUZZ_SEED=%lu\n",
		       total, root_n, batch, seed);
	if (fz_known_init(why, sizeof(why)))
		ksft_exit_fail_msg("%s\n", why);
	ret = fz_sock_open(&c->sk, 4 << 20) ?: fz_sock_open(&c->mon, 4 << 20);
	if (ret)
		ksft_exit_fail_msg("netlink socket: %s\n", strerror(-ret));
	ret = fz_family_get(&c->sk, fz_spec.family, &c->fam);
	if (ret)
		ksft_exit_fail_msg("family %s: %s\n", fz_spec.family, strerror(-ret));
	c->has_ledger = fz_family_grp(&c->fam, "ledger");
	ksft_test_result(fz_check_family(&c->fam),
			 "the kernel's ops, admin flags, do/dump and groups are the spec's\n");

	ret = fz_ledger_counts(c, &allocs, &limits, &rules);
	ok = !ret && !allocs && !limits && !rules;
	ksft_print_msg("at the start: %d allocations, %d limits, %d rules\n",
		       allocs, limits, rules);
	ksft_test_result(ok, "the ledger is empty at the start\n");
	if (!ok)
		ksft_exit_fail_msg("not fuzzing: it would delete objects it did not create\n");

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	if (fz_inventory_load(c))
		ksft_exit_fail_msg("dev-get dump failed\n");
	fz_guard_init(c);
	fz_pools_seed(c);
	for (ret = 0; ret < c->fam.n_grps; ret++)
		setsockopt(c->mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			   &c->fam.grps[ret].id, sizeof(c->fam.grps[ret].id));

	child = fz_fork_unpriv(c, &sh->unpriv, total - root_n, false);
	c->holder = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (sent = 0; c->stats->sent < root_n; sent++) {
		fz_gen(c, &plan);
		ret = fz_send_one(c, &plan);
		if (ret) {
			ksft_print_msg("no reply from the family: %s\n", strerror(-ret));
			fz_ring_print(sh);
			ksft_test_result_fail("root: the family answered every message\n");
			ksft_exit_fail();
		}
		if (!(sent % 32))
			fz_mon_drain(c);
		if (c->stats->sent / batch == batches && c->stats->sent < root_n)
			continue;
		batches++;
		t_check = fz_now_s();
		broken = fz_invariants(c, why, sizeof(why));
		c->stats->check_seconds += fz_now_s() - t_check;
		if (broken) {
			if (!violated++)
				fz_ring_print(sh);
			if (strcmp(why, last))
				ksft_print_msg("batch %lu: %s\n", batches, why);
			memcpy(last, why, sizeof(last));
		}
		if (c->holder < 0 && c->stats->sent >= root_n / 2)
			fz_holder(c, why, sizeof(why));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->stats->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	fz_mon_drain(c);
	fz_stats_print("root", c->stats);
	ksft_test_result_pass("root: %lu messages, each answered (%.0f messages/s)\n",
			      c->stats->sent, c->stats->sent / c->stats->seconds);
	ksft_test_result(!violated, "invariants held after every batch (%lu of %lu violated)\n",
			 violated, batches);

	child_ok = fz_wait_child(child, "unprivileged fuzzer");
	allocated = fz_make_allocation(c);
	ksft_print_msg("probe with %s allocated device\n", allocated ? "an" : "no");
	probe_ok = fz_wait_child(fz_fork_unpriv(c, &sh->probe, 0, true), "probe");
	ksft_test_result(!sh->root.bad_replies && !sh->root.bad_ntfs &&
			 !sh->unpriv.stats.bad_replies && !sh->unpriv.stats.bad_ntfs,
			 "every reply and notification follows the spec (%lu replies, %lu notifications)\n",
			 sh->root.replies + sh->unpriv.stats.replies,
			 sh->root.ntfs + sh->unpriv.stats.ntfs);
	fz_report_unpriv(c, child_ok, probe_ok, allocated);

	fz_holder_stop(c->holder);
	c->holder = 0;
	ret = fz_cleanup(c, why, sizeof(why));
	if (ret)
		ksft_print_msg("%s\n", why);
	ksft_test_result(!ret, "every allocation, limit and rule deleted\n");
	fz_test_unload(c);
	ret = fz_kmsg_scan(kmsg);
	ksft_test_result(!ret, "kernel log: no warning, BUG, oops or sanitizer report\n");
	ksft_finished();
	return 0;
}

/* Waits for the fuzzer; reports a hang or a death with what it sent. */
int main(void)
{
	/* No reply for this long: the family is unresponsive. */
	long stall_ms = fz_env("GPUCTL_FUZZ_STALL", 90) * 1000;
	struct fz_shared *sh;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid())
		ksft_exit_skip("needs root\n");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	fflush(stdout);
	pid = fork();
	if (!pid) {
		/* A group of its own, with its children: ended as one. */
		setpgid(0, 0);
		return fz_main(sh);
	}
	for (;;) {
		pid_t got = waitpid(pid, &status, WNOHANG);
		char path[64];

		if (got == pid)
			break;
		long last = __atomic_load_n(&sh->progress_ms, __ATOMIC_RELAXED);

		if (!last || fz_now_ms() - last < stall_ms) {
			usleep(200000);
			continue;
		}
		printf("# the family has not answered for %ld s\n", stall_ms / 1000);
		fz_ring_print(sh);
		snprintf(path, sizeof(path), "/proc/%d/stack", pid);
		printf("# kernel stack of the fuzzer:\n");
		fz_cat(path);
		kill(-pid, SIGKILL);
		printf("not ok 99 the family stays responsive\n");
		return KSFT_FAIL;
	}
	/* Whatever it left running: the unprivileged child, vfio_open. */
	kill(-pid, SIGKILL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	printf("# the fuzzer died of signal %d\n", WTERMSIG(status));
	fz_ring_print(sh);
	return KSFT_FAIL;
}
