// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Rules without a kernel: matches in canonical form, config lines, whole
 * files through "gpuctl apply FILE check|modprobe" with their exact
 * output and messages, and what the print path makes of a rule message.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "conf.h"
#include "gpuctl.h"
#include "json_print.h"
#include "test-cmdline.h"

/* A match in, its canonical form out, or NULL when it must be refused */
static const char *const match_cases[][2] = {
	{ "0000:01:00.0", "0000:01:00.0" },
	{ "01:00.0", "0000:01:00.0" },
	{ "ABCD:EF:1F.7", "abcd:ef:1f.7" },
	{ "10DE:2331", "10de:2331" },
	{ "10de:*", "10de:*" },
	{ "10de:2331:1043:87AB", "10de:2331:1043:87ab" },
	{ "10de:*:1043:8765", NULL },
	{ "", NULL },
	{ "10de", NULL },
	{ "10de:", NULL },
	{ ":2331", NULL },
	{ "10de:233", NULL },
	{ "010de:2331", NULL },
	{ "10de:2331:", NULL },
	{ "10de:2331:1043", NULL },
	{ "10de:2331:1043:8765:", NULL },
	{ "*:*", NULL },
	{ "10de:**", NULL },
	{ "10de:2331:*:8765", NULL },
	{ " 10de:2331", NULL },
	{ "10de:2331 ", NULL },
	{ "0x10:2331", NULL },
	{ "01:00.0:1", NULL },
};

#define MATCH_FORMS \
	"expected DDDD:BB:DD.F, VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS"

/*
 * A config line in; what it holds out: 0 and "" for nothing, 1 and the
 * rule in the module parameter's grammar, or -1 and the message.
 */
