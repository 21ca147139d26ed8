// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl module show and reload: the running module against the one that
 * modprobe would load, and the reload that an upgrade of the module needs,
 * keeping what the old module held.
 *
 * The kernel refuses to unload while the ledger has an allocation or a VM
 * has a device open on gpuctl-vfio-pci, and while no gpuctl is loaded a
 * reserved device stays unbound with gpuctl's driver_override, so no host
 * driver takes it (Documentation/gpuctl.rst, "Module load and unload").
 * A VM on any other VFIO driver (vfio-pci, its variants, a vendor's)
 * keeps its device bound and open across the unload: nothing of it is
 * gpuctl's. So a reload is: refuse while a VM holds a device the unload
 * would take away (one on gpuctl-vfio-pci, or the VFs of a PF on it), save
 * the rules and the ledger, hand the allocations over (alloc-del with
 * handover, allowed while their VMs run), unload, load with the id
 * cursors of the old module, add the rules again with their ids and
 * restore the ledger with its ids. The new module sees the running VMs
 * as the holders at load, so their allocations are running again. What
 * defers the reload keeps the running module, and "module show" says why.
 */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"

extern char **environ;

#define MODULE_VERSION_BUFSZ 64
#define MODULE_LEDGER_DIR "/run/gpuctl"
#define MODULE_LEDGER MODULE_LEDGER_DIR "/reload.ledger"

/* A module's version and srcversion, "" when it has none or is absent */
struct module_id {
	char version[MODULE_VERSION_BUFSZ];
	char srcversion[MODULE_VERSION_BUFSZ];
};

/* The loaded module's ids; -ENOENT when gpuctl is not loaded */
static int module_running(struct module_id *id)
{
	memset(id, 0, sizeof(*id));
	if (access("/sys/module/gpuctl", F_OK))
		return -ENOENT;
	read_first_line("/sys/module/gpuctl/version", id->version,
			sizeof(id->version));
	read_first_line("/sys/module/gpuctl/srcversion", id->srcversion,
			sizeof(id->srcversion));
	return 0;
}

/* One field of modinfo(8) for @module (a name or a file), into @buf */
static int modinfo_field(const char *module, const char *field, char *buf,
			 size_t size)
{
	char *argv[5];
	posix_spawn_file_actions_t fa;
	int fds[2], status, ret;
	ssize_t n, len = 0;
	pid_t pid;

	buf[0] = '\0';
	argv[0] = "modinfo";
	argv[1] = "-F";
	argv[2] = (char *)field;
	argv[3] = (char *)module;
	argv[4] = NULL;
	if (pipe(fds))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
					 O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	ret = posix_spawnp(&pid, "modinfo", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (ret) {
		close(fds[0]);
		return -ret;
	}
	while ((n = read(fds[0], buf + len, size - 1 - len)) > 0)
		len += n;
	close(fds[0]);
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ENOENT;
}

/* What modprobe would load, or @ko; -ENOENT when there is none */
static int module_installed(const char *ko, struct module_id *id)
{
	const char *m = ko ? ko : "gpuctl";

	memset(id, 0, sizeof(*id));
	if (modinfo_field(m, "version", id->version, sizeof(id->version)))
		return -ENOENT;
	modinfo_field(m, "srcversion", id->srcversion, sizeof(id->srcversion));
	return 0;
}

/*
 * Whether loading @inst would change what runs: another version, or the
 * same version built from other sources
 */
static bool module_differs(const struct module_id *run,
			   const struct module_id *inst)
{
	if (strcmp(run->version, inst->version))
		return true;
	return run->srcversion[0] && inst->srcversion[0] &&
	       strcmp(run->srcversion, inst->srcversion);
}

/* Whether @d is on gpuctl's own VFIO driver, which an unload unbinds. */
static bool module_on_own_driver(const struct dev_info *d)
{
	return d->has_driver && !strcmp(d->driver, "gpuctl-vfio-pci");
}

/*
 * What keeps the module from being reloaded now, one reason per line on
 * @fp (NULL: only counted): a device a VFIO user holds on gpuctl-vfio-pci,
 * a PF on gpuctl-vfio-pci with VFs (its unbind removes them), and an
 * allocation whose vGPUs or typed vendor VFs a reload would have to make
 * again. A VM on any other VFIO driver does not: its device stays.
 */
static int module_blockers(const struct nl_list *devs,
			   const struct nl_list *allocs, FILE *fp)
{
	const struct dev_info *d = devs->v;
	const struct alloc_info *al = allocs->v;
	int n = 0;
	size_t i;

	for (i = 0; i < devs->n; i++) {
		if (module_on_own_driver(&d[i]) && d[i].sriov_numvfs) {
			n++;
			if (fp)
				fprintf(fp, "%s %s with %u VFs, %s\n",
					d[i].address, "is on gpuctl-vfio-pci",
					d[i].sriov_numvfs,
					"which its unload removes");
		}
		if (!d[i].has_holder || !module_on_own_driver(&d[i]))
			continue;
		n++;
		if (!fp)
			continue;
		if (d[i].holder_pid)
			fprintf(fp, "%s is open on gpuctl-vfio-pci by %s[%u]\n",
				d[i].address,
				d[i].has_holder_comm ? d[i].holder_comm : "?",
				d[i].holder_pid);
		else
			fprintf(fp, "%s is open on gpuctl-vfio-pci by a VFIO user\n",
				d[i].address);
	}
	for (i = 0; i < allocs->n; i++) {
		if (!al[i].nvgpus && !al[i].ntyped)
			continue;
		n++;
		if (fp)
			fprintf(fp,
				"allocation %u has vGPUs or typed vendor VFs\n",
				al[i].id);
	}
	return n;
}

/*
 * The running module's id cursors, as "next_alloc_id=N next_rule_id=M",
 * for the module that replaces it; "" from a module that has none.
 */
static size_t module_cursors(char *buf, size_t size)
{
	static const char *const names[] = { "next_alloc_id", "next_rule_id" };
	char path[96], val[24];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "/sys/module/gpuctl/parameters/%s",
			 names[i]);
		read_first_line(path, val, sizeof(val));
		if (!val[0] || len >= size)
			continue;
		len += snprintf(buf + len, size - len, "%s%s=%s",
				len ? " " : "", names[i], val);
	}
	return len;
}

