// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * The allocation ledger over netlink, on the stand-in GPUs of topology
 * "full": allocation by device (a companion follows its GPU), by count,
 * by ids and by NUMA node under each policy; every refusal with its errno,
 * its extack text and the attribute it points at, and the ledger left as
 * it was; requested ids, deletion by id and owner, tenant limits, EPERM
 * for an unprivileged user, rule-del and module unload refused while a
 * device is allocated, and the notifications.
 *
 * GPUs used (topologies/full): 02:00.0 and 05:00.0 (no host driver),
 * 81:00.0 (bochs, NUMA node 1), 07:00.0 with its HDA companion 07:00.1,
 * 09:01.0 (its group holds an e1000 that only "force" takes), 0f:00.0
 * and 0f:00.1 (two GPU functions of one slot, sharing the HDA 0f:00.2) and
 * 01:00.0 (left unreserved). Each test reserves what it needs and deletes its
 * rules, allocations and limits at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ledger.h"
#include "testlib.h"

#define GPU_A		"0000:02:00.0"
#define GPU_B		"0000:05:00.0"
#define GPU_N1		"0000:81:00.0"
#define GPU_MF		"0000:07:00.0"
#define HDA_MF		"0000:07:00.1"
#define GPU_PB		"0000:09:01.0"
/* Two GPU functions of one slot, and the HD audio they share. */
#define GPU_DUAL0	"0000:0f:00.0"
#define GPU_DUAL1	"0000:0f:00.1"
#define HDA_DUAL	"0000:0f:00.2"
#define NIC_PB		"0000:09:02.0"
#define GPU_FREE	"0000:01:00.0"
#define NO_DEV		"0000:7e:1f.6"

#define OWNER1		"6f1c2a9e-0d3b-4c5e-8a7f-112233445566"
#define OWNER1_UPPER	"6F1C2A9E-0D3B-4C5E-8A7F-112233445566"
#define OWNER2		"0e9d8c7b-6a59-4847-b6a5-f4e3d2c1b0a9"
#define NOBODY		65534

#define NTF_TIMEOUT_MS	10000
#define SNAPSHOT_LEN	8192
#define MAX_RULES	8
#define MAX_NODES	4

/* The fixture's state, in a struct of its own so helpers can take it. */
struct alloc_fx {
	struct nlc c;
	struct nlc mon;
	struct nlc_ntf ntf;
	__u32 rules[MAX_RULES];
	int nrules;
	/* NUMA nodes written to sysfs, restored by the teardown. */
	char node_addr[MAX_NODES][NLC_ADDR_LEN];
	int node_old[MAX_NODES];
	int nnodes;
	char snap0[SNAPSHOT_LEN];
	char snap1[SNAPSHOT_LEN];
	char why[4096];
};

FIXTURE(alloc) {
	struct alloc_fx fx;
};

static void log_error(struct __test_metadata *_metadata, const char *what,
		      const struct nlc *c)
{
	TH_LOG("%s: errno %d (%s), extack '%s', bad attr %d, missing attr %u",
	       what, c->err, strerror(c->err), c->extack, c->bad_attr,
	       c->miss_type);
}

static int read_node(const char *addr)
{
	char path[128], buf[16] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", addr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -100;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -100;
}

/* Places @addr on @node (-1: none) through sysfs; the teardown restores it. */
static int set_node(struct alloc_fx *fx, const char *addr, int node)
{
	char val[16];

	if (fx->nnodes == MAX_NODES)
		return -ENOSPC;
	strscpy(fx->node_addr[fx->nnodes], addr, NLC_ADDR_LEN);
	fx->node_old[fx->nnodes] = read_node(addr);
	if (fx->node_old[fx->nnodes] == -100)
		return -ENOENT;
	fx->nnodes++;
	snprintf(val, sizeof(val), "%d", node);
	return tl_writef(val, "/sys/bus/pci/devices/%s/numa_node", addr);
}

FIXTURE_SETUP(alloc)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc *allocs;
	struct nlc_rule *rules;
	int n;

	ASSERT_EQ(0, nlc_open(&fx->c)) TH_LOG("gpuctl family not registered");
	ASSERT_EQ(0, nlc_open(&fx->mon));
	nlc_set_rcvbuf(&fx->mon, 4 << 20);
	ASSERT_EQ(0, nlc_monitor_join(&fx->mon));
	/* Placement picks among every reserved GPU: start from nothing. */
	ASSERT_EQ(0, nlc_rule_dump(&fx->c, &rules, &n, NULL));
	free(rules);
	ASSERT_EQ(0, n) TH_LOG("%d rules left by an earlier test", n);
	ASSERT_EQ(0, nlc_alloc_dump(&fx->c, &allocs, &n, NULL))
		log_error(_metadata, "alloc dump", &fx->c);
	free(allocs);
	ASSERT_EQ(0, n) TH_LOG("%d allocations left by an earlier test", n);
}

