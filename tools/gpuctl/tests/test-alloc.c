// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Allocations and limits without a kernel: owners, ledger lines read and
 * written back, whole ledgers with their FILE:LINE messages, and what the
 * print path makes of allocation, limit and VFIO holder messages.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "json_print.h"
#include "migration.h"
#include "test-cmdline.h"

#define UUID "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define VGPU1 "8e2f0c10-0000-4000-8000-0000000000a1"
#define VGPU2 "8e2f0c10-0000-4000-8000-0000000000a2"
#define ADD "alloc add owner " UUID
#define LABEL64 \
	"0123456789012345678901234567890123456789012345678901234567890123"
/* keywords in any order in, the order "alloc save" writes out */
#define MIXED_IN \
	ADD " id 3 gid 8 uid 7 detach-on-stop dev 07:00.0 dev 01:00.0" \
	" domain d project p account a name vm # a comment"
#define MIXED_OUT \
	ADD " name vm account a project p domain d dev 0000:07:00.0" \
	" dev 0000:01:00.0 detach-on-stop uid 7 gid 8 id 3"
#define QUOTED ADD " name \"my vm #1\" account \"a \\\"b\\\" \\\\c\""

/* A UUID in, its kernel form out, or NULL when it must be refused */
static const char *const uuid_cases[][2] = {
	{ UUID, UUID },
	{ "1B4E28BA-2FA1-11D2-883F-0016D3CCA427", UUID },
	{ "00000000-0000-0000-0000-000000000000",
	  "00000000-0000-0000-0000-000000000000" },
	{ "", NULL },
	{ "1b4e28ba-2fa1-11d2-883f-0016d3cca42", NULL },
	{ "1b4e28ba-2fa1-11d2-883f-0016d3cca4270", NULL },
	{ "1b4e28ba2fa111d2883f0016d3cca427", NULL },
	{ "1b4e28ba-2fa1-11d2-883f0-016d3cca427", NULL },
	{ "1b4e28ba-2fa1-11d2-883f-0016d3cca42g", NULL },
	{ "{1b4e28ba-2fa1-11d2-883f-0016d3cca42}", NULL },
	{ " 1b4e28ba-2fa1-11d2-883f-0016d3cca42", NULL },
};

/*
 * A ledger line in; what it holds out: LEDGER_NONE and "", the line
 * "alloc save" would write for it, or -1 and the message.
 */
