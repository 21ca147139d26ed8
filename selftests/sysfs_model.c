// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The inventory as sysfs describes it: GPUs (class base 0x03 or 0x12) and
 * every other member of their IOMMU groups, each field read from the file
 * that documents it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs_model.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

/* Truncating copy; sysfs names are far shorter than our buffers. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int read_str(const char *addr, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/%s", addr, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* A missing file reads as @dflt; the spec says "0 when absent". */
static long read_num(const char *addr, const char *file, long dflt)
{
	char buf[64];

	if (read_str(addr, file, buf, sizeof(buf)))
		return dflt;
	return strtol(buf, NULL, 0);
}

/* Basename of a symlink under the device, "" when there is none. */
static int read_link_base(const char *addr, const char *link, char *buf,
			  size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/%s", addr, link);
	n = readlink(path, target, sizeof(target) - 1);
	buf[0] = '\0';
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	copy_str(buf, len, base ? base + 1 : target);
	return 0;
}

/*
 * The second component of the device's path under /sys/devices is the port
 * on the root bus; a device that is itself on the root bus reports its
 * host bridge, the first component.
 */
static int read_pci_root(const char *addr, char *buf, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];
	char *p, *first, *second;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s", addr);
	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, "/sys/devices/", 13))
		return -EINVAL;
	first = real + 13;
	p = strchr(first, '/');
	if (!p)
		return -EINVAL;
	*p = '\0';
	second = p + 1;
	p = strchr(second, '/');
	if (p)
		*p = '\0';
	copy_str(buf, len, strcmp(second, addr) ? second : first);
	return 0;
}

static bool is_bridge(const char *addr, __u32 class)
{
	char path[PATH_MAX];
	unsigned char hdr;
	int fd;

	if ((class >> 8) == 0x0604)
		return true;
	/* Header type 1 (PCI-PCI) and 2 (CardBus), as pci_is_bridge(). */
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/config", addr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (pread(fd, &hdr, 1, 0x0e) != 1)
		hdr = 0;
	close(fd);
	return (hdr & 0x7f) == 1 || (hdr & 0x7f) == 2;
}

bool model_is_gpu_class(__u32 class)
{
	return (class >> 16) == 0x03 || (class >> 16) == 0x12;
}

bool model_driver_is_vfio_ok(const char *driver)
{
	/* vfio-pci and its variants (mlx5-vfio-pci, ...) and pci-stub. */
	return !driver[0] || !strcmp(driver, "pci-stub") ||
	       strstr(driver, "vfio");
}

#define SET(d, attr)	((d)->present |= 1u << (attr))

