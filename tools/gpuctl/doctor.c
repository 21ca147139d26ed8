// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl doctor: runs every check of the preflight and prints each one's
 * status, summary, evidence and fix, as text or as JSON. The checks live
 * in doctor_iommu.c (the IOMMU, interrupt remapping, the command line,
 * the groups), doctor_boot.c (vfio modules, initramfs, softdeps, module
 * signature) and doctor_gpuctl.c (the module, reserved devices, rules
 * and ledger). The files read can be moved under GPUCTL_DOCTOR_ROOT, so
 * that a test can show the doctor a host it is not (a Secure Boot one).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor.h"
#include "gpuctl.h"
#include "holders.h"
#include "json_print.h"
#include "mdev_sysfs.h"
#include "migration.h"

static const char *const status_names[] = {
	[DOCTOR_PASS] = "pass",
	[DOCTOR_SKIP] = "skip",
	[DOCTOR_WARN] = "warn",
	[DOCTOR_FAIL] = "fail",
};

/* Grows @v by one line printed from @fmt; a line that cannot be kept is lost */
static void lines_add(char ***v, size_t *n, const char *fmt, va_list ap)
{
	char **grown, *line;

	if (vasprintf(&line, fmt, ap) < 0)
		return;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown) {
		free(line);
		return;
	}
	grown[(*n)++] = line;
	*v = grown;
}