FIXTURE_TEARDOWN(alloc)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_limit *limits, l;
	int i, n;

	if (!fx->c.sk)
		return;
	ledger_clear(&fx->c);
	if (!nlc_limit_dump(&fx->c, &limits, &n, NULL)) {
		for (i = 0; i < n; i++)
			nlc_limit_set(&fx->c, limits[i].scope, limits[i].name,
				      NULL, &l);
		free(limits);
	}
	for (i = 0; i < fx->nrules; i++)
		if (fx->rules[i])
			nlc_rule_del(&fx->c, &fx->rules[i], NULL);
	for (i = 0; i < fx->nnodes; i++) {
		char val[16];

		snprintf(val, sizeof(val), "%d", fx->node_old[i]);
		tl_writef(val, "/sys/bus/pci/devices/%s/numa_node",
			  fx->node_addr[i]);
	}
	nlc_close(&fx->mon);
	nlc_close(&fx->c);
}

/* Reserves @addr (with take) for the test; 0 or -errno. */
static int reserve(struct alloc_fx *fx, const char *addr)
{
	__u32 id;
	int ret;

	if (fx->nrules == MAX_RULES)
		return -ENOSPC;
	ret = ledger_reserve(&fx->c, addr, false, &id);
	if (id)
		fx->rules[fx->nrules++] = id;
	if (ret)
		fprintf(stderr, "# reserving %s: %s '%s'\n", addr, strerror(-ret),
			fx->c.extack);
	return ret;
}

static void req_init(struct nlc_alloc_req *req, const char *owner)
{
	memset(req, 0, sizeof(*req));
	req->owner = owner;
}

static void req_dev(struct nlc_alloc_req *req, const char *addr)
{
	req->devices[req->ndevices++] = addr;
}

static void req_count(struct nlc_alloc_req *req, __u32 count)
{
	nlc_alloc_req_set(req, GPUCTL_A_ALLOC_COUNT, count);
}

static void req_numa(struct nlc_alloc_req *req, __u32 node, __u32 policy)
{
	nlc_alloc_req_set(req, GPUCTL_A_ALLOC_NUMA_NODE, node);
	if (policy)
		nlc_alloc_req_set(req, GPUCTL_A_ALLOC_NUMA_POLICY, policy);
}

/* The devices of @a as "A,B", to compare with an expected list. */
static const char *devs_of(const struct nlc_alloc *a, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < a->ndevices && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 a->devices[i]);
	return buf;
}

/* @a as gpuctl-nl prints it, to compare two allocations readably. */
static const char *alloc_line(const struct nlc_alloc *a, char *buf,
			      size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	buf[0] = '\0';
	if (f) {
		nlc_print_alloc(f, "alloc", a);
		fclose(f);
	}
	return buf;
}

/* The allocation @addr belongs to per dev-get, 0 when none. */
static __u32 allocation_of(struct nlc *c, const char *addr)
{
	struct nlc_dev d;

	if (nlc_dev_get(c, addr, &d))
		return ~0u;
	return NLC_HAS(&d, GPUCTL_A_DEV_ALLOCATION) ? d.allocation : 0;
}

/* The next allocation notification @cmd about allocation @id, in @fx->ntf. */
static int wait_alloc_ntf(struct alloc_fx *fx, __u8 cmd, __u32 id)
{
	long deadline = tl_now_ms() + NTF_TIMEOUT_MS;
	int ret;

	for (;;) {
		long left = deadline - tl_now_ms();

		if (left <= 0)
			return 0;
		ret = nlc_monitor_next_ntf(&fx->mon, left, &fx->ntf);
		if (ret <= 0)
			return ret;
		if (fx->ntf.cmd != cmd || fx->ntf.alloc.id != id)
			continue;
		fprintf(stderr, "# event ");
		nlc_print_ntf(stderr, &fx->ntf);
		return 1;
	}
}

/* alloc-new that must succeed and yield exactly @want ("A,B"). */
static bool alloc_ok(struct __test_metadata *_metadata, struct alloc_fx *fx,
		     const struct nlc_alloc_req *req, struct nlc_alloc *a,
		     const char *want)
{
	char devs[512];
	int ret = nlc_alloc_new(&fx->c, req, a);

	EXPECT_EQ(0, ret) {
		log_error(_metadata, "alloc-new", &fx->c);
		return false;
	}
	EXPECT_STREQ(want, devs_of(a, devs, sizeof(devs)));
	return !strcmp(want, devs);
}

#define ALLOC_OK(req, a, want)	ASSERT_TRUE(alloc_ok(_metadata, fx, req, a, want))

/* Not checked: the attribute an extack points at. */
#define ANY_ATTR	-2

/*
 * alloc-new that must fail with @err, the extack @msg (NULL: any text but
 * none) and the bad attribute @attr (-1: none), leaving the ledger as it
 * was.
 */
static void alloc_fails(struct __test_metadata *_metadata,
			struct alloc_fx *fx, const struct nlc_alloc_req *req,
			int err, const char *msg, int attr)
{
	struct nlc_alloc a;

	EXPECT_EQ(0, ledger_snapshot(&fx->c, fx->snap0, SNAPSHOT_LEN));
	EXPECT_EQ(-err, nlc_alloc_new(&fx->c, req, &a));
	log_error(_metadata, "alloc-new", &fx->c);
	EXPECT_STREQ(msg ?: fx->c.extack, fx->c.extack);
	EXPECT_NE(0, fx->c.extack[0]);
	EXPECT_EQ(attr == ANY_ATTR ? fx->c.bad_attr : attr, fx->c.bad_attr);
	EXPECT_EQ(0, ledger_snapshot(&fx->c, fx->snap1, SNAPSHOT_LEN));
	EXPECT_STREQ(fx->snap0, fx->snap1);
}