int model_read_dev(const char *addr, struct nlc_dev *d)
{
	char buf[PATH_MAX];
	int ret;

	memset(d, 0, sizeof(*d));
	ret = read_str(addr, "class", buf, sizeof(buf));
	if (ret)
		return ret;
	snprintf(d->address, sizeof(d->address), "%s", addr);
	SET(d, GPUCTL_A_DEV_ADDRESS);
	d->class = strtoul(buf, NULL, 0);
	SET(d, GPUCTL_A_DEV_CLASS);
	d->vendor_id = read_num(addr, "vendor", 0);
	SET(d, GPUCTL_A_DEV_VENDOR_ID);
	d->device_id = read_num(addr, "device", 0);
	SET(d, GPUCTL_A_DEV_DEVICE_ID);
	d->subsystem_vendor_id = read_num(addr, "subsystem_vendor", 0);
	SET(d, GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID);
	d->subsystem_device_id = read_num(addr, "subsystem_device", 0);
	SET(d, GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID);
	d->revision = read_num(addr, "revision", 0);
	SET(d, GPUCTL_A_DEV_REVISION);
	if (!read_link_base(addr, "driver", d->driver, sizeof(d->driver)))
		SET(d, GPUCTL_A_DEV_DRIVER);
	if (!read_link_base(addr, "iommu_group", buf, sizeof(buf))) {
		d->iommu_group = strtoul(buf, NULL, 10);
		SET(d, GPUCTL_A_DEV_IOMMU_GROUP);
	}
	d->numa_node = read_num(addr, "numa_node", -1);
	SET(d, GPUCTL_A_DEV_NUMA_NODE);
	if (!read_pci_root(addr, d->pci_root, sizeof(d->pci_root)))
		SET(d, GPUCTL_A_DEV_PCI_ROOT);
	d->sriov_totalvfs = read_num(addr, "sriov_totalvfs", 0);
	SET(d, GPUCTL_A_DEV_SRIOV_TOTALVFS);
	d->sriov_numvfs = read_num(addr, "sriov_numvfs", 0);
	SET(d, GPUCTL_A_DEV_SRIOV_NUMVFS);
	if (!read_link_base(addr, "physfn", d->physfn, sizeof(d->physfn)))
		SET(d, GPUCTL_A_DEV_PHYSFN);
	if (model_is_gpu_class(d->class))
		d->role = GPUCTL_DEV_ROLE_GPU;
	else if (is_bridge(addr, d->class))
		d->role = GPUCTL_DEV_ROLE_BRIDGE;
	else
		d->role = GPUCTL_DEV_ROLE_FOREIGN;	/* refined by model_load() */
	SET(d, GPUCTL_A_DEV_ROLE);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* Sorted directory entries that do not start with '.'; caller frees. */
static int list_dir(const char *path, char ***names)
{
	struct dirent *de;
	char **v = NULL;
	int n = 0;
	DIR *dir = opendir(path);

	*names = NULL;
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = strdup(de->d_name);
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), cmp_name);
	*names = v;
	return n;
}

static void free_list(char **v, int n)
{
	while (n-- > 0)
		free(v[n]);
	free(v);
}

const struct nlc_dev *model_find_dev(const struct model *m, const char *addr)
{
	int i;

	for (i = 0; i < m->ndevs; i++)
		if (!strcmp(m->devs[i].address, addr))
			return &m->devs[i];
	return NULL;
}

int model_find_group(const struct model *m, __u32 id)
{
	int i;

	for (i = 0; i < m->ngroups; i++)
		if (m->groups[i].id == id)
			return i;
	return -1;
}

static int add_dev(struct model *m, const char *addr)
{
	if (model_find_dev(m, addr))
		return 0;
	if (m->ndevs == MODEL_MAX_DEVS)
		return -E2BIG;
	return model_read_dev(addr, &m->devs[m->ndevs++]);
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct nlc_dev *)a)->address,
		      ((const struct nlc_dev *)b)->address);
}

/* "DDDD:BB:DD" of "DDDD:BB:DD.F". */
static bool same_slot(const char *a, const char *b)
{
	return !strncmp(a, b, 10);
}

static int add_group(struct model *m, __u32 id)
{
	char path[PATH_MAX];
	struct nlc_group *g;
	char **members;
	int i, n, ret = 0;

	if (model_find_group(m, id) >= 0)
		return 0;
	if (m->ngroups == MODEL_MAX_GROUPS)
		return -E2BIG;
	g = &m->groups[m->ngroups];
	memset(g, 0, sizeof(*g));
	m->noffenders[m->ngroups] = 0;
	g->id = id;
	g->present = 1u << GPUCTL_A_GROUP_ID | 1u << GPUCTL_A_GROUP_VIABLE;
	snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%u/devices", id);
	n = list_dir(path, &members);
	if (n < 0)
		return n;
	for (i = 0; i < n && !ret; i++) {
		if (g->ndevices == NLC_MAX_MEMBERS) {
			ret = -E2BIG;
			break;
		}
		snprintf(g->devices[g->ndevices++], NLC_ADDR_LEN, "%s",
			 members[i]);
		g->present |= 1u << GPUCTL_A_GROUP_DEVICE;
		ret = add_dev(m, members[i]);
	}
	free_list(members, n);
	m->ngroups++;
	return ret;
}

