// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * Command line parser and output tests that need no kernel: each case runs
 * gpuctl_run() in dry-run mode and checks the exit code and what it said on
 * stderr (nothing, or the one error line expected), after ethtool's
 * test-cmdline. A few more build netlink messages by hand and check what
 * the print path makes of them. Output is TAP.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/gpuctl.h>

#include "gpuctl.h"
#include "pci_names.h"
#include "json_print.h"
#include "test-cmdline.h"

#define UUID "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define AA "alloc add owner " UUID
#define AA_UPPER "alloc add owner 1B4E28BA-2FA1-11D2-883F-0016D3CCA427"
#define LABEL63 \
	"012345678901234567890123456789012345678901234567890123456789012"
/* the parsers' messages that many rows share */
#define BAD_ADDR(a) \
	"invalid PCI address \"" a "\", expected DDDD:BB:DD.F or BB:DD.F"
#define BAD_RULE_MATCH(m) \
	"reserve add: invalid match \"" m "\", expected DDDD:BB:DD.F, " \
	"VVVV:DDDD, VVVV:* or VVVV:DDDD:SSSS:SSSS"
#define BAD_ALLOC_MATCH(m) \
	"alloc add: invalid match \"" m "\", expected VVVV:DDDD, VVVV:* or " \
	"VVVV:DDDD:SSSS:SSSS"
#define BAD_LV_TARGET(t) \
	"export libvirt: \"" t "\" is no allocation id, PCI address or mdev UUID"
#define BAD_OWNER(o) \
	"alloc add: invalid owner \"" o "\", expected a UUID " \
	"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"

/* A UUID as users may type it, upper case */
#define UPPER_UUID "8E2F0C10-0000-4000-8000-000000000001"

/*
 * The words after "gpuctl", the exit code, and for a refused line the
 * error, which gpuctl prints as "gpuctl: ERROR" on stderr: the right exit
 * code for the wrong reason is a failure. A line that succeeds prints
 * nothing on stderr.
 */