#define ALLOC_FAILS(req, err, msg, attr)				\
	alloc_fails(_metadata, fx, req, err, msg, attr)
/* A count that cannot be met: ENOSPC, the text, on the count attribute. */
#define NO_ROOM(req, msg)						\
	alloc_fails(_metadata, fx, req, ENOSPC, msg, GPUCTL_A_ALLOC_COUNT)

/* Everything a request carries comes back, owner in lower case. */
TEST_F(alloc, by_device_with_companion)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a, got, *allocs;
	char want[1024], line[1024];
	int n;

	ASSERT_EQ(0, reserve(fx, GPU_MF));
	req_init(&req, OWNER1_UPPER);
	req.name = "vm-one";
	req.account = "acme";
	req.project = "p1";
	req.domain = "root";
	req_dev(&req, GPU_MF);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_DETACH_ON_STOP, 0);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_UID, 107);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_GID, 108);
	ALLOC_OK(&req, &a, GPU_MF "," HDA_MF);
	nlc_print_alloc(stderr, "# reply", &a);
	EXPECT_NE(0, a.id);
	EXPECT_STREQ(OWNER1, a.owner);
	EXPECT_STREQ("vm-one", a.name);
	EXPECT_STREQ("acme", a.account);
	EXPECT_STREQ("p1", a.project);
	EXPECT_STREQ("root", a.domain);
	EXPECT_TRUE(a.detach_on_stop);
	EXPECT_EQ(107, a.uid);
	EXPECT_EQ(108, a.gid);
	EXPECT_EQ(1, a.gpus);
	EXPECT_EQ(GPUCTL_ALLOC_STATE_IDLE, a.state);
	EXPECT_FALSE(NLC_HAS(&a, GPUCTL_A_ALLOC_STATE_REASON));
	EXPECT_FALSE(NLC_HAS(&a, GPUCTL_A_ALLOC_END));

	EXPECT_EQ(a.id, allocation_of(&fx->c, GPU_MF));
	EXPECT_EQ(a.id, allocation_of(&fx->c, HDA_MF));
	EXPECT_EQ(0, ledger_check(&fx->c, fx->why, sizeof(fx->why)))
		TH_LOG("%s", fx->why);

	/* alloc-get and the dump say what the reply said. */
	alloc_line(&a, want, sizeof(want));
	ASSERT_EQ(0, nlc_alloc_get(&fx->c, a.id, &got));
	EXPECT_STREQ(want, alloc_line(&got, line, sizeof(line)));
	ASSERT_EQ(0, nlc_alloc_dump(&fx->c, &allocs, &n, NULL));
	ASSERT_EQ(1, n);
	EXPECT_STREQ(want, alloc_line(&allocs[0], line, sizeof(line)));
	free(allocs);

	/* The notification carries what alloc-get does. */
	EXPECT_EQ(1, wait_alloc_ntf(fx, GPUCTL_CMD_ALLOC_NEW_NTF, a.id));
	EXPECT_STREQ(want, alloc_line(&fx->ntf.alloc, line, sizeof(line)));

	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL))
		log_error(_metadata, "alloc-del", &fx->c);
	EXPECT_EQ(1, wait_alloc_ntf(fx, GPUCTL_CMD_ALLOC_DEL_NTF, a.id));
	EXPECT_EQ(GPUCTL_ALLOC_END_DELETED, fx->ntf.alloc.end);
	EXPECT_STREQ(OWNER1, fx->ntf.alloc.owner);
	EXPECT_EQ(2, fx->ntf.alloc.ndevices);
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_MF));
	EXPECT_EQ(0, allocation_of(&fx->c, HDA_MF));
	EXPECT_EQ(-ENOENT, nlc_alloc_get(&fx->c, a.id, &got));
}

/* Two GPUs of one slot bring their shared companion once. */
TEST_F(alloc, two_gpus_one_slot)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;

	ASSERT_EQ(0, reserve(fx, GPU_DUAL0));
	ASSERT_EQ(0, reserve(fx, GPU_DUAL1));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_DUAL0);
	req_dev(&req, GPU_DUAL1);
	ALLOC_OK(&req, &a, GPU_DUAL0 "," GPU_DUAL1 "," HDA_DUAL);
	EXPECT_EQ(2, a.gpus);
	EXPECT_EQ(3, a.ndevices);
	EXPECT_EQ(a.id, allocation_of(&fx->c, HDA_DUAL));
	EXPECT_EQ(0, ledger_check(&fx->c, fx->why, sizeof(fx->why)))
		TH_LOG("%s", fx->why);
	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL))
		log_error(_metadata, "alloc-del", &fx->c);
	EXPECT_EQ(0, allocation_of(&fx->c, HDA_DUAL));
}

