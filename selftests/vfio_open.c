// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * vfio_open: a VFIO user as small as it gets. It opens a PCI device the way
 * QEMU's legacy container path does, prints "open ADDR group N pid P" once
 * it holds the device fd, and keeps it until SIGTERM or SIGINT or until
 * SECONDS have passed. Tests use it to be the VM that holds a reserved GPU.
 * SIGUSR1 closes the device fd alone and prints "closed ADDR": the VM let
 * go of the device while its process lives on, so a test can tell a
 * close from a process exit. The process then waits for SIGTERM.
 *
 * Exit status: 0 held and let go, 1 usage, 2 a VFIO step failed (the
 * message names the step and errno).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/vfio.h>

static int fail(const char *what, const char *arg)
{
	int err = errno;

	fprintf(stderr, "vfio_open: %s%s%s: %s (errno %d)\n", what,
		arg ? " " : "", arg ?: "", strerror(err), err);
	return 2;
}

/* The IOMMU group number of @addr, from its sysfs iommu_group link. */
static int group_of(const char *addr, char *group, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 addr);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	memcpy(group, base, strlen(base) + 1);
	return 0;
}

/*
 * Waits for SIGTERM or SIGINT (or @seconds, when positive), closing the
 * device fd on SIGUSR1. The signals are blocked and taken synchronously,
 * so none is lost between two waits.
 */
static void hold(const char *addr, int dev, long seconds)
{
	struct timespec left = { .tv_sec = seconds };
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		sig = seconds > 0 ? sigtimedwait(&set, NULL, &left) :
				    sigwaitinfo(&set, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig != SIGUSR1)
			break;
		if (dev >= 0) {
			close(dev);
			dev = -1;
			printf("closed %s\n", addr);
			fflush(stdout);
		}
	}
	if (dev >= 0)
		close(dev);
}

int main(int argc, char **argv)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char group[32], path[PATH_MAX];
	int container, grp, dev, ret;
	long seconds = 0;
	sigset_t set;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: vfio_open DDDD:BB:DD.F [SECONDS]\n");
		return 1;
	}
	if (argc == 3)
		seconds = strtol(argv[2], NULL, 0);
	/* Blocked before anything is opened: hold() takes them in turn. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	ret = group_of(argv[1], group, sizeof(group));
	if (ret) {
		errno = -ret;
		return fail("no IOMMU group for", argv[1]);
	}
	container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (container < 0)
		return fail("open", "/dev/vfio/vfio");
	ret = ioctl(container, VFIO_GET_API_VERSION);
	if (ret != VFIO_API_VERSION) {
		fprintf(stderr, "vfio_open: VFIO API version %d, want %d\n",
			ret, VFIO_API_VERSION);
		return 2;
	}
	if (ioctl(container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
		errno = ENOTSUP;
		return fail("VFIO_CHECK_EXTENSION", "VFIO_TYPE1v2_IOMMU");
	}

	snprintf(path, sizeof(path), "/dev/vfio/%s", group);
	grp = open(path, O_RDWR | O_CLOEXEC);
	if (grp < 0)
		return fail("open", path);
	if (ioctl(grp, VFIO_GROUP_GET_STATUS, &status))
		return fail("VFIO_GROUP_GET_STATUS", path);
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		/* A member is bound to a host driver: VFIO refuses the group. */
		fprintf(stderr, "vfio_open: group %s is not viable\n", group);
		return 2;
	}
	if (ioctl(grp, VFIO_GROUP_SET_CONTAINER, &container))
		return fail("VFIO_GROUP_SET_CONTAINER", path);
	if (ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return fail("VFIO_SET_IOMMU", "VFIO_TYPE1v2_IOMMU");
	dev = ioctl(grp, VFIO_GROUP_GET_DEVICE_FD, argv[1]);
	if (dev < 0)
		return fail("VFIO_GROUP_GET_DEVICE_FD", argv[1]);

	printf("open %s group %s pid %d\n", argv[1], group, getpid());
	fflush(stdout);
	hold(argv[1], dev, seconds);
	close(grp);
	close(container);
	return 0;
}