static const struct test_case {
	int rc;
	const char *args;
	const char *err;
} cases[] = {
	/* global options and the top level */
	{ 0, "", NULL },
	{ 0, "help", NULL },
	{ 0, "-h", NULL },
	{ 0, "-help", NULL },
	{ 0, "--help", NULL },
	{ 0, "-V", NULL },
	{ 0, "-Version", NULL },
	{ 0, "--Version", NULL },
	{ 0, "-j", NULL },
	{ 0, "-j -p", NULL },
	{ 0, "-json -pretty dev show", NULL },
	{ 0, "--json dev", NULL },
	{ 0, "-p dev show", NULL },
	{ 1, "-x", "unknown option \"-x\", try \"gpuctl help\"" },
	{ 1, "-jp", "unknown option \"-jp\", try \"gpuctl help\"" },
	{ 1, "-js", "unknown option \"-js\", try \"gpuctl help\"" },
	{ 1, "-", "unknown option \"-\", try \"gpuctl help\"" },
	{ 1, "--", "unknown option \"--\", try \"gpuctl help\"" },
	{ 1, "foo", "unknown object \"foo\", try \"gpuctl help\"" },
	{ 1, "d", "unknown object \"d\", try \"gpuctl help\"" },
	{ 1, "devs", "unknown object \"devs\", try \"gpuctl help\"" },
	{ 1, "DEV", "unknown object \"DEV\", try \"gpuctl help\"" },
	{ 1, "reserves", "unknown object \"reserves\", try \"gpuctl help\"" },
	{ 1, "apply-all", "unknown object \"apply-all\", try \"gpuctl help\"" },
	/* dev */
	{ 0, "dev", NULL },
	{ 0, "dev show", NULL },
	{ 0, "dev help", NULL },
	{ 0, "dev show help", NULL },
	{ 1, "dev sh", "dev: unknown command \"sh\", try \"gpuctl dev help\"" },
	{ 1, "dev list",
	  "dev: unknown command \"list\", try \"gpuctl dev help\"" },
	{ 1, "dev -j show",
	  "dev: unknown command \"-j\", try \"gpuctl dev help\"" },
	{ 0, "dev show 0000:01:00.0", NULL },
	{ 0, "dev show 01:00.0", NULL },
	{ 0, "dev show 0000:00:1f.7", NULL },
	{ 0, "dev show ABCD:EF:1F.7", NULL },
	{ 0, "dev show ffff:ff:1f.7", NULL },
	{ 0, "dev show 1:0.0", NULL },
	{ 0, "-j dev show 0000:05:00.1", NULL },
	{ 1, "dev show 0000:01:00", BAD_ADDR("0000:01:00") },
	{ 1, "dev show 0000:01:20.0", BAD_ADDR("0000:01:20.0") },
	{ 1, "dev show 0000:01:00.8", BAD_ADDR("0000:01:00.8") },
	{ 1, "dev show 00000:01:00.0", BAD_ADDR("00000:01:00.0") },
	{ 1, "dev show 0000:001:00.0", BAD_ADDR("0000:001:00.0") },
	{ 1, "dev show 0000:01:000.0", BAD_ADDR("0000:01:000.0") },
	{ 1, "dev show 0000:01:00.00", BAD_ADDR("0000:01:00.00") },
	{ 1, "dev show 01:00.0.0", BAD_ADDR("01:00.0.0") },
	{ 1, "dev show :01:00.0", BAD_ADDR(":01:00.0") },
	{ 1, "dev show 0000::00.0", BAD_ADDR("0000::00.0") },
	{ 1, "dev show 0000:01:.0", BAD_ADDR("0000:01:.0") },
	{ 1, "dev show 0000:01:00.", BAD_ADDR("0000:01:00.") },
	{ 1, "dev show g000:01:00.0", BAD_ADDR("g000:01:00.0") },
	{ 1, "dev show 0x01:00.0", BAD_ADDR("0x01:00.0") },
	{ 1, "dev show 1:2:3:4.0", BAD_ADDR("1:2:3:4.0") },
	{ 1, "dev show 01:00.+1", BAD_ADDR("01:00.+1") },
	{ 1, "dev show 01-00.0", BAD_ADDR("01-00.0") },
	{ 1, "dev show 01:00.0 extra",
	  "dev show: unexpected argument \"extra\"" },
	{ 1, "dev show 01:00.0 help",
	  "dev show: unexpected argument \"help\"" },
	{ 1, "dev show id 3", BAD_ADDR("id") },
	{ 1, "dev show 3", BAD_ADDR("3") },
	{ 0, "dev set 0000:11:00.0 numvfs 2", NULL },
	{ 0, "dev set 11:00.0 numvfs 0", NULL },
	{ 0, "dev set 11:00.0 numvfs 65535", NULL },
	{ 0, "dev set help", NULL },
	{ 1, "dev set", "dev set: expected \"DEV numvfs NUM\"" },
	{ 1, "dev set 11:00", BAD_ADDR("11:00") },
	{ 1, "dev set 11:00.0",
	  "dev set: expected \"numvfs NUM\" after 0000:11:00.0" },
	{ 1, "dev set 11:00.0 vfs 2",
	  "dev set: expected \"numvfs NUM\" after 0000:11:00.0" },
	{ 1, "dev set 11:00.0 numvfs",
	  "dev set: numvfs takes a number from 0 to 65535" },
	{ 1, "dev set 11:00.0 numvfs 65536",
	  "dev set: numvfs takes a number from 0 to 65535" },
	{ 1, "dev set 11:00.0 numvfs -1",
	  "dev set: numvfs takes a number from 0 to 65535" },
	{ 1, "dev set 11:00.0 numvfs 2 extra",
	  "dev set: unexpected argument \"extra\"" },
	/* group */
	{ 0, "group", NULL },
	{ 0, "group show", NULL },
	{ 0, "group help", NULL },
	{ 0, "group show help", NULL },
	{ 0, "group show 0", NULL },
	{ 0, "group show 12", NULL },
	{ 0, "group show 4294967295", NULL },
	{ 0, "-j group show 3", NULL },
	{ 1, "group list",
	  "group: unknown command \"list\", try \"gpuctl group help\"" },
	{ 1, "group show 4294967296",
	  "invalid IOMMU group \"4294967296\", expected a number" },
	{ 1, "group show -1", "invalid IOMMU group \"-1\", expected a number" },
	{ 1, "group show +1", "invalid IOMMU group \"+1\", expected a number" },
	{ 1, "group show 0x10",
	  "invalid IOMMU group \"0x10\", expected a number" },
	{ 1, "group show 1a", "invalid IOMMU group \"1a\", expected a number" },
	{ 1, "group show 1 2", "group show: unexpected argument \"2\"" },
	{ 1, "group show 01:00.0",
	  "invalid IOMMU group \"01:00.0\", expected a number" },
	/* reserve */
	{ 0, "reserve", NULL },
	{ 0, "reserve show", NULL },
	{ 0, "reserve help", NULL },
	{ 0, "reserve show help", NULL },
	{ 0, "reserve show 3", NULL },
	{ 0, "-j reserve show", NULL },
	{ 1, "reserve list",
	  "reserve: unknown command \"list\", try \"gpuctl reserve help\"" },
	{ 1, "reserve show x", "invalid rule id \"x\", expected a number" },
	{ 1, "reserve show 1 2", "reserve show: unexpected argument \"2\"" },
	{ 1, "reserve show 0000:01:00.0",
	  "invalid rule id \"0000:01:00.0\", expected a number" },
	{ 0, "reserve add 01:00.0", NULL },
	{ 0, "reserve add 0000:01:00.0", NULL },
	{ 0, "reserve add ABCD:EF:1F.7", NULL },
	{ 0, "reserve add 10de:2331", NULL },
	{ 0, "reserve add 10DE:2331", NULL },
	{ 0, "reserve add 10de:*", NULL },
	{ 0, "reserve add 10de:2331:1043:8765", NULL },
	{ 1, "reserve add 10de:*:1043:8765",
	  BAD_RULE_MATCH("10de:*:1043:8765") },
	{ 0, "reserve add 01:00.0 driver pci-stub", NULL },
	{ 0, "reserve add 01:00.0 driver vfio-pci force take", NULL },
	{ 0, "reserve add 01:00.0 take force driver nvgrace_gpu_vfio_pci",
	  NULL },
	{ 0, "-j reserve add 10de:*", NULL },
	{ 0, "reserve add help", NULL },
	{ 1, "reserve add", "reserve add: missing MATCH" },
	{ 1, "reserve add 01:00", BAD_RULE_MATCH("01:00") },
	{ 1, "reserve add 0000:01:20.0", BAD_RULE_MATCH("0000:01:20.0") },
	{ 1, "reserve add 10de", BAD_RULE_MATCH("10de") },
	{ 1, "reserve add 10de:233", BAD_RULE_MATCH("10de:233") },
	{ 1, "reserve add 10de:23311", BAD_RULE_MATCH("10de:23311") },
	{ 1, "reserve add *:2331", BAD_RULE_MATCH("*:2331") },
	{ 1, "reserve add 10de:**", BAD_RULE_MATCH("10de:**") },
	{ 1, "reserve add 10de:g331", BAD_RULE_MATCH("10de:g331") },
	{ 1, "reserve add 10de:2331:1043", BAD_RULE_MATCH("10de:2331:1043") },
	{ 1, "reserve add 10de:2331:1043:8765:1",
	  BAD_RULE_MATCH("10de:2331:1043:8765:1") },
	{ 1, "reserve add 10de:2331:*:8765",
	  BAD_RULE_MATCH("10de:2331:*:8765") },
	{ 1, "reserve add 10de:2331:1043:*",
	  BAD_RULE_MATCH("10de:2331:1043:*") },
	{ 1, "reserve add 01:00.0 driver",
	  "reserve add: \"driver\" needs a driver name" },
	{ 1, "reserve add 01:00.0 driver nouveau",
	  "reserve add: driver nouveau is not a VFIO driver" },
	{ 1, "reserve add 01:00.0 driver vfio,pci",
	  "reserve add: invalid driver name \"vfio,pci\"" },
	{ 1, "reserve add 01:00.0 driver vfio@pci",
	  "reserve add: invalid driver name \"vfio@pci\"" },
	{ 1, "reserve add 01:00.0 driver vfio-pci driver pci-stub",
	  "reserve add: \"driver\" given twice" },
	{ 1, "reserve add 01:00.0 force force",
	  "reserve add: \"force\" given twice" },
	{ 1, "reserve add 01:00.0 take take",
	  "reserve add: \"take\" given twice" },
	{ 1, "reserve add 01:00.0 foo",
	  "reserve add: unexpected argument \"foo\"" },
	{ 1, "reserve add 01:00.0 01:00.1",
	  "reserve add: unexpected argument \"01:00.1\"" },
	{ 1, "reserve add id 3", BAD_RULE_MATCH("id") },
	{ 1, "reserve add 01:00.0 help",
	  "reserve add: unexpected argument \"help\"" },
	{ 0, "reserve del 3", NULL },
	{ 0, "reserve del 0", NULL },
	{ 0, "reserve del 01:00.0", NULL },
	{ 0, "reserve del 10de:*", NULL },
	{ 0, "reserve del help", NULL },
	{ 1, "reserve del", "reserve del: missing ID or MATCH" },
	{ 1, "reserve del -1",
	  "reserve del: invalid rule \"-1\", expected a rule id or a match" },
	{ 1, "reserve del 4294967296",
	  "reserve del: invalid rule \"4294967296\", expected a rule id or a match" },
	{ 1, "reserve del 3 4", "reserve del: unexpected argument \"4\"" },
	{ 1, "reserve del foo",
	  "reserve del: invalid rule \"foo\", expected a rule id or a match" },
	{ 1, "reserve del 01:00.0 force",
	  "reserve del: unexpected argument \"force\"" },
	/* apply: dry runs stop before the file is read */
	{ 0, "apply", NULL },
	{ 0, "apply help", NULL },
	{ 0, "apply check", NULL },
	{ 0, "apply modprobe", NULL },
	{ 0, "apply /etc/gpuctl/gpuctl.conf", NULL },
	{ 0, "apply f check", NULL },
	{ 0, "apply ./check modprobe", NULL },
	{ 0, "-j apply f", NULL },
	{ 1, "apply f check modprobe",
	  "apply: unexpected argument \"modprobe\"" },
	{ 1, "apply check modprobe",
	  "apply: unexpected argument \"modprobe\"" },
	{ 1, "apply check f", "apply: unexpected argument \"f\"" },
	{ 1, "apply f g", "apply: unexpected argument \"g\"" },
	{ 1, "apply f check extra", "apply: unexpected argument \"extra\"" },
	/* monitor */
	{ 0, "monitor", NULL },
	{ 0, "monitor help", NULL },
	{ 0, "-j monitor", NULL },
	{ 0, "-p -j monitor", NULL },
	{ 1, "monitor dev",
	  "monitor: unexpected argument \"dev\", try \"gpuctl monitor help\"" },
	{ 1, "monitor foo",
	  "monitor: unexpected argument \"foo\", try \"gpuctl monitor help\"" },
	{ 0, "monitor --metrics /var/lib/prometheus/node-exporter", NULL },
	{ 1, "monitor --metrics", "monitor: --metrics needs a directory" },
	{ 1, "monitor --metrics /tmp x",
	  "monitor: unexpected argument \"x\", try \"gpuctl monitor help\"" },
	{ 0, "export cloudstack", NULL },
	{ 0, "export help", NULL },
	{ 1, "export", "export: missing format, try \"gpuctl export help\"" },
	{ 0, "export nova", NULL },
	{ 1, "export openstack",
	  "export: unknown format \"openstack\", try \"gpuctl export help\"" },
	{ 1, "export nova x", "export nova: unexpected argument \"x\"" },
	{ 1, "export cloudstack x",
	  "export cloudstack: unexpected argument \"x\"" },
	/* export libvirt */
	{ 0, "export libvirt 3", NULL },
	{ 0, "export libvirt id 3", NULL },
	{ 0, "export libvirt owner " UUID, NULL },
	{ 0, "export libvirt 07:00.0", NULL },
	{ 0, "export libvirt 0001:07:00.1", NULL },
	{ 0, "export libvirt " UUID, NULL },
	{ 0, "export libvirt 1B4E28BA-2FA1-11D2-883F-0016D3CCA427", NULL },
	{ 0, "export libvirt help", NULL },
	{ 1, "export libvirt",
	  "export libvirt: missing allocation id, DEV or mdev UUID" },
	{ 1, "export libvirt id",
	  "export libvirt: invalid allocation id \"\", expected a number" },
	{ 1, "export libvirt id x",
	  "export libvirt: invalid allocation id \"x\", expected a number" },
	{ 1, "export libvirt owner 3",
	  "export libvirt: invalid owner \"3\", expected a UUID" },
	{ 1, "export libvirt owner",
	  "export libvirt: invalid owner \"\", expected a UUID" },
	{ 1, "export libvirt 07:00.8",
	  "export libvirt: invalid PCI address \"07:00.8\"" },
	{ 1, "export libvirt 07:20.0",
	  "export libvirt: invalid PCI address \"07:20.0\"" },
	{ 1, "export libvirt 1b4e28ba-2fa1-11d2-883f-0016d3cca42",
	  BAD_LV_TARGET("1b4e28ba-2fa1-11d2-883f-0016d3cca42") },
	{ 1, "export libvirt -3", BAD_LV_TARGET("-3") },
	{ 1, "export libvirt 3 4", "export libvirt: unexpected argument \"4\"" },
	{ 1, "-j export libvirt 3",
	  "export libvirt: prints XML, -j does not apply" },
	{ 0, "export kubevirt", NULL },
	{ 0, "-j export kubevirt", NULL },
	{ 0, "-j -p export kubevirt", NULL },
	{ 1, "export kubevirt x", "export kubevirt: unexpected argument \"x\"" },
	{ 0, "doctor", NULL },
	{ 0, "doctor help", NULL },
	{ 0, "-j doctor", NULL },
	{ 0, "-j -p doctor", NULL },
	{ 1, "doctor now", "doctor: unexpected argument \"now\"" },
	{ 1, "doctor -j", "doctor: unexpected argument \"-j\"" },
	{ 0, "module show", NULL },
	{ 0, "-j module show", NULL },
	{ 0, "module help", NULL },
	{ 0, "module reload", NULL },
	{ 0, "module reload ko /tmp/gpuctl.ko", NULL },
	{ 1, "module reload ko", "module reload: ko needs a FILE" },
	{ 1, "module reload now", "module reload: unexpected argument \"now\"" },
	{ 1, "module show all", "module show: unexpected argument \"all\"" },
	{ 1, "module load",
	  "module: unknown command \"load\", try \"gpuctl module help\"" },
	{ 0, "metrics", NULL },
	{ 0, "metrics help", NULL },
	{ 0, "metrics /var/lib/prometheus/node-exporter/gpuctl.prom", NULL },
	{ 1, "metrics a.prom b.prom", "metrics: unexpected argument \"b.prom\"" },
	/* alloc */
	{ 0, "alloc", NULL },
	{ 0, "alloc show", NULL },
	{ 0, "alloc help", NULL },
	{ 0, "alloc show help", NULL },
	{ 0, "alloc show 3", NULL },
	{ 0, "-j alloc show", NULL },
	{ 1, "alloc list",
	  "alloc: unknown command \"list\", try \"gpuctl alloc help\"" },
	{ 1, "alloc show x", "invalid allocation id \"x\", expected a number" },
	{ 1, "alloc show 1 2", "alloc show: unexpected argument \"2\"" },
	{ 1, "alloc show id 3",
	  "invalid allocation id \"id\", expected a number" },
	{ 0, AA " dev 01:00.0", NULL },
	{ 0, AA_UPPER " dev 0000:01:00.0 dev 02:00.0", NULL },
	{ 0, AA " count 1", NULL },
	{ 0, "alloc add count 2 owner " UUID " match 10de:*", NULL },
	{ 0, AA " count 2 numa 1", NULL },
	{ 0, AA " count 2 numa 0 policy required", NULL },
	{ 0, AA " count 2 policy preferred numa 0", NULL },
	{ 0, AA " count 1 match 10de:2331:1043:8765 numa 3 policy legacy",
	  NULL },
	{ 0, AA " name vm1 account acme project p1 domain d1 dev 01:00.0",
	  NULL },
	{ 0, AA " dev 01:00.0 detach-on-stop uid 107 gid 108 id 4294967295",
	  NULL },
	{ 0, "-j " AA " dev 01:00.0", NULL },
	{ 0, "alloc add help", NULL },
	{ 1, "alloc add", "alloc add: missing owner UUID" },
	{ 1, "alloc add owner", "alloc add: \"owner\" needs a value" },
	{ 1, "alloc add dev 01:00.0", "alloc add: missing owner UUID" },
	{ 1, "alloc add owner 1b4e28ba-2fa1-11d2-883f-0016d3cca42 dev 01:00.0",
	  BAD_OWNER("1b4e28ba-2fa1-11d2-883f-0016d3cca42") },
	{ 1, AA "7 dev 01:00.0", BAD_OWNER(UUID "7") },
	{ 1, "alloc add owner 1b4e28ba2fa111d2883f0016d3cca427 dev 01:00.0",
	  BAD_OWNER("1b4e28ba2fa111d2883f0016d3cca427") },
	{ 1, "alloc add owner 1b4e28ba-2fa1-11d2-883f_0016d3cca427 dev 01:00.0",
	  BAD_OWNER("1b4e28ba-2fa1-11d2-883f_0016d3cca427") },
	{ 1, "alloc add owner {1b4e28ba-2fa1-11d2-883f-0016d3cca427} dev 01:00.0",
	  BAD_OWNER("{" UUID "}") },
	{ 1, "alloc add owner 1g4e28ba-2fa1-11d2-883f-0016d3cca427 dev 01:00.0",
	  BAD_OWNER("1g4e28ba-2fa1-11d2-883f-0016d3cca427") },
	{ 1, AA "", "alloc add: missing dev ADDR, count N or vgpu" },
	{ 0, AA " vgpu mbochs-small count 2", NULL },
	{ 0, AA " vgpu 8e2f0c10-0000-4000-8000-0000000000a1 dev 01:00.0", NULL },
	{ 0, AA " vgpu nvidia-222 numa 0 policy required", NULL },
	{ 1, AA " vgpu a b", "alloc add: unexpected argument \"b\"" },
	{ 1, AA " count 60 vgpu t count 5",
	  "alloc add: more than 64 GPUs and vGPUs in one allocation" },
	{ 1, AA " owner " UUID " dev 01:00.0",
	  "alloc add: \"owner\" given twice" },
	{ 1, AA " dev", "alloc add: \"dev\" needs a PCI address" },
	{ 1, AA " dev 01:00", "alloc add: " BAD_ADDR("01:00") },
	{ 1, AA " dev 01:00.0 dev 0000:01:00.0",
	  "alloc add: dev 0000:01:00.0 given twice" },
	{ 1, AA " dev 01:00.0 count 1",
	  "alloc add: give dev or count, not both" },
	{ 1, AA " count 0", "alloc add: count must be at least 1" },
	{ 1, AA " count -1",
	  "alloc add: invalid count \"-1\", expected a number" },
	{ 1, AA " count 4294967296",
	  "alloc add: invalid count \"4294967296\", expected a number" },
	{ 1, AA " count", "alloc add: \"count\" needs a value" },
	{ 1, AA " count 1 count 2", "alloc add: \"count\" given twice" },
	{ 1, AA " dev 01:00.0 match 10de:*",
	  "alloc add: \"match\" needs count" },
	{ 1, AA " dev 01:00.0 numa 0", "alloc add: \"numa\" needs count or vgpu TYPE" },
	{ 1, AA " count 1 policy required",
	  "alloc add: \"policy\" needs numa" },
	{ 1, AA " count 1 numa 0 policy strict",
	  "alloc add: invalid policy \"strict\", expected required, preferred or legacy" },
	{ 1, AA " count 1 numa -1",
	  "alloc add: invalid numa \"-1\", expected a number" },
	{ 1, AA " count 1 match 01:00.0", BAD_ALLOC_MATCH("01:00.0") },
	{ 1, AA " count 1 match 10de", BAD_ALLOC_MATCH("10de") },
	{ 1, AA " dev 01:00.0 id 0", "alloc add: id must be at least 1" },
	{ 1, AA " dev 01:00.0 id x",
	  "alloc add: invalid id \"x\", expected a number" },
	{ 1, AA " dev 01:00.0 uid", "alloc add: \"uid\" needs a value" },
	{ 1, AA " dev 01:00.0 gid root",
	  "alloc add: invalid gid \"root\", expected a number" },
	{ 1, AA " dev 01:00.0 detach-on-stop detach-on-stop",
	  "alloc add: \"detach-on-stop\" given twice" },
	{ 1, AA " dev 01:00.0 name", "alloc add: \"name\" needs a value" },
	{ 1, AA " dev 01:00.0 account a account b",
	  "alloc add: \"account\" given twice" },
	{ 1, AA " dev 01:00.0 account " LABEL63 "3",
	  "alloc add: account is longer than 63 characters" },
	{ 0, AA " dev 01:00.0 account " LABEL63, NULL },
	{ 1, AA " dev 01:00.0 tenant a",
	  "alloc add: unexpected argument \"tenant\"" },
	{ 1, AA " dev 01:00.0 help",
	  "alloc add: unexpected argument \"help\"" },
	{ 0, "alloc del 3", NULL },
	{ 0, "alloc del id 3", NULL },
	{ 0, "alloc del owner " UUID, NULL },
	{ 0, "alloc del help", NULL },
	{ 0, "alloc del 3 keep", NULL },
	{ 0, "alloc del owner " UUID " keep", NULL },
	{ 1, "alloc del 3 keep x", "alloc del: unexpected argument \"x\"" },
	{ 1, "alloc del", "alloc del: missing ID or owner UUID" },
	{ 1, "alloc del id",
	  "alloc del: invalid allocation id \"\", expected a number" },
	{ 1, "alloc del owner",
	  "alloc del: invalid owner \"\", expected a UUID" },
	{ 1, "alloc del owner 3",
	  "alloc del: invalid owner \"3\", expected a UUID" },
	{ 1, "alloc del " UUID,
	  "alloc del: invalid allocation id \"" UUID "\", expected a number" },
	{ 1, "alloc del -1",
	  "alloc del: invalid allocation id \"-1\", expected a number" },
	{ 1, "alloc del 3 4", "alloc del: unexpected argument \"4\"" },
	{ 1, "alloc del id 3 owner " UUID,
	  "alloc del: unexpected argument \"owner\"" },
	{ 0, "alloc save /var/lib/gpuctl/ledger", NULL },
	{ 0, "alloc save -", NULL },
	{ 0, "alloc save help", NULL },
	{ 1, "alloc save", "alloc save: missing FILE (- for stdout)" },
	{ 1, "alloc save f g", "alloc save: unexpected argument \"g\"" },
	{ 0, "alloc restore /var/lib/gpuctl/ledger", NULL },
	{ 0, "alloc restore -", NULL },
	{ 0, "-j alloc restore f", NULL },
	{ 1, "alloc restore", "alloc restore: missing FILE (- for stdin)" },
	{ 1, "alloc restore f g", "alloc restore: unexpected argument \"g\"" },
	/* vgpu */
	{ 0, "vgpu", NULL },
	{ 0, "vgpu show", NULL },
	{ 0, "vgpu help", NULL },
	{ 0, "vgpu show help", NULL },
	{ 0, "vgpu show 8E2F0C10-0000-4000-8000-000000000001", NULL },
	{ 0, "-j vgpu show", NULL },
	{ 1, "vgpu show 8e2f0c10", "vgpu show: malformed UUID \"8e2f0c10\"" },
	{ 1, "vgpu show 8e2f0c10-0000-4000-8000-000000000001 x",
	  "vgpu show: unexpected argument \"x\"" },
	{ 1, "vgpu list",
	  "vgpu: unknown command \"list\", try \"gpuctl vgpu help\"" },
	{ 0, "vgpu types", NULL },
	{ 0, "vgpu types 00:02.0", NULL },
	{ 0, "vgpu types mbochs", NULL },
	{ 0, "vgpu types help", NULL },
	{ 1, "vgpu types ../x", "vgpu types: invalid parent \"../x\"" },
	{ 1, "vgpu types mbochs mtty", "vgpu types: unexpected argument \"mtty\"" },
	{ 0, "vgpu add mbochs type mbochs-small", NULL },
	{ 0, "vgpu add 0000:00:02.0 type nvidia-222 uuid " UPPER_UUID, NULL },
	{ 0, "vgpu add mbochs uuid 8e2f0c10-0000-4000-8000-000000000001 type mbochs-small", NULL },
	{ 0, "vgpu add help", NULL },
	{ 1, "vgpu add", "vgpu add: expected \"PARENT type TYPE [ uuid UUID ]\"" },
	{ 1, "vgpu add mbochs", "vgpu add: type TYPE is required" },
	{ 1, "vgpu add mbochs type", "vgpu add: type needs a value" },
	{ 1, "vgpu add mbochs type a type b", "vgpu add: type given twice" },
	{ 1, "vgpu add mbochs type a/b", "vgpu add: invalid type \"a/b\"" },
	{ 1, "vgpu add mbochs type 01:00.0", "vgpu add: invalid type \"01:00.0\"" },
	{ 1, "vgpu add mbochs type a uuid 8e2f0c10",
	  "vgpu add: malformed UUID \"8e2f0c10\"" },
	{ 1, "vgpu add mbochs type a count 2",
	  "vgpu add: unknown keyword \"count\", expected type or uuid" },
	{ 1, "vgpu add .. type a", "vgpu add: invalid parent \"..\"" },
	{ 0, "vgpu del 8e2f0c10-0000-4000-8000-000000000001", NULL },
	{ 0, "vgpu del help", NULL },
	{ 1, "vgpu del", "vgpu del: expected a UUID" },
	{ 1, "vgpu del mbochs", "vgpu del: malformed UUID \"mbochs\"" },
	{ 1, "vgpu del 8e2f0c10-0000-4000-8000-000000000001 x",
	  "vgpu del: unexpected argument \"x\"" },
	/* limit */
	{ 0, "limit", NULL },
	{ 0, "limit show", NULL },
	{ 0, "limit help", NULL },
	{ 0, "limit show account acme", NULL },
	{ 0, "-j limit show domain d1", NULL },
	{ 0, "limit set account acme max 2", NULL },
	{ 0, "limit set project p1 max 0", NULL },
	{ 0, "limit set domain d1 max none", NULL },
	{ 0, "-j limit set account acme max 4294967295", NULL },
	{ 0, "limit set help", NULL },
	{ 1, "limit list",
	  "limit: unknown command \"list\", try \"gpuctl limit help\"" },
	{ 1, "limit show account", "limit show: \"account\" needs a value" },
	{ 1, "limit show tenant acme",
	  "limit show: expected account, project or domain, not \"tenant\"" },
	{ 1, "limit show account acme extra",
	  "limit show: unexpected argument \"extra\"" },
	{ 1, "limit set", "limit set: expected account, project or domain" },
	{ 1, "limit set account", "limit set: \"account\" needs a value" },
	{ 1, "limit set account acme",
	  "limit set: expected \"max\" after the account" },
	{ 1, "limit set account acme max", "limit set: \"max\" needs a value" },
	{ 1, "limit set account acme 2",
	  "limit set: expected \"max\" after the account" },
	{ 1, "limit set account acme max -1",
	  "limit set: invalid max \"-1\", expected a number or none" },
	{ 1, "limit set account acme max 4294967296",
	  "limit set: invalid max \"4294967296\", expected a number or none" },
	{ 1, "limit set account acme max two",
	  "limit set: invalid max \"two\", expected a number or none" },
	{ 1, "limit set account acme max 2 extra",
	  "limit set: unexpected argument \"extra\"" },
	{ 1, "limit set owner acme max 2",
	  "limit set: expected account, project or domain, not \"owner\"" },
};

