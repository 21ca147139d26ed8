// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The gpuctl authors.
 *
 * Lookups in the generated spec tables, and the fuzzer's random numbers.
 */
#include <string.h>

#include "fuzz.h"

/* xorshift64*: fast, and the same sequence for the same seed. */
__u64 fz_rand(struct fz_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

unsigned int fz_below(struct fz_rng *r, unsigned int n)
{
	return n ? (unsigned int)((fz_rand(r) >> 32) % n) : 0;
}

bool fz_chance(struct fz_rng *r, unsigned int pct)
{
	return fz_below(r, 100) < pct;
}

int fz_op_index(const char *name)
{
	int i;

	for (i = 0; i < fz_spec.n_ops; i++) {
		if (!strcmp(fz_spec.ops[i].name, name))
			return i;
	}
	return -1;
}

const struct fz_op *fz_op_by_cmd(unsigned int cmd)
{
	int i;

	for (i = 0; i < fz_spec.n_ops; i++) {
		if (fz_spec.ops[i].cmd == cmd)
			return &fz_spec.ops[i];
	}
	return NULL;
}

int fz_set_index(const char *name)
{
	int i;

	for (i = 0; i < fz_spec.n_sets; i++) {
		if (!strcmp(fz_spec.sets[i].name, name))
			return i;
	}
	return -1;
}

unsigned int fz_attr_type(const char *set, const char *attr)
{
	int s = fz_set_index(set), i;

	if (s < 0)
		return 0;
	for (i = 0; i < fz_spec.sets[s].n; i++) {
		if (!strcmp(fz_spec.sets[s].attrs[i].name, attr))
			return fz_spec.sets[s].attrs[i].type;
	}
	return 0;
}

const struct fz_attr *fz_attr_by_type(int set, unsigned int type)
{
	const struct fz_set *s = &fz_spec.sets[set];
	int i;

	for (i = 0; i < s->n; i++) {
		if (s->attrs[i].type == type)
			return &s->attrs[i];
	}
	return NULL;
}

long long fz_enum_value(const char *set, const char *attr, const char *entry)
{
	int s = fz_set_index(set), i, k;

	if (s < 0)
		return -1;
	for (i = 0; i < fz_spec.sets[s].n; i++) {
		const struct fz_attr *a = &fz_spec.sets[s].attrs[i];

		if (strcmp(a->name, attr))
			continue;
		for (k = 0; k < a->n_enum; k++) {
			if (!strcmp(a->enum_names[k], entry))
				return a->enum_vals[k];
		}
	}
	return -1;
}
