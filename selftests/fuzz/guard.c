// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Keeps root's fuzzing off devices of the test rig whose drivers do not
 * survive being unbound and probed again. A rule-new as root is real: it
 * unbinds host drivers, and rule-del probes them again. Seen on 6.12, all
 * environment problems rather than gpuctl's, and each ends or spoils a run:
 *
 * - qxl (1b36:0100, 0000:03:00.0 in topology "full") oopses in
 *   qxl_irq_handler when it is probed again;
 * - virtio-gpu (virtio-pci) WARNs in virtio_gpu_queue_fenced_ctrl_buffer
 *   after a rebind, and its probe then trips fbcon's module_put() WARN;
 * - the guest's only NIC (the e1000 behind the PCIe-to-PCI bridge) shares
 *   an IOMMU group with a GPU; only "force" would take it.
 *
 * So only devices on drivers the rest of the suite rebinds all the time
 * (bochs-drm, snd_hda_intel, the VFIO drivers) or on none may be reached;
 * the list is made once, from the drivers bound when the fuzzer starts.
 *
 * The decision is made on the parsed message, the way the kernel would
 * read it: every "match" attribute up to the first malformed one (a
 * lenient parser stops there, a strict one refuses the message), each
 * parsed as gpuctl_match_parse() does and applied to the inventory with
 * the GPU's companions and, with "force", its group. A rule that would
 * cover the qxl is not sent; "force" is taken out of one that would reach
 * the NIC only through it.
 *
 * A rule that names a function by address or exact ids makes it a unit
 * whatever its class, tracked or not (the runner's virtio devices, the
 * chipset's SATA): a rule that would name a present function gpuctl does
 * not track is not sent either.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"

struct fz_match {
	bool by_address;
	char addr[FZ_ADDR_LEN];
	unsigned int vendor, device, subvendor, subdevice;
	bool any_device;
	bool subsystem;
};

static const char *const fz_rebind_safe[] = {
	"", "bochs-drm", "snd_hda_intel", "vfio-pci", "gpuctl-vfio-pci", "pci-stub",
};

static unsigned int fz_sysfs_hex(const char *addr, const char *file)
{
	char path[PATH_MAX];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", addr, file);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%x", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Every PCI function in sysfs that is not among c->devs. */
static void fz_guard_untracked(struct fz_ctx *c)
{
	struct fz_dev *f;
	struct dirent *e;
	DIR *d;
	int i;

	c->n_untracked = 0;
	d = opendir("/sys/bus/pci/devices");
	if (!d)
		return;
	while ((e = readdir(d)) && c->n_untracked < FZ_MAX_DEVS) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= FZ_ADDR_LEN)
			continue;
		for (i = 0; i < c->n_devs; i++) {
			if (!strcmp(c->devs[i].addr, e->d_name))
				break;
		}
		if (i < c->n_devs)
			continue;
		f = &c->untracked[c->n_untracked++];
		memset(f, 0, sizeof(*f));
		snprintf(f->addr, sizeof(f->addr), "%s", e->d_name);
		f->vendor = fz_sysfs_hex(f->addr, "vendor");
		f->device = fz_sysfs_hex(f->addr, "device");
		f->subvendor = fz_sysfs_hex(f->addr, "subsystem_vendor");
		f->subdevice = fz_sysfs_hex(f->addr, "subsystem_device");
	}
	closedir(d);
	printf("# guard: no rule may name the %d functions gpuctl does not track\n",
	       c->n_untracked);
}

void fz_guard_init(struct fz_ctx *c)
{
	unsigned int k;
	int i;

	fz_guard_untracked(c);

	c->n_prot = 0;
	for (i = 0; i < c->n_devs; i++) {
		const struct fz_dev *d = &c->devs[i];
		bool safe = (d->class >> 16) != 0x02;	/* no NIC */

		for (k = 0; safe && k < ARRAY_SIZE(fz_rebind_safe); k++) {
			if (!strcmp(d->driver, fz_rebind_safe[k]))
				break;
		}
		if (safe && k < ARRAY_SIZE(fz_rebind_safe))
			continue;
		memcpy(c->prot[c->n_prot++], d->addr, FZ_ADDR_LEN);
		printf("# guard: no rule may reach %s (%04x:%04x on %s)\n", d->addr,
		       d->vendor, d->device, d->driver[0] ? d->driver : "no driver");
	}
}