static int test_num;
static int failed;

void report(bool ok, const char *fmt, const char *arg)
{
	printf("%sok %d - ", ok ? "" : "not ", ++test_num);
	printf(fmt, arg);
	printf("\n");
	if (!ok)
		failed++;
}

void check_str(const char *what, const char *got, const char *want)
{
	bool ok = !strcmp(got, want);

	report(ok, "%s", what);
	if (!ok)
		printf("# got:  %s\n# want: %s\n", got, want);
}

/* One row of the table: its exit code and its stderr */
static void test_case(const struct test_case *c)
{
	char want[512], *out, *err;
	bool ok;
	int rc;

	rc = run_args(c->args, true, &out, &err);
	want[0] = '\0';
	if (c->err)
		snprintf(want, sizeof(want), "gpuctl: %s\n", c->err);
	ok = rc == c->rc && !strcmp(err, want);
	printf("%sok %d - gpuctl %s -> %d", ok ? "" : "not ", ++test_num,
	       c->args, c->rc);
	if (rc != c->rc)
		printf(" (got %d)", rc);
	printf("\n");
	if (strcmp(err, want))
		printf("# stderr: %s# want:   %s%s", err[0] ? err : "(empty)\n",
		       want[0] ? want : "(empty)", want[0] ? "" : "\n");
	if (!ok)
		failed++;
	free(out);
	free(err);
}

