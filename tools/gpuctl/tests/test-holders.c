// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors
 *
 * The VM name of a holder, from QEMU command lines as libvirt, Nova's
 * libvirt driver, CloudStack's agent and a person write them. The QEMU
 * tests read a real QEMU's /proc/PID/cmdline.
 */

#include <errno.h>
#include <string.h>

#include "holders.h"
#include "test-cmdline.h"

static const struct {
	const char *args;	/* arguments, separated by '|' */
	const char *want;	/* NULL: no -name */
} vm_cases[] = {
	{ "qemu-system-x86_64|-name|guest=instance-0000002a,debug-threads=on|-S",
	  "instance-0000002a" },
	{ "qemu-system-x86_64|-name|vm-one", "vm-one" },
	{ "qemu|-name|vm-two,process=qemu:vm-two", "vm-two" },
	{ "qemu|-name|process=p,guest=i-2-10-VM", "i-2-10-VM" },
	{ "qemu|-name|guest=a,,b,debug-threads=on", "a,b" },
	{ "qemu|--name|guest=dash", "dash" },
	{ "qemu|-m|64|-S", NULL },
	{ "qemu|-name", NULL },
};

void test_holders(void)
{
	char cmdline[256], got[HOLDER_VM_BUFSZ], name[160];
	size_t i, len;
	char *p;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vm_cases); i++) {
		len = strlen(vm_cases[i].args) + 1;
		memcpy(cmdline, vm_cases[i].args, len);
		for (p = cmdline; *p; p++)
			if (*p == '|')
				*p = '\0';
		ret = holder_vm_name(cmdline, len, got, sizeof(got));
		snprintf(name, sizeof(name), "holder VM name of %s",
			 vm_cases[i].args);
		if (!vm_cases[i].want)
			report(ret == -ENOENT && !got[0], "%s: none", name);
		else
			check_str(name, ret ? "(none)" : got, vm_cases[i].want);
	}
}