static const struct {
	const char *line;
	int rc;
	const char *want;
} line_cases[] = {
	{ "", LEDGER_NONE, "" },
	{ "  \t\r\n", LEDGER_NONE, "" },
	{ "# gpuctl ledger", LEDGER_NONE, "" },
	{ "alloc add owner 1B4E28BA-2FA1-11D2-883F-0016D3CCA427 dev 1:0.0\n",
	  LEDGER_ALLOC, ADD " dev 0000:01:00.0" },
	{ "id 3 dev 07:00.0 detach-on-stop", -1,
	  "expected \"alloc add\" or \"limit set\", not \"id 3\"" },
	{ MIXED_IN, LEDGER_ALLOC, MIXED_OUT },
	{ ADD " count 2 match 10DE:* numa 1 policy preferred", LEDGER_ALLOC,
	  ADD " count 2 match 10de:* numa 1 policy preferred" },
	{ QUOTED " dev 1:0.0", LEDGER_ALLOC, QUOTED " dev 0000:01:00.0" },
	{ ADD " name \"\" dev 1:0.0", -1, "name must not be empty" },
	{ ADD " name \"vm dev 1:0.0", -1, "missing closing quote" },
	{ ADD " name \"vm\"x dev 1:0.0", -1, "text after a closing quote" },
	{ ADD " name v\"m dev 1:0.0", -1, "a quote inside a word" },
	{ ADD " name \"v\\m\" dev 1:0.0", -1, "invalid escape in quotes" },
	{ ADD " name \"vm\"# comment\n", -1, "missing dev ADDR, count N or vgpu" },
	{ ADD " dev 1:0.0#comment", LEDGER_ALLOC, ADD " dev 0000:01:00.0" },
	{ "alloc add", -1, "missing owner UUID" },
	{ "alloc del 3", -1,
	  "expected \"alloc add\" or \"limit set\", not \"alloc del\"" },
	{ "alloc", -1, "expected \"alloc add\" or \"limit set\", not \"alloc\"" },
	{ "reserve 01:00.0", -1,
	  "expected \"alloc add\" or \"limit set\", not \"reserve 01:00.0\"" },
	{ ADD, -1, "missing dev ADDR, count N or vgpu" },
	{ ADD " dev 1:0.0 count 1", -1, "give dev or count, not both" },
	{ ADD " dev 1:0.0 numa 0", -1, "\"numa\" needs count or vgpu TYPE" },
	{ ADD " dev 1:0.0 match 10de:*", -1, "\"match\" needs count" },
	{ ADD " count 1 policy legacy", -1, "\"policy\" needs numa" },
	{ ADD " count 1 numa 0 policy strict", -1,
	  "invalid policy \"strict\", expected required, preferred or legacy" },
	{ ADD " count 0", -1, "count must be at least 1" },
	{ ADD " vgpu 8E2F0C10-0000-4000-8000-0000000000A1 vgpu " VGPU2 " made",
	  LEDGER_ALLOC, ADD " vgpu " VGPU1 " vgpu " VGPU2 " made" },
	{ ADD " vgpu nvidia-222 count 3 numa 1 policy required", LEDGER_ALLOC,
	  ADD " numa 1 policy required vgpu nvidia-222 count 3" },
	{ ADD " vgpu mbochs-small dev 1:0.0", LEDGER_ALLOC,
	  ADD " dev 0000:01:00.0 vgpu mbochs-small count 1" },
	{ ADD " count 2 vgpu mtty-1 count 4", LEDGER_ALLOC,
	  ADD " count 2 vgpu mtty-1 count 4" },
	/* vendor VFs typed for the allocation, as a saved ledger has them */
	{ ADD " dev 41:00.4 typed dev 41:00.5", LEDGER_ALLOC,
	  ADD " dev 0000:41:00.4 typed dev 0000:41:00.5" },
	{ ADD " vgpu 1156 count 2", LEDGER_ALLOC, ADD " vgpu 1156 count 2" },
	{ ADD " dev 41:00.4 typed typed", -1, "unexpected argument \"typed\"" },
	{ ADD " vgpu", -1, "\"vgpu\" needs a UUID or a type" },
	{ ADD " vgpu a vgpu b", -1,
	  "one vgpu TYPE per allocation, a is given already" },
	{ ADD " vgpu 01:00.0", -1,
	  "invalid vgpu \"01:00.0\", expected a UUID or a type" },
	{ ADD " vgpu a/b", -1, "invalid vgpu \"a/b\", expected a UUID or a type" },
	{ ADD " vgpu ..", -1, "invalid vgpu type \"..\"" },
	{ ADD " vgpu t count 0", -1, "vgpu count must be 1 to 64" },
	{ ADD " vgpu t count 65", -1, "vgpu count must be 1 to 64" },
	{ ADD " vgpu t count", -1, "\"count\" needs a value" },
	{ ADD " vgpu " VGPU1 " vgpu 8e2f0c10-0000-4000-8000-0000000000A1",
	  -1, "vgpu " VGPU1 " given twice" },
	{ ADD " dev 1:0.0 id 0", -1, "id must be at least 1" },
	{ ADD " dev 1:0.0 id", -1, "\"id\" needs a value" },
	{ ADD " dev 1:0.0 uid x", -1, "invalid uid \"x\", expected a number" },
	{ ADD " dev 1:0.0 dev 0000:01:00.0", -1,
	  "dev 0000:01:00.0 given twice" },
	{ ADD " dev 1:0.0 uid 1 uid 2", -1, "\"uid\" given twice" },
	{ ADD " dev 1:0.0 owner " UUID, -1, "\"owner\" given twice" },
	{ ADD " dev 1:0", -1,
	  "invalid PCI address \"1:0\", expected DDDD:BB:DD.F or BB:DD.F" },
	{ "alloc add owner x dev 1:0.0", -1,
	  "invalid owner \"x\", expected a UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" },
	{ ADD " count 1 match 01:00.0", -1,
	  "invalid match \"01:00.0\", expected VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS" },
	{ ADD " dev 1:0.0 tenant t", -1, "unexpected argument \"tenant\"" },
	{ ADD " dev 1:0.0 name " LABEL64, -1,
	  "name is longer than 63 characters" },
	{ "limit set account acme max 2", LEDGER_LIMIT,
	  "limit set account acme max 2" },
	{ "limit set project \"p #1\" max 0 # zero", LEDGER_LIMIT,
	  "limit set project \"p #1\" max 0" },
	{ "limit set domain d max none", LEDGER_LIMIT,
	  "limit set domain d max none" },
	{ "limit set account acme", -1, "expected \"max\" after the account" },
	{ "limit set account acme max", -1, "\"max\" needs a value" },
	{ "limit set account acme max x", -1,
	  "invalid max \"x\", expected a number or none" },
	{ "limit set account acme max 2 3", -1, "unexpected argument \"3\"" },
	{ "limit set tenant acme max 2", -1,
	  "expected account, project or domain, not \"tenant\"" },
	{ "limit set", -1, "expected account, project or domain" },
	{ "limit show", -1,
	  "expected \"alloc add\" or \"limit set\", not \"limit show\"" },
};