bool fz_dev_protected(const struct fz_ctx *c, const struct fz_dev *d)
{
	int i;

	if (d->vendor == 0x1b36 && d->device == 0x0100)
		return true;
	for (i = 0; i < c->n_prot; i++) {
		if (!strcmp(c->prot[i], d->addr))
			return true;
	}
	return false;
}

/* The qxl alone: the NIC is only reached through a GPU's group. */
static bool fz_dev_untouchable(const struct fz_dev *d)
{
	return d->vendor == 0x1b36 && d->device == 0x0100;
}

static bool fz_hex(const char *s, int n, unsigned int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		int h;

		if (ch >= '0' && ch <= '9')
			h = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			h = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			h = ch - 'A' + 10;
		else
			return false;
		*v = *v << 4 | h;
	}
	return true;
}

/* gpuctl_match_parse(), with the address kept as lower-case text. */
static bool fz_match_parse(const char *s, struct fz_match *m)
{
	size_t len = strlen(s);
	unsigned int v[4] = {}, dom, bus, slot, fn, i;

	memset(m, 0, sizeof(*m));
	if (len == 12) {
		if (s[4] != ':' || s[7] != ':' || s[10] != '.' ||
		    !fz_hex(s, 4, &dom) || !fz_hex(s + 5, 2, &bus) ||
		    !fz_hex(s + 8, 2, &slot) || !fz_hex(s + 11, 1, &fn) ||
		    slot > 0x1f || fn > 7)
			return false;
		m->by_address = true;
		for (i = 0; i < 12; i++)
			m->addr[i] = (s[i] >= 'A' && s[i] <= 'F') ? s[i] + 32 : s[i];
		return true;
	}
	if (len < 6 || s[4] != ':' || !fz_hex(s, 4, &v[0]))
		return false;
	if (len == 6 && s[5] == '*') {
		m->any_device = true;
	} else if (len == 9 || len == 19) {
		if (!fz_hex(s + 5, 4, &v[1]))
			return false;
		if (len == 19) {
			if (s[9] != ':' || s[14] != ':' || !fz_hex(s + 10, 4, &v[2]) ||
			    !fz_hex(s + 15, 4, &v[3]))
				return false;
			m->subsystem = true;
		}
	} else {
		return false;
	}
	m->vendor = v[0];
	m->device = v[1];
	m->subvendor = v[2];
	m->subdevice = v[3];
	return true;
}

static bool fz_match_dev(const struct fz_match *m, const struct fz_dev *d)
{
	if (m->by_address)
		return !strcmp(m->addr, d->addr);
	return d->vendor == m->vendor &&
	       (m->any_device || d->device == m->device) &&
	       (!m->subsystem || (d->subvendor == m->subvendor &&
				  d->subdevice == m->subdevice));
}

/* A rule with @m would name an untracked function; "VVVV:*" names GPUs. */
static bool fz_match_untracked(const struct fz_ctx *c, const struct fz_match *m)
{
	int i;

	if (m->any_device)
		return false;
	for (i = 0; i < c->n_untracked; i++) {
		if (fz_match_dev(m, &c->untracked[i]))
			return true;
	}
	return false;
}

/*
 * What a rule with @s would reach: *@direct when a protected device is
 * matched or a companion of a matched GPU, *@forced when one is reached
 * only through "force". Devices named by address count whatever their
 * role, to err on the safe side.
 */
static void fz_match_reach(const struct fz_ctx *c, const char *s,
			   bool *direct, bool *forced)
{
	struct fz_match m;
	int i, j;

	if (!fz_match_parse(s, &m))
		return;
	if (fz_match_untracked(c, &m))
		*direct = true;
	for (i = 0; i < c->n_devs; i++) {
		const struct fz_dev *gpu = &c->devs[i];

		if (!fz_match_dev(&m, gpu) ||
		    (!m.by_address && gpu->role != fz_k.role_gpu))
			continue;
		if (fz_dev_protected(c, gpu))
			*direct = true;
		if (!gpu->has_group)
			continue;
		for (j = 0; j < c->n_devs; j++) {
			const struct fz_dev *o = &c->devs[j];

			if (j == i || !o->has_group || o->group != gpu->group ||
			    o->role == fz_k.role_bridge || !fz_dev_protected(c, o))
				continue;
			if (o->role == fz_k.role_companion &&
			    !strncmp(o->addr, gpu->addr, 10))
				*direct = true;
			else
				*forced = true;
		}
	}
}

