// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl apply: load the rules of /etc/gpuctl/gpuctl.conf into the module,
 * give its PFs the VF counts it declares, its vendor VFs their types
 * (apply_vf.c) and make the vGPUs it declares, in that order (a PF's VFs
 * may be mdev parents), as gpuctl.service does at boot, or turn its rules
 * into the modprobe.d line that the initramfs hook installs. Either the
 * whole file applies or nothing changes, and applying it twice changes
 * nothing the second time.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "json_print.h"
#include "vgpu_vf.h"

#define APPLY_CONF_DEFAULT "/etc/gpuctl/gpuctl.conf"
/*
 * Held while one run changes things: at boot, gpuctl.service and the runs
 * of the udev rule (a VF bound, an mdev parent registered) overlap, and
 * two runs making the same vGPU or typing the same VF would each see it
 * missing, and the loser would fail and roll back.
 */
#define APPLY_LOCK "/run/gpuctl-apply.lock"

enum apply_mode {
	APPLY_KERNEL,
	APPLY_CHECK,
	APPLY_MODPROBE,
};

static const struct {
	const char *word;
	enum apply_mode mode;
} apply_modes[] = {
	{ "check", APPLY_CHECK },
	{ "modprobe", APPLY_MODPROBE },
};

static bool apply_mode_word(const char *arg, enum apply_mode *mode)
{
	size_t i;

	for (i = 0; arg && i < ARRAY_SIZE(apply_modes); i++) {
		if (!strcmp(arg, apply_modes[i].word)) {
			*mode = apply_modes[i].mode;
			return true;
		}
	}
	return false;
}

static const struct rule_info *rule_find(const struct nl_list *list,
					 const char *match)
{
	const struct rule_info *v = list->v;
	size_t i;

	for (i = 0; i < list->n; i++)
		if (!strcmp(v[i].match, match))
			return &v[i];
	return NULL;
}

/*
 * A rule the kernel has already is kept as it is, unless it binds to
 * another driver or differs in force: then the file and the host
 * disagree about where devices belong, and only the operator can say
 * which is right. "take" acts once, when a rule is added, so it is not
 * compared.
 */
static int apply_conflicts(const char *file, const struct rule_set *set,
			   const struct nl_list *have)
{
	const struct rule_info *k;
	const struct rule_spec *r;
	int ret = 0;
	size_t i;

	for (i = 0; i < set->n; i++) {
		r = &set->v[i];
		k = rule_find(have, r->match);
		if (!k || (!strcmp(k->driver, rule_driver(r)) &&
			   k->force == r->force))
			continue;
		fprintf(stderr,
			"%s:%u: the kernel's rule %u for %s has driver %s%s, not driver %s%s (gpuctl reserve del %u first)\n",
			file, r->line, k->id, k->match, k->driver,
			k->force ? " force" : "", rule_driver(r),
			r->force ? " force" : "", k->id);
		ret = -EEXIST;
	}
	return ret;
}

/* Delete what this run added, newest first; say so for what stays */
static int apply_rollback(struct nl_ctx *nl, const struct nl_list *added)
{
	const struct rule_info *v = added->v;
	int ret = 0;
	size_t i;

	for (i = added->n; i-- > 0;) {
		if (!reserve_del(nl, v[i].id, NULL))
			continue;
		fprintf(stderr, "gpuctl: apply: cannot roll back rule %u for %s\n",
			v[i].id, v[i].match);
		ret = -EIO;
	}
	return ret;
}

/* A VF count this run changed: to print, and to undo on failure */
struct vfs_done {
	const struct vfs_spec *spec;
	u16 was;
};

/*
 * @addr from @from VFs to @to. A PF that has VFs goes to 0 first, as the
 * kernel wants; when the second step fails, the PF gets @from back.
 */