static void test_uuid(void)
{
	char out[GPUCTL_UUID_LEN + 1];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(uuid_cases); i++) {
		const char *want = uuid_cases[i][1];

		ret = uuid_parse(uuid_cases[i][0], out, sizeof(out));
		report(want ? !ret && !strcmp(out, want) : ret < 0,
		       "owner \"%s\"", uuid_cases[i][0]);
	}
}

static void test_ledger_lines(void)
{
	char err[ALLOC_ERR_BUFSZ], got[LEDGER_LINE_MAX], what[256], *line;
	struct alloc_spec s;
	struct limit_spec l;
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(line_cases); i++) {
		line = strdup(line_cases[i].line);
		err[0] = '\0';
		got[0] = '\0';
		rc = ledger_line_parse(line, &s, &l, err, sizeof(err));
		if (rc == LEDGER_ALLOC)
			alloc_spec_format(&s, got, sizeof(got));
		else if (rc == LEDGER_LIMIT)
			limit_spec_format(&l, got, sizeof(got));
		else if (rc < 0)
			snprintf(got, sizeof(got), "%s", err);
		snprintf(what, sizeof(what), "ledger line \"%s\"",
			 line_cases[i].line);
		what[strcspn(what, "\r\n")] = '\0';
		if (rc != (line_cases[i].rc < 0 ? -EINVAL : line_cases[i].rc)) {
			report(false, "%s", what);
			printf("# rc %d, want %d (%s)\n", rc, line_cases[i].rc,
			       got);
		} else {
			check_str(what, got, line_cases[i].want);
		}
		free(line);
	}
}

/* What "alloc save" writes must read back as the same allocation */
static void test_ledger_format(void)
{
	char err[ALLOC_ERR_BUFSZ], buf[LEDGER_LINE_MAX], small[32];
	struct alloc_spec s, back;
	struct limit_spec l;
	int i;

	memset(&s, 0, sizeof(s));
	snprintf(s.owner, sizeof(s.owner), UUID);
	snprintf(s.name, sizeof(s.name), "sp here \"q\" \\ #");
	for (i = 0; i < ALLOC_DEVS_MAX; i++)
		snprintf(s.devs[s.ndevs++], ADDR_BUFSZ, "0000:%02x:00.0", i);
	s.has_id = true;
	s.id = 4294967295u;
	s.has_uid = true;
	report(!alloc_spec_format(&s, buf, sizeof(buf)) &&
	       ledger_line_parse(buf, &back, &l, err, sizeof(err)) ==
	       LEDGER_ALLOC && !memcmp(&s, &back, sizeof(s)), "%s",
	       "ledger line round trip, 64 devices and a quoted name");
	report(alloc_spec_format(&s, small, sizeof(small)) == -ENOSPC, "%s",
	       "ledger line too long for its buffer");
	s.name[0] = '\n';
	report(alloc_spec_format(&s, buf, sizeof(buf)) == -EINVAL, "%s",
	       "a control character cannot be saved");
	memset(&l, 0, sizeof(l));
	report(limit_spec_format(&l, buf, sizeof(buf)) == -EINVAL, "%s",
	       "a limit of an unknown scope cannot be saved");
}

