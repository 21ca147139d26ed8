// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * gpuctl alloc save and restore: the whole ledger, allocations with their
 * ids and tenant limits, written as the tool's own commands, so that a
 * module upgrade (unload, load) keeps it. Restore reads the whole file
 * before it changes anything, and undoes what it did when the kernel
 * refuses a line: either the whole file applies or nothing changes.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"

/* What an allocation's line holds at most, with every label quoted */
#define LEDGER_BUFSZ LEDGER_LINE_MAX

/*
 * The request that makes @al again: its GPUs by address (the kernel
 * adds their companions), its labels, options and id. A lost allocation
 * has a device the host no longer has, so it cannot be made again.
 */
static int alloc_to_spec(const struct alloc_info *al,
			 const struct nl_list *devs, struct alloc_spec *s)
{
	const struct dev_info *d;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (al->state == GPUCTL_ALLOC_STATE_LOST)
		return -ENODEV;
	s->has_id = true;
	s->id = al->id;
	snprintf(s->owner, sizeof(s->owner), "%s", al->owner);
	snprintf(s->name, sizeof(s->name), "%s", al->name);
	memcpy(s->labels, al->labels, sizeof(s->labels));
	for (i = 0; i < al->ndevs; i++) {
		d = dev_find(devs, al->devs[i]);
		if (!d)
			return -ENODEV;
		if (d->role != GPUCTL_DEV_ROLE_GPU)
			continue;
		if (s->ndevs == ALLOC_DEVS_MAX)
			return -E2BIG;
		/* a vendor VF it typed: restored, it is still its to clear */
		s->dev_typed[s->ndevs] = alloc_typed(al, d->address);
		snprintf(s->devs[s->ndevs++], ADDR_BUFSZ, "%s", d->address);
	}
	/* vGPUs by UUID, the made ones marked, to be named again */
	for (i = 0; i < al->nvgpus; i++) {
		if (s->nvgpus == ALLOC_DEVS_MAX)
			return -E2BIG;
		s->vgpus[s->nvgpus++] = al->vgpus[i];
	}
	if (!s->ndevs && !s->nvgpus)
		return -ENODEV;
	s->detach_on_stop = al->detach_on_stop;
	s->has_uid = al->has_uid;
	s->uid = al->uid;
	s->has_gid = al->has_gid;
	s->gid = al->gid;
	return 0;
}

/**
 * ledger_write() - write the ledger as "alloc save" does
 * @fp: where to
 * @allocs: the allocations, from alloc_dump()
 * @devs: every device, to tell GPUs from companions
 * @limits: the limits, from limit_dump()
 *
 * An allocation that cannot be made again (lost, or a label no line can
 * hold) is left out, said on stderr and in a comment.
 */
void ledger_write(FILE *fp, const struct nl_list *allocs,
		  const struct nl_list *devs, const struct nl_list *limits)
{
	const struct alloc_info *al = allocs->v;
	const struct limit_info *li = limits->v;
	char line[LEDGER_BUFSZ];
	struct alloc_spec s;
	struct limit_spec l;
	size_t i;

	fprintf(fp, "# gpuctl ledger: load with \"gpuctl alloc restore FILE\"\n");
	for (i = 0; i < allocs->n; i++) {
		if (alloc_to_spec(&al[i], devs, &s) ||
		    alloc_spec_format(&s, line, sizeof(line))) {
			/* said on stderr, and kept in the file for people */
			if (al[i].state == GPUCTL_ALLOC_STATE_LOST)
				fprintf(stderr,
					"gpuctl: alloc save: allocation %u is lost (%s), not saved\n",
					al[i].id, al[i].state_reason);
			else
				fprintf(stderr,
					"gpuctl: alloc save: allocation %u cannot be written as a line, not saved\n",
					al[i].id);
			fprintf(fp, "# allocation %u of %s is not restorable\n",
				al[i].id, al[i].owner);
			continue;
		}
		fprintf(fp, "%s\n", line);
	}
	/* after the allocations: a limit lowered below use must not stop them */
	for (i = 0; i < limits->n; i++) {
		if (!li[i].has_max)
			continue;
		l = (struct limit_spec){ .scope = li[i].scope, .has_max = true,
					 .max = li[i].max };
		snprintf(l.name, sizeof(l.name), "%s", li[i].name);
		if (limit_spec_format(&l, line, sizeof(line))) {
			fprintf(stderr,
				"gpuctl: alloc save: the limit of %s %s is not restorable\n",
				limit_scope_name(l.scope), l.name);
			continue;
		}
		fprintf(fp, "%s\n", line);
	}
}

