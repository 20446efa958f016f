// SPDX-License-Identifier: GPL-2.0
/*
 * json_check: a strict RFC 8259 checker for the guest, which has no JSON
 * parser (busybox). Reads one JSON text from standard input; exits 1 with
 * a message and the byte offset at the first error, else 0.
 *
 * It also flattens the text, one line per scalar:
 *
 *	.histograms[0].entries[2].key[0].value 42
 *	.histograms[0].trigger "rhist:keys=a [active]"
 *
 * and one line per array after its elements, with their count:
 *
 *	.histograms[0].entries# 3
 *
 * A string is written between quotes with its bytes (a \uXXXX up to
 * U+00FF is one byte, as rhist_json writes bytes; beyond, its UTF-8):
 * printable ASCII but '\' and '"' as it is, every other byte as \xHH.
 *
 *   -i    numbers must be integers (no fraction, no exponent)
 *   -d N  only the lines of paths of at most N parts (.a[0] is two)
 *   -q    no lines at all (only check)
 *
 * Duplicate names in an object are errors too (RFC 8259 says SHOULD).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char *text, *p, *end;
static int integers, quiet, max_depth = 1 << 30;
static char path[1 << 16];

static void fail(const char *why)
{
	fprintf(stderr, "json_check: %s at byte %ld\n", why, (long)(p - text));
	exit(1);
}

static void ws(void)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
}

static void lit(const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(end - p) < n || memcmp(p, word, n))
		fail("bad literal");
	p += n;
}

static int hex4(void)
{
	int v = 0;

	for (int i = 0; i < 4; i++, p++) {
		int c = p < end ? *p : -1;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			fail("bad \\u escape");
	}
	return v;
}

/* Appends byte b, escaped, to out (at least 5 bytes free). */
static size_t put_byte(char *out, unsigned char b)
{
	if (b >= 0x20 && b < 0x7f && b != '\\' && b != '"') {
		out[0] = b;
		return 1;
	}
	return sprintf(out, "\\x%02x", b);
}

/* Checks one UTF-8 sequence of raw bytes at p; returns its length. */
static int utf8_len(void)
{
	unsigned char c = *p;
	int n, min;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		fail("invalid UTF-8");
	if (end - p < n)
		fail("truncated UTF-8");
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			fail("invalid UTF-8");
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < (unsigned long)min || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		fail("invalid UTF-8");
	return n;
}

/*
 * Parses a string at p (after its quote); writes it escaped into out
 * (size cap), quotes excluded. Returns its length in out.
 */
static size_t parse_string(char *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		unsigned long cp;
		unsigned char buf[4];
		int len;

		if (p >= end)
			fail("unterminated string");
		if (*p == '"') {
			p++;
			return n;
		}
		if (*p < 0x20)
			fail("control character in a string");
		if (*p != '\\') {
			len = utf8_len();
			memcpy(buf, p, len);
			p += len;
		} else {
			p++;
			if (p >= end)
				fail("unterminated escape");
			len = 1;
			switch (*p++) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				buf[0] = "\"\\/\b\f\n\r\t"[strchr("\"\\/bfnrt", p[-1]) -
							    "\"\\/bfnrt"];
				break;
			case 'u':
				cp = hex4();
				if (cp >= 0xdc00 && cp <= 0xdfff)
					fail("lone low surrogate");
				if (cp >= 0xd800 && cp <= 0xdbff) {
					unsigned long lo;

					lit("\\u");
					lo = hex4();
					if (lo < 0xdc00 || lo > 0xdfff)
						fail("lone high surrogate");
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				}
				if (cp <= 0xff) {
					buf[0] = cp;
				} else if (cp < 0x800) {
					buf[0] = 0xc0 | cp >> 6;
					buf[1] = 0x80 | (cp & 0x3f);
					len = 2;
				} else if (cp < 0x10000) {
					buf[0] = 0xe0 | cp >> 12;
					buf[1] = 0x80 | (cp >> 6 & 0x3f);
					buf[2] = 0x80 | (cp & 0x3f);
					len = 3;
				} else {
					buf[0] = 0xf0 | cp >> 18;
					buf[1] = 0x80 | (cp >> 12 & 0x3f);
					buf[2] = 0x80 | (cp >> 6 & 0x3f);
					buf[3] = 0x80 | (cp & 0x3f);
					len = 4;
				}
				break;
			default:
				p--;
				fail("bad escape");
			}
		}
		for (int i = 0; i < len; i++) {
			if (n + 5 >= cap)
				fail("string too long");
			n += put_byte(out + n, buf[i]);
		}
	}
}

