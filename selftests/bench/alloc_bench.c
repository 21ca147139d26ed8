// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * alloc_bench: what an allocation costs, as a ratio to a netlink round
 * trip that does no work, both measured in the same run.
 *
 *   alloc_bench [-n ROUNDS] [-c CLIENTS] ADDR...
 *
 * Reserves the GPUs ADDR (rules with take), then for 1 client and for
 * CLIENTS (8) concurrent clients, each a process with its own socket:
 *   baseline  ROUNDS dev-get do requests of the first GPU per client
 *   alloc     ROUNDS alloc-new count 1 + alloc-del of that allocation
 * and prints the wall time per operation and the ratio alloc/baseline.
 * With more clients than GPUs some alloc-new calls find no free GPU;
 * they are counted and reported (an ENOSPC costs a placement too), and
 * the round goes on. Rules and allocations are removed at the end.
 * A benchmark: it fails only when a step cannot run, never on numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../ledger.h"

#define MAX_CLIENTS	64
#define MAX_GPUS	16

enum bench_op { OP_BASELINE, OP_ALLOC };

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * Shared with the clients: what each saw, and two pipes. A client writes
 * a byte to @ready once its socket is open and blocks reading @go, which
 * the parent closes to start them all at once (no spinning: the guest
 * has two CPUs for eight clients).
 */
struct board {
	long enospc[MAX_CLIENTS];
	long errors[MAX_CLIENTS];
	int ready[2];
	int go[2];
};

static int one_round(struct nlc *c, enum bench_op what, const char *addr,
		     const char *owner, long *enospc)
{
	struct nlc_alloc_req req = { .owner = owner };
	struct nlc_alloc a;
	struct nlc_dev d;
	int ret;

	if (what == OP_BASELINE)
		return nlc_dev_get(c, addr, &d);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_COUNT, 1);
	ret = nlc_alloc_new(c, &req, &a);
	if (ret == -ENOSPC) {
		(*enospc)++;
		return 0;
	}
	return ret ?: nlc_alloc_del(c, &a.id, NULL);
}

static void client(struct board *b, int index, enum bench_op what, int rounds,
		   const char *addr)
{
	char owner[NLC_UUID_LEN];
	struct nlc c;
	int i;

	char byte = 0;

	snprintf(owner, sizeof(owner), "be9c4a11-0000-4000-8000-%012x", index);
	close(b->go[1]);
	if (nlc_open(&c) || write(b->ready[1], &byte, 1) != 1)
		_exit(1);
	if (read(b->go[0], &byte, 1) != 0)
		_exit(1);
	for (i = 0; i < rounds; i++)
		if (one_round(&c, what, addr, owner, &b->enospc[index]))
			b->errors[index]++;
	nlc_close(&c);
	_exit(0);
}

/* Wall time in us of @clients processes each doing @rounds of @what. */
static double run(struct board *b, int clients, enum bench_op what, int rounds,
		  const char *addr, long *enospc, long *errors)
{
	pid_t pids[MAX_CLIENTS];
	double t0, t1;
	int i, status;
	char byte;

	memset(b, 0, sizeof(*b));
	if (pipe(b->ready) || pipe(b->go))
		return -1;
	for (i = 0; i < clients; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (!pids[i])
			client(b, i, what, rounds, addr);
	}
	for (i = 0; i < clients; i++)
		if (read(b->ready[0], &byte, 1) != 1)
			return -1;
	t0 = now_us();
	close(b->go[1]);
	close(b->go[0]);
	close(b->ready[0]);
	close(b->ready[1]);
	*enospc = 0;
	*errors = 0;
	for (i = 0; i < clients; i++) {
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			(*errors)++;
	}
	t1 = now_us();
	for (i = 0; i < clients; i++) {
		*enospc += b->enospc[i];
		*errors += b->errors[i];
	}
	return t1 - t0;
}

static int measure(struct board *b, int clients, int rounds, const char *addr)
{
	double base_t, alloc_t, base_us, alloc_us;
	long ops = (long)clients * rounds, enospc, errors, base_errors;

	base_t = run(b, clients, OP_BASELINE, rounds, addr, &enospc,
		     &base_errors);
	alloc_t = run(b, clients, OP_ALLOC, rounds, addr, &enospc, &errors);
	if (base_t < 0 || alloc_t < 0 || base_errors || errors) {
		fprintf(stderr, "alloc_bench: %d clients: %ld errors\n", clients,
			base_errors + errors);
		return 1;
	}
	/* Wall time per operation across all clients: throughput's inverse. */
	base_us = base_t / ops;
	alloc_us = alloc_t / ops;
	printf("%-8d %-36s %8ld %10.1f %10.1f\n", clients,
	       "dev-get do (baseline)", ops, base_t / 1000, base_us);
	printf("%-8d %-36s %8ld %10.1f %10.1f\n", clients,
	       "alloc-new count 1 + alloc-del", ops, alloc_t / 1000, alloc_us);
	if (enospc)
		printf("# %d clients: %ld of %ld alloc-new found no free GPU (ENOSPC)\n",
		       clients, enospc, ops);
	printf("ratio alloc/baseline, %d client%s: %.2f\n", clients,
	       clients == 1 ? "" : "s", base_us > 0 ? alloc_us / base_us : 0);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = 200, clients = 8, opt, i, ngpus = 0, ret = 0;
	__u32 rules[MAX_GPUS];
	struct board *b;
	struct nlc c;

	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			rounds = atoi(optarg);
		else if (opt == 'c')
			clients = atoi(optarg);
		else
			goto usage;
	}
	if (optind == argc || argc - optind > MAX_GPUS || rounds < 1 ||
	    clients < 1 || clients > MAX_CLIENTS)
		goto usage;
	if (nlc_open(&c)) {
		fprintf(stderr, "alloc_bench: gpuctl family not registered\n");
		return 1;
	}
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return 1;
	for (i = optind; i < argc; i++) {
		ret = ledger_reserve(&c, argv[i], false, &rules[ngpus]);
		if (rules[ngpus])
			ngpus++;
		if (ret) {
			fprintf(stderr, "alloc_bench: reserving %s: %s '%s'\n",
				argv[i], strerror(-ret), c.extack);
			goto out;
		}
	}
	printf("# alloc bench: %d rounds per client, %d reserved GPUs\n",
	       rounds, ngpus);
	printf("%-8s %-36s %8s %10s %10s\n", "clients", "operation", "ops",
	       "ms", "us/op");
	ret = measure(b, 1, rounds, argv[optind]) ||
	      measure(b, clients, rounds, argv[optind]);
out:
	ledger_clear(&c);
	for (i = 0; i < ngpus; i++)
		nlc_rule_del(&c, &rules[i], NULL);
	nlc_close(&c);
	return ret;
usage:
	fprintf(stderr, "usage: alloc_bench [-n ROUNDS] [-c CLIENTS] ADDR...\n");
	return 1;
}