/*
 * FILE is replaced only once the new ledger is written in full, so a
 * failed save never leaves a cut ledger where a good one was.
 */
static FILE *ledger_create(const char *file, char **tmp)
{
	FILE *fp;
	int fd;

	*tmp = NULL;
	if (!strcmp(file, "-"))
		return stdout;
	*tmp = malloc(strlen(file) + sizeof(".XXXXXX"));
	if (!*tmp)
		return NULL;
	sprintf(*tmp, "%s.XXXXXX", file);
	fd = mkstemp(*tmp);
	if (fd < 0) {
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	fp = fdopen(fd, "w");
	if (!fp) {
		close(fd);
		unlink(*tmp);
	}
	return fp;
}

static int ledger_commit(FILE *fp, const char *file, char *tmp)
{
	int ret = 0;

	if (fflush(fp) || ferror(fp) || (tmp && fsync(fileno(fp))))
		ret = -errno ?: -EIO;
	if (tmp) {
		if (fclose(fp) && !ret)
			ret = -errno;
		if (!ret && rename(tmp, file))
			ret = -errno;
		if (ret)
			unlink(tmp);
		free(tmp);
	}
	if (ret)
		fprintf(stderr, "gpuctl: alloc save: %s: %s\n", file,
			strerror(-ret));
	return ret;
}

/**
 * alloc_save() - gpuctl alloc save FILE: write the ledger
 * @g: the tool's state
 * @file: where to, "-" for stdout
 *
 * Return: the exit code.
 */
int alloc_save(struct gpuctl *g, const char *file)
{
	struct nl_list devs = {}, allocs, limits;
	struct nl_ctx *nl;
	char *tmp;
	FILE *fp;
	int ret;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		return ret;
	alloc_list_init(&allocs);
	limit_list_init(&limits);
	if (alloc_dump(nl, &allocs) || limit_dump(nl, &limits) ||
	    dev_dump(nl, &devs)) {
		fprintf(stderr, "gpuctl: alloc save: cannot read the ledger\n");
		ret = EXIT_KERNEL;
		goto out;
	}
	fp = ledger_create(file, &tmp);
	if (!fp) {
		fprintf(stderr, "gpuctl: alloc save: %s: %s\n", file,
			strerror(errno));
		ret = EXIT_USAGE;
		goto out;
	}
	ledger_write(fp, &allocs, &devs, &limits);
	if (ledger_commit(fp, file, tmp))
		ret = EXIT_USAGE;
out:
	nl_list_free(&devs);
	nl_list_free(&limits);
	nl_list_free(&allocs);
	return ret;
}

static const struct limit_info *limit_find(const struct nl_list *limits,
					   const struct limit_spec *l)
{
	const struct limit_info *v = limits->v;
	size_t i;

	for (i = 0; i < limits->n; i++)
		if (v[i].scope == l->scope && !strcmp(v[i].name, l->name))
			return &v[i];
	return NULL;
}

/*
 * Undo a restore that failed half-way, newest first: the limits it set
 * go back to what @before had (or away), then the allocations it made
 * end. Whatever cannot be undone is named.
 */
static void ledger_rollback(struct nl_ctx *nl, const struct ledger *ledger,
			    size_t nlimits, const struct nl_list *before,
			    const struct nl_list *added)
{
	const struct alloc_info *al = added->v;
	const struct limit_info *old;
	struct nl_list ignored;
	struct limit_spec l;
	size_t i;

	for (i = nlimits; i-- > 0;) {
		l = ledger->limits[i];
		old = limit_find(before, &l);
		l.has_max = old && old->has_max;
		l.max = old ? old->max : 0;
		limit_list_init(&ignored);
		/* a limit that was not there before is removed */
		if (limit_set(nl, &l, &ignored))
			fprintf(stderr,
				"gpuctl: alloc restore: cannot roll back the limit of %s %s\n",
				limit_scope_name(l.scope), l.name);
		nl_list_free(&ignored);
	}
	for (i = added->n; i-- > 0;)
		if (alloc_del(nl, al[i].id, NULL))
			fprintf(stderr,
				"gpuctl: alloc restore: cannot roll back allocation %u\n",
				al[i].id);
}

static int ledger_apply(struct nl_ctx *nl, const char *name,
			const struct ledger *ledger, struct nl_list *added)
{
	const struct alloc_spec *s;
	const struct limit_spec *l;
	struct nl_list before, reply;
	size_t i, n = 0;
	int ret = 0;

	limit_list_init(&before);
	if (limit_dump(nl, &before)) {
		fprintf(stderr, "gpuctl: alloc restore: cannot read the limits\n");
		nl_list_free(&before);
		return -EIO;
	}
	for (i = 0; i < ledger->nallocs && !ret; i++) {
		s = &ledger->allocs[i];
		ret = alloc_new(nl, s, added);
		if (ret)
			fprintf(stderr, "%s:%u: cannot restore the allocation of %s%s\n",
				name, s->line, s->owner,
				added->n ? ", rolling back" : "");
	}
	/* limits after allocations, so a limit below use stops nothing */
	for (; n < ledger->nlimits && !ret; n++) {
		l = &ledger->limits[n];
		limit_list_init(&reply);
		ret = limit_set(nl, l, &reply);
		nl_list_free(&reply);
		if (ret)
			fprintf(stderr, "%s:%u: cannot set the limit of %s %s%s\n",
				name, l->line, limit_scope_name(l->scope),
				l->name, added->n || n ? ", rolling back" : "");
	}
	/* the limit that failed changed nothing; those before it did */
	if (ret)
		ledger_rollback(nl, ledger, n ? n - 1 : 0, &before, added);
	nl_list_free(&before);
	return ret;
}

/**
 * alloc_restore() - gpuctl alloc restore FILE: load a saved ledger
 * @g: the tool's state
 * @file: a ledger from "alloc save", "-" for stdin
 *
 * The whole file is parsed first; every error is "FILE:LINE: ...". Then
 * allocations are made in file order, with their ids, and limits are set
 * after them. When the kernel refuses one, what this run did is undone.
 *
 * Return: the exit code.
 */
int alloc_restore(struct gpuctl *g, const char *file)
{
	const char *name = strcmp(file, "-") ? file : "<stdin>";
	struct ledger ledger;
	struct nl_list added;
	struct nl_ctx *nl;
	FILE *fp;
	int ret;

	fp = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!fp) {
		fprintf(stderr, "gpuctl: %s: %s\n", file, strerror(errno));
		return EXIT_USAGE;
	}
	ret = ledger_file_parse(fp, name, &ledger);
	if (fp != stdin)
		fclose(fp);
	if (ret)
		return EXIT_USAGE;

	ret = gpuctl_nl(g, &nl);
	if (ret)
		goto out;
	alloc_list_init(&added);
	if (ledger_apply(nl, name, &ledger, &added)) {
		ret = EXIT_KERNEL;
	} else {
		alloc_list_print(&added);
		ret = EXIT_OK;
	}
	nl_list_free(&added);
out:
	ledger_free(&ledger);
	return ret;
}
