// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The unprivileged sender: a child that becomes uid and gid 65534 with no
 * capabilities, opens its own sockets and then fuzzes like root does
 * (run.c checks that every admin op it reaches fails with EPERM), tries
 * to join every multicast group, and reads the inventory to see what it
 * reveals. The probe is the same, done once, deterministically, while
 * the ledger holds an allocation.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define FZ_NOBODY	65534

/* CapEff of this process, from /proc. */
static unsigned long long fz_cap_eff(void)
{
	unsigned long long caps = ~0ULL;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return caps;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	}
	fclose(f);
	return caps;
}

int fz_drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(FZ_NOBODY) || setuid(FZ_NOBODY) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (getuid() != FZ_NOBODY || geteuid() != FZ_NOBODY ||
	    getgid() != FZ_NOBODY || fz_cap_eff())
		return -EPERM;
	return 0;
}

/* Sockets of its own, opened without privileges, and the group joins. */
static int fz_unpriv_open(struct fz_ctx *c)
{
	struct fz_unpriv_report *rep = c->rep;
	int i, ret;

	fz_sock_close(&c->sk);
	fz_sock_close(&c->mon);
	ret = fz_drop_privileges();
	if (ret) {
		printf("# unprivileged: dropping privileges: %s\n", strerror(-ret));
		return ret;
	}
	rep->dropped = true;
	c->unpriv = true;
	ret = fz_sock_open(&c->sk, 1 << 20) ?: fz_sock_open(&c->mon, 1 << 20) ?:
	      fz_family_get(&c->sk, fz_spec.family, &c->fam);
	if (ret) {
		printf("# unprivileged: family %s: %s\n", fz_spec.family,
		       strerror(-ret));
		return ret;
	}
	rep->n_grps = c->fam.n_grps;
	for (i = 0; i < c->fam.n_grps; i++) {
		__u32 id = c->fam.grps[i].id;
		int err = 0;

		snprintf(rep->grp_name[i], GENL_NAMSIZ, "%s", c->fam.grps[i].name);
		if (setsockopt(c->mon.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &id, sizeof(id)))
			err = errno;
		rep->grp_err[i] = err;
	}
	return 0;
}

void fz_unpriv_run(struct fz_ctx *c, unsigned long messages)
{
	static struct fz_plan plan;
	struct timespec t0, t1;
	unsigned long i;

	c->stats = &c->rep->stats;
	c->rep->ran = true;
	if (fz_unpriv_open(c))
		exit(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; c->stats->sent < messages; i++) {
		fz_gen(c, &plan);
		if (fz_send_one(c, &plan)) {
			printf("# unprivileged: no reply from the family\n");
			exit(1);
		}
		if (!(i % 32))
			fz_mon_drain(c);
	}
	fz_mon_drain(c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->stats->seconds = (t1.tv_sec - t0.tv_sec) +
			    (t1.tv_nsec - t0.tv_nsec) / 1e9;
	exit(0);
}

static void fz_probe_dev_cb(const struct nlmsghdr *nlh, int idx, void *arg)
{
	struct fz_ctx *c = arg;
	char addr[FZ_ADDR_LEN] = "";
	const struct nlattr *a;
	struct fz_iter it;
	int i;

	c->rep->devget_replies++;
	if (fz_dev_secrets(nlh))
		c->rep->devget_secret++;
	for (a = fz_first_genl(&it, nlh); a; a = fz_next(&it)) {
		if ((a->nla_type & NLA_TYPE_MASK) == fz_k.dev_address)
			fz_nla_str(a, addr, sizeof(addr));
	}
	for (i = 0; i < c->n_devs; i++) {
		if (c->devs[i].has_alloc && !strcmp(c->devs[i].addr, addr))
			c->rep->devget_alloc_seen++;
	}
}

/*
 * Every admin op in each of its modes, well formed; the whole inventory,
 * dumped and one by one. The parent keeps still meanwhile, so the devices
 * it saw allocated are allocated.
 */
void fz_unpriv_probe(struct fz_ctx *c)
{
	static struct fz_plan plan;
	unsigned char attrs[64];
	struct fz_res res;
	int op, mode, i;

	c->stats = &c->rep->stats;
	c->rep->ran = true;
	if (fz_unpriv_open(c))
		exit(1);
	for (op = 0; op < fz_spec.n_ops; op++) {
		for (mode = 0; mode < FZ_NR_MODES; mode++) {
			if (!fz_spec.ops[op].admin || !fz_spec.ops[op].mode[mode].present)
				continue;
			fz_gen_valid(c, &plan, op, mode);
			if (fz_send_one(c, &plan))
				exit(1);
		}
	}
	fz_dump(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_dev_get].cmd,
		fz_probe_dev_cb, c, &res);
	for (i = 0; i < c->n_devs; i++) {
		struct nlattr *a = (struct nlattr *)attrs;
		size_t n = strlen(c->devs[i].addr) + 1;

		a->nla_type = fz_k.dev_address;
		a->nla_len = NLA_HDRLEN + n;
		memcpy(attrs + NLA_HDRLEN, c->devs[i].addr, n);
		memset(attrs + a->nla_len, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
		fz_do(&c->sk, c->fam.id, fz_spec.ops[fz_k.op_dev_get].cmd, attrs,
		      NLA_ALIGN(a->nla_len), fz_probe_dev_cb, c, &res);
	}
	exit(0);
}