static void lines_free(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

/**
 * doctor_set() - record a finding of a check
 * @c: the check
 * @status: how bad the finding is
 * @fmt: its one-line summary
 *
 * The summary is the worst finding's; of two equally bad ones, the first.
 */
void doctor_set(struct doctor_check *c, enum doctor_status status,
		const char *fmt, ...)
{
	va_list ap;

	if (status < c->status || (status == c->status && c->summary[0]))
		return;
	c->status = status;
	va_start(ap, fmt);
	vsnprintf(c->summary, sizeof(c->summary), fmt, ap);
	va_end(ap);
}

/**
 * doctor_evidence() - add a line of what a check read
 * @c: the check
 * @fmt: the file and the value found there
 */
void doctor_evidence(struct doctor_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lines_add(&c->evidence, &c->nevidence, fmt, ap);
	va_end(ap);
}

/**
 * doctor_fix() - add a line of what to do about a finding
 * @c: the check
 * @fmt: the command or setting
 */
void doctor_fix(struct doctor_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lines_add(&c->fix, &c->nfix, fmt, ap);
	va_end(ap);
}

/**
 * doctor_path() - where a file of the host is read
 * @dr: the doctor, with its root
 * @path: the absolute path on the host ("/proc/cmdline")
 * @buf: filled with @path under the root
 * @size: size of @buf
 *
 * Return: @buf.
 */
char *doctor_path(const struct doctor *dr, const char *path, char *buf,
		  size_t size)
{
	snprintf(buf, size, "%s%s", dr->root, path);
	return buf;
}

/**
 * doctor_read() - read a small file of the host, trailing newline cut
 * @dr: the doctor
 * @path: the absolute path on the host
 * @buf: filled with its text, NUL-terminated
 * @size: size of @buf; a longer file is cut
 *
 * Return: the number of bytes read, or a negative errno.
 */
int doctor_read(const struct doctor *dr, const char *path, char *buf,
		size_t size)
{
	char full[PATH_MAX];
	ssize_t n;
	int fd;

	fd = open(doctor_path(dr, path, full, sizeof(full)), O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n;
}

/**
 * doctor_exists() - whether a path of the host exists
 * @dr: the doctor
 * @path: the absolute path on the host
 *
 * Return: true when it does.
 */
bool doctor_exists(const struct doctor *dr, const char *path)
{
	char full[PATH_MAX];
	struct stat st;

	return !stat(doctor_path(dr, path, full, sizeof(full)), &st);
}

/**
 * doctor_link_name() - the last part of where a symlink of the host points
 * @dr: the doctor
 * @link: the absolute path of the link on the host (a driver link)
 * @buf: filled with the name, "" when there is no link
 * @size: size of @buf
 *
 * Return: 0, or a negative errno (no link, or a name longer than @buf).
 */
int doctor_link_name(const struct doctor *dr, const char *link, char *buf,
		     size_t size)
{
	char path[PATH_MAX];

	return sysfs_link_base(doctor_path(dr, link, path, sizeof(path)), buf,
			     size);
}

/**
 * doctor_run() - run a program and hand its output over line by line
 * @argv: the program and its arguments, NULL-terminated, run without a shell
 * @line: called with each line, newline cut; a nonzero return stops reading
 * @ctx: for @line
 *
 * Its stderr goes to /dev/null: lsinitramfs's cpio complains of the end of
 * an image's early archive even when all is well, and its exit status
 * says what matters.
 *
 * Return: the program's exit status, or -1 when it could not run or was
 * killed.
 */
int doctor_run(const char *const argv[],
	       int (*line)(void *ctx, const char *text), void *ctx)
{
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;
	int fds[2], status;
	pid_t pid;
	FILE *fp;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], STDOUT_FILENO);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	fp = fdopen(fds[0], "r");
	if (!fp) {
		close(fds[0]);
	} else {
		while ((n = getline(&text, &cap, fp)) > 0) {
			if (text[n - 1] == '\n')
				text[n - 1] = '\0';
			if (line(ctx, text))
				break;
		}
		/* what is left unread ends the program with SIGPIPE */
		fclose(fp);
	}
	free(text);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The checks, in the order they print: the kernel's, the boot's, gpuctl's */
static const struct {
	const char *id;
	void (*run)(const struct doctor *dr, struct doctor_check *c);
} checks[] = {
	{ "module", doctor_module },
	{ "iommu", doctor_iommu },
	{ "interrupt-remapping", doctor_intremap },
	{ "cmdline", doctor_cmdline },
	{ "groups", doctor_groups },
	{ "vfio-modules", doctor_vfio_modules },
	{ "initramfs", doctor_initramfs },
	{ "softdeps", doctor_softdeps },
	{ "reserved-drivers", doctor_reserved },
	{ "module-signature", doctor_signature },
	{ "rules-ledger", doctor_ledger },
	{ "vfio-holders", doctor_holders },
	{ "live-migration", doctor_migration },
};

static void lines_print(const char *key, const char *label, char **v,
			size_t n)
{
	size_t i;

	open_json_array(PRINT_JSON, key);
	for (i = 0; i < n; i++) {
		print_string(PRINT_FP, NULL, "    %s: ", label);
		print_string(PRINT_ANY, NULL, "%s\n", v[i]);
	}
	close_json_array(PRINT_JSON, NULL);
}

static void check_print(const struct doctor_check *c)
{
	open_json_object(NULL);
	print_string(PRINT_ANY, "id", "%-20s ", c->id);
	print_string(PRINT_ANY, "status", "%-4s ", status_names[c->status]);
	print_string(PRINT_ANY, "summary", "%s\n", c->summary);
	lines_print("evidence", "evidence", c->evidence, c->nevidence);
	lines_print("fix", "fix", c->fix, c->nfix);
	close_json_object();
}

/* Which devices of each allocation cannot migrate (migration.c) */
static void doctor_migration_read(struct gpuctl *g, struct doctor *dr)
{
	struct nl_list vgpus;
	size_t i;

	if (vgpu_dump(&g->nl, &vgpus))
		return;
	for (i = 0; i < dr->allocs.n; i++)
		alloc_migration_read((struct alloc_info *)dr->allocs.v + i,
				     &dr->devs, &vgpus);
	nl_list_free(&vgpus);
}

/* The module's dumps the checks use; a module that is not there is a finding */
static void doctor_load(struct gpuctl *g, struct doctor *dr)
{
	struct utsname u;
	int ret;

	dr->root = getenv("GPUCTL_DOCTOR_ROOT") ?: "";
	if (!uname(&u))
		snprintf(dr->release, sizeof(dr->release), "%s", u.release);
	reserve_list_init(&dr->rules);
	alloc_list_init(&dr->allocs);

	if (nl_open(&g->nl))
		return;
	g->nl_ok = true;
	if (dev_dump(&g->nl, &dr->devs))
		return;
	dr->module = true;
	/* rules and the ledger are for CAP_SYS_ADMIN, reading included */
	ret = nl_collect_quiet(&g->nl,
			       nl_msg_start(&g->nl, GPUCTL_CMD_RULE_GET, true),
			       &dr->rules);
	if (!ret)
		ret = nl_collect_quiet(&g->nl,
				       nl_msg_start(&g->nl, GPUCTL_CMD_ALLOC_GET,
						    true),
				       &dr->allocs);
	dr->ledger = !ret;
	dr->ledger_err = ret;
	if (dr->ledger) {
		struct holders f = {};

		holders_fill(&dr->devs, &dr->allocs, &f);
		holders_free(&f);
		doctor_migration_read(g, dr);
	}
}

/**
 * cmd_doctor() - gpuctl doctor
 * @g: the tool's state
 * @a: the words after "doctor"
 *
 * Return: EXIT_OK when no check failed, EXIT_DOCTOR_FAIL when one did.
 */
static int cmd_doctor(struct gpuctl *g, struct args *a)
{
	struct doctor_check c[ARRAY_SIZE(checks)] = {};
	struct doctor dr = {};
	bool failed = false;
	size_t i;

	if (args_is(a, "help")) {
		object_help(stdout, &doctor_object);
		return EXIT_OK;
	}
	if (!args_done(a, "doctor"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	doctor_load(g, &dr);
	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		c[i].id = checks[i].id;
		checks[i].run(&dr, &c[i]);
		failed |= c[i].status == DOCTOR_FAIL;
	}

	new_json_obj();
	open_json_array(PRINT_JSON, "checks");
	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		check_print(&c[i]);
		lines_free(c[i].evidence, c[i].nevidence);
		lines_free(c[i].fix, c[i].nfix);
	}
	close_json_array(PRINT_JSON, NULL);
	print_string(PRINT_ANY, "result", "result %s\n",
		     failed ? "fail" : "pass");
	delete_json_obj();

	nl_list_free(&dr.devs);
	nl_list_free(&dr.rules);
	nl_list_free(&dr.allocs);
	return failed ? EXIT_DOCTOR_FAIL : EXIT_OK;
}

const struct object doctor_object = {
	.name = "doctor",
	.desc = "check this host for GPU passthrough",
	.run = cmd_doctor,
	.json = true,
	.notes = "Checks this host for GPU passthrough: the IOMMU, interrupt remapping,\n"
		 "the kernel command line, the IOMMU groups of the GPUs, the vfio modules,\n"
		 "the initramfs and softdeps, the reserved devices' drivers, the module's\n"
		 "signature, the rules and ledger, who holds the open devices and which\n"
		 "allocations could live-migrate. Exits 4 when a check failed.\n",
};