static int vfs_change(struct nl_ctx *nl, const char *addr, u16 from, u16 to)
{
	int ret;

	if (from && to) {
		ret = dev_set_numvfs(nl, addr, 0);
		if (ret)
			return ret;
	}
	ret = dev_set_numvfs(nl, addr, to);
	if (ret && from && to && dev_set_numvfs(nl, addr, from))
		fprintf(stderr, "gpuctl: apply: cannot give %s its %u VFs back\n",
			addr, from);
	return ret;
}

/* Undo what apply_vfs() changed, last first */
static void vfs_rollback(struct nl_ctx *nl, const struct vfs_done *done,
			 size_t n)
{
	while (n-- > 0) {
		if (!vfs_change(nl, done[n].spec->address,
				done[n].spec->numvfs, done[n].was))
			continue;
		fprintf(stderr, "gpuctl: apply: cannot roll back %s to %u VFs\n",
			done[n].spec->address, done[n].was);
	}
}

/*
 * The file's VF counts, in file order, after its rules: a rule may be
 * what makes a PF tracked. Those already right are left alone. Return:
 * NULL, or the line that failed; *@n_done tells what changed before it.
 */
static const struct vfs_spec *apply_vfs(struct nl_ctx *nl,
					const struct conf *conf,
					struct vfs_done *done, size_t *n_done)
{
	const struct vfs_spec *v;
	struct dev_info d;
	size_t i;

	*n_done = 0;
	for (i = 0; i < conf->n_vfs; i++) {
		v = &conf->vfs[i];
		if (dev_get(nl, v->address, &d))
			return v;
		if (d.sriov_numvfs == v->numvfs)
			continue;
		if (vfs_change(nl, v->address, d.sriov_numvfs, v->numvfs))
			return v;
		done[*n_done].spec = v;
		done[(*n_done)++].was = d.sriov_numvfs;
	}
	return NULL;
}

/* Remove the instances this run made, last first */
static void vgpus_rollback(const struct vgpu_spec *const *made, size_t n)
{
	int ret;

	while (n-- > 0) {
		ret = mdev_remove(made[n]->uuid);
		if (ret)
			fprintf(stderr, "gpuctl: apply: cannot remove mdev %s: %s\n",
				made[n]->uuid, strerror(-ret));
	}
}

/*
 * The file's vGPUs, in file order, after the VF counts. One that exists
 * with the declared type and parent is left alone; one that exists as
 * something else is an error, not replaced: a VM may use it. One whose
 * parent has not registered yet is skipped, said on stderr: its driver
 * may load later, and the udev rule applies the file again then (a boot
 * must not lose its reservations to a late driver). Return: NULL, or the
 * line that failed; *@n_made tells what was made before it.
 */
static const struct vgpu_spec *apply_vgpus(struct nl_ctx *nl,
					   const char *file,
					   const struct conf *conf,
					   const struct vgpu_spec **made,
					   size_t *n_made)
{
	char type[MDEV_TYPE_BUFSZ], parent[MDEV_PARENT_BUFSZ];
	const struct vgpu_spec *v;
	struct nl_list list;
	size_t i;
	int ret;

	*n_made = 0;
	for (i = 0; i < conf->n_vgpus; i++) {
		v = &conf->vgpus[i];
		ret = mdev_identity(v->uuid, type, parent, sizeof(type));
		if (!ret && (strcmp(type, v->type) || strcmp(parent, v->parent))) {
			fprintf(stderr,
				"gpuctl: apply: mdev %s exists as type %s on %s\n",
				v->uuid, type, parent);
			return v;
		}
		if (!ret)
			continue;
		if (ret != -ENOENT) {
			fprintf(stderr, "gpuctl: apply: cannot read mdev %s: %s\n",
				v->uuid, strerror(-ret));
			return v;
		}
		/* the udev rule applies the file again when the parent comes */
		if (!mdev_parent_exists(v->parent)) {
			fprintf(stderr,
				"%s:%u: mdev parent %s is not there yet; vgpu %s is made when it registers\n",
				file, v->line, v->parent, v->uuid);
			continue;
		}
		ret = vgpu_make(nl, v, "apply", &list);
		nl_list_free(&list);
		if (ret)
			return v;
		made[(*n_made)++] = v;
	}
	return NULL;
}