/* Count picks in address order; a match narrows the choice. */
TEST_F(alloc, by_count_and_match)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;
	struct nlc_dev n1;
	char ids[16], msg[128];

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	ASSERT_EQ(0, reserve(fx, GPU_N1));
	ASSERT_EQ(0, nlc_dev_get(&fx->c, GPU_N1, &n1));
	snprintf(ids, sizeof(ids), "%04x:%04x", n1.vendor_id, n1.device_id);

	req_init(&req, OWNER1);
	req_count(&req, 2);
	ALLOC_OK(&req, &a, GPU_A "," GPU_B);
	EXPECT_EQ(2, a.gpus);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));

	req_init(&req, OWNER1);
	req_count(&req, 1);
	req.match = ids;
	ALLOC_OK(&req, &a, GPU_N1);
	EXPECT_EQ(a.id, allocation_of(&fx->c, GPU_N1));

	/* What is left: two GPUs, none of them matching. */
	req_count(&req, 1);
	snprintf(msg, sizeof(msg), "only 0 free GPUs matching %s", ids);
	NO_ROOM(&req, msg);
	req.match = NULL;
	req_count(&req, 3);
	NO_ROOM(&req, "only 2 free GPUs");
	req_count(&req, 2);
	ALLOC_OK(&req, &a, GPU_A "," GPU_B);
	EXPECT_EQ(0, ledger_check(&fx->c, fx->why, sizeof(fx->why)))
		TH_LOG("%s", fx->why);
}

/*
 * Placement under each policy, with A on node 0, B on no node and N1 on
 * node 1: required takes the node only, legacy the node and no-node GPUs,
 * preferred the node first and then any.
 */
TEST_F(alloc, numa)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;

	ASSERT_EQ(1, read_node(GPU_N1)) TH_LOG("%s not on node 1", GPU_N1);
	ASSERT_EQ(0, set_node(fx, GPU_A, 0));
	ASSERT_EQ(0, set_node(fx, GPU_B, -1));
	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	ASSERT_EQ(0, reserve(fx, GPU_N1));

	req_init(&req, OWNER1);
	req_count(&req, 2);
	req_numa(&req, 1, GPUCTL_NUMA_POLICY_REQUIRED);
	NO_ROOM(&req, "only 1 free GPU on node 1");
	req_numa(&req, 0, GPUCTL_NUMA_POLICY_REQUIRED);
	NO_ROOM(&req, "only 1 free GPU on node 0");
	req_count(&req, 1);
	ALLOC_OK(&req, &a, GPU_A);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));
	req_numa(&req, 1, GPUCTL_NUMA_POLICY_REQUIRED);
	ALLOC_OK(&req, &a, GPU_N1);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));

	/* Legacy: the node's GPUs and B, never A on the other node. */
	req_count(&req, 2);
	req_numa(&req, 1, GPUCTL_NUMA_POLICY_LEGACY);
	ALLOC_OK(&req, &a, GPU_B "," GPU_N1);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));
	req_count(&req, 3);
	NO_ROOM(&req, "only 2 free GPUs on node 1");
	/* No policy is legacy. */
	req_init(&req, OWNER1);
	req_count(&req, 3);
	req_numa(&req, 0, 0);
	NO_ROOM(&req, "only 2 free GPUs on node 0");
	req_count(&req, 2);
	ALLOC_OK(&req, &a, GPU_A "," GPU_B);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));

	/* Preferred: N1 first although A and B come before it. */
	req_count(&req, 1);
	req_numa(&req, 1, GPUCTL_NUMA_POLICY_PREFERRED);
	ALLOC_OK(&req, &a, GPU_N1);
	req_count(&req, 2);
	ALLOC_OK(&req, &a, GPU_A "," GPU_B);
	req_count(&req, 1);
	NO_ROOM(&req, "only 0 free GPUs");
	/* And required on a node whose GPU is taken. */
	req_numa(&req, 1, GPUCTL_NUMA_POLICY_REQUIRED);
	NO_ROOM(&req, "only 0 free GPUs on node 1");
}

/* A named GPU that cannot be allocated: errno, text, attribute. */
TEST_F(alloc, device_refused)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;
	struct nlc_dev pb;
	char msg[160];

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_MF));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	ALLOC_OK(&req, &a, GPU_A);

	req_init(&req, OWNER2);
	req_dev(&req, GPU_A);
	snprintf(msg, sizeof(msg), GPU_A " is allocated to %u", a.id);
	ALLOC_FAILS(&req, EBUSY, msg, GPUCTL_A_ALLOC_DEVICE);

	req_init(&req, OWNER2);
	req_dev(&req, GPU_FREE);
	ALLOC_FAILS(&req, EBUSY, GPU_FREE " is not reserved",
		    GPUCTL_A_ALLOC_DEVICE);

	req_init(&req, OWNER2);
	req_dev(&req, HDA_MF);
	ALLOC_FAILS(&req, EINVAL, HDA_MF " is not a GPU", GPUCTL_A_ALLOC_DEVICE);

	req_init(&req, OWNER2);
	req_dev(&req, NO_DEV);
	ALLOC_FAILS(&req, ENODEV, NO_DEV ": no such device",
		    GPUCTL_A_ALLOC_DEVICE);

	/* The group of 09:01.0 keeps its e1000 without force. */
	ASSERT_EQ(0, reserve(fx, GPU_PB));
	ASSERT_EQ(0, nlc_dev_get(&fx->c, GPU_PB, &pb));
	snprintf(msg, sizeof(msg), "group %u not viable: " NIC_PB
		 " bound to e1000", pb.iommu_group);
	req_init(&req, OWNER2);
	req_dev(&req, GPU_PB);
	ALLOC_FAILS(&req, EBUSY, msg, GPUCTL_A_ALLOC_DEVICE);
	/* Counting skips it and says why it came up short. */
	req_init(&req, OWNER2);
	req_count(&req, 2);
	snprintf(msg, sizeof(msg),
		 "only 1 free GPU; group %u not viable: " NIC_PB
		 " bound to e1000", pb.iommu_group);
	NO_ROOM(&req, msg);
}