/* A ledger file and the messages ledger_file_parse() must print for it */
static const struct {
	const char *what;
	const char *text;
	int rc;
	size_t nallocs;
	size_t nlimits;
	const char *err;
} file_cases[] = {
	{ "ledger: allocations and limits",
	  "# saved\n" ADD " dev 1:0.0 id 1\n\n" ADD " dev 2:0.0 id 2\n"
	  "limit set account a max 1\nlimit set project a max 1\n",
	  0, 2, 2, "" },
	{ "ledger: every error, with its line",
	  ADD " dev 1:0.0 id 1\n" ADD " dev 2:0.0 id 1\n"
	  ADD " dev 3:0.0 dev 0000:01:00.0\n" ADD " dev 4:0.0 id 7 bad\n"
	  "limit set account a max 1\nlimit set account a max 2\n",
	  -EINVAL, 0, 0,
	  "F:2: allocation 1 is already on line 1\n"
	  "F:3: dev 0000:01:00.0 is already allocated on line 1\n"
	  "F:4: unexpected argument \"bad\"\n"
	  "F:6: a limit for account a is already on line 5\n" },
	{ "ledger: a NUL byte",
	  ADD " dev 1:0.0\n#\0x\n", -EINVAL, 0, 0,
	  "F:2: NUL byte in line\n" },
	{ "ledger: empty", "", 0, 0, 0, "" },
};

static void test_ledger_files(void)
{
	struct ledger ledger;
	struct capture c;
	char *out, *err;
	size_t i, len;
	FILE *fp;
	int rc;

	for (i = 0; i < ARRAY_SIZE(file_cases); i++) {
		len = strlen(file_cases[i].text);
		/* the NUL case: the text goes on past its first NUL */
		if (strstr(file_cases[i].what, "NUL"))
			len += 1 + strlen(file_cases[i].text + len + 1);
		fp = fmemopen((void *)file_cases[i].text, len ? len : 1, "r");
		if (!len)
			getc(fp);
		capture_start(&c);
		rc = ledger_file_parse(fp, "F", &ledger);
		capture_end(&c, &out, &err);
		fclose(fp);
		report(rc == file_cases[i].rc &&
		       ledger.nallocs == file_cases[i].nallocs &&
		       ledger.nlimits == file_cases[i].nlimits &&
		       !strcmp(err, file_cases[i].err), "%s",
		       file_cases[i].what);
		if (strcmp(err, file_cases[i].err))
			printf("# got:  %s# want: %s", err, file_cases[i].err);
		ledger_free(&ledger);
		free(out);
		free(err);
	}
}

#define LEDGER_WRITTEN \
	"# gpuctl ledger: load with \"gpuctl alloc restore FILE\"\n" \
	"# allocation 4 of " UUID " is not restorable\n" \
	ADD " account a dev 0000:07:00.0 gid 5 id 9\n" \
	"limit set project p max 0\n"

static struct nlmsghdr *fake_msg(char *buf, u8 cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = 0x20;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = GPUCTL_FAMILY_VERSION;
	return nlh;
}