/*
 * What this run changed:
 * {"rules":[...],"vfs":[...],"vf_types":[...],"vgpus":[...]}
 */
static void apply_print(const struct nl_list *added,
			const struct vfs_done *done, size_t n,
			const struct vf_type_spec *const *set, size_t n_set,
			const struct vgpu_spec *const *made, size_t n_made)
{
	size_t i;

	new_json_obj();
	reserve_rules_print(added, RULE_FORM_ADDED);
	open_json_array(PRINT_JSON, "vfs");
	for (i = 0; i < n; i++) {
		open_json_object(NULL);
		print_string(PRINT_ANY, "address", "dev %s ",
			     done[i].spec->address);
		print_uint(PRINT_ANY, "numvfs", "numvfs %u ",
			   done[i].spec->numvfs);
		print_uint(PRINT_ANY, "was", "(was %u)", done[i].was);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	apply_vf_types_print(set, n_set);
	open_json_array(PRINT_JSON, "vgpus");
	for (i = 0; i < n_made; i++) {
		open_json_object(NULL);
		print_string(PRINT_ANY, "uuid", "vgpu %s ", made[i]->uuid);
		print_string(PRINT_ANY, "type", "type %s ", made[i]->type);
		print_string(PRINT_ANY, "parent", "parent %s", made[i]->parent);
		close_json_object();
		print_nl();
	}
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
}

static int apply_kernel(struct gpuctl *g, const char *file,
			const struct conf *conf)
{
	const struct rule_set *set = &conf->rules;
	const struct vgpu_spec **made = NULL, *failed_vgpu;
	const struct vf_type_spec **typed = NULL, *failed_type;
	const struct vfs_spec *failed;
	struct vfs_done *done = NULL;
	struct nl_list have, added;
	const struct rule_spec *r;
	struct nl_ctx *nl;
	size_t i, n_done, n_made, n_set;
	int ret;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	reserve_list_init(&have);
	reserve_list_init(&added);
	done = calloc(conf->n_vfs ? conf->n_vfs : 1, sizeof(*done));
	made = calloc(conf->n_vgpus ? conf->n_vgpus : 1, sizeof(*made));
	typed = calloc(conf->n_vf_types ? conf->n_vf_types : 1,
		       sizeof(*typed));
	if (!done || !made || !typed) {
		fprintf(stderr, "gpuctl: out of memory\n");
		ret = EXIT_KERNEL;
		goto out;
	}
	if (reserve_dump(nl, &have)) {
		fprintf(stderr, "gpuctl: apply: cannot read the kernel's rules\n");
		ret = EXIT_KERNEL;
		goto out;
	}
	if (apply_conflicts(file, set, &have)) {
		ret = EXIT_USAGE;
		goto out;
	}

	for (i = 0; i < set->n; i++) {
		r = &set->v[i];
		if (rule_find(&have, r->match))
			continue;
		if (reserve_new(nl, r, &added)) {
			fprintf(stderr, "%s:%u: cannot add rule %s%s\n", file,
				r->line, r->match,
				added.n ? ", rolling back" : "");
			apply_rollback(nl, &added);
			ret = EXIT_KERNEL;
			goto out;
		}
	}
	failed = apply_vfs(nl, conf, done, &n_done);
	if (failed) {
		fprintf(stderr, "%s:%u: cannot set %u VFs on %s%s\n", file,
			failed->line, failed->numvfs, failed->address,
			added.n || n_done ? ", rolling back" : "");
		vfs_rollback(nl, done, n_done);
		apply_rollback(nl, &added);
		ret = EXIT_KERNEL;
		goto out;
	}
	failed_type = apply_vf_types(nl, file, conf, typed, &n_set);
	if (failed_type) {
		fprintf(stderr, "%s:%u: cannot give %s type %u%s\n", file,
			failed_type->line, failed_type->address,
			failed_type->type,
			added.n || n_done || n_set ? ", rolling back" : "");
		apply_vf_types_rollback(typed, n_set);
		vfs_rollback(nl, done, n_done);
		apply_rollback(nl, &added);
		ret = EXIT_KERNEL;
		goto out;
	}
	failed_vgpu = apply_vgpus(nl, file, conf, made, &n_made);
	if (failed_vgpu) {
		fprintf(stderr, "%s:%u: cannot make vgpu %s%s\n", file,
			failed_vgpu->line, failed_vgpu->uuid,
			added.n || n_done || n_set || n_made ?
			", rolling back" : "");
		vgpus_rollback(made, n_made);
		apply_vf_types_rollback(typed, n_set);
		vfs_rollback(nl, done, n_done);
		apply_rollback(nl, &added);
		ret = EXIT_KERNEL;
		goto out;
	}
	apply_print(&added, done, n_done, typed, n_set, made, n_made);
out:
	free(typed);
	free(made);
	free(done);
	nl_list_free(&added);
	nl_list_free(&have);
	return ret;
}

/*
 * One run at a time; Return: the lock's fd, or -1 when there is no /run
 * to hold it in (a run then goes unserialized, as it did before).
 */
static int apply_lock(void)
{
	int fd = open(APPLY_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

/**
 * cmd_apply() - gpuctl apply [ FILE ] [ check | modprobe ]
 * @g: the tool's state
 * @a: the words after "apply"
 *
 * The whole file is parsed before anything else happens. "check" stops
 * there, "modprobe" prints the rules in the module parameter's grammar;
 * neither needs the module.
 *
 * Return: the exit code.
 */
static int cmd_apply(struct gpuctl *g, struct args *a)
{
	enum apply_mode mode = APPLY_KERNEL;
	const char *file = APPLY_CONF_DEFAULT;
	struct conf conf;
	FILE *fp;
	int ret;

	if (args_is(a, "help")) {
		object_help(stdout, &apply_object);
		return EXIT_OK;
	}
	/* FILE comes first; a file named like a mode is given as ./check */
	if (!args_end(a) && !apply_mode_word(args_peek(a), &mode))
		file = args_next(a);
	if (apply_mode_word(args_peek(a), &mode))
		args_next(a);
	if (!args_done(a, "apply"))
		return EXIT_USAGE;
	if (g->dry_run)
		return EXIT_OK;

	fp = fopen(file, "r");
	if (!fp) {
		fprintf(stderr, "gpuctl: %s: %s\n", file, strerror(errno));
		return EXIT_USAGE;
	}
	ret = conf_file_parse(fp, file, &conf);
	fclose(fp);
	if (ret)
		return EXIT_USAGE;

	switch (mode) {
	case APPLY_CHECK:
		ret = EXIT_OK;
		break;
	case APPLY_MODPROBE:
		/* the initramfs hook must not install half a line */
		rule_modprobe_print(stdout, &conf.rules);
		ret = EXIT_OK;
		if (fflush(stdout) || ferror(stdout)) {
			perror("gpuctl: apply: write");
			ret = EXIT_USAGE;
		}
		break;
	default: {
		int lock = apply_lock();

		/* each run reads the state afresh once it holds the lock */
		ret = apply_kernel(g, file, &conf);
		if (lock >= 0)
			close(lock);
	}
	}
	conf_free(&conf);
	return ret;
}

const struct object apply_object = {
	.name = "apply",
	.desc = "load the rules of a config file, or check it",
	.run = cmd_apply,
	.usage = "[ FILE ] [ check | modprobe ]",
	.notes = "where  FILE := a config file, by default " APPLY_CONF_DEFAULT "\n"
		 "       check: only parse FILE\n"
		 "       modprobe: print FILE's rules as a modprobe.d options line\n",
};