static struct nlmsghdr *fake_dev_msg(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = 0x20;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = GPUCTL_CMD_DEV_ADD_NTF;
	genl->version = GPUCTL_FAMILY_VERSION;
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_ADDRESS, "0000:01:00.0");
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_VENDOR_ID, 0x1234);
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_DEVICE_ID, 0x1111);
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_SUBSYSTEM_VENDOR_ID, 0x1af4);
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_SUBSYSTEM_DEVICE_ID, 0x1100);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_CLASS, 0x030000);
	mnl_attr_put_u8(nlh, GPUCTL_A_DEV_REVISION, 2);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_DRIVER, "bochs-drm");
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_IOMMU_GROUP, 7);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_NUMA_NODE, (u32)-1);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_PCI_ROOT, "0000:00:01.0");
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_SRIOV_TOTALVFS, 0);
	mnl_attr_put_u16(nlh, GPUCTL_A_DEV_SRIOV_NUMVFS, 0);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_ROLE, GPUCTL_DEV_ROLE_GPU);
	mnl_attr_put_u8(nlh, GPUCTL_A_DEV_RESERVED, 1);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_STATE, GPUCTL_DEV_STATE_HELD);
	mnl_attr_put_strz(nlh, GPUCTL_A_DEV_STATE_REASON, "bound to bochs-drm");
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_RULE, 3);
	/* an attribute from a future module must be skipped */
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_MAX + 1, 42);
	return nlh;
}