static int finish_groups(struct model *m)
{
	int gi, i;

	for (gi = 0; gi < m->ngroups; gi++) {
		struct nlc_group *g = &m->groups[gi];

		g->viable = 1;
		for (i = 0; i < g->ndevices; i++) {
			const struct nlc_dev *d = model_find_dev(m, g->devices[i]);

			if (!d)
				return -ENOENT;
			if (d->role == GPUCTL_DEV_ROLE_BRIDGE ||
			    model_driver_is_vfio_ok(d->driver))
				continue;
			char reason[sizeof(m->offenders[0][0])];

			snprintf(reason, sizeof(reason), "%s is bound to %s",
				 d->address, d->driver);
			copy_str(m->offenders[gi][m->noffenders[gi]++],
				 sizeof(reason), reason);
			g->viable = 0;
		}
		if (!g->viable)
			g->present |= 1u << GPUCTL_A_GROUP_REASON;
	}
	return 0;
}

int model_load(struct model *m)
{
	char **names;
	int i, j, n, ret = 0;

	memset(m, 0, sizeof(*m));
	n = list_dir(PCI_DEVICES, &names);
	if (n < 0)
		return n;
	for (i = 0; i < n && !ret; i++) {
		struct nlc_dev d;

		if (model_read_dev(names[i], &d) || !model_is_gpu_class(d.class))
			continue;
		ret = add_dev(m, names[i]);
		if (!ret && NLC_HAS(&d, GPUCTL_A_DEV_IOMMU_GROUP))
			ret = add_group(m, d.iommu_group);
	}
	free_list(names, n);
	if (ret)
		return ret;
	qsort(m->devs, m->ndevs, sizeof(m->devs[0]), cmp_dev);

	/* A companion shares a GPU's slot and IOMMU group. */
	for (i = 0; i < m->ndevs; i++) {
		struct nlc_dev *d = &m->devs[i];

		if (d->role != GPUCTL_DEV_ROLE_FOREIGN)
			continue;
		for (j = 0; j < m->ndevs; j++) {
			const struct nlc_dev *gpu = &m->devs[j];

			if (gpu->role == GPUCTL_DEV_ROLE_GPU &&
			    same_slot(gpu->address, d->address) &&
			    NLC_HAS(gpu, GPUCTL_A_DEV_IOMMU_GROUP) &&
			    NLC_HAS(d, GPUCTL_A_DEV_IOMMU_GROUP) &&
			    gpu->iommu_group == d->iommu_group)
				d->role = GPUCTL_DEV_ROLE_COMPANION;
		}
	}
	return finish_groups(m);
}

