// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Helpers shared by the C selftests.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/*
 * The harness forks each test and its children leave with _exit(); line
 * buffering keeps stdout whole and in order when run_tests.sh captures it.
 */
static void __attribute__((constructor)) tl_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

long strscpy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size);

	if (!size)
		return -E2BIG;
	if (n == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, n + 1);
	return n;
}

long tl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int tl_write(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	/* Printed before it happens, so a hang names its cause. */
	fprintf(stderr, "# write '%s' > %s\n", val, path);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	if (n < 0)
		return -errno;
	return 0;
}

int tl_writef(const char *val, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return tl_write(path, val);
}

int tl_wait_ntf(struct nlc *mon, __u8 cmd, const char *addr,
		const char *driver, int timeout_ms, struct nlc_dev *out)
{
	long deadline = tl_now_ms() + timeout_ms;
	struct nlc_dev d;
	__u8 got;
	int ret;

	for (;;) {
		long left = deadline - tl_now_ms();

		if (left <= 0)
			return 0;
		ret = nlc_monitor_next(mon, left, &got, &d);
		if (ret <= 0)
			return ret;
		fprintf(stderr, "# event ");
		nlc_print_dev(stderr, nlc_cmd_name(got), &d);
		if (got != cmd || strcmp(d.address, addr))
			continue;
		if (driver && !driver[0] && NLC_HAS(&d, GPUCTL_A_DEV_DRIVER))
			continue;
		if (driver && driver[0] && strcmp(d.driver, driver))
			continue;
		if (out)
			*out = d;
		return 1;
	}
}

int tl_collect(struct nlc *mon, int quiet_ms, int max_ms, struct event *ev,
	       int max)
{
	long deadline = tl_now_ms() + max_ms;
	int n = 0;

	for (;;) {
		long left = deadline - tl_now_ms();
		struct nlc_dev d;
		__u8 cmd;
		int ret;

		if (left <= 0)
			break;
		ret = nlc_monitor_next(mon, left < quiet_ms ? left : quiet_ms,
				       &cmd, &d);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;
		fprintf(stderr, "# event ");
		nlc_print_dev(stderr, nlc_cmd_name(cmd), &d);
		if (n < max) {
			ev[n].cmd = cmd;
			ev[n].dev = d;
			n++;
		}
	}
	return n;
}

static int inventory_diff_once(struct nlc *c, struct model *m, char *why,
			       size_t len)
{
	char one[1024];
	struct nlc_dev *devs;
	int i, j, n, bad = 0, ret;

	why[0] = '\0';
	ret = model_load(m);
	if (ret) {
		snprintf(why, len, "sysfs model: %s", strerror(-ret));
		return 1;
	}
	ret = nlc_dev_dump(c, &devs, &n, NULL);
	if (ret) {
		snprintf(why, len, "dev dump: %s %s", strerror(-ret), c->extack);
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct nlc_dev *want = model_find_dev(m, devs[i].address);

		for (j = 0; j < i; j++)
			if (!strcmp(devs[i].address, devs[j].address)) {
				snprintf(why + strlen(why), len - strlen(why),
					 " %s reported twice;", devs[i].address);
				bad++;
			}
		if (!want) {
			snprintf(why + strlen(why), len - strlen(why),
				 " %s reported but not expected;", devs[i].address);
			bad++;
			continue;
		}
		if (model_cmp_dev(want, &devs[i], one, sizeof(one))) {
			snprintf(why + strlen(why), len - strlen(why), " %s", one);
			bad++;
		}
	}
	for (i = 0; i < m->ndevs; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(m->devs[i].address, devs[j].address))
				break;
		if (j == n) {
			snprintf(why + strlen(why), len - strlen(why),
				 " %s expected but not reported;", m->devs[i].address);
			bad++;
		}
	}
	free(devs);
	return bad;
}

int tl_inventory_diff(struct nlc *c, int settle_ms, char *why, size_t len)
{
	long deadline = tl_now_ms() + settle_ms;
	struct model *m = malloc(sizeof(*m));
	int bad;

	if (!m)
		return -ENOMEM;
	while ((bad = inventory_diff_once(c, m, why, len)) &&
	       tl_now_ms() < deadline)
		usleep(200 * 1000);
	free(m);
	return bad;
}

static int groups_diff_once(struct nlc *c, struct model *m, char *why,
			    size_t len)
{
	struct nlc_group *groups;
	char one[1024];
	int i, j, n, bad = 0, ret;

	why[0] = '\0';
	ret = model_load(m);
	if (ret) {
		snprintf(why, len, "sysfs model: %s", strerror(-ret));
		return 1;
	}
	ret = nlc_group_dump(c, &groups, &n, NULL);
	if (ret) {
		snprintf(why, len, "group dump: %s %s", strerror(-ret), c->extack);
		return 1;
	}
	for (i = 0; i < n; i++) {
		int gi = model_find_group(m, groups[i].id);

		for (j = 0; j < i; j++)
			if (groups[i].id == groups[j].id) {
				snprintf(why + strlen(why), len - strlen(why),
					 " group %u reported twice;", groups[i].id);
				bad++;
			}
		if (gi < 0) {
			snprintf(why + strlen(why), len - strlen(why),
				 " group %u reported but holds no gpu;", groups[i].id);
			bad++;
			continue;
		}
		if (model_cmp_group(m, gi, &groups[i], one, sizeof(one))) {
			snprintf(why + strlen(why), len - strlen(why), " %s", one);
			bad++;
		}
	}
	for (i = 0; i < m->ngroups; i++) {
		for (j = 0; j < n; j++)
			if (groups[j].id == m->groups[i].id)
				break;
		if (j == n) {
			snprintf(why + strlen(why), len - strlen(why),
				 " group %u expected but not reported;", m->groups[i].id);
			bad++;
		}
	}
	free(groups);
	return bad;
}