static struct nlmsghdr *fake_alloc_msg(char *buf)
{
	struct nlmsghdr *nlh = fake_msg(buf, GPUCTL_CMD_ALLOC_DEL_NTF);

	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_ID, 3);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_OWNER, UUID);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_NAME, "vm \"1\"");
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_PROJECT, "p");
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_DEVICE, "0000:07:00.0");
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_DEVICE, "0000:07:00.1");
	mnl_attr_put(nlh, GPUCTL_A_ALLOC_DETACH_ON_STOP, 0, NULL);
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_UID, 107);
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_STATE, GPUCTL_ALLOC_STATE_LOST);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_STATE_REASON,
			  "0000:07:00.0 was removed");
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_GPUS, 1);
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_END, GPUCTL_ALLOC_END_DETACHED);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_MDEV, VGPU1);
	mnl_attr_put_strz(nlh, GPUCTL_A_ALLOC_MDEV_MADE, VGPU2);
	/* an attribute from a future module must be skipped */
	mnl_attr_put_u32(nlh, GPUCTL_A_ALLOC_MAX + 1, 42);
	return nlh;
}

#define VGPUS_TEXT " " VGPU1 " " VGPU2 " (made)"

#define ALLOC_JSON \
	"{\"allocations\":[{\"id\":3,\"owner\":\"" UUID "\"," \
	"\"name\":\"vm \\\"1\\\"\",\"account\":null,\"project\":\"p\"," \
	"\"domain\":null,\"devices\":[\"0000:07:00.0\",\"0000:07:00.1\"]," \
	"\"vf_typed\":[],\"vgpus\":[{\"uuid\":\"" VGPU1 "\",\"made\":false}," \
	"{\"uuid\":\"" VGPU2 "\",\"made\":true}]," \
	"\"gpus\":1,\"state\":\"lost\"," \
	"\"state_reason\":\"0000:07:00.0 was removed\"," \
	"\"detach_on_stop\":true,\"uid\":107,\"gid\":null," \
	"\"end\":\"detached\"}]}\n"
#define ALLOC_TEXT \
	"alloc 3 owner " UUID " name vm \"1\" project p gpus 1" \
	" state lost (0000:07:00.0 was removed) detach-on-stop uid 107" \
	" end detached"

#define ALLOC_JSON_LEAST \
	"{\"allocations\":[{\"id\":1,\"owner\":\"" UUID "\"," \
	"\"name\":null,\"account\":null,\"project\":null," \
	"\"domain\":null,\"devices\":[],\"vf_typed\":[],\"vgpus\":[]," \
	"\"gpus\":0," \
	"\"state\":\"idle\",\"state_reason\":null," \
	"\"detach_on_stop\":false,\"uid\":null,\"gid\":null," \
	"\"end\":null}]}\n"

static void render_allocs(const struct nl_list *list, bool json, char **out)
{
	struct capture c;
	char *err;

	capture_start(&c);
	json_print_init(stdout, json, false);
	alloc_list_print(list);
	capture_end(&c, out, &err);
	free(err);
}

static void test_alloc_output(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct alloc_info al = {};
	struct nl_list list;
	struct capture c;
	char *out, *err;

	report(!alloc_info_parse(fake_alloc_msg(buf), &al), "%s",
	       "alloc attributes parse");
	alloc_list_init(&list);
	list.v = &al;
	list.n = 1;
	render_allocs(&list, true, &out);
	check_str("alloc JSON", out, ALLOC_JSON);
	free(out);
	render_allocs(&list, false, &out);
	check_str("alloc text of alloc show", out,
		  ALLOC_TEXT "\n  devices: 0000:07:00.0 0000:07:00.1\n"
		  "  vgpus:" VGPUS_TEXT "\n");
	free(out);

	capture_start(&c);
	json_print_init(stdout, false, false);
	alloc_info_print(&al, ALLOC_FORM_LINE);
	capture_end(&c, &out, &err);
	check_str("alloc text line", out,
		  ALLOC_TEXT " devices 0000:07:00.0 0000:07:00.1 vgpus" VGPUS_TEXT);
	free(out);
	free(err);
	alloc_info_release(&al);

	/* the least an allocation has: every key, null when unset */
	memset(&al, 0, sizeof(al));
	al.id = 1;
	snprintf(al.owner, sizeof(al.owner), UUID);
	al.state = GPUCTL_ALLOC_STATE_IDLE;
	render_allocs(&list, true, &out);
	check_str("alloc JSON, least fields", out,
		  ALLOC_JSON_LEAST);
	free(out);

	list.n = 0;
	render_allocs(&list, true, &out);
	check_str("no allocations", out, "{\"allocations\":[]}\n");
	free(out);

	memset(&al, 0, sizeof(al));
	mnl_attr_put_u16(fake_alloc_msg(buf), GPUCTL_A_ALLOC_GPUS, 1);
	report(alloc_info_parse((struct nlmsghdr *)buf, &al) < 0, "%s",
	       "alloc malformed attribute");
	alloc_info_release(&al);
}