static const struct {
	const char *line;
	int rc;
	const char *want;
} line_cases[] = {
	{ "", 0, "" },
	{ "\n", 0, "" },
	{ "   \t\r\n", 0, "" },
	{ "# reserve 01:00.0", 0, "" },
	{ "  # indented comment", 0, "" },
	{ "reserve 01:00.0", 1, "0000:01:00.0" },
	{ "reserve 01:00.0\n", 1, "0000:01:00.0" },
	{ "\treserve\t10DE:2331\r\n", 1, "10de:2331" },
	{ "reserve 10de:2331 # the A100s", 1, "10de:2331" },
	{ "reserve 10de:2331#no space", 1, "10de:2331" },
	{ "reserve 01:00.0 driver vfio-pci", 1, "0000:01:00.0" },
	{ "reserve 01:00.0 driver pci-stub", 1, "0000:01:00.0@pci-stub" },
	{ "reserve 1234:* force", 1, "1234:*+force" },
	{ "reserve 1234:* take", 1, "1234:*+take" },
	{ "reserve 1234:1111:1af4:1100 take driver nvgrace_gpu_vfio_pci force",
	  1, "1234:1111:1af4:1100@nvgrace_gpu_vfio_pci+force+take" },
	{ "reserve", -1, "missing MATCH" },
	{ "reserve # 01:00.0", -1, "missing MATCH" },
	{ "reserv 01:00.0", -1,
	  "unknown keyword \"reserv\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"" },
	{ "RESERVE 01:00.0", -1,
	  "unknown keyword \"RESERVE\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"" },
	{ "01:00.0", -1,
	  "unknown keyword \"01:00.0\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"" },
	{ "reserve 10de:233", -1, "invalid match \"10de:233\", " MATCH_FORMS },
	{ "reserve 01:00.0 driver", -1, "\"driver\" needs a driver name" },
	{ "reserve 01:00.0 driver nouveau", -1,
	  "driver nouveau is not a VFIO driver" },
	{ "reserve 01:00.0 driver vfio-pci,x", -1,
	  "invalid driver name \"vfio-pci,x\"" },
	{ "reserve 01:00.0 driver vfio-pci+take", -1,
	  "invalid driver name \"vfio-pci+take\"" },
	{ "reserve 01:00.0 driver aaaaaaaaaaaaaaaaaaaaaaaaaaaavfio", -1,
	  "invalid driver name \"aaaaaaaaaaaaaaaaaaaaaaaaaaaavfio\"" },
	{ "reserve 01:00.0 driver vfio-pci driver vfio-pci", -1,
	  "\"driver\" given twice" },
	{ "reserve 01:00.0 force force", -1, "\"force\" given twice" },
	{ "reserve 01:00.0 forced", -1, "unexpected argument \"forced\"" },
	{ "reserve 01:00.0 01:00.1", -1, "unexpected argument \"01:00.1\"" },
	{ "reserve 01:00.0 a b c d e f g h i j k l m n o", -1,
	  "too many words" },
	/* dev lines print as "ADDRESS NUMVFS" here */
	{ "dev 41:00.0 numvfs 4", 2, "0000:41:00.0 4" },
	{ "  dev\t0000:41:00.0 numvfs 0 # off", 2, "0000:41:00.0 0" },
	{ "dev ABCD:EF:1F.7 numvfs 65535", 2, "abcd:ef:1f.7 65535" },
	{ "dev", -1, "missing DEV" },
	{ "dev 41:00 numvfs 4", -1,
	  "invalid PCI address \"41:00\", expected DDDD:BB:DD.F or BB:DD.F" },
	{ "dev 41:00.0", -1, "expected \"numvfs NUM\" after 0000:41:00.0" },
	{ "dev 41:00.0 vfs 4", -1,
	  "expected \"numvfs NUM\" after 0000:41:00.0" },
	{ "dev 41:00.0 numvfs", -1, "numvfs takes a number from 0 to 65535" },
	{ "dev 41:00.0 numvfs 65536", -1,
	  "numvfs takes a number from 0 to 65535" },
	{ "dev 41:00.0 numvfs -1", -1, "numvfs takes a number from 0 to 65535" },
	{ "dev 41:00.0 numvfs 4 4", -1, "unexpected argument \"4\"" },
	{ "DEV 41:00.0 numvfs 4", -1,
	  "unknown keyword \"DEV\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"" },
	/* vgpu lines print as "PARENT TYPE UUID" here */
	{ "vgpu 3b:00.0 type nvidia-222 uuid 8E2F0C10-0000-4000-8000-000000000001",
	  3, "0000:3b:00.0 nvidia-222 8e2f0c10-0000-4000-8000-000000000001" },
	{ "vgpu mbochs uuid 8e2f0c10-0000-4000-8000-000000000001 type mbochs-small # pool",
	  3, "mbochs mbochs-small 8e2f0c10-0000-4000-8000-000000000001" },
	{ "vgpu mbochs type mbochs-small", -1,
	  "uuid UUID is required, so that every boot makes the same instance" },
	{ "vgpu", -1, "expected \"PARENT type TYPE [ uuid UUID ]\"" },
	{ "vgpu mbochs uuid 8e2f0c10-0000-4000-8000-000000000001", -1,
	  "type TYPE is required" },
	{ "vgpu mbochs type a type b uuid 8e2f0c10-0000-4000-8000-000000000001",
	  -1, "type given twice" },
	{ "vgpu mbochs type a uuid 8e2f0c10", -1, "malformed UUID \"8e2f0c10\"" },
	{ "vgpu ../mbochs type a uuid 8e2f0c10-0000-4000-8000-000000000001", -1,
	  "invalid parent \"../mbochs\"" },
	{ "vgpu mbochs type a/b uuid 8e2f0c10-0000-4000-8000-000000000001", -1,
	  "invalid type \"a/b\"" },
	{ "vgpu mbochs type a count 2", -1,
	  "unknown keyword \"count\", expected type or uuid" },
	{ "vgpu mbochs type", -1, "type needs a value" },
	/* vf lines print as "VF TYPE" here */
	{ "vf 41:00.4 type 1156", 4, "0000:41:00.4 1156" },
	{ "vf 0000:41:00.5 type 4294967295 # the largest", 4,
	  "0000:41:00.5 4294967295" },
	{ "vf", -1, "missing VF" },
	{ "vf 41:00 type 1", -1,
	  "invalid PCI address \"41:00\", expected DDDD:BB:DD.F or BB:DD.F" },
	{ "vf 41:00.4", -1, "expected \"type ID\" after 0000:41:00.4" },
	{ "vf 41:00.4 kind 1156", -1, "expected \"type ID\" after 0000:41:00.4" },
	{ "vf 41:00.4 type", -1,
	  "type takes a vGPU type id, a number from 1 to 4294967295" },
	{ "vf 41:00.4 type 0", -1,
	  "type takes a vGPU type id, a number from 1 to 4294967295" },
	{ "vf 41:00.4 type none", -1,
	  "type takes a vGPU type id, a number from 1 to 4294967295" },
	{ "vf 41:00.4 type 4294967296", -1,
	  "type takes a vGPU type id, a number from 1 to 4294967295" },
	{ "vf 41:00.4 type 1156 1157", -1, "unexpected argument \"1157\"" },
};

static void test_match(void)
{
	char out[GPUCTL_MATCH_LEN + 1];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(match_cases); i++) {
		const char *want = match_cases[i][1];

		ret = rule_match_parse(match_cases[i][0], out, sizeof(out));
		report(want ? !ret && !strcmp(out, want) : ret < 0,
		       "match \"%s\"", match_cases[i][0]);
	}
}

static void test_lines(void)
{
	char err[RULE_ERR_BUFSZ], got[RULE_ERR_BUFSZ], what[128], *line;
	struct conf_line cl;
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(line_cases); i++) {
		line = strdup(line_cases[i].line);
		err[0] = '\0';
		rc = conf_line_parse(line, &cl, err, sizeof(err));
		got[0] = '\0';
		if (rc == CONF_RULE)
			rule_param_format(&cl.rule, got, sizeof(got));
		else if (rc == CONF_VFS)
			snprintf(got, sizeof(got), "%s %u", cl.vfs.address,
				 cl.vfs.numvfs);
		else if (rc == CONF_VGPU)
			snprintf(got, sizeof(got), "%s %s %s", cl.vgpu.parent,
				 cl.vgpu.type, cl.vgpu.uuid);
		else if (rc == CONF_VF_TYPE)
			snprintf(got, sizeof(got), "%s %u", cl.vf_type.address,
				 cl.vf_type.type);
		else if (rc < 0)
			snprintf(got, sizeof(got), "%s", err);
		snprintf(what, sizeof(what), "config line \"%.100s\"",
			 line_cases[i].line);
		what[strcspn(what, "\r\n")] = '\0';
		if (rc != (line_cases[i].rc < 0 ? -EINVAL : line_cases[i].rc)) {
			report(false, "%s", what);
			printf("# rc %d, want %d\n", rc, line_cases[i].rc);
		} else {
			check_str(what, got, line_cases[i].want);
		}
		free(line);
	}
}

/*
 * A config file and what "gpuctl apply FILE MODE" must do with it. FILE
 * in the expected output stands for the file's name.
 */
static const struct {
	const char *what;
	const char *text;
	const char *mode;
	int rc;
	const char *out;
	const char *err;
} file_cases[] = {
	{ "file: rules to modprobe options",
	  "# GPUs for virtual machines\n"
	  "reserve 0000:01:00.0\n"
	  "\n"
	  "reserve 10DE:2331 driver vfio-pci   # the default, spelled out\n"
	  "reserve 1234:1111:1af4:1100 force take\n"
	  "reserve 05:00.0 driver pci-stub",
	  "modprobe", 0,
	  "options gpuctl reserve=0000:01:00.0,10de:2331,1234:1111:1af4:1100+force+take,0000:05:00.0@pci-stub\n",
	  "" },
	{ "file: check prints nothing", "reserve 01:00.0\n", "check", 0, "",
	  "" },
	{ "file: no rules, no options line", "# nothing reserved\n\n",
	  "modprobe", 0, "", "" },
	{ "file: empty", "", "modprobe", 0, "", "" },
	{ "file: every error, with its line",
	  "reserve 0000:01:00.0\n"
	  "reserv 02:00.0\n"
	  "reserve 10de:233\n"
	  "reserve 03:00.0 driver nouveau\n"
	  "reserve 01:00.0 take\n"
	  "reserve 04:00.0 bogus\n"
	  "reserve 05:00.0\n",
	  "modprobe", 1, "",
	  "FILE:2: unknown keyword \"reserv\", expected \"reserve\", \"dev\", \"vgpu\" or \"vf\"\n"
	  "FILE:3: invalid match \"10de:233\", " MATCH_FORMS "\n"
	  "FILE:4: driver nouveau is not a VFIO driver\n"
	  "FILE:5: a rule for 0000:01:00.0 is already on line 1\n"
	  "FILE:6: unexpected argument \"bogus\"\n" },
	{ "file: dev lines are not for the initramfs",
	  "reserve 0000:41:00.0\n"
	  "dev 41:00.0 numvfs 4\n"
	  "reserve 0000:41:00.4\n",
	  "modprobe", 0,
	  "options gpuctl reserve=0000:41:00.0,0000:41:00.4\n", "" },
	{ "file: dev lines checked",
	  "dev 41:00.0 numvfs 4\n"
	  "dev 41:00.0 numvfs 2\n"
	  "dev 42:00.0 numvfs x\n"
	  "dev 0000:43:00.0 numvfs 0\n",
	  "check", 1, "",
	  "FILE:2: numvfs for 0000:41:00.0 is already on line 1\n"
	  "FILE:3: numvfs takes a number from 0 to 65535\n" },
	{ "file: vgpu lines checked",
	  "vgpu mbochs type mbochs-small uuid 8e2f0c10-0000-4000-8000-000000000001\n"
	  "vgpu mtty type mtty-1 uuid 8E2F0C10-0000-4000-8000-000000000001\n"
	  "vgpu mtty type mtty-1\n",
	  "check", 1, "",
	  "FILE:2: vgpu 8e2f0c10-0000-4000-8000-000000000001 is already on line 1\n"
	  "FILE:3: uuid UUID is required, so that every boot makes the same instance\n" },
	{ "file: vgpu lines are not for the initramfs",
	  "reserve 0000:41:00.0\n"
	  "vgpu 41:00.0 type nvidia-222 uuid 8e2f0c10-0000-4000-8000-000000000001\n",
	  "modprobe", 0, "options gpuctl reserve=0000:41:00.0\n", "" },
	{ "file: vf lines checked, not for the initramfs",
	  "reserve 0000:41:00.4 driver nvidia\n"
	  "vf 41:00.4 type 1156\n"
	  "vf 0000:41:00.4 type 1157\n"
	  "vf 41:00.5 type NVIDIA\n",
	  "modprobe", 1, "",
	  "FILE:3: a type for 0000:41:00.4 is already on line 2\n"
	  "FILE:4: type takes a vGPU type id, a number from 1 to 4294967295\n" },
	{ "file: a nvidia rule goes to the initramfs, its vf line does not",
	  "reserve 0000:41:00.4 driver nvidia\n"
	  "vf 41:00.4 type 1156\n",
	  "modprobe", 0, "options gpuctl reserve=0000:41:00.4@nvidia\n", "" },
	{ "file: same ids in other case are the same rule",
	  "reserve 10de:*\nreserve 10DE:*\n", "check", 1, "",
	  "FILE:2: a rule for 10de:* is already on line 1\n" },
	{ "file: errors stop the kernel mode before the kernel",
	  "reserve 01:00.0 driver i915\n", "", 1, "",
	  "FILE:1: driver i915 is not a VFIO driver\n" },
};

static char *replace_file(const char *tmpl, const char *file)
{
	char *out = calloc(1, strlen(tmpl) * 4 + 256);
	const char *p;
	size_t n = 0;

	for (p = tmpl; *p; p++) {
		if (!strncmp(p, "FILE", 4)) {
			n += sprintf(out + n, "%s", file);
			p += 3;
		} else {
			out[n++] = *p;
		}
	}
	return out;
}

static int write_file(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "w");
	int ret;

	if (!fp)
		return -1;
	ret = fwrite(text, 1, len, fp) == len ? 0 : -1;
	return fclose(fp) ? -1 : ret;
}

/* Run "gpuctl apply FILE MODE" and compare all it did with the case */
static void apply_case(const char *what, const char *file, const char *mode,
		       int rc_want, const char *out_want, const char *err_tmpl)
{
	char args[128], name[128], *out, *err, *want;
	int rc;

	snprintf(args, sizeof(args), "apply %s %s", file, mode);
	rc = run_args(args, false, &out, &err);
	want = replace_file(err_tmpl, file);
	report(rc == rc_want, "%s: exit code", what);
	snprintf(name, sizeof(name), "%s: stdout", what);
	check_str(name, out, out_want);
	snprintf(name, sizeof(name), "%s: stderr", what);
	check_str(name, err, want);
	free(want);
	free(out);
	free(err);
}

static void test_files(void)
{
	static const char nul[] = "reserve 01:00.0\nreserve\0 02:00.0\n";
	char dir[] = "/tmp/gpuctl-test.XXXXXX", file[64];
	size_t i;

	if (!mkdtemp(dir)) {
		report(false, "%s", "temporary directory");
		return;
	}
	snprintf(file, sizeof(file), "%s/gpuctl.conf", dir);
	for (i = 0; i < ARRAY_SIZE(file_cases); i++) {
		if (write_file(file, file_cases[i].text,
			       strlen(file_cases[i].text))) {
			report(false, "%s", file_cases[i].what);
			continue;
		}
		apply_case(file_cases[i].what, file, file_cases[i].mode,
			   file_cases[i].rc, file_cases[i].out,
			   file_cases[i].err);
	}
	if (!write_file(file, nul, sizeof(nul) - 1))
		apply_case("file: a NUL byte", file, "check", 1, "",
			   "FILE:2: NUL byte in line\n");
	apply_case("file: missing", "/nonexistent/gpuctl.conf", "check", 1, "",
		   "gpuctl: FILE: No such file or directory\n");

	unlink(file);
	rmdir(dir);
}

static struct nlmsghdr *fake_rule_msg(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = 0x20;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = GPUCTL_CMD_RULE_NEW_NTF;
	genl->version = GPUCTL_FAMILY_VERSION;
	mnl_attr_put_u32(nlh, GPUCTL_A_RULE_ID, 2);
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_MATCH, "0000:09:00.0");
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_DRIVER, "vfio-pci");
	mnl_attr_put(nlh, GPUCTL_A_RULE_TAKE, 0, NULL);
	mnl_attr_put_u32(nlh, GPUCTL_A_RULE_SOURCE, GPUCTL_RULE_SOURCE_NETLINK);
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_DEVICE, "0000:09:00.0");
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_DEVICE, "0000:09:00.1");
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_ORPHAN, "0000:09:00.2");
	mnl_attr_put_strz(nlh, GPUCTL_A_RULE_WARNING,
			  "group 9 is not viable: 0000:09:01.0 is bound to e1000");
	/* an attribute from a future module must be skipped */
	mnl_attr_put_u32(nlh, GPUCTL_A_RULE_MAX + 1, 42);
	return nlh;
}