/* All or nothing: one bad GPU among good ones allocates none of them. */
TEST_F(alloc, all_or_nothing)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;
	char msg[160];

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	ASSERT_EQ(0, reserve(fx, GPU_MF));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_B);
	ALLOC_OK(&req, &a, GPU_B);

	req_init(&req, OWNER2);
	req_dev(&req, GPU_A);
	req_dev(&req, GPU_MF);
	req_dev(&req, GPU_B);
	snprintf(msg, sizeof(msg), GPU_B " is allocated to %u", a.id);
	ALLOC_FAILS(&req, EBUSY, msg, GPUCTL_A_ALLOC_DEVICE);
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_A));
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_MF));
	EXPECT_EQ(0, allocation_of(&fx->c, HDA_MF));

	req_init(&req, OWNER2);
	req_dev(&req, GPU_A);
	req_dev(&req, GPU_FREE);
	ALLOC_FAILS(&req, EBUSY, GPU_FREE " is not reserved",
		    GPUCTL_A_ALLOC_DEVICE);
	req_init(&req, OWNER2);
	req_count(&req, 3);
	NO_ROOM(&req, "only 2 free GPUs");
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_A));
	EXPECT_EQ(0, ledger_check(&fx->c, fx->why, sizeof(fx->why)))
		TH_LOG("%s", fx->why);
}

/* Requests the policy or the precheck must refuse, changing nothing. */
TEST_F(alloc, malformed)
{
	struct alloc_fx *fx = &self->fx;
	static const char long_label[] =
		"a123456789012345678901234567890123456789012345678901234567890123";
	struct nlc_alloc_req req;
	struct nlc_alloc a;

	ASSERT_EQ(0, reserve(fx, GPU_A));

	req_init(&req, NULL);
	req_dev(&req, GPU_A);
	EXPECT_EQ(-EINVAL, nlc_alloc_new(&fx->c, &req, &a));
	EXPECT_EQ(GPUCTL_A_ALLOC_OWNER, fx->c.miss_type);
	req_init(&req, "not-a-uuid");
	req_dev(&req, GPU_A);
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_OWNER);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	req_dev(&req, GPU_A);
	ALLOC_FAILS(&req, EINVAL, GPU_A " is named twice",
		    GPUCTL_A_ALLOC_DEVICE);
	req_init(&req, OWNER1);
	req_dev(&req, "0000:02:00");
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_DEVICE);

	/* Neither device nor count; both; ids or NUMA without count. */
	req_init(&req, OWNER1);
	ALLOC_FAILS(&req, EINVAL, NULL, ANY_ATTR);
	req_dev(&req, GPU_A);
	req_count(&req, 1);
	ALLOC_FAILS(&req, EINVAL, NULL, ANY_ATTR);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	req.match = "1234:1111";
	ALLOC_FAILS(&req, EINVAL, NULL, ANY_ATTR);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	req_numa(&req, 0, GPUCTL_NUMA_POLICY_REQUIRED);
	ALLOC_FAILS(&req, EINVAL, NULL, ANY_ATTR);
	req_init(&req, OWNER1);
	req_count(&req, 0);
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_COUNT);
	req_init(&req, OWNER1);
	req_count(&req, 1);
	req.match = "garbage";
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_MATCH);
	req_init(&req, OWNER1);
	req_count(&req, 1);
	/* The policy's range check answers ERANGE. */
	req_numa(&req, 0, 77);
	ALLOC_FAILS(&req, ERANGE, NULL, GPUCTL_A_ALLOC_NUMA_POLICY);
	req_init(&req, OWNER1);
	req_count(&req, 1);
	req_numa(&req, 5000, 0);
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_NUMA_NODE);
	req_init(&req, OWNER1);
	req_count(&req, 1);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_NUMA_POLICY,
			  GPUCTL_NUMA_POLICY_REQUIRED);
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_NUMA_POLICY);
	/* Ids only: an address belongs in "device". */
	req_init(&req, OWNER1);
	req_count(&req, 1);
	req.match = GPU_A;
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_MATCH);
	/* The policy's max-len: 63 characters for a label, 36 for a UUID. */
	req_init(&req, OWNER1);
	req_count(&req, 1);
	req.account = long_label;
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_ACCOUNT);
	req_init(&req, OWNER1 "0");
	req_count(&req, 1);
	ALLOC_FAILS(&req, EINVAL, NULL, GPUCTL_A_ALLOC_OWNER);
}

/* A requested id is taken as given; a taken id is EEXIST. */
TEST_F(alloc, requested_id)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a, b;

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_ID, 4000);
	ALLOC_OK(&req, &a, GPU_A);
	EXPECT_EQ(4000, a.id);
	EXPECT_EQ(4000, allocation_of(&fx->c, GPU_A));

	req_init(&req, OWNER2);
	req_dev(&req, GPU_B);
	nlc_alloc_req_set(&req, GPUCTL_A_ALLOC_ID, 4000);
	ALLOC_FAILS(&req, EEXIST, NULL, GPUCTL_A_ALLOC_ID);
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_B));

	/* Without an id the kernel picks one that is free. */
	req_init(&req, OWNER2);
	req_dev(&req, GPU_B);
	ALLOC_OK(&req, &b, GPU_B);
	EXPECT_NE(0, b.id);
	EXPECT_NE(4000, b.id);
}

