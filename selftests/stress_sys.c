// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Racing operations on the module and on sysfs: rmmod and reload, unbind
 * and reprobe, remove and rescan, hot-plug through QMP; see
 * stress_loops.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qmp.h"
#include "stress_loops.h"
#include "testlib.h"

#define LOAD_RETRY_MS		10000
#define PLUG_TIMEOUT_MS		15000
#define BALANCE_MAX		256

void *stress_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, size);
	return p;
}

/*
 * The lifecycle lines of one load: "gpuctl: dev ADDR created" and
 * "... destroyed" (dyndbg=+p). @lost: the kernel overwrote records
 * before they were read, so this load cannot be checked.
 */
struct balance {
	char live[BALANCE_MAX][NLC_ADDR_LEN];
	int nlive;
	int unmatched;
	char first_unmatched[NLC_ADDR_LEN];
	bool lost;
};

static void balance_scan(int fd, struct balance *b)
{
	char rec[8192], addr[NLC_ADDR_LEN], what[16];
	ssize_t n;
	int i;

	for (;;) {
		const char *msg;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE) {
			b->lost = true;
			continue;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || sscanf(msg + 1, "gpuctl: dev %15s %15s", addr, what) != 2)
			continue;
		if (!strcmp(what, "created")) {
			if (b->nlive < BALANCE_MAX)
				strscpy(b->live[b->nlive++], addr, NLC_ADDR_LEN);
			continue;
		}
		if (strcmp(what, "destroyed"))
			continue;
		for (i = 0; i < b->nlive; i++)
			if (!strcmp(b->live[i], addr))
				break;
		if (i == b->nlive) {
			if (!b->unmatched++)
				strscpy(b->first_unmatched, addr, NLC_ADDR_LEN);
			continue;
		}
		strscpy(b->live[i], b->live[--b->nlive], NLC_ADDR_LEN);
	}
}

/* After an unload: every device the load created was destroyed. */
static void balance_check(struct stress *s, int fd, struct balance *b,
			  struct stress_op *checked)
{
	balance_scan(fd, b);
	if (b->lost) {
		stress_count(checked, -ENOBUFS);
	} else if (b->nlive || b->unmatched) {
		stress_count(checked, -EPROTO);
		stress_violation(s, "at rmmod: %d dev not destroyed (%s), %d not created (%s)",
				 b->nlive, b->nlive ? b->live[0] : "-",
				 b->unmatched, b->unmatched ? b->first_unmatched : "-");
	} else {
		stress_count(checked, 0);
	}
	memset(b, 0, sizeof(*b));
}

/* Loads the module again; tries for LOAD_RETRY_MS. */
static int reload(struct stress *s, const struct stress_rmmod_arg *a,
		  struct stress_op *op)
{
	long deadline = tl_now_ms() + LOAD_RETRY_MS;
	int ret;

	for (;;) {
		ret = tl_module_load(a->params);
		stress_count(op, ret);
		if (!ret || tl_now_ms() >= deadline)
			break;
		usleep(100 * 1000);
	}
	if (ret)
		stress_violation(s, "insmod %s %s: %s", getenv("GPUCTL_KO"),
				 a->params, strerror(-ret));
	return ret;
}

void stress_loop_rmmod(struct stress *s, void *arg)
{
	const struct stress_rmmod_arg *a = arg;
	struct stress_op *rm = stress_op(s, "rmmod");
	struct stress_op *ins = stress_op(s, "insmod");
	struct stress_op *checked = NULL;
	struct balance *b = NULL;
	int kmsg = -1, ret;

	if (a->balance) {
		checked = stress_op(s, "dev balance at rmmod (ENOBUFS: log overrun)");
		b = calloc(1, sizeof(*b));
		kmsg = tl_kmsg_open();
		/* The load before this worker is not ours to check. */
		b->lost = true;
	}
	while (stress_running(s)) {
		ret = tl_module_unload();
		stress_count(rm, ret);
		if (ret == -EWOULDBLOCK) {
			stress_pause(10);
			continue;
		}
		if (ret) {
			if (a->strict)
				stress_violation(s, "rmmod gpuctl: %s, not 0 or 'in use'",
						 strerror(-ret));
			stress_pause(100);
			continue;
		}
		__atomic_add_fetch(&s->unloads, 1, __ATOMIC_SEQ_CST);
		if (b && kmsg >= 0)
			balance_check(s, kmsg, b, checked);
		if (reload(s, a, ins))
			break;
		/* Loaded for a while: takes and restores race the others. */
		stress_pause(60);
	}
	if (kmsg >= 0)
		close(kmsg);
	free(b);
}

/* The driver bound to @addr now, "" when none. */
static void driver_now(const char *addr, char *drv, size_t len)
{
	if (tl_driver_of(addr, drv, len))
		drv[0] = '\0';
}

static int unbind_now(const char *addr)
{
	char drv[NLC_NAME_LEN], path[256];

	driver_now(addr, drv, sizeof(drv));
	if (!drv[0])
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", drv);
	return stress_write(path, addr);
}

