// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * Who holds a device on any VFIO driver. The module names the opener of a
 * device on gpuctl-vfio-pci itself, since its open callback runs in the
 * opener. On vfio-pci and every other VFIO driver it only sees that the
 * device's IOMMU group has a DMA owner, and reports an unknown holder
 * (pid 0). The tool then looks, as fuser(1) does, for the process that
 * has the group's node (/dev/vfio/N) or the device's VFIO cdev
 * (/dev/vfio/devices/vfioX) open, in /proc/PID/fd.
 *
 * Only root looks: another user's /proc/PID/fd needs CAP_SYS_PTRACE, and
 * the holders are for admins, as the ledger is. Nothing is read when no
 * device has an unknown holder, so a host where nothing is open pays
 * nothing.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holders.h"
#include "mdev_sysfs.h"

static int vfio_fds_add(struct holders *f, const struct vfio_fd *e)
{
	struct vfio_fd *nv;

	nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	f->v = nv;
	f->v[f->n++] = *e;
	return 0;
}

/* The device a VFIO cdev "vfioX" stands for: its sysfs name */
static int vfio_cdev_dev(const char *cdev, char *buf, size_t size)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/vfio-dev/%.64s/device", cdev);
	return sysfs_link_base(path, buf, size);
}

/* Whether @s is a decimal number, as a group node's name is */
static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The VFIO nodes process @pid has open, added to @f */
static void vfio_fds_of(pid_t pid, struct holders *f)
{
	char path[64], link[128];
	struct vfio_fd e;
	struct dirent *de;
	const char *node;
	DIR *dir;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return;		/* gone, or a kernel thread */
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/dev/vfio/", 10))
			continue;
		node = link + 10;
		memset(&e, 0, sizeof(e));
		e.pid = pid;
		if (!strncmp(node, "devices/", 8)) {
			e.cdev = true;
			if (vfio_cdev_dev(node + 8, e.dev, sizeof(e.dev)))
				continue;
		} else if (all_digits(node)) {
			e.group = strtoul(node, NULL, 10);
		} else {
			continue;	/* /dev/vfio/vfio, the container */
		}
		if (vfio_fds_add(f, &e))
			break;
	}
	closedir(dir);
}

/*
 * Every process's open VFIO nodes, in /proc's (pid) order, read once per
 * @f, at its first lookup. Nothing for a user other than root.
 */
static void holders_scan(struct holders *f)
{
	struct dirent *de;
	DIR *proc;

	f->scanned = true;
	if (geteuid())
		return;
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((de = readdir(proc)))
		if (all_digits(de->d_name))
			vfio_fds_of(atoi(de->d_name), f);
	closedir(proc);
}

void holders_free(struct holders *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/**
 * holders_pid() - the process that holds a device
 * @f: the processes' VFIO nodes, read from /proc at the first call
 * @name: the device's sysfs name: a PCI address, or an mdev's UUID
 * @has_group: whether it is in an IOMMU group
 * @group: the group
 *
 * One with its cdev open, else one with its group's node open; the first
 * in pid order, the parent before the children a fork gave the
 * descriptor to.
 *
 * Return: its pid, 0 for none.
 */
pid_t holders_pid(struct holders *f, const char *name, bool has_group,
		  unsigned int group)
{
	size_t i;

	if (!f->scanned)
		holders_scan(f);
	for (i = 0; i < f->n; i++)
		if (f->v[i].cdev && !strcmp(f->v[i].dev, name))
			return f->v[i].pid;
	if (!has_group)
		return 0;
	for (i = 0; i < f->n; i++)
		if (!f->v[i].cdev && f->v[i].group == group)
			return f->v[i].pid;
	return 0;
}

/**
 * holder_vm_name() - the guest name of a QEMU command line
 * @cmdline: /proc/PID/cmdline, NUL-separated arguments
 * @len: its length
 * @buf: out: the name, "" when there is none
 * @size: its size
 *
 * QEMU's "-name [guest=]NAME[,process=...][,debug-threads=on]"
 * (qemu-options.hx); libvirt writes "-name guest=DOMAIN,debug-threads=on".
 * A comma inside the name is written ",," there.
 *
 * Return: 0, or -ENOENT when the command line has no -name.
 */
int holder_vm_name(const char *cmdline, size_t len, char *buf, size_t size)
{
	const char *arg = cmdline, *end = cmdline + len, *val = NULL, *p;
	size_t n = 0;

	buf[0] = '\0';
	while (arg < end) {
		const char *next = memchr(arg, '\0', end - arg);

		if (!next)
			break;
		if (!strcmp(arg, "-name") || !strcmp(arg, "--name"))
			val = next + 1 < end ? next + 1 : NULL;
		arg = next + 1;
	}
	if (!val)
		return -ENOENT;

	/* "guest=" may come after other keys; without a key, it is the name */
	for (p = val; p; ) {
		if (!strncmp(p, "guest=", 6)) {
			val = p + 6;
			break;
		}
		p = strchr(p, ',');
		while (p && p[1] == ',')
			p = strchr(p + 2, ',');
		if (p)
			p++;
	}
	for (p = val; *p && n + 1 < size; p++) {
		if (*p == ',') {
			if (p[1] != ',')
				break;
			p++;
		}
		buf[n++] = *p;
	}
	buf[n] = '\0';
	return 0;
}

/**
 * holder_proc_read() - what the holder's /proc says about it
 * @pid: the process
 * @p: filled
 *
 * Return: 0, or a negative errno when it is gone.
 */
int holder_proc_read(pid_t pid, struct holder_proc *p)
{
	char path[64], line[256], cmdline[4096];
	unsigned int ruid, euid;
	ssize_t n;
	FILE *fp;
	int fd;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "Name:", 5)) {
			if (sscanf(line + 5, " %31[^\n]", p->comm) != 1)
				p->comm[0] = '\0';
		} else if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			p->uid = euid;
			break;
		}
	}
	fclose(fp);

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, cmdline, sizeof(cmdline) - 1);
	close(fd);
	if (n > 0) {
		cmdline[n] = '\0';
		holder_vm_name(cmdline, n, p->vm, sizeof(p->vm));
	}
	return 0;
}