/* alloc-del by id and by owner (all of the owner's), ENOENT otherwise. */
TEST_F(alloc, delete)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a1, a2, b, got;
	__u32 unknown = 0xfffffff0;
	int n, seen;

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	ASSERT_EQ(0, reserve(fx, GPU_MF));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	ALLOC_OK(&req, &a1, GPU_A);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_MF);
	ALLOC_OK(&req, &a2, GPU_MF "," HDA_MF);
	req_init(&req, OWNER2);
	req_dev(&req, GPU_B);
	ALLOC_OK(&req, &b, GPU_B);

	EXPECT_EQ(-ENOENT, nlc_alloc_del(&fx->c, &unknown, NULL));
	log_error(_metadata, "alloc-del unknown id", &fx->c);
	EXPECT_STREQ("no such allocation", fx->c.extack);
	EXPECT_EQ(GPUCTL_A_ALLOC_ID, fx->c.bad_attr);
	EXPECT_EQ(-ENOENT, nlc_alloc_get(&fx->c, unknown, &got));
	EXPECT_EQ(-ENOENT, nlc_alloc_del(&fx->c, NULL,
					 "00000000-0000-0000-0000-000000000000"));
	log_error(_metadata, "alloc-del unknown owner", &fx->c);
	EXPECT_NE(0, fx->c.extack[0]);
	EXPECT_EQ(-EINVAL, nlc_alloc_del(&fx->c, NULL, NULL));
	log_error(_metadata, "alloc-del without id or owner", &fx->c);
	EXPECT_NE(0, fx->c.extack[0]);

	/* By owner, in upper case: both of OWNER1's go, OWNER2's stays. */
	ASSERT_EQ(0, nlc_alloc_del(&fx->c, NULL, OWNER1_UPPER))
		log_error(_metadata, "alloc-del owner", &fx->c);
	for (n = 0, seen = 0; n < 2; n++) {
		__u32 id = n ? a2.id : a1.id;

		if (wait_alloc_ntf(fx, GPUCTL_CMD_ALLOC_DEL_NTF, id) == 1 &&
		    fx->ntf.alloc.end == GPUCTL_ALLOC_END_DELETED)
			seen++;
	}
	EXPECT_EQ(2, seen);
	EXPECT_EQ(-ENOENT, nlc_alloc_get(&fx->c, a1.id, &got));
	EXPECT_EQ(-ENOENT, nlc_alloc_get(&fx->c, a2.id, &got));
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_A));
	EXPECT_EQ(0, allocation_of(&fx->c, HDA_MF));
	EXPECT_EQ(b.id, allocation_of(&fx->c, GPU_B));
	EXPECT_EQ(-ENOENT, nlc_alloc_del(&fx->c, NULL, OWNER1));

	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &b.id, NULL));
	EXPECT_EQ(-ENOENT, nlc_alloc_del(&fx->c, &b.id, NULL));
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_B));
}

static void limit_ok(struct __test_metadata *_metadata, struct alloc_fx *fx,
		     __u32 scope, const char *name, __u32 max, __u32 used)
{
	struct nlc_limit l;

	EXPECT_EQ(0, nlc_limit_set(&fx->c, scope, name, &max, &l))
		log_error(_metadata, "limit-set", &fx->c);
	EXPECT_EQ(scope, l.scope);
	EXPECT_STREQ(name, l.name);
	EXPECT_EQ(max, l.max_gpus);
	EXPECT_EQ(used, l.used);
}

#define LIMIT_OK(scope, name, max, used)				\
	limit_ok(_metadata, fx, scope, name, max, used)

