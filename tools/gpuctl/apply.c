// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl apply: load the rules of /etc/gpuctl/gpuctl.conf into the module,
 * as gpuctl.service does at boot, or turn them into the modprobe.d line
 * that the initramfs hook installs. Either the whole file applies or
 * nothing changes, and applying it twice changes nothing the second time.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"

#define APPLY_CONF_DEFAULT "/etc/gpuctl/gpuctl.conf"

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

static void apply_help(FILE *fp)
{
	fprintf(fp,
		"Usage: gpuctl apply [ FILE ] [ check | modprobe ]\n"
		"       gpuctl apply help\n"
		"where  FILE := a config file, by default " APPLY_CONF_DEFAULT "\n"
		"       check: only parse FILE\n"
		"       modprobe: print FILE's rules as a modprobe.d options line\n");
}

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

static int apply_rules(struct gpuctl *g, const char *file,
		       const struct rule_set *set)
{
	struct nl_list have, added;
	const struct rule_spec *r;
	struct nl_ctx *nl;
	size_t i;
	int ret;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	reserve_list_init(&have);
	reserve_list_init(&added);
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
	reserve_list_print(&added, RULE_FORM_ADDED);
out:
	nl_list_free(&added);
	nl_list_free(&have);
	return ret;
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
int cmd_apply(struct gpuctl *g, struct args *a)
{
	enum apply_mode mode = APPLY_KERNEL;
	const char *file = APPLY_CONF_DEFAULT;
	struct rule_set set;
	FILE *fp;
	int ret;

	if (args_is(a, "help")) {
		apply_help(stdout);
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
	ret = rule_file_parse(fp, file, &set);
	fclose(fp);
	if (ret)
		return EXIT_USAGE;

	switch (mode) {
	case APPLY_CHECK:
		ret = EXIT_OK;
		break;
	case APPLY_MODPROBE:
		/* the initramfs hook must not install half a line */
		rule_modprobe_print(stdout, &set);
		ret = EXIT_OK;
		if (fflush(stdout) || ferror(stdout)) {
			perror("gpuctl: apply: write");
			ret = EXIT_USAGE;
		}
		break;
	default:
		ret = apply_rules(g, file, &set);
	}
	rule_set_free(&set);
	return ret;
}