#define LIMITS_OUT \
	"{\"limits\":[{\"scope\":\"account\",\"name\":\"acme\"," \
	"\"max\":2,\"used\":1},{\"scope\":\"domain\",\"name\":\"d\"," \
	"\"max\":null,\"used\":3}]}\n" \
	"account acme max 2 used 1\n" \
	"domain d max none used 3\n"

static void test_limit_output(void)
{
	struct limit_info l[2] = {
		{ .scope = GPUCTL_LIMIT_SCOPE_ACCOUNT, .name = "acme",
		  .has_max = true, .max = 2, .used = 1 },
		{ .scope = GPUCTL_LIMIT_SCOPE_DOMAIN, .name = "d", .used = 3 },
	};
	struct nl_list list;
	struct capture c;
	char *out, *err;

	limit_list_init(&list);
	list.v = l;
	list.n = 2;
	capture_start(&c);
	json_print_init(stdout, true, false);
	limit_list_print(&list);
	json_print_init(stdout, false, false);
	limit_list_print(&list);
	capture_end(&c, &out, &err);
	check_str("limit JSON and text", out,
		  LIMITS_OUT);
	free(out);
	free(err);
	list.v = NULL;
}

#define HOLDER_JSON \
	",\"rule\":null,\"action\":null,\"allocation\":3,\"holder\":" \
	"{\"pid\":1234,\"comm\":\"qemu-system-x86\",\"uid\":65534," \
	"\"since\":4102444800,\"match\":\"other\",\"vm\":null," \
	"\"found_by\":\"module\"}," \
	"\"refused\":\"uid 65534 is not the owner's (107)\",\"vgpu_type\":null,\"migration\":null,\"migration_compat\":null,\"vendor\":"
#define HOLDER_TEXT \
	" alloc 3 holder qemu-system-x86[1234] (other)" \
	" refused \"uid 65534 is not the owner's (107)\" "
#define UNKNOWN_JSON \
	"\"allocation\":null,\"holder\":{\"pid\":0,\"comm\":null," \
	"\"uid\":null,\"since\":null,\"match\":\"unknown\",\"vm\":null," \
	"\"found_by\":null}," \
	"\"refused\":null,\"vgpu_type\":null,\"migration\":null,\"migration_compat\":null,\"vendor\":"