static void parse_number(void)
{
	const unsigned char *start = p;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		fail("bad number");
	if (p < end && *p == '.') {
		if (integers)
			fail("not an integer");
		p++;
		if (p >= end || *p < '0' || *p > '9')
			fail("bad fraction");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (integers)
			fail("not an integer");
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			fail("bad exponent");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p - start > 400)
		fail("number too long");
}

static void line(size_t plen, int depth, const char *val, size_t vlen)
{
	if (quiet || depth > max_depth)
		return;
	fwrite(path, 1, plen, stdout);
	putchar(' ');
	fwrite(val, 1, vlen, stdout);
	putchar('\n');
}

static char strbuf[1 << 20];

static void parse_value(size_t plen, int depth, int level)
{
	const unsigned char *start;

	if (level > 512)
		fail("nesting too deep");
	ws();
	if (p >= end)
		fail("value expected");
	start = p;
	switch (*p) {
	case '{': {
		/* The names seen, for duplicates: offsets into names. */
		char *names = NULL;
		size_t names_len = 0;

		p++;
		ws();
		if (p < end && *p == '}') {
			p++;
			return;
		}
		for (;;) {
			size_t n, at;

			ws();
			if (p >= end || *p != '"')
				fail("name expected");
			p++;
			n = parse_string(strbuf, sizeof(strbuf));
			for (at = 0; at < names_len; at += strlen(names + at) + 1)
				if (strlen(names + at) == n &&
				    !memcmp(names + at, strbuf, n))
					fail("duplicate name");
			names = realloc(names, names_len + n + 1);
			if (!names)
				fail("out of memory");
			memcpy(names + names_len, strbuf, n);
			names[names_len + n] = 0;
			names_len += n + 1;
			if (plen + n + 2 >= sizeof(path))
				fail("path too long");
			path[plen] = '.';
			memcpy(path + plen + 1, strbuf, n);
			ws();
			if (p >= end || *p != ':')
				fail("':' expected");
			p++;
			parse_value(plen + 1 + n, depth + 1, level + 1);
			ws();
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == '}') {
				p++;
				free(names);
				return;
			}
			fail("',' or '}' expected");
		}
	}
	case '[': {
		long count = 0;
		char num[32];
		int len;

		p++;
		ws();
		if (p < end && *p == ']') {
			p++;
		} else {
			for (;;) {
				len = snprintf(num, sizeof(num), "[%ld]", count);
				if (plen + len >= sizeof(path))
					fail("path too long");
				memcpy(path + plen, num, len);
				parse_value(plen + len, depth + 1, level + 1);
				count++;
				ws();
				if (p < end && *p == ',') {
					p++;
					continue;
				}
				if (p < end && *p == ']') {
					p++;
					break;
				}
				fail("',' or ']' expected");
			}
		}
		path[plen] = '#';
		len = snprintf(num, sizeof(num), "%ld", count);
		line(plen + 1, depth, num, len);
		return;
	}
	case '"': {
		size_t n;

		p++;
		strbuf[0] = '"';
		n = parse_string(strbuf + 1, sizeof(strbuf) - 2);
		strbuf[n + 1] = '"';
		line(plen, depth, strbuf, n + 2);
		return;
	}
	case 't':
		lit("true");
		break;
	case 'f':
		lit("false");
		break;
	case 'n':
		lit("null");
		break;
	default:
		parse_number();
		break;
	}
	line(plen, depth, (const char *)start, p - start);
}

int main(int argc, char **argv)
{
	size_t cap = 1 << 16, len = 0, got;
	unsigned char *buf = malloc(cap);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-i")) {
			integers = 1;
		} else if (!strcmp(argv[i], "-q")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			max_depth = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: json_check [-i] [-q] [-d N] < text\n");
			return 2;
		}
	}
	while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
		len += got;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf) {
		fprintf(stderr, "json_check: out of memory\n");
		return 1;
	}
	text = buf;
	p = buf;
	end = buf + len;
	parse_value(0, 0, 0);
	ws();
	if (p != end)
		fail("text after the value");
	return 0;
}
