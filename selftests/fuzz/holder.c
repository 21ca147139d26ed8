// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * A VFIO user for the second half of the run: vfio_open (selftests/bin)
 * holds one allocated GPU open, the way a VM's QEMU would. Requests then
 * meet a device that is in use (alloc-del, rule-del and "take" are
 * refused with EBUSY), the allocation is running, and dev-get replies
 * carry the holder attributes the unprivileged probe must not see.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

static const char *const fz_vfio_drivers[] = { "vfio-pci", "gpuctl-vfio-pci" };

static bool fz_holder_fit(const struct fz_dev *d)
{
	unsigned int i;

	if (!d->has_alloc || d->role != fz_k.role_gpu)
		return false;
	for (i = 0; i < ARRAY_SIZE(fz_vfio_drivers); i++) {
		if (!strcmp(d->driver, fz_vfio_drivers[i]))
			return true;
	}
	return false;
}

/* The pid of a vfio_open holding an allocated GPU open, or -1. */
int fz_holder_start(struct fz_ctx *c, char *addr, size_t len)
{
	struct pollfd pfd = { .events = POLLIN };
	char line[128] = "";
	int fds[2], i;
	ssize_t n;
	pid_t pid;

	for (i = 0; i < c->n_devs && !fz_holder_fit(&c->devs[i]); i++)
		;
	if (i == c->n_devs || pipe(fds))
		return -1;
	snprintf(addr, len, "%s", c->devs[i].addr);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		execlp("vfio_open", "vfio_open", addr, "3600", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pfd.fd = fds[0];
	/* "open ADDR group N pid P" once it holds the device. */
	if (pid > 0 && poll(&pfd, 1, 30000) == 1) {
		n = read(fds[0], line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = '\0';
	}
	close(fds[0]);
	if (pid > 0 && !strncmp(line, "open ", 5))
		return pid;
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

void fz_holder_stop(int pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}