static void add_why(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

/* One comparison: where to describe mismatches, and what each side holds. */
struct cmp {
	char *why;
	size_t len;
	__u32 want;	/* present bits */
	__u32 got;
};

static int cmp_presence(struct cmp *k, const char *name, int attr)
{
	bool w = k->want & (1u << attr), g = k->got & (1u << attr);

	if (w == g)
		return 0;
	add_why(k->why, k->len, " %s %s;", name, g ? "unexpected" : "missing");
	return 1;
}

static int cmp_num(struct cmp *k, const char *name, int attr, long want,
		   long got)
{
	if (cmp_presence(k, name, attr))
		return 1;
	if (want == got)
		return 0;
	add_why(k->why, k->len, " %s %#lx want %#lx;", name, got, want);
	return 1;
}

static int cmp_str(struct cmp *k, const char *name, int attr,
		   const char *want, const char *got)
{
	if (cmp_presence(k, name, attr))
		return 1;
	if (!strcmp(want, got))
		return 0;
	add_why(k->why, k->len, " %s '%s' want '%s';", name, got, want);
	return 1;
}

int model_cmp_dev(const struct nlc_dev *want, const struct nlc_dev *got,
		  char *why, size_t len)
{
	struct cmp k = { why, len, want->present, got->present };
	int bad = 0;

	why[0] = '\0';
	add_why(why, len, "%s:", want->address);
	bad += cmp_str(&k, "address", GPUCTL_A_DEV_ADDRESS,
		       want->address, got->address);
	bad += cmp_num(&k, "vendor", GPUCTL_A_DEV_VENDOR_ID,
		       want->vendor_id, got->vendor_id);
	bad += cmp_num(&k, "device", GPUCTL_A_DEV_DEVICE_ID,
		       want->device_id, got->device_id);
	bad += cmp_num(&k, "subsystem_vendor", GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID,
		       want->subsystem_vendor_id, got->subsystem_vendor_id);
	bad += cmp_num(&k, "subsystem_device", GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID,
		       want->subsystem_device_id, got->subsystem_device_id);
	bad += cmp_num(&k, "class", GPUCTL_A_DEV_CLASS,
		       want->class, got->class);
	bad += cmp_num(&k, "revision", GPUCTL_A_DEV_REVISION,
		       want->revision, got->revision);
	bad += cmp_str(&k, "driver", GPUCTL_A_DEV_DRIVER,
		       want->driver, got->driver);
	bad += cmp_num(&k, "iommu_group", GPUCTL_A_DEV_IOMMU_GROUP,
		       want->iommu_group, got->iommu_group);
	bad += cmp_num(&k, "numa_node", GPUCTL_A_DEV_NUMA_NODE,
		       want->numa_node, got->numa_node);
	bad += cmp_str(&k, "pci_root", GPUCTL_A_DEV_PCI_ROOT,
		       want->pci_root, got->pci_root);
	bad += cmp_num(&k, "sriov_totalvfs", GPUCTL_A_DEV_SRIOV_TOTALVFS,
		       want->sriov_totalvfs, got->sriov_totalvfs);
	bad += cmp_num(&k, "sriov_numvfs", GPUCTL_A_DEV_SRIOV_NUMVFS,
		       want->sriov_numvfs, got->sriov_numvfs);
	bad += cmp_str(&k, "physfn", GPUCTL_A_DEV_PHYSFN,
		       want->physfn, got->physfn);
	bad += cmp_num(&k, "role", GPUCTL_A_DEV_ROLE,
		       want->role, got->role);
	return bad;
}

static bool has_member(const struct nlc_group *g, const char *addr)
{
	int i;

	for (i = 0; i < g->ndevices; i++)
		if (!strcmp(g->devices[i], addr))
			return true;
	return false;
}

int model_cmp_group(const struct model *m, int gi, const struct nlc_group *got,
		    char *why, size_t len)
{
	const struct nlc_group *want = &m->groups[gi];
	int i, j, bad = 0;

	why[0] = '\0';
	add_why(why, len, "group %u:", want->id);
	for (i = 0; i < want->ndevices; i++) {
		if (!has_member(got, want->devices[i])) {
			add_why(why, len, " member %s missing;", want->devices[i]);
			bad++;
		}
	}
	for (i = 0; i < got->ndevices; i++) {
		if (!has_member(want, got->devices[i])) {
			add_why(why, len, " member %s unexpected;", got->devices[i]);
			bad++;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(got->devices[i], got->devices[j])) {
				add_why(why, len, " member %s twice;", got->devices[i]);
				bad++;
			}
	}
	if (!NLC_HAS(got, GPUCTL_A_GROUP_VIABLE) || got->viable != want->viable) {
		add_why(why, len, " viable %d want %d;",
			NLC_HAS(got, GPUCTL_A_GROUP_VIABLE) ? got->viable : -1,
			want->viable);
		bad++;
	}
	if (want->viable && NLC_HAS(got, GPUCTL_A_GROUP_REASON)) {
		add_why(why, len, " reason '%s' on a viable group;", got->reason);
		bad++;
	}
	if (!want->viable) {
		bool found = false;

		for (i = 0; i < m->noffenders[gi]; i++)
			if (!strcmp(got->reason, m->offenders[gi][i]))
				found = true;
		if (!found) {
			add_why(why, len, " reason '%s' names no offender (first: '%s');",
				got->reason, m->offenders[gi][0]);
			bad++;
		}
	}
	return bad;
}