#define RULE_WARNING "group 9 is not viable: 0000:09:01.0 is bound to e1000"
#define RULE_LINE \
	"rule 2 match 0000:09:00.0 driver vfio-pci take source netlink" \
	" devices 0000:09:00.0 0000:09:00.1 orphans 0000:09:00.2" \
	" warning \"" RULE_WARNING "\""
#define RULE_JSON \
	"{\"rules\":[{\"id\":2,\"match\":\"0000:09:00.0\"," \
	"\"driver\":\"vfio-pci\",\"force\":false,\"take\":true," \
	"\"source\":\"netlink\"," \
	"\"devices\":[\"0000:09:00.0\",\"0000:09:00.1\"]," \
	"\"orphans\":[\"0000:09:00.2\"]," \
	"\"warnings\":[\"" RULE_WARNING "\"]}]}\n"

static const struct {
	const char *what;
	bool json;
	enum rule_form form;
	const char *out;
	const char *err;
} rule_print_cases[] = {
	{ "rule JSON", true, RULE_FORM_BLOCK,
	  RULE_JSON,
	  "" },
	{ "rule JSON of reserve add", true, RULE_FORM_ADDED,
	  RULE_JSON,
	  "" },
	{ "rule text of reserve show", false, RULE_FORM_BLOCK,
	  "rule 2 match 0000:09:00.0 driver vfio-pci take source netlink\n"
	  "  devices: 0000:09:00.0 0000:09:00.1\n"
	  "  orphans: 0000:09:00.2\n"
	  "  warning: " RULE_WARNING "\n",
	  "" },
	{ "rule text of reserve add, warnings on stderr", false,
	  RULE_FORM_ADDED,
	  "rule 2 match 0000:09:00.0 driver vfio-pci take source netlink\n"
	  "  devices: 0000:09:00.0 0000:09:00.1\n"
	  "  orphans: 0000:09:00.2\n",
	  "Warning: " RULE_WARNING "\n" },
};

