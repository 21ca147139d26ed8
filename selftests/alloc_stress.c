// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Many agents at once never get the same device twice: N processes (8)
 * each run M operations (50) of random alloc-new (count 1 or 2) and
 * alloc-del of one of their own allocations, over the stand-in GPUs of
 * topology "full", and after every step dump the ledger and check its
 * invariant (ledger_check()): no device in two allocations, every device
 * of an allocation reporting that allocation in dev-get. Any violation, or
 * any answer other than success or ENOSPC, fails the test.
 * GPUCTL_STRESS_PROCS and GPUCTL_STRESS_OPS change N and M.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ledger.h"
#include "testlib.h"

#define MAX_PROCS	64
#define MAX_HELD	16

/* Reservable GPUs of topology "full" whose groups are viable. */
static const char * const gpus[] = {
	"0000:01:00.0", "0000:02:00.0", "0000:05:00.0", "0000:07:00.0",
	"0000:81:00.0",
};

FIXTURE(stress) {
	struct nlc c;
	__u32 rules[ARRAY_SIZE(gpus)];
	int nrules;
	char why[4096];
};

FIXTURE_SETUP(stress)
{
	struct nlc_alloc *allocs;
	size_t i;
	int n;

	ASSERT_EQ(0, nlc_open(&self->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_alloc_dump(&self->c, &allocs, &n, NULL));
	free(allocs);
	ASSERT_EQ(0, n) TH_LOG("%d allocations left by an earlier test", n);
	for (i = 0; i < ARRAY_SIZE(gpus); i++) {
		__u32 id;
		int ret = ledger_reserve(&self->c, gpus[i], false, &id);

		if (id)
			self->rules[self->nrules++] = id;
		ASSERT_EQ(0, ret) TH_LOG("reserve %s: %s '%s'", gpus[i],
					 strerror(-ret), self->c.extack);
	}
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	ledger_clear(&self->c);
	for (i = 0; i < self->nrules; i++)
		nlc_rule_del(&self->c, &self->rules[i], NULL);
	nlc_close(&self->c);
}

static int env_int(const char *name, int def, int max)
{
	const char *s = getenv(name);
	int v = s ? atoi(s) : def;

	return v < 1 ? def : v > max ? max : v;
}

struct agent {
	int index;
	struct nlc c;
	char owner[NLC_UUID_LEN];
	__u32 held[MAX_HELD];
	int nheld;
	int made, full, deleted, violations, errors;
	char why[4096];
};

static void agent_error(struct agent *ag, const char *what, int ret)
{
	fprintf(stderr, "# agent %d: %s: %s '%s'\n", ag->index, what,
		strerror(-ret), ag->c.extack);
	ag->errors++;
}

static void agent_new(struct agent *ag)
{
	struct nlc_alloc_req req = { .owner = ag->owner };
	struct nlc_alloc a;
	int ret;

	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_COUNT, 1 + rand() % 2);
	ret = nlc_alloc_new(&ag->c, &req, &a);
	if (ret == -ENOSPC) {
		ag->full++;
		return;
	}
	if (ret) {
		agent_error(ag, "alloc-new", ret);
		return;
	}
	ag->made++;
	if (a.gpus != req.count || a.ndevices < (int)a.gpus) {
		fprintf(stderr, "# agent %d: asked for %u GPUs, got %u in %d devices\n",
			ag->index, req.count, a.gpus, a.ndevices);
		ag->violations++;
	}
	if (ag->nheld < MAX_HELD)
		ag->held[ag->nheld++] = a.id;
	else
		nlc_alloc_del(&ag->c, &a.id, NULL);
}

/* Only this agent deletes its allocations: each delete must succeed. */
static void agent_del(struct agent *ag)
{
	int i = rand() % ag->nheld;
	int ret = nlc_alloc_del(&ag->c, &ag->held[i], NULL);

	if (ret)
		agent_error(ag, "alloc-del", ret);
	else
		ag->deleted++;
	ag->held[i] = ag->held[--ag->nheld];
}

static int agent_run(int index, int ops)
{
	struct agent *ag = calloc(1, sizeof(*ag));
	int op, bad;

	if (!ag || nlc_open(&ag->c))
		return 1;
	ag->index = index;
	snprintf(ag->owner, sizeof(ag->owner),
		 "5157e55e-0000-4000-8000-%012x", index);
	srand(getpid());
	for (op = 0; op < ops; op++) {
		if (ag->nheld && rand() % 2)
			agent_del(ag);
		else
			agent_new(ag);
		bad = ledger_check(&ag->c, ag->why, sizeof(ag->why));
		if (bad) {
			fprintf(stderr, "# agent %d step %d: %s\n", index, op,
				ag->why);
			ag->violations += bad > 0 ? bad : 1;
		}
	}
	while (ag->nheld)
		agent_del(ag);
	printf("# agent %d: %d made, %d ENOSPC, %d deleted, %d violations, %d errors\n",
	       index, ag->made, ag->full, ag->deleted, ag->violations,
	       ag->errors);
	bad = ag->violations || ag->errors;
	nlc_close(&ag->c);
	free(ag);
	return bad;
}

TEST_F_TIMEOUT(stress, concurrent, 900)
{
	int procs = env_int("GPUCTL_STRESS_PROCS", 8, MAX_PROCS);
	int ops = env_int("GPUCTL_STRESS_OPS", 50, 100000);
	pid_t pids[MAX_PROCS];
	struct nlc_alloc *allocs;
	int i, n, status, failed = 0;

	TH_LOG("%d processes x %d operations over %zu GPUs", procs, ops,
	       ARRAY_SIZE(gpus));
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(agent_run(i, ops));
	}
	for (i = 0; i < procs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed) TH_LOG("%d of %d agents saw a violation or an error",
				    failed, procs);
	EXPECT_EQ(0, ledger_check(&self->c, self->why, sizeof(self->why)))
		TH_LOG("%s", self->why);
	/* Every agent deleted what it made. */
	ASSERT_EQ(0, nlc_alloc_dump(&self->c, &allocs, &n, NULL));
	free(allocs);
	EXPECT_EQ(0, n);
	for (i = 0; i < (int)ARRAY_SIZE(gpus); i++) {
		struct nlc_dev d;

		ASSERT_EQ(0, nlc_dev_get(&self->c, gpus[i], &d));
		EXPECT_FALSE(NLC_HAS(&d, GPUCTL_A_DEV_ALLOCATION))
			TH_LOG("%s still reports allocation %u", gpus[i],
			       d.allocation);
	}
}

TEST_HARNESS_MAIN