/* Which devices the spec's rule-new with @match text would reach. */
static void fz_match_text(const struct fz_ctx *c, const struct nlattr *a,
			  bool *direct, bool *forced)
{
	char s[FZ_STR_LEN];
	int i;

	fz_nla_str(a, s, sizeof(s));
	s[strnlen(s, sizeof(s) - 1)] = '\0';
	fz_match_reach(c, s, direct, forced);
	/* Belt and braces: text that names the qxl in any shape is not sent. */
	for (i = 0; i < c->n_devs; i++) {
		char ids[8];

		if (!fz_dev_untouchable(&c->devs[i]))
			continue;
		ids[0] = "0123456789abcdef"[c->devs[i].vendor >> 12];
		ids[1] = "0123456789abcdef"[(c->devs[i].vendor >> 8) & 15];
		ids[2] = "0123456789abcdef"[(c->devs[i].vendor >> 4) & 15];
		ids[3] = "0123456789abcdef"[c->devs[i].vendor & 15];
		ids[4] = '\0';
		if (strcasestr(s, ids) || strcasestr(s, c->devs[i].addr + 5))
			*direct = true;
	}
}

/* Drops the "force" attributes of the single message of @p. */
static void fz_strip(struct fz_plan *p, unsigned int force_type)
{
	static unsigned char out[FZ_MSG_MAX];
	struct nlmsghdr *nlh = (struct nlmsghdr *)p->buf;
	size_t in = NLMSG_HDRLEN + GENL_HDRLEN, pos = in, end = nlh->nlmsg_len;

	memcpy(out, p->buf, in);
	while (in + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const void *)(p->buf + in);
		size_t step = NLA_ALIGN(a->nla_len);

		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - in)
			break;
		if (step > end - in)
			step = end - in;
		if ((a->nla_type & NLA_TYPE_MASK) != force_type) {
			memcpy(out + pos, a, step);
			pos += step;
		}
		in += step;
	}
	/* Whatever follows the last well-formed attribute stays as it was. */
	memcpy(out + pos, p->buf + in, end - in);
	pos += end - in;
	((struct nlmsghdr *)out)->nlmsg_len = pos;
	memcpy(p->buf, out, pos);
	p->len = pos;
}

enum fz_guard fz_guard(const struct fz_ctx *c, struct fz_plan *p)
{
	unsigned int match_type = fz_k.rule_match, force_type = fz_k.rule_force;
	int op = fz_k.op_rule_new, k;
	bool strip = false;

	for (k = 0; k < p->n; k++) {
		const struct nlmsghdr *nlh = (const void *)(p->buf + p->m[k].off);
		const struct genlmsghdr *g = (const void *)((const char *)nlh + NLMSG_HDRLEN);
		size_t room = p->len - p->m[k].off;
		bool direct = false, forced = false, force = false;
		const struct nlattr *a;
		struct fz_iter it;

		if (room < NLMSG_HDRLEN + GENL_HDRLEN ||
		    nlh->nlmsg_len > room || nlh->nlmsg_type != c->fam.id ||
		    g->cmd != fz_spec.ops[op].cmd)
			continue;
		for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
			unsigned int type = a->nla_type & NLA_TYPE_MASK;

			if (type == match_type)
				fz_match_text(c, a, &direct, &forced);
			else if (type == force_type)
				force = true;
		}
		if (direct)
			return FZ_GUARD_DROP;
		if (forced && force)
			strip = true;
	}
	if (!strip)
		return FZ_GUARD_PASS;
	if (p->n > 1)
		return FZ_GUARD_DROP;
	fz_strip(p, force_type);
	return FZ_GUARD_STRIPPED;
}