static void test_rule_output(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct rule_info r = {};
	struct nl_list list;
	struct capture c;
	char *out, *err;
	size_t i;

	report(!rule_info_parse(fake_rule_msg(buf), &r), "%s",
	       "rule attributes parse");
	reserve_list_init(&list);
	list.v = &r;
	list.n = 1;
	for (i = 0; i < ARRAY_SIZE(rule_print_cases); i++) {
		capture_start(&c);
		json_print_init(stdout, rule_print_cases[i].json, false);
		reserve_list_print(&list, rule_print_cases[i].form);
		capture_end(&c, &out, &err);
		report(!strcmp(out, rule_print_cases[i].out) &&
		       !strcmp(err, rule_print_cases[i].err), "%s",
		       rule_print_cases[i].what);
		if (strcmp(out, rule_print_cases[i].out) ||
		    strcmp(err, rule_print_cases[i].err))
			printf("# got:  %s%s# want: %s%s", out, err,
			       rule_print_cases[i].out,
			       rule_print_cases[i].err);
		free(out);
		free(err);
	}

	/* monitor's form: one line, after the event's label */
	capture_start(&c);
	json_print_init(stdout, false, false);
	rule_info_print(&r, RULE_FORM_LINE);
	capture_end(&c, &out, &err);
	check_str("rule text line", out,
		  RULE_LINE);
	free(out);
	free(err);
	rule_info_release(&r);

	/* a rule without devices or warnings: empty arrays, "-" in text */
	memset(&r, 0, sizeof(r));
	r.id = 1;
	r.force = true;
	r.source = GPUCTL_RULE_SOURCE_PARAM;
	snprintf(r.match, sizeof(r.match), "10de:*");
	snprintf(r.driver, sizeof(r.driver), "pci-stub");
	capture_start(&c);
	json_print_init(stdout, false, false);
	reserve_list_print(&list, RULE_FORM_BLOCK);
	json_print_init(stdout, true, false);
	reserve_list_print(&list, RULE_FORM_BLOCK);
	capture_end(&c, &out, &err);
	check_str("rule without devices", out,
		  "rule 1 match 10de:* driver pci-stub force source param\n"
		  "  devices: -\n"
		  "{\"rules\":[{\"id\":1,\"match\":\"10de:*\",\"driver\":\"pci-stub\",\"force\":true,\"take\":false,\"source\":\"param\",\"devices\":[],\"orphans\":[],\"warnings\":[]}]}\n");
	free(out);
	free(err);

	/* no rules: an empty array, and no text at all */
	list.n = 0;
	capture_start(&c);
	reserve_list_print(&list, RULE_FORM_ADDED);
	json_print_init(stdout, false, false);
	reserve_list_print(&list, RULE_FORM_ADDED);
	capture_end(&c, &out, &err);
	check_str("no rules", out, "{\"rules\":[]}\n");
	free(out);
	free(err);

	/* a u16 where a u32 belongs is a malformed message */
	memset(&r, 0, sizeof(r));
	mnl_attr_put_u16(fake_rule_msg(buf), GPUCTL_A_RULE_SOURCE, 1);
	report(rule_info_parse((struct nlmsghdr *)buf, &r) < 0, "%s",
	       "rule malformed attribute");
	rule_info_release(&r);
}

void test_rules(void)
{
	test_match();
	test_lines();
	test_files();
	test_rule_output();
}
