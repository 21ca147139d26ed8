// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * gpuctl_run() with what it prints captured: shared by test-cmdline and
 * test-grammar, which both run command lines without a kernel.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuctl.h"
#include "test-cmdline.h"

/* Everything written to @fp, which is closed */
static char *slurp(FILE *fp)
{
	char *buf;
	long len;

	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = calloc(1, len + 1);
	if (buf && fread(buf, 1, len, fp) != (size_t)len)
		buf[0] = '\0';
	fclose(fp);
	return buf;
}

/**
 * capture_start() - send stdout and stderr to temporary files
 * @c: the state to give capture_end()
 */
void capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->fout = tmpfile();
	c->ferr = tmpfile();
	c->out = dup(STDOUT_FILENO);
	c->err = dup(STDERR_FILENO);
	dup2(fileno(c->fout), STDOUT_FILENO);
	dup2(fileno(c->ferr), STDERR_FILENO);
}

/**
 * capture_end() - restore stdout and stderr
 * @c: from capture_start()
 * @out: what went to stdout, to be freed
 * @err: what went to stderr, to be freed
 */
void capture_end(struct capture *c, char **out, char **err)
{
	fflush(stdout);
	fflush(stderr);
	dup2(c->out, STDOUT_FILENO);
	dup2(c->err, STDERR_FILENO);
	close(c->out);
	close(c->err);
	*out = slurp(c->fout);
	*err = slurp(c->ferr);
}

/**
 * run_args() - run one command line and keep what it printed
 * @args: the words after "gpuctl", separated by single spaces
 * @dry_run: stop before the kernel, as gpuctl_run() does
 * @out: stdout, to be freed
 * @err: stderr, to be freed
 *
 * Return: the exit code.
 */
int run_args(const char *args, bool dry_run, char **out, char **err)
{
	char *argv[32], *copy, *tok, *save = NULL;
	struct capture c;
	int argc = 0, rc;

	copy = strdup(args);
	argv[argc++] = "gpuctl";
	for (tok = strtok_r(copy, " ", &save); tok && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;

	capture_start(&c);
	rc = gpuctl_run(argc, argv, dry_run);
	capture_end(&c, out, err);
	free(copy);
	return rc;
}
