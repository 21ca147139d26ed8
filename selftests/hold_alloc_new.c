// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * hold_alloc_new.so: an LD_PRELOAD shim that holds a process's first
 * GPUCTL_CMD_ALLOC_NEW request before it is sent, so that a test can
 * change the ledger between what the tool saw and what it asks for: the
 * window in which two requests race, made as wide as the test needs.
 *
 * With GPUCTL_HOLD=PATH in the environment, the shim creates PATH.held
 * when it holds the request and sends it once PATH.go exists, or after a
 * minute, so that a test that fails cannot leave the tool hanging.
 * Without GPUCTL_HOLD it only passes sendto() through.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/gpuctl.h>
#include <linux/netlink.h>

#define HOLD_POLL_NS	(10 * 1000 * 1000)
#define HOLD_MAX_POLLS	6000

static bool is_alloc_new(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *genl;

	if (len < NLMSG_HDRLEN + GENL_HDRLEN)
		return false;
	genl = NLMSG_DATA(nlh);
	/* only genl's controller and gpuctl are spoken to: not the former */
	return nlh->nlmsg_type > GENL_ID_CTRL &&
	       genl->cmd == GPUCTL_CMD_ALLOC_NEW;
}

static void hold(const char *path)
{
	const struct timespec poll = { .tv_nsec = HOLD_POLL_NS };
	char name[4096];
	int fd, i;

	snprintf(name, sizeof(name), "%s.held", path);
	fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(name, sizeof(name), "%s.go", path);
	for (i = 0; i < HOLD_MAX_POLLS && access(name, F_OK); i++)
		nanosleep(&poll, NULL);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *addr, socklen_t addrlen)
{
	static ssize_t (*next)(int, const void *, size_t, int,
			       const struct sockaddr *, socklen_t);
	static bool held;
	const char *path = getenv("GPUCTL_HOLD");

	if (!next)
		next = dlsym(RTLD_NEXT, "sendto");
	if (path && !held && is_alloc_new(buf, len)) {
		held = true;
		hold(path);
	}
	return next(fd, buf, len, flags, addr, addrlen);
}