/*
 * The old module's rules as the parameter " rule_ids=MATCH=ID,...", so
 * that a rule modprobe.d gives the new module at load keeps the id it had
 * (kmod/param.c); "" when there are none. A module without the parameter
 * ignores it.
 */
static void module_rule_ids(char *buf, size_t size, const struct nl_list *rules)
{
	const struct rule_info *r = rules->v;
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < rules->n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s=%u",
				i ? "," : " rule_ids=", r[i].match, r[i].id);
}

/* The devices and the allocations (@allocs initialized), or an exit code */
static int module_state(struct nl_ctx *nl, struct nl_list *devs,
			struct nl_list *allocs)
{
	if (dev_dump(nl, devs) || alloc_dump(nl, allocs)) {
		fprintf(stderr, "gpuctl: module: cannot read the devices and the ledger\n");
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

static void print_version(const char *key, const struct module_id *id,
			  bool there)
{
	char fmt[48];

	snprintf(fmt, sizeof(fmt), "%s %%s\n", key);
	if (there && id->version[0])
		print_string(PRINT_ANY, key, fmt, id->version);
	else
		print_null(PRINT_ANY, key, fmt,
			   there ? "(no version)" : "none");
}

static int cmd_module_show(struct gpuctl *g, struct args *a)
{
	struct module_id run, inst;
	struct nl_list devs = {};
	struct nl_list allocs;
	bool loaded, installed;
	char *why = NULL;
	size_t whylen = 0;
	struct nl_ctx *nl;
	FILE *fp;
	int ret;

	if (!args_done(a, "module show"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	loaded = !module_running(&run);
	installed = !module_installed(NULL, &inst);
	alloc_list_init(&allocs);
	fp = open_memstream(&why, &whylen);
	if (!fp) {
		perror("gpuctl: module show");
		return EXIT_KERNEL;
	}
	if (loaded) {
		ret = gpuctl_nl(g, &nl);
		if (!ret)
			ret = module_state(nl, &devs, &allocs);
		if (ret) {
			fclose(fp);
			free(why);
			nl_list_free(&devs);
			nl_list_free(&allocs);
			return ret;
		}
		module_blockers(&devs, &allocs, fp);
	}
	fclose(fp);

	new_json_obj();
	print_version("running", &run, loaded);
	print_version("installed", &inst, installed);
	/* a reload is due when modprobe would load another module */
	print_bool(PRINT_ANY, "reload_due", "reload due %s\n",
		   loaded && installed && module_differs(&run, &inst));
	open_json_array(PRINT_JSON, "reload_blocked_by");
	for (char *line = strtok(why, "\n"); line; line = strtok(NULL, "\n")) {
		print_string(PRINT_JSON, NULL, NULL, line);
		print_string(PRINT_FP, NULL, "reload blocked: %s\n", line);
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
	free(why);
	nl_list_free(&devs);
	nl_list_free(&allocs);
	return EXIT_OK;
}

/*
 * Who may hold the module once the allocations are handed over: the kernel
 * keeps no list, so the message names what can (a process that started a
 * netlink dump of gpuctl holds the family's module until it read the dump
 * to its end or closed the socket, net/netlink/af_netlink.c,
 * netlink_dump_start(), 6.1 and 6.12).
 */
static void module_in_use_print(void)
{
	char refcnt[24];

	read_first_line("/sys/module/gpuctl/refcnt", refcnt, sizeof(refcnt));
	fprintf(stderr,
		"gpuctl: it is still in use (refcnt %s): a VM that opened a device on gpuctl-vfio-pci meanwhile, or a process that started a netlink dump of gpuctl and has not read it to its end\n",
		refcnt[0] ? refcnt : "?");
}

/*
 * Load @ko, or let modprobe load what is installed, with @params ("" for
 * none; modprobe adds those of modprobe.d)
 */
static int module_load(const char *ko, char *params)
{
	char *argv[8] = { NULL };
	char *save = NULL, *p;
	int fd, ret, status;
	size_t argc = 0;
	pid_t pid;

	if (ko) {
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
		close(fd);
		return ret;
	}
	argv[argc++] = "modprobe";
	argv[argc++] = "gpuctl";
	for (p = strtok_r(params, " ", &save); p && argc < ARRAY_SIZE(argv) - 1;
	     p = strtok_r(NULL, " ", &save))
		argv[argc++] = p;
	ret = posix_spawnp(&pid, "modprobe", NULL, NULL, argv, environ);
	if (ret)
		return -ret;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/* The rules as "reserve add" lines, to add by hand when a reload failed */
static void module_rules_print(FILE *fp, const struct nl_list *rules)
{
	const struct rule_info *r = rules->v;
	size_t i;

	for (i = 0; i < rules->n; i++)
		fprintf(fp, "  gpuctl reserve add %s%s%s%s%s\n", r[i].match,
			r[i].driver[0] ? " driver " : "", r[i].driver,
			r[i].force ? " force" : "", r[i].take ? " take" : "");
}

/*
 * Adds the old module's rules to the new one, in their order, each with
 * its orphans. A match the new module has already (a modprobe.d option)
 * is left as it is; it has the old rule's id through rule_ids
 * (module_rule_ids()), and is handed the old rule's orphans.
 */
static int module_rules_restore(struct nl_ctx *nl,
				const struct nl_list *rules)
{
	const struct rule_info *r = rules->v, *have;
	struct nl_list now, added;
	struct rule_spec spec;
	size_t i, j;
	int ret = 0;

	reserve_list_init(&now);
	if (reserve_dump(nl, &now))
		return -EIO;
	have = now.v;
	for (i = 0; !ret && i < rules->n; i++) {
		for (j = 0; j < now.n; j++)
			if (!strcmp(have[j].match, r[i].match))
				break;
		if (j < now.n && (have[j].id != r[i].id || !r[i].norphans))
			continue;
		memset(&spec, 0, sizeof(spec));
		spec.id = r[i].id;
		snprintf(spec.match, sizeof(spec.match), "%s", r[i].match);
		snprintf(spec.driver, sizeof(spec.driver), "%s", r[i].driver);
		spec.force = r[i].force;
		spec.take = r[i].take;
		spec.orphans = r[i].orphans;
		spec.norphans = r[i].norphans;
		reserve_list_init(&added);
		ret = reserve_new(nl, &spec, &added);
		nl_list_free(&added);
	}
	nl_list_free(&now);
	return ret;
}

/*
 * Hands every allocation over to the next module; their devices stay
 * reserved, and open where a VM has them
 */
static int module_allocs_handover(struct nl_ctx *nl,
				  const struct nl_list *allocs)
{
	const struct alloc_info *al = allocs->v;
	size_t i;

	for (i = 0; i < allocs->n; i++)
		if (alloc_handover(nl, al[i].id))
			return -EIO;
	return 0;
}

/*
 * An allocation with detach-on-stop whose VM ran before the reload and
 * stopped during it: the new module never saw the close, so it ends it
 * here, as the old one would have.
 */
static void module_detached_end(struct nl_ctx *nl, const struct nl_list *before)
{
	const struct alloc_info *was = before->v, *is;
	struct nl_list now;
	size_t i, j;

	alloc_list_init(&now);
	if (alloc_dump(nl, &now))
		return;
	is = now.v;
	for (i = 0; i < before->n; i++) {
		if (!was[i].detach_on_stop ||
		    was[i].state != GPUCTL_ALLOC_STATE_RUNNING)
			continue;
		for (j = 0; j < now.n; j++)
			if (is[j].id == was[i].id)
				break;
		if (j == now.n || is[j].state != GPUCTL_ALLOC_STATE_IDLE)
			continue;
		if (!alloc_del(nl, was[i].id, NULL))
			fprintf(stderr, "gpuctl: allocation %u ended: %s\n",
				was[i].id,
				"its VM stopped during the reload (detach-on-stop)");
	}
	nl_list_free(&now);
}

static int module_reload(struct gpuctl *g, const char *ko)
{
	struct nl_list devs = {};
	struct module_id run, inst;
	struct nl_list allocs, rules;
	char *params = NULL;
	struct nl_ctx *nl;
	size_t size, len;
	int ret, err;

	if (module_running(&run)) {
		fprintf(stderr, "gpuctl: module reload: gpuctl is not loaded (modprobe gpuctl)\n");
		return EXIT_NO_MODULE;
	}
	if (module_installed(ko, &inst)) {
		fprintf(stderr, "gpuctl: module reload: %s: no gpuctl module to load\n",
			ko ? ko : "modinfo gpuctl");
		return EXIT_USAGE;
	}
	/* a file given is loaded in any case: a developer's rebuild */
	if (!ko && !module_differs(&run, &inst)) {
		fprintf(stderr,
			"gpuctl: module reload: gpuctl %s is loaded already; nothing to do\n",
			run.version);
		return EXIT_OK;
	}
	reserve_list_init(&rules);
	alloc_list_init(&allocs);
	ret = gpuctl_nl(g, &nl);
	if (!ret)
		ret = module_state(nl, &devs, &allocs);
	if (ret)
		goto out;
	if (module_blockers(&devs, &allocs, NULL)) {
		fprintf(stderr,
			"gpuctl: module reload deferred: the running module %s stays loaded, because:\n",
			run.version);
		module_blockers(&devs, &allocs, stderr);
		fprintf(stderr, "gpuctl: run \"gpuctl module reload\" again once they are gone\n");
		ret = EXIT_DEFERRED;
		goto out;
	}
	if (reserve_dump(nl, &rules)) {
		ret = EXIT_KERNEL;
		goto out;
	}
	if (mkdir(MODULE_LEDGER_DIR, 0700) && errno != EEXIST) {
		fprintf(stderr, "gpuctl: module reload: %s: %s\n",
			MODULE_LEDGER_DIR, strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	ret = alloc_save(g, MODULE_LEDGER);
	if (ret)
		goto out;
	if (module_allocs_handover(nl, &allocs)) {
		fprintf(stderr,
			"gpuctl: module reload: cannot hand the allocations over; restoring them from %s\n",
			MODULE_LEDGER);
		alloc_restore(g, MODULE_LEDGER);
		ret = EXIT_KERNEL;
		goto out;
	}
	/* read after the last allocation request to this module */
	size = 96 + rules.n * (GPUCTL_MATCH_LEN + 16);
	params = malloc(size);
	if (!params) {
		fprintf(stderr, "gpuctl: module reload: out of memory; restoring the ledger\n");
		alloc_restore(g, MODULE_LEDGER);
		ret = EXIT_KERNEL;
		goto out;
	}
	len = module_cursors(params, size);
	module_rule_ids(params + len, size - len, &rules);

	/* the socket pins nothing, but it would name the old family */
	nl_close(&g->nl);
	g->nl_ok = false;
	if (syscall(SYS_delete_module, "gpuctl", O_NONBLOCK)) {
		err = errno;
		fprintf(stderr,
			"gpuctl: module reload: cannot unload gpuctl %s: %s; restoring the ledger\n",
			run.version, strerror(err));
		if (err == EWOULDBLOCK || err == EBUSY)
			module_in_use_print();
		alloc_restore(g, MODULE_LEDGER);
		ret = EXIT_KERNEL;
		goto out;
	}
	err = module_load(ko, params);
	if (err) {
		fprintf(stderr,
			"gpuctl: module reload: cannot load %s: %s; no gpuctl is loaded now.\n",
			ko ? ko : "gpuctl", strerror(-err));
		fprintf(stderr,
			"gpuctl: the reserved devices stay unbound; load a module, then:\n");
		module_rules_print(stderr, &rules);
		fprintf(stderr, "  gpuctl alloc restore %s\n", MODULE_LEDGER);
		ret = EXIT_KERNEL;
		goto out;
	}
	ret = gpuctl_nl(g, &nl);
	if (!ret && module_rules_restore(nl, &rules)) {
		fprintf(stderr,
			"gpuctl: module reload: cannot add the rules again; add them, then restore the ledger:\n");
		module_rules_print(stderr, &rules);
		fprintf(stderr, "  gpuctl alloc restore %s\n", MODULE_LEDGER);
		ret = EXIT_KERNEL;
	}
	if (!ret)
		ret = alloc_restore(g, MODULE_LEDGER);
	if (ret)
		goto out;
	module_detached_end(nl, &allocs);
	unlink(MODULE_LEDGER);
	module_running(&run);
	fprintf(stderr, "gpuctl: module %s loaded: %zu rules and %zu allocations carried over\n",
		run.version, rules.n, allocs.n);
out:
	free(params);
	nl_list_free(&rules);
	nl_list_free(&devs);
	nl_list_free(&allocs);
	return ret;
}

static int cmd_module_reload(struct gpuctl *g, struct args *a)
{
	const char *ko = NULL;

	if (args_peek(a) && !strcmp(args_peek(a), "ko")) {
		args_next(a);
		ko = args_next(a);
		if (!ko) {
			fprintf(stderr, "gpuctl: module reload: ko needs a FILE\n");
			return EXIT_USAGE;
		}
	}
	if (!args_done(a, "module reload"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;
	return module_reload(g, ko);
}

static const struct cmd_entry module_cmds[] = {
	{ .name = "show", .fn = cmd_module_show },
	{ .name = "reload", .fn = cmd_module_reload, .usage = "[ ko FILE ]" },
};

const struct object module_object = {
	.name = "module",
	.desc = "the loaded and the installed module's versions, and reloading it",
	.cmds = module_cmds,
	.ncmds = ARRAY_SIZE(module_cmds),
	.dflt = "show",
};
