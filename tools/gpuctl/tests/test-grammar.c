// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The grammar gpuctl's parser accepts, printed from its own tables: one
 * line per object, its name and then its commands ("dev show set").
 * tests/check-grammar.sh holds the help, the man page and the bash
 * completion to it, so that none of them has to be trusted for the list.
 *
 * The tables are the grammar only while the parser dispatches on them, so
 * each word goes through gpuctl_run(), without a kernel, before it is
 * printed: the parser must take every object and command the tables name
 * and refuse a word they do not. When it does not, this says so on stderr
 * and exits 1.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuctl.h"
#include "test-cmdline.h"

/* A word no object or command will ever be called */
#define NO_SUCH_WORD "no-such-word"

/*
 * Whether the parser refused @args for its word @word: the "unknown
 * object", "unknown command" and "unknown format" messages all quote it.
 * Any other complaint (a missing argument) means the word was taken.
 */
static bool refused(const char *args, const char *word)
{
	char quoted[64], *out, *err;
	bool ret;

	snprintf(quoted, sizeof(quoted), "\"%s\"", word);
	run_args(args, true, &out, &err);
	ret = strstr(err, ": unknown ") && strstr(err, quoted);
	free(out);
	free(err);
	return ret;
}

/* "OBJECT help" prints its help and nothing else */
static bool object_accepted(const struct object *o)
{
	char args[64], *out, *err;
	bool ok;
	int rc;

	snprintf(args, sizeof(args), "%s help", o->name);
	rc = run_args(args, true, &out, &err);
	ok = rc == EXIT_OK && !err[0] && !strncmp(out, "Usage: ", 7);
	free(out);
	free(err);
	return ok;
}

static bool command_accepted(const struct object *o, const char *cmd)
{
	char args[64];

	snprintf(args, sizeof(args), "%s %s", o->name, cmd);
	return !refused(args, cmd);
}

/* Checks one object against the parser; says what is wrong on stderr */
static bool object_checked(const struct object *o)
{
	char args[64];
	bool ok = true;
	size_t i;

	/* cmd_dispatch() runs it for "gpuctl OBJECT" alone */
	if (!o->run && (!o->dflt || !cmd_find(o, o->dflt))) {
		fprintf(stderr, "test-grammar: %s has no default command\n",
			o->name);
		return false;
	}
	if (!object_accepted(o)) {
		fprintf(stderr, "test-grammar: \"gpuctl %s help\" fails\n",
			o->name);
		ok = false;
	}
	for (i = 0; i < o->ncmds; i++) {
		if (command_accepted(o, o->cmds[i].name))
			continue;
		fprintf(stderr, "test-grammar: the parser refuses \"%s %s\"\n",
			o->name, o->cmds[i].name);
		ok = false;
	}
	/* an object with commands takes no other word in their place */
	snprintf(args, sizeof(args), "%s " NO_SUCH_WORD, o->name);
	if (o->ncmds && !refused(args, NO_SUCH_WORD)) {
		fprintf(stderr,
			"test-grammar: \"%s\" does not dispatch on its table\n",
			o->name);
		ok = false;
	}
	return ok;
}

int main(void)
{
	bool ok = refused(NO_SUCH_WORD, NO_SUCH_WORD);
	size_t i, j;

	if (!ok)
		fprintf(stderr,
			"test-grammar: objects are not dispatched on the table\n");
	for (i = 0; i < gpuctl_nobjects; i++) {
		const struct object *o = gpuctl_objects[i];

		if (!object_checked(o)) {
			ok = false;
			continue;
		}
		printf("%s", o->name);
		for (j = 0; j < o->ncmds; j++)
			printf(" %s", o->cmds[j].name);
		printf("\n");
	}
	return ok ? 0 : 1;
}