static const struct alloc_info *holders_alloc(const struct nl_list *allocs,
					      u32 id)
{
	const struct alloc_info *al;
	size_t i;

	if (!allocs)
		return NULL;
	al = allocs->v;
	for (i = 0; i < allocs->n; i++)
		if (al[i].id == id)
			return &al[i];
	return NULL;
}

/*
 * Whether the holder is the allocation's: its VM name against the
 * allocation's name, else its uid against the allocation's uid. An
 * allocation that names neither is anybody's, as the module judges it.
 */
static u32 holders_match(bool has_alloc, u32 id, const struct holder_proc *p,
			 const struct nl_list *allocs)
{
	const struct alloc_info *al;

	if (!has_alloc)
		return GPUCTL_OPEN_MATCH_UNALLOCATED;
	al = holders_alloc(allocs, id);
	if (!al)
		return GPUCTL_OPEN_MATCH_UNKNOWN;
	if (al->name[0] && p->vm[0])
		return strcmp(al->name, p->vm) ? HOLDER_MATCH_MISMATCH :
						 GPUCTL_OPEN_MATCH_OWNER;
	if (al->has_uid)
		return al->uid == p->uid ? GPUCTL_OPEN_MATCH_OWNER :
					   HOLDER_MATCH_MISMATCH;
	if (al->name[0])
		return HOLDER_MATCH_MISMATCH;	/* named, but no VM name */
	return GPUCTL_OPEN_MATCH_OWNER;
}

/**
 * holders_wanted() - whether holders_fill() would look for a holder
 * @devs: the devices (struct dev_info)
 *
 * Return: true for root when a device is open by an unknown holder.
 */
bool holders_wanted(const struct nl_list *devs)
{
	const struct dev_info *d = devs->v;
	size_t i;

	if (geteuid())
		return false;
	for (i = 0; i < devs->n; i++)
		if (d[i].has_holder && !d[i].holder_pid)
			return true;
	return false;
}

/**
 * holders_fill() - name the holders the module does not know
 * @devs: the devices (struct dev_info); each that the module reports open
 *	by an unknown holder (pid 0) is given the process found, with its
 *	comm, uid and VM name, and a match against its allocation
 * @allocs: the allocations (struct alloc_info), or NULL when not read;
 *	the match is "unknown" then
 * @f: the processes' VFIO nodes (zeroed before the first use; one read of
 *	/proc serves every fill that shares it); holders_free() frees it
 *
 * /proc is read only when a device has an unknown holder, and only for
 * root.
 */
void holders_fill(struct nl_list *devs, const struct nl_list *allocs,
		  struct holders *f)
{
	struct dev_info *d = devs->v;
	struct holder_proc p;
	size_t i;
	pid_t pid;

	for (i = 0; i < devs->n; i++) {
		if (!d[i].has_holder || d[i].holder_pid)
			continue;
		pid = holders_pid(f, d[i].address, d[i].has_iommu_group,
				  d[i].iommu_group);
		if (!pid || holder_proc_read(pid, &p))
			continue;
		d[i].holder_pid = p.pid;
		d[i].has_holder_comm = true;
		snprintf(d[i].holder_comm, sizeof(d[i].holder_comm), "%s",
			 p.comm);
		d[i].has_holder_uid = true;
		d[i].holder_uid = p.uid;
		snprintf(d[i].holder_vm, sizeof(d[i].holder_vm), "%s", p.vm);
		d[i].holder_from_proc = true;
		d[i].open_match = holders_match(d[i].has_allocation,
						d[i].allocation, &p, allocs);
	}
}

/**
 * holders_fill_vgpus() - name the holders of open mdev instances
 * @vgpus: the instances (struct vgpu_info); each open one is given the
 *	process found, with a match against its allocation. The module
 *	knows only that an instance is open, on any vendor driver.
 * @allocs: the allocations (struct alloc_info), or NULL when not read
 * @f: as for holders_fill()
 *
 * /proc is read only when one is open, and only for root.
 */
void holders_fill_vgpus(struct nl_list *vgpus, const struct nl_list *allocs,
			struct holders *f)
{
	struct vgpu_info *v = vgpus->v;
	struct holder_proc p;
	size_t i;
	pid_t pid;

	for (i = 0; i < vgpus->n; i++) {
		if (!v[i].open)
			continue;
		pid = holders_pid(f, v[i].uuid, v[i].has_group, v[i].group);
		if (!pid || holder_proc_read(pid, &p))
			continue;
		v[i].has_holder = true;
		v[i].holder_pid = p.pid;
		snprintf(v[i].holder_comm, sizeof(v[i].holder_comm), "%s",
			 p.comm);
		v[i].holder_uid = p.uid;
		snprintf(v[i].holder_vm, sizeof(v[i].holder_vm), "%s", p.vm);
		v[i].holder_match = holders_match(v[i].has_allocation,
						  v[i].allocation, &p, allocs);
	}
}