/* What the fake message prints as; vendor and device come from the names */
static const char *const dev_json_want[][2] = {
	{ "address", "\"0000:01:00.0\"" },
	{ "vendor_id", "\"1234\"" },
	{ "device_id", "\"1111\"" },
	{ "subsystem_vendor_id", "\"1af4\"" },
	{ "subsystem_device_id", "\"1100\"" },
	{ "class", "\"030000\"" },
	{ "revision", "2" },
	{ "driver", "\"bochs-drm\"" },
	{ "iommu_group", "7" },
	{ "numa_node", "-1" },
	{ "pci_root", "\"0000:00:01.0\"" },
	{ "sriov_totalvfs", "0" },
	{ "sriov_numvfs", "0" },
	{ "physfn", "null" },
	{ "role", "\"gpu\"" },
	{ "reserved", "true" },
	{ "state", "\"held\"" },
	{ "state_reason", "\"bound to bochs-drm\"" },
	{ "rule", "3" },
	{ "action", "null" },
	{ "allocation", "null" },
	{ "holder", "null" },
	{ "refused", "null" },
	{ "vgpu_type", "null" },
	{ "migration", "null" },
	{ "migration_compat", "null" },
	{ "vendor", NULL },
	{ "device", NULL },
};

/* A string in, the JSON member "s" out */
static const char *const escape_cases[][2] = {
	{ "plain", "\"plain\"" },
	{ "q\"b\\s", "\"q\\\"b\\\\s\"" },
	{ "\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"" },
	{ "\x01\x1f", "\"\\u0001\\u001f\"" },
	{ "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"" },
	{ "bad \xff end", "\"bad \\ufffd end\"" },
	{ "overlong \xc0\xaf", "\"overlong \\ufffd\\ufffd\"" },
	{ "cut \xe2\x82", "\"cut \\ufffd\\ufffd\"" },
};

/* Print @d in JSON or text one-line form into a string */
static char *render(const struct dev_info *d, bool json)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	fp = open_memstream(&out, &len);
	json_print_init(fp, json, false);
	new_json_obj();
	open_json_object("msg");
	dev_info_print(d, NULL);
	close_json_object();
	delete_json_obj();
	fclose(fp);
	return out;
}

static void test_dev_output(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], want[1024];
	struct pci_id_names n;
	struct nlmsghdr *nlh;
	struct dev_info d;
	size_t i, len;
	char *out;

	nlh = fake_dev_msg(buf);
	report(!dev_info_parse(nlh, &d), "%s", "dev attributes parse");
	pci_names(0x1234, 0x1111, &n);

	out = render(&d, true);
	len = snprintf(want, sizeof(want), "{\"msg\":{");
	for (i = 0; i < ARRAY_SIZE(dev_json_want); i++) {
		const char *val = dev_json_want[i][1];

		if (!strcmp(dev_json_want[i][0], "vendor"))
			val = n.vendor;
		else if (!strcmp(dev_json_want[i][0], "device"))
			val = n.device;
		len += snprintf(want + len, sizeof(want) - len,
				val == n.vendor || val == n.device ?
				"%s\"%s\":\"%s\"" : "%s\"%s\":%s",
				i ? "," : "", dev_json_want[i][0], val);
	}
	snprintf(want + len, sizeof(want) - len, "}}\n");
	check_str("dev JSON", out, want);
	free(out);

	out = render(&d, false);
	snprintf(want, sizeof(want),
		 "0000:01:00.0 gpu bochs-drm state held (bound to bochs-drm) rule 3 1234:1111 group 7 numa - root 0000:00:01.0 alloc - holder - %s %s",
		 n.vendor, n.device);
	check_str("dev text line", out, want);
	free(out);

	/* an action: only notifications have one, in JSON after the rule */
	d.action = GPUCTL_DEV_ACTION_TAKEN;
	out = render(&d, true);
	report(!!strstr(out, "\"rule\":3,\"action\":\"taken\",\"allocation\":"),
	       "%s", "dev JSON action");
	free(out);
	out = render(&d, false);
	report(!!strstr(out, " rule 3 action taken 1234:1111 "), "%s",
	       "dev text action");
	free(out);
	d.action = 0;

	/* no driver, no group, a VF, free: nulls in JSON, "-" in text */
	d.has_driver = false;
	d.has_iommu_group = false;
	d.reserved = false;
	d.state = GPUCTL_DEV_STATE_FREE;
	d.has_state_reason = false;
	d.has_rule = false;
	d.has_physfn = true;
	snprintf(d.physfn, sizeof(d.physfn), "0000:01:00.0");
	d.numa_node = 1;
	out = render(&d, true);
	report(strstr(out, "\"driver\":null,") &&
	       strstr(out, "\"iommu_group\":null,") &&
	       strstr(out, "\"numa_node\":1,") &&
	       strstr(out, "\"physfn\":\"0000:01:00.0\",") &&
	       strstr(out, "\"state\":\"free\",\"state_reason\":null,") &&
	       strstr(out, "\"reserved\":false,\"state\":\"free\",") &&
	       strstr(out, "\"state_reason\":null,\"rule\":null,\"action\":null,"),
	       "%s", "dev JSON nulls");
	free(out);
	out = render(&d, false);
	report(strstr(out, "0000:01:00.0 gpu - state free rule - 1234:1111 group - numa 1 ") == out,
	       "%s", "dev text dashes");
	/* SR-IOV on one line: a VF names its PF, a PF counts its VFs */
	report(!!strstr(out, " holder - pf 0000:01:00.0 "), "%s",
	       "dev text VF's PF");
	free(out);
	d.has_physfn = false;
	d.sriov_totalvfs = 4;
	d.sriov_numvfs = 2;
	out = render(&d, false);
	report(!!strstr(out, " holder - vfs 2/4 ") && !strstr(out, " pf "),
	       "%s", "dev text PF's VFs");
	free(out);
	d.sriov_totalvfs = 0;
	d.sriov_numvfs = 0;
	out = render(&d, false);
	report(!strstr(out, " vfs ") && !strstr(out, " pf "), "%s",
	       "dev text no SR-IOV, no vfs or pf");
	free(out);

	/* a u32 where a u16 belongs is a malformed message */
	nlh = fake_dev_msg(buf);
	mnl_attr_put_u32(nlh, GPUCTL_A_DEV_VENDOR_ID, 0x1234);
	report(dev_info_parse(nlh, &d) < 0, "%s", "dev malformed attribute");
}