/* Limits per label: EDQUOT names the limit, removal lifts it. */
TEST_F(alloc, limits)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_limit l, *limits;
	struct nlc_alloc a, d1;
	int n;

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	ASSERT_EQ(0, reserve(fx, GPU_MF));

	LIMIT_OK(GPUCTL_LIMIT_SCOPE_ACCOUNT, "acme", 1, 0);
	ASSERT_EQ(0, nlc_limit_get(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
				   "acme", &l));
	EXPECT_EQ(1, l.max_gpus);
	EXPECT_EQ(0, l.used);

	req_init(&req, OWNER1);
	req.account = "acme";
	req_count(&req, 1);
	ALLOC_OK(&req, &a, GPU_A);
	ASSERT_EQ(0, nlc_limit_get(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
				   "acme", &l));
	EXPECT_EQ(1, l.used);
	ALLOC_FAILS(&req, EDQUOT, "account acme is limited to 1 GPU, 1 in use",
		    GPUCTL_A_ALLOC_ACCOUNT);
	/* Another account is not limited. */
	req.account = "other";
	ALLOC_OK(&req, &a, GPU_B);
	EXPECT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));

	/* Each scope, over the GPUs the request would add. */
	LIMIT_OK(GPUCTL_LIMIT_SCOPE_PROJECT, "p1", 0, 0);
	req_init(&req, OWNER2);
	req.project = "p1";
	req_count(&req, 1);
	ALLOC_FAILS(&req, EDQUOT, "project p1 is limited to 0 GPUs, 0 in use",
		    GPUCTL_A_ALLOC_PROJECT);
	LIMIT_OK(GPUCTL_LIMIT_SCOPE_DOMAIN, "d1", 1, 0);
	req_init(&req, OWNER2);
	req.domain = "d1";
	req_dev(&req, GPU_B);
	req_dev(&req, GPU_MF);
	ALLOC_FAILS(&req, EDQUOT, "domain d1 is limited to 1 GPU, 0 in use",
		    GPUCTL_A_ALLOC_DOMAIN);
	LIMIT_OK(GPUCTL_LIMIT_SCOPE_DOMAIN, "d1", 2, 0);
	ALLOC_OK(&req, &d1, GPU_B "," GPU_MF "," HDA_MF);
	EXPECT_EQ(2, d1.gpus);

	/* A limit below the usage is accepted; it only stops new ones. */
	LIMIT_OK(GPUCTL_LIMIT_SCOPE_DOMAIN, "d1", 1, 2);
	/* Over the limit and more than is free: the limit is the answer. */
	req_init(&req, OWNER2);
	req.domain = "d1";
	req_count(&req, 5);
	ALLOC_FAILS(&req, EDQUOT, "domain d1 is limited to 1 GPU, 2 in use",
		    GPUCTL_A_ALLOC_DOMAIN);
	ASSERT_EQ(0, nlc_limit_dump(&fx->c, &limits, &n, NULL));
	EXPECT_EQ(3, n);
	free(limits);

	/* Removal; then the account may take what is free. */
	ASSERT_EQ(0, nlc_limit_set(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
				   "acme", NULL, &l))
		log_error(_metadata, "limit-set remove", &fx->c);
	EXPECT_EQ(-ENOENT, nlc_limit_get(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
					 "acme", &l));
	EXPECT_EQ(-ENOENT, nlc_limit_set(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
					 "acme", NULL, &l));
	log_error(_metadata, "limit-set remove again", &fx->c);
	EXPECT_NE(0, fx->c.extack[0]);
	EXPECT_EQ(-EINVAL, nlc_limit_set(&fx->c, 0, "acme", NULL, &l));
	EXPECT_EQ(GPUCTL_A_LIMIT_SCOPE, fx->c.miss_type);
	EXPECT_EQ(-EINVAL, nlc_limit_set(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
					 NULL, NULL, &l));
	EXPECT_EQ(GPUCTL_A_LIMIT_NAME, fx->c.miss_type);
	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &d1.id, NULL));
	req_init(&req, OWNER1);
	req.account = "acme";
	req_count(&req, 1);
	ALLOC_OK(&req, &a, GPU_B);
	ASSERT_EQ(0, nlc_limit_dump(&fx->c, &limits, &n, NULL));
	EXPECT_EQ(2, n);
	free(limits);
}

/*
 * A refusal longer than extack's 79 characters comes back cut there, on
 * 6.1 and 6.12 alike, and 6.12 logs no "truncated extack" for it (the
 * guest's kernel log check fails on that line): "no limit on project "
 * and a label of 63 characters make 82.
 */
TEST_F(alloc, long_label_message_cut)
{
	struct alloc_fx *fx = &self->fx;
	char name[64], full[160], want[80];
	struct nlc_limit l;

	memset(name, 'p', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(full, sizeof(full), "no limit on project %s", name);
	snprintf(want, sizeof(want), "%.79s", full);
	ASSERT_EQ(79, strlen(want));
	EXPECT_EQ(-ENOENT, nlc_limit_get(&fx->c, GPUCTL_LIMIT_SCOPE_PROJECT,
					 name, &l));
	EXPECT_STREQ(want, fx->c.extack);
	EXPECT_EQ(GPUCTL_A_LIMIT_NAME, fx->c.bad_attr);
}

static void child_expect(bool ok, const char *what, const struct nlc *c,
			 int *bad)
{
	if (ok)
		return;
	fprintf(stderr, "# uid %d: %s: errno %d '%s'\n", NOBODY, what, c->err,
		c->extack);
	(*bad)++;
}

/* Run in a child as uid/gid 65534; returns a failure count. */
static int unprivileged(__u32 id)
{
	struct nlc_limit l, *limits = NULL;
	struct nlc_alloc_req req;
	char buf[SNAPSHOT_LEN];
	struct nlc_alloc a;
	struct nlc_dev d;
	__u32 max = 9;
	struct nlc c;
	int bad = 0, n = 0;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return 100;
	if (nlc_open(&c))
		return 101;
	req_init(&req, OWNER2);
	req_count(&req, 1);
	child_expect(nlc_alloc_new(&c, &req, &a) == -EPERM, "alloc-new count",
		     &c, &bad);
	req_init(&req, OWNER2);
	req_dev(&req, GPU_B);
	child_expect(nlc_alloc_new(&c, &req, &a) == -EPERM, "alloc-new device",
		     &c, &bad);
	child_expect(nlc_alloc_del(&c, &id, NULL) == -EPERM, "alloc-del id", &c,
		     &bad);
	child_expect(nlc_alloc_del(&c, NULL, OWNER1) == -EPERM,
		     "alloc-del owner", &c, &bad);
	child_expect(nlc_limit_set(&c, GPUCTL_LIMIT_SCOPE_ACCOUNT, "acme",
				   &max, &l) == -EPERM, "limit-set", &c, &bad);
	child_expect(nlc_limit_set(&c, GPUCTL_LIMIT_SCOPE_ACCOUNT, "acme",
				   NULL, &l) == -EPERM, "limit-set remove", &c,
		     &bad);
	/* The ledger names tenants' VMs: reading it needs privilege too. */
	child_expect(nlc_alloc_get(&c, id, &a) == -EPERM, "alloc-get", &c,
		     &bad);
	child_expect(ledger_snapshot(&c, buf, sizeof(buf)) == -EPERM,
		     "alloc dump", &c, &bad);
	child_expect(nlc_limit_get(&c, GPUCTL_LIMIT_SCOPE_ACCOUNT, "acme", &l) ==
		     -EPERM, "limit-get", &c, &bad);
	child_expect(nlc_limit_dump(&c, &limits, &n, NULL) == -EPERM,
		     "limit dump", &c, &bad);
	free(limits);
	/* The inventory stays open, without the device's allocation. */
	child_expect(!nlc_dev_get(&c, GPU_A, &d) && d.role && !d.allocation,
		     "dev-get", &c, &bad);
	nlc_close(&c);
	return bad;
}

TEST_F(alloc, unprivileged)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_limit l;
	struct nlc_alloc a;
	int status;
	pid_t pid;

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	LIMIT_OK(GPUCTL_LIMIT_SCOPE_ACCOUNT, "acme", 1, 0);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	ALLOC_OK(&req, &a, GPU_A);
	ASSERT_EQ(0, ledger_snapshot(&fx->c, fx->snap0, SNAPSHOT_LEN));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unprivileged(a.id));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, ledger_snapshot(&fx->c, fx->snap1, SNAPSHOT_LEN));
	EXPECT_STREQ(fx->snap0, fx->snap1);
	EXPECT_EQ(0, allocation_of(&fx->c, GPU_B));
	ASSERT_EQ(0, nlc_limit_get(&fx->c, GPUCTL_LIMIT_SCOPE_ACCOUNT,
				   "acme", &l));
	EXPECT_EQ(1, l.max_gpus);
}

