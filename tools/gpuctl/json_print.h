/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The gpuctl authors
 */
#ifndef _GPUCTL_JSON_PRINT_H
#define _GPUCTL_JSON_PRINT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Every value goes through one call that knows both forms: in text mode
 * @fmt is printed with the value, in JSON mode @key and the value are.
 */
enum output_type {
	PRINT_FP = 1,		/* text only */
	PRINT_JSON = 2,		/* JSON only */
	PRINT_ANY = PRINT_FP | PRINT_JSON,
};

void json_print_init(FILE *fp, bool json, bool pretty);
bool is_json_context(void);

void new_json_obj(void);
void delete_json_obj(void);
void open_json_object(const char *key);
void close_json_object(void);
void open_json_array(enum output_type type, const char *key);
void close_json_array(enum output_type type, const char *text);

void print_string(enum output_type type, const char *key, const char *fmt,
		  const char *value);
void print_uint(enum output_type type, const char *key, const char *fmt,
		unsigned int value);
void print_u64(enum output_type type, const char *key, const char *fmt,
	       unsigned long long value);
void print_int(enum output_type type, const char *key, const char *fmt,
	       int value);
void print_bool(enum output_type type, const char *key, const char *fmt,
		bool value);
void print_null(enum output_type type, const char *key, const char *fmt,
		const char *text);
void print_nl(void);

#endif /* _GPUCTL_JSON_PRINT_H */