static char *render_string(const char *value)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	fp = open_memstream(&out, &len);
	json_print_init(fp, true, false);
	new_json_obj();
	print_string(PRINT_JSON, "s", NULL, value);
	delete_json_obj();
	fclose(fp);
	return out;
}

static void test_json_escape(void)
{
	char want[128];
	char *out = NULL;
	size_t i, len = 0;
	FILE *fp;

	for (i = 0; i < ARRAY_SIZE(escape_cases); i++) {
		out = render_string(escape_cases[i][0]);
		snprintf(want, sizeof(want), "{\"s\":%s}\n", escape_cases[i][1]);
		check_str("JSON string escaping", out, want);
		free(out);
	}

	fp = open_memstream(&out, &len);
	json_print_init(fp, true, false);
	new_json_obj();
	open_json_array(PRINT_JSON, "a");
	print_uint(PRINT_ANY, NULL, "%u", 1);
	print_string(PRINT_ANY, NULL, "%s", "x");
	close_json_array(PRINT_JSON, NULL);
	open_json_array(PRINT_JSON, "e");
	close_json_array(PRINT_JSON, NULL);
	print_bool(PRINT_ANY, "b", "%s", false);
	print_null(PRINT_ANY, "n", "%s", "-");
	delete_json_obj();
	fclose(fp);
	check_str("JSON arrays, bool and null", out,
		  "{\"a\":[1,\"x\"],\"e\":[],\"b\":false,\"n\":null}\n");
	free(out);

	fp = open_memstream(&out, &len);
	json_print_init(fp, true, true);
	new_json_obj();
	open_json_array(PRINT_JSON, "devices");
	open_json_object(NULL);
	print_uint(PRINT_JSON, "id", NULL, 3);
	close_json_object();
	close_json_array(PRINT_JSON, NULL);
	delete_json_obj();
	fclose(fp);
	check_str("JSON pretty", out,
		  "{\n  \"devices\": [\n    {\n      \"id\": 3\n    }\n  ]\n}\n");
	free(out);
}