/* A device as vfio-open-ntf shows it: its allocation and its holder */
static void test_holder_output(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct dev_info d;
	struct capture c;
	char *out, *err;

	nlh = fake_msg(buf, GPUCTL_CMD_VFIO_OPEN_NTF);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, "0000:01:00.0");
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_ALLOCATION, 3);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_HOLDER_PID, 1234);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_HOLDER_COMM, "qemu-system-x86");
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_HOLDER_UID, 65534);
	mnl_attr_put_u64(nlh, GPUCTL_A_DEV_HOLDER_SINCE, 4102444800ull);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_OPEN_MATCH, GPUCTL_OPEN_MATCH_OTHER);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_REFUSED,
			  "uid 65534 is not the owner's (107)");
	report(!dev_info_parse(nlh, &d), "%s", "holder attributes parse");

	capture_start(&c);
	json_print_init(stdout, true, false);
	new_json_obj();
	dev_info_print(&d, NULL);
	delete_json_obj();
	json_print_init(stdout, false, false);
	dev_info_print(&d, NULL);
	capture_end(&c, &out, &err);
	report(strstr(out, HOLDER_JSON) && strstr(out, HOLDER_TEXT),
	       "%s", "holder JSON and text");
	free(out);
	free(err);

	/* open before gpuctl loaded: pid 0, nothing else known */
	nlh = fake_msg(buf, GPUCTL_CMD_VFIO_CLOSE_NTF);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, "0000:01:00.0");
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_HOLDER_PID, 0);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_OPEN_MATCH,
			 GPUCTL_OPEN_MATCH_UNKNOWN);
	report(!dev_info_parse(nlh, &d), "%s", "unknown holder parses");
	capture_start(&c);
	json_print_init(stdout, true, false);
	new_json_obj();
	dev_info_print(&d, NULL);
	delete_json_obj();
	json_print_init(stdout, false, false);
	dev_info_print(&d, NULL);
	capture_end(&c, &out, &err);
	report(strstr(out, UNKNOWN_JSON) &&
	       strstr(out, " alloc - holder unknown "), "%s",
	       "unknown holder JSON and text");
	free(out);
	free(err);

	report(!strcmp(ntf_name(GPUCTL_CMD_ALLOC_CHANGE_NTF),
		       "alloc-change-ntf") &&
	       !strcmp(ntf_label(GPUCTL_CMD_VFIO_CLOSE_NTF), "vfio-close") &&
	       !strcmp(alloc_state_name(GPUCTL_ALLOC_STATE_RUNNING),
		       "running") &&
	       !strcmp(numa_policy_name(GPUCTL_NUMA_POLICY_LEGACY), "legacy") &&
	       !strcmp(limit_scope_name(GPUCTL_LIMIT_SCOPE_PROJECT),
		       "project"), "%s", "allocation names");
}

/* What alloc save writes for a ledger the kernel described */
static void test_ledger_write(void)
{
	static char devs_lost[][ADDR_BUFSZ] = { "0000:0e:00.0" };
	static char devs_mf[][ADDR_BUFSZ] = { "0000:07:00.0", "0000:07:00.1" };
	struct dev_info dv[2] = {
		{ .address = "0000:07:00.0", .role = GPUCTL_DEV_ROLE_GPU },
		{ .address = "0000:07:00.1", .role = GPUCTL_DEV_ROLE_COMPANION },
	};
	struct alloc_info al[2] = {
		{ .id = 4, .owner = UUID, .ndevs = 1, .devs = devs_lost,
		  .state = GPUCTL_ALLOC_STATE_LOST, .has_state_reason = true,
		  .state_reason = "0000:0e:00.0 was removed" },
		{ .id = 9, .owner = UUID, .labels = { "a" }, .ndevs = 2,
		  .devs = devs_mf, .state = GPUCTL_ALLOC_STATE_RUNNING,
		  .has_gid = true, .gid = 5 },
	};
	struct limit_info li[2] = {
		{ .scope = GPUCTL_LIMIT_SCOPE_PROJECT, .name = "p",
		  .has_max = true, .max = 0 },
		{ .scope = GPUCTL_LIMIT_SCOPE_ACCOUNT, .name = "gone" },
	};
	struct nl_list allocs = { .v = al, .n = 2 };
	struct nl_list devs = { .v = dv, .n = 2 };
	struct nl_list limits = { .v = li, .n = 2 };
	struct capture c;
	char *out, *err;

	capture_start(&c);
	ledger_write(stdout, &allocs, &devs, &limits);
	capture_end(&c, &out, &err);
	check_str("ledger written: GPUs only, a lost allocation left out", out,
		  LEDGER_WRITTEN);
	check_str("ledger written: the lost allocation said on stderr", err,
		  "gpuctl: alloc save: allocation 4 is lost (0000:0e:00.0 was removed), not saved\n");
	free(out);
	free(err);
}

