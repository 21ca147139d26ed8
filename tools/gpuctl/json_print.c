// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The gpuctl authors
 *
 * One print path for text and JSON, after iproute2's json_print: callers
 * say what a value is once, and the mode picks the form.
 */

#define _GNU_SOURCE	/* fwrite_unlocked(), fputs_unlocked() */

#include "json_print.h"
#include "utils.h"

#define JSON_MAX_DEPTH 16

static struct {
	FILE *fp;
	bool json;
	bool pretty;
	int depth;
	/* no member printed yet at this depth, so no comma is due */
	bool first[JSON_MAX_DEPTH];
} jw = { .fp = NULL };

/*
 * A JSON document is hundreds of small pieces; the tool is single-threaded,
 * so they skip stdio's locking, and numbers skip printf's format parsing.
 */
static void jw_write(const void *s, size_t n)
{
	fwrite_unlocked(s, 1, n, jw.fp);
}

static void jw_puts(const char *s)
{
	fputs_unlocked(s, jw.fp);
}

static void jw_putc(char c)
{
	fputc_unlocked(c, jw.fp);
}

static void jw_u64(unsigned long long value)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = '0' + value % 10;
		value /= 10;
	} while (value);
	jw_write(p, buf + sizeof(buf) - p);
}

void json_print_init(FILE *fp, bool json, bool pretty)
{
	jw.fp = fp;
	jw.json = json;
	jw.pretty = pretty;
	jw.depth = 0;
}

bool is_json_context(void)
{
	return jw.json;
}

static void jw_indent(void)
{
	int i;

	if (!jw.pretty)
		return;
	jw_putc('\n');
	for (i = 0; i < jw.depth; i++)
		jw_puts("  ");
}

/* Length of the valid UTF-8 sequence at @s, or 0 when it is not valid */
static int utf8_len(const unsigned char *s)
{
	u32 cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past Unicode are invalid */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Names come from the hwdb, pci.ids and drivers; a stray byte there must not make
 * the whole document unreadable, so invalid UTF-8 becomes U+FFFD.
 */
static void jw_str(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	jw_putc('"');
	while (*s) {
		/* most strings are plain ASCII: write each such run at once */
		n = 0;
		while (s[n] >= 0x20 && s[n] < 0x80 && s[n] != '"' &&
		       s[n] != '\\')
			n++;
		if (n) {
			jw_write(s, n);
			s += n;
			continue;
		}
		switch (*s) {
		case '"':
			jw_puts("\\\"");
			break;
		case '\\':
			jw_puts("\\\\");
			break;
		case '\b':
			jw_puts("\\b");
			break;
		case '\f':
			jw_puts("\\f");
			break;
		case '\n':
			jw_puts("\\n");
			break;
		case '\r':
			jw_puts("\\r");
			break;
		case '\t':
			jw_puts("\\t");
			break;
		default:
			if (*s < 0x20) {
				fprintf(jw.fp, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				jw_puts("\\ufffd");
				break;
			}
			jw_write(s, n);
			s += n - 1;
		}
		s++;
	}
	jw_putc('"');
}

/* Comma, indentation and key before a member or an array element */
static void jw_member(const char *key)
{
	if (!jw.first[jw.depth])
		jw_putc(',');
	jw.first[jw.depth] = false;
	jw_indent();
	if (key) {
		jw_str(key);
		jw_putc(':');
		if (jw.pretty)
			jw_putc(' ');
	}
}

static void jw_open(const char *key, char c)
{
	if (jw.depth)
		jw_member(key);
	jw_putc(c);
	if (jw.depth < JSON_MAX_DEPTH - 1)
		jw.depth++;
	jw.first[jw.depth] = true;
}

static void jw_close(char c)
{
	bool empty = jw.first[jw.depth];

	if (jw.depth)
		jw.depth--;
	if (!empty)
		jw_indent();
	jw_putc(c);
}

/* Start a top-level JSON document; text mode has nothing to open */
void new_json_obj(void)
{
	if (!jw.fp)
		jw.fp = stdout;
	if (!jw.json)
		return;
	jw.depth = 0;
	jw_open(NULL, '{');
}

/* End the document with a newline and flush, so streams see each one */
void delete_json_obj(void)
{
	if (jw.json) {
		jw_close('}');
		jw_putc('\n');
	}
	fflush(jw.fp);
}

void open_json_object(const char *key)
{
	if (jw.json)
		jw_open(key, '{');
}

void close_json_object(void)
{
	if (jw.json)
		jw_close('}');
}

void open_json_array(enum output_type type, const char *key)
{
	if (jw.json && (type & PRINT_JSON))
		jw_open(key, '[');
}

void close_json_array(enum output_type type, const char *text)
{
	if (jw.json) {
		if (type & PRINT_JSON)
			jw_close(']');
	} else if ((type & PRINT_FP) && text) {
		jw_puts(text);
	}
}

static bool want_json(enum output_type type)
{
	return jw.json && (type & PRINT_JSON);
}

static bool want_text(enum output_type type, const char *fmt)
{
	return !jw.json && (type & PRINT_FP) && fmt;
}

/* A NULL @value is JSON null, and "-" in text */
void print_string(enum output_type type, const char *key, const char *fmt,
		  const char *value)
{
	if (want_json(type)) {
		jw_member(key);
		if (value)
			jw_str(value);
		else
			jw_puts("null");
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, value ? value : "-");
	}
}

void print_uint(enum output_type type, const char *key, const char *fmt,
		unsigned int value)
{
	if (want_json(type)) {
		jw_member(key);
		jw_u64(value);
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, value);
	}
}

/* Times in seconds since the epoch, which outgrow an unsigned int */
void print_u64(enum output_type type, const char *key, const char *fmt,
	       unsigned long long value)
{
	if (want_json(type)) {
		jw_member(key);
		jw_u64(value);
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, value);
	}
}

void print_int(enum output_type type, const char *key, const char *fmt,
	       int value)
{
	if (want_json(type)) {
		jw_member(key);
		if (value < 0)
			jw_putc('-');
		jw_u64(value < 0 ? -(long long)value : value);
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, value);
	}
}

/* Text shows "yes" or "no" through a "%s" in @fmt */
void print_bool(enum output_type type, const char *key, const char *fmt,
		bool value)
{
	if (want_json(type)) {
		jw_member(key);
		jw_puts(value ? "true" : "false");
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, value ? "yes" : "no");
	}
}

/* JSON null; text prints @text through a "%s" in @fmt */
void print_null(enum output_type type, const char *key, const char *fmt,
		const char *text)
{
	if (want_json(type)) {
		jw_member(key);
		jw_puts("null");
	} else if (want_text(type, fmt)) {
		fprintf(jw.fp, fmt, text);
	}
}

void print_nl(void)
{
	if (!jw.json)
		jw_putc('\n');
}