/* A rule cannot go while one of its devices is allocated. */
TEST_F(alloc, rule_del_refused)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a;
	struct nlc_rule r;
	struct nlc_dev d;
	char msg[128];

	ASSERT_EQ(0, reserve(fx, GPU_MF));
	req_init(&req, OWNER1);
	req_dev(&req, GPU_MF);
	ALLOC_OK(&req, &a, GPU_MF "," HDA_MF);

	EXPECT_EQ(-EBUSY, nlc_rule_del(&fx->c, &fx->rules[0], NULL));
	log_error(_metadata, "rule-del", &fx->c);
	snprintf(msg, sizeof(msg), GPU_MF " is allocated to %u", a.id);
	EXPECT_EQ(0, strncmp(msg, fx->c.extack, strlen(msg)));
	EXPECT_EQ(-EBUSY, nlc_rule_del(&fx->c, NULL, GPU_MF));
	EXPECT_EQ(0, strncmp(msg, fx->c.extack, strlen(msg)));
	EXPECT_EQ(0, nlc_rule_get(&fx->c, fx->rules[0], &r));
	ASSERT_EQ(0, nlc_dev_get(&fx->c, HDA_MF, &d));
	EXPECT_EQ(GPUCTL_DEV_STATE_RESERVED, d.state);
	EXPECT_STREQ("vfio-pci", d.driver);
	EXPECT_EQ(a.id, d.allocation);

	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));
	EXPECT_EQ(0, nlc_rule_del(&fx->c, &fx->rules[0], NULL))
		log_error(_metadata, "rule-del after alloc-del", &fx->c);
	fx->rules[0] = 0;
}

static long module_refcnt(void)
{
	char buf[32] = "";
	ssize_t n;
	int fd = open("/sys/module/gpuctl/refcnt", O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* delete_module() as rmmod calls it: 0 or the errno. */
static int unload(void)
{
	return syscall(SYS_delete_module, "gpuctl", O_NONBLOCK) ? errno : 0;
}

/*
 * Every allocation holds the module. delete_module() says EWOULDBLOCK
 * (EAGAIN) for a module in use ("rmmod: ERROR: Module gpuctl is in use").
 */
TEST_F(alloc, unload_refused)
{
	struct alloc_fx *fx = &self->fx;
	struct nlc_alloc_req req;
	struct nlc_alloc a, b;
	long base;

	ASSERT_EQ(0, reserve(fx, GPU_A));
	ASSERT_EQ(0, reserve(fx, GPU_B));
	base = module_refcnt();
	ASSERT_LE(0, base);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_A);
	ALLOC_OK(&req, &a, GPU_A);
	req_init(&req, OWNER1);
	req_dev(&req, GPU_B);
	ALLOC_OK(&req, &b, GPU_B);
	EXPECT_EQ(base + 2, module_refcnt());

	EXPECT_EQ(EWOULDBLOCK, unload()) TH_LOG("delete_module: %s",
						strerror(unload()));
	ASSERT_EQ(0, access("/sys/module/gpuctl", F_OK))
		TH_LOG("gpuctl was unloaded with allocations in its ledger");
	EXPECT_EQ(0, nlc_alloc_get(&fx->c, a.id, &a));

	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &a.id, NULL));
	EXPECT_EQ(base + 1, module_refcnt());
	EXPECT_EQ(EWOULDBLOCK, unload());
	ASSERT_EQ(0, nlc_alloc_del(&fx->c, &b.id, NULL));
	EXPECT_EQ(base, module_refcnt());
}

TEST_HARNESS_MAIN