static void test_parsers(void)
{
	char addr[ADDR_BUFSZ];
	u32 v;

	report(!parse_pci_address("AB:1f.3", addr, sizeof(addr)) &&
	       !strcmp(addr, "0000:ab:1f.3"), "%s", "address normalised");
	report(!parse_pci_address("1:2:3.4", addr, sizeof(addr)) &&
	       !strcmp(addr, "0001:02:03.4"), "%s", "address zero-padded");
	report(!parse_u32("4294967295", &v) && v == 4294967295u, "%s",
	       "u32 maximum");
	report(!strcmp(role_name(GPUCTL_DEV_ROLE_BRIDGE), "bridge") &&
	       !strcmp(role_name(99), "unknown"), "%s", "role names");
	report(!strcmp(state_name(GPUCTL_DEV_STATE_BLOCKED), "blocked") &&
	       !strcmp(state_name(0), "unknown") &&
	       !strcmp(action_name(GPUCTL_DEV_ACTION_RESTORED), "restored") &&
	       !strcmp(source_name(GPUCTL_RULE_SOURCE_PARAM), "param"),
	       "%s", "state, action and source names");
	report(!strcmp(ntf_name(GPUCTL_CMD_DEV_CHANGE_NTF), "dev-change-ntf") &&
	       !strcmp(ntf_label(GPUCTL_CMD_MDEV_DEL_NTF), "mdev-del") &&
	       !ntf_name(GPUCTL_CMD_DEV_GET) && !ntf_name(GPUCTL_CMD_MDEV_GET),
	       "%s", "notification names");
}

int main(void)
{
	size_t i, n = ARRAY_SIZE(cases);

	printf("TAP version 13\n");
	for (i = 0; i < n; i++)
		test_case(&cases[i]);
	test_dev_output();
	test_json_escape();
	test_parsers();
	test_rules();
	test_allocs();
	test_vgpus();
	test_holders();
	pci_names_cleanup();
	printf("1..%d\n# %d of %d failed\n", test_num, failed, test_num);
	return failed ? 1 : 0;
}