static int set_override(const char *addr, const char *drv)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override",
		 addr);
	/* A lone newline clears it. */
	return stress_write(path, drv ?: "\n");
}

void stress_loop_rebind(struct stress *s, void *arg)
{
	const struct stress_rebind_arg *a = arg;
	struct stress_op *op_unbind, *op_probe, *op_intrude, *op_clear;

	op_unbind = stress_op(s, "unbind %s", a->addr);
	op_probe = stress_op(s, "drivers_probe %s", a->addr);
	op_intrude = stress_op(s, "driver_override=%s %s",
			       a->intruder ?: "-", a->addr);
	op_clear = stress_op(s, "driver_override cleared %s", a->addr);

	while (stress_running(s)) {
		switch (rand() % (a->intruder ? 4 : 3)) {
		case 0:
			stress_count(op_unbind, unbind_now(a->addr));
			break;
		case 1:
			stress_count(op_probe, stress_write("/sys/bus/pci/drivers_probe",
							    a->addr));
			break;
		case 2:
			stress_count(op_clear, set_override(a->addr, NULL));
			stress_write("/sys/bus/pci/drivers_probe", a->addr);
			break;
		default:
			/* The host driver takes it if nothing stops it. */
			stress_count(op_intrude, set_override(a->addr, a->intruder));
			unbind_now(a->addr);
			stress_write("/sys/bus/pci/drivers_probe", a->addr);
			break;
		}
		stress_pause(30);
	}
}

void stress_loop_remove(struct stress *s, void *arg)
{
	const struct stress_remove_arg *a = arg;
	struct stress_op *op_remove[4], *op_rescan = stress_op(s, "rescan");
	char path[256];
	int i;

	for (i = 0; i < a->n; i++)
		op_remove[i] = stress_op(s, "remove %s", a->addrs[i]);
	while (stress_running(s)) {
		i = rand() % a->n;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove",
			 a->addrs[i]);
		stress_count(op_remove[i], stress_write(path, "1"));
		stress_pause(30);
		stress_count(op_rescan, stress_write("/sys/bus/pci/rescan", "1"));
		/*
		 * A breath between cycles: QEMU 7.2 under TCG was seen to
		 * crash when a display's BARs were torn down and remapped
		 * back to back (dump_race.c).
		 */
		usleep((20 + rand() % 50) * 1000);
	}
}

/* The address of the device below root port @port, "" when none. */
static void child_of(const char *port, char *addr, size_t len)
{
	char path[128];
	struct dirent *de;
	DIR *dir;

	addr[0] = '\0';
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", port);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (!strncmp(de->d_name, "0000:", 5)) {
			strscpy(addr, de->d_name, len);
			break;
		}
	closedir(dir);
}

static bool wait_child(const char *port, bool present)
{
	long deadline = tl_now_ms() + PLUG_TIMEOUT_MS;
	char addr[NLC_ADDR_LEN];

	for (;;) {
		child_of(port, addr, sizeof(addr));
		if (!!addr[0] == present)
			return true;
		if (tl_now_ms() >= deadline)
			return false;
		usleep(50 * 1000);
	}
}

void stress_loop_hotplug(struct stress *s, void *arg)
{
	const struct stress_hotplug_arg *a = arg;
	struct stress_op *op_add, *op_del;
	char id[64], args[256], answer[1024];
	int fd, ret, cycle = 0;

	op_add = stress_op(s, "device_add %s on %s", a->driver, a->bus);
	op_del = stress_op(s, "device_del %s on %s", a->driver, a->bus);
	fd = qmp_open();
	if (fd < 0) {
		stress_count(op_add, fd);
		return;
	}
	while (stress_running(s)) {
		/* QEMU frees an id only with DEVICE_DELETED: a new one each time. */
		snprintf(id, sizeof(id), "stress-%s-%d-%d", a->driver, getpid(),
			 cycle++);
		snprintf(args, sizeof(args),
			 "{\"driver\": \"%s\", \"bus\": \"%s\", \"id\": \"%s\"}",
			 a->driver, a->bus, id);
		ret = qmp_exec(fd, "device_add", args, id, answer, sizeof(answer));
		if (!ret && !wait_child(a->port, true))
			ret = -ETIMEDOUT;
		stress_count(op_add, ret);
		if (ret) {
			printf("# device_add %s: %s %s\n", id, strerror(-ret), answer);
			break;
		}
		stress_pause(200);
		snprintf(args, sizeof(args), "{\"id\": \"%s\"}", id);
		ret = qmp_exec(fd, "device_del", args, id, answer, sizeof(answer));
		if (!ret)
			ret = qmp_wait_event(fd, "DEVICE_DELETED", id, PLUG_TIMEOUT_MS);
		stress_count(op_del, ret);
		if (ret) {
			/* The test's final check reports a device left behind. */
			printf("# device_del %s: %s %s\n", id, strerror(-ret), answer);
			break;
		}
	}
	close(fd);
}