/*
 * Whether an allocation could live-migrate: every device and vGPU must
 * have stop-copy; one the module no longer lists, or with only P2P,
 * cannot.
 */
#define BLOCKERS_JSON \
	"\"live_migratable\":false,\"migration_blockers\":" \
	"[\"0000:07:00.1\",\"" VGPU2 "\"]"

static void test_alloc_migration(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], names[64];
	struct dev_info d[2] = {};
	struct vgpu_info v[2] = {};
	struct nl_list devs = { .v = d, .n = 2 }, vgpus = { .v = v, .n = 1 };
	struct alloc_info al = {};
	struct nl_list list;
	char *out;

	snprintf(d[0].address, sizeof(d[0].address), "0000:07:00.0");
	d[0].has_migration = true;
	d[0].migration = GPUCTL_MIGRATION_CAPS_STOP_COPY |
			 GPUCTL_MIGRATION_CAPS_PRE_COPY;
	snprintf(d[1].address, sizeof(d[1].address), "0000:07:00.1");
	d[1].has_migration = true;
	d[1].migration = GPUCTL_MIGRATION_CAPS_P2P;
	snprintf(v[0].uuid, sizeof(v[0].uuid), VGPU1);
	v[0].has_migration = true;
	v[0].migration = GPUCTL_MIGRATION_CAPS_STOP_COPY;

	migration_caps_str(d[0].migration | GPUCTL_MIGRATION_CAPS_DIRTY_TRACKING,
			   names, sizeof(names));
	check_str("migration capability names", names,
		  "stop-copy,pre-copy,dirty-tracking");
	migration_caps_str(0, names, sizeof(names));
	check_str("no migration capability", names, "");

	/* 07:00.1 has P2P only, VGPU2 is not listed */
	report(!alloc_info_parse(fake_alloc_msg(buf), &al), "%s",
	       "alloc for migration parses");
	report(!alloc_migration_read(&al, &devs, &vgpus) &&
	       al.migration_read && al.nblockers == 2 &&
	       !strcmp(al.blockers[0], "0000:07:00.1") &&
	       !strcmp(al.blockers[1], VGPU2), "%s",
	       "alloc migration blockers: a P2P-only device, an unlisted vGPU");
	alloc_list_init(&list);
	list.v = &al;
	list.n = 1;
	render_allocs(&list, true, &out);
	report(!!strstr(out, BLOCKERS_JSON),
	       "%s", "alloc migration JSON");
	free(out);
	render_allocs(&list, false, &out);
	report(!!strstr(out, "\n  live-migration: no, cannot migrate: 0000:07:00.1 " VGPU2 "\n"),
	       "%s", "alloc migration text");
	free(out);
	alloc_info_release(&al);

	/* all can move their state */
	memset(&al, 0, sizeof(al));
	alloc_info_parse(fake_alloc_msg(buf), &al);
	d[1].migration |= GPUCTL_MIGRATION_CAPS_STOP_COPY;
	snprintf(v[1].uuid, sizeof(v[1].uuid), VGPU2);
	v[1].has_migration = true;
	v[1].migration = GPUCTL_MIGRATION_CAPS_STOP_COPY;
	vgpus.n = 2;
	report(!alloc_migration_read(&al, &devs, &vgpus) && !al.nblockers,
	       "%s", "alloc migration: all can move");
	render_allocs(&list, false, &out);
	report(!!strstr(out, "\n  live-migration: yes\n"), "%s",
	       "alloc migration text, yes");
	free(out);
	render_allocs(&list, true, &out);
	report(!!strstr(out, "\"live_migratable\":true,\"migration_blockers\":[]"),
	       "%s", "alloc migration JSON, yes");
	free(out);
	alloc_info_release(&al);
}

void test_allocs(void)
{
	test_uuid();
	test_ledger_lines();
	test_ledger_format();
	test_ledger_files();
	test_ledger_write();
	test_alloc_output();
	test_limit_output();
	test_holder_output();
	test_alloc_migration();
}