int tl_groups_diff(struct nlc *c, int settle_ms, char *why, size_t len)
{
	long deadline = tl_now_ms() + settle_ms;
	struct model *m = malloc(sizeof(*m));
	int bad;

	if (!m)
		return -ENOMEM;
	while ((bad = groups_diff_once(c, m, why, len)) &&
	       tl_now_ms() < deadline)
		usleep(200 * 1000);
	free(m);
	return bad;
}

int tl_modprobe(const char *module)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("modprobe", "modprobe", module, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

int tl_module_load(const char *params)
{
	const char *ko = getenv("GPUCTL_KO");
	int fd, ret;

	if (!ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ?: "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

int tl_module_unload(void)
{
	return syscall(SYS_delete_module, "gpuctl", O_NONBLOCK) ? -errno : 0;
}

bool tl_module_loaded(void)
{
	return !access("/sys/module/gpuctl", F_OK);
}

int tl_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

bool tl_have_iommu(void)
{
	DIR *dir = opendir("/sys/kernel/iommu_groups");
	struct dirent *de;
	bool any = false;

	if (!dir)
		return false;
	while (!any && (de = readdir(dir)))
		any = de->d_name[0] != '.';
	closedir(dir);
	return any;
}

int tl_driver_of(const char *addr, char *drv, size_t len)
{
	char path[128], target[512];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", addr);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		drv[0] = '\0';
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", addr);
		return errno == ENOENT && !access(path, F_OK) ? 0 : -errno;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	strscpy(drv, base ? base + 1 : target, len);
	return 0;
}

int tl_override_of(const char *addr, char *ovr, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override",
		 addr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, ovr, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	ovr[n] = '\0';
	if (n && ovr[n - 1] == '\n')
		ovr[n - 1] = '\0';
	if (!strcmp(ovr, "(null)"))
		ovr[0] = '\0';
	return 0;
}

int tl_wait_driver(const char *addr, const char *drv, int timeout_ms)
{
	long deadline = tl_now_ms() + timeout_ms;
	char now[NLC_NAME_LEN];

	for (;;) {
		if (!tl_driver_of(addr, now, sizeof(now)) && !strcmp(now, drv))
			return 1;
		if (tl_now_ms() >= deadline)
			return 0;
		usleep(100 * 1000);
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char * const *)a, *(const char * const *)b);
}

/*
 * The entries of directory @path but "." and ".." and @skip (NULL: none),
 * at most @max, sorted, each strdup()ed into @names (an entry is NULL
 * when out of memory). Returns how many, or -errno.
 */
static int sorted_entries(const char *path, const char *skip, char **names,
			  int max)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max)
		if (de->d_name[0] != '.' && (!skip || strcmp(de->d_name, skip)))
			names[n++] = strdup(de->d_name);
	closedir(dir);
	qsort(names, n, sizeof(names[0]), name_cmp);
	return n;
}

/* The other members of @addr's IOMMU group, sorted, comma-separated. */
static void group_peers(const char *addr, char *buf, size_t len)
{
	char path[256];
	char *names[NLC_MAX_MEMBERS];
	size_t used = 0;
	int i, n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/devices",
		 addr);
	n = sorted_entries(path, addr, names, NLC_MAX_MEMBERS);
	for (i = 0; i < n; i++) {
		if (names[i] && used < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 i ? "," : "", names[i]);
		free(names[i]);
	}
}

int tl_pci_snapshot(char *buf, size_t len, bool with_groups)
{
	char *names[256];
	size_t used = 0;
	int i, n;

	n = sorted_entries("/sys/bus/pci/devices", NULL, names,
			   (int)ARRAY_SIZE(names));
	if (n < 0)
		return n;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		char drv[NLC_NAME_LEN] = "", ovr[NLC_NAME_LEN] = "";
		char peers[NLC_MAX_MEMBERS * NLC_ADDR_LEN] = "";

		if (names[i]) {
			tl_driver_of(names[i], drv, sizeof(drv));
			tl_override_of(names[i], ovr, sizeof(ovr));
			if (with_groups)
				group_peers(names[i], peers, sizeof(peers));
			if (used < len)
				used += snprintf(buf + used, len - used,
						 "%s driver=%s override=%s%s%s\n",
						 names[i], drv, ovr,
						 with_groups ? " group+=" : "",
						 peers);
		}
		free(names[i]);
	}
	return used < len ? 0 : -E2BIG;
}
