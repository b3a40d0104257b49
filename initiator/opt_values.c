/* Structured fio option values. */
#include "initiator/opt_values.h"
#include "common/parse.h"
#include "initiator/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return false;                                                                      \
	} while (0)

bool ub_ddir_list(const char *val, bool (*parse_one)(const char *, void *, char *, size_t),
		  void *out[3], bool set[3], char *err, size_t errlen)
{
	char buf[1024];
	char *part[3] = {NULL, NULL, NULL};
	unsigned n = 0;
	char *p;

	if (strlen(val) >= sizeof(buf))
		FAIL("value too long");
	strcpy(buf, val);
	p = buf;
	for (;;) {
		char *c = strchr(p, ',');
		if (n == 3)
			FAIL("more than three comma-separated values (read,write,trim)");
		part[n++] = p;
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	set[0] = set[1] = set[2] = false;
	for (unsigned d = 0; d < n; d++) {
		if (!*part[d])
			continue;
		if (!parse_one(part[d], out[d], err, errlen))
			return false;
		set[d] = true;
		/* the last value, not followed by a comma, applies to the rest too */
		if (d + 1 == n)
			for (unsigned k = d + 1; k < 3; k++) {
				if (!parse_one(part[d], out[k], err, errlen))
					return false;
				set[k] = true;
			}
	}
	return true;
}

bool ub_val_size(const char *s, void *out, char *err, size_t errlen)
{
	if (!ub_parse_size(s, out))
		FAIL("invalid size '%s' (e.g. 4k, 1m, 1g)", s);
	return true;
}

bool ub_val_bsrange(const char *s, void *out, char *err, size_t errlen)
{
	struct ub_bsspec *b = out;
	char lo[64];
	const char *dash = strchr(s, '-');

	if (!dash)
		dash = strchr(s, ':');
	if (!dash || (size_t)(dash - s) >= sizeof(lo))
		FAIL("invalid block size range '%s' (e.g. 4k-64k)", s);
	memcpy(lo, s, (size_t)(dash - s));
	lo[dash - s] = '\0';
	memset(b, 0, sizeof(*b));
	if (!ub_parse_size(lo, &b->min) || !ub_parse_size(dash + 1, &b->max) || !b->min ||
	    b->min > b->max)
		FAIL("invalid block size range '%s' (e.g. 4k-64k)", s);
	return true;
}

bool ub_val_bssplit(const char *s, void *out, char *err, size_t errlen)
{
	struct ub_bsspec *b = out;
	char buf[512], *save = NULL, *tok;
	unsigned total = 0, unspecified = 0;

	if (strlen(s) >= sizeof(buf))
		FAIL("bssplit too long");
	strcpy(buf, s);
	memset(b, 0, sizeof(*b));
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(tok, '/');
		struct ub_bssplit *e;
		uint64_t pct = 0;

		if (b->nsplit == UB_MAX_SPLIT)
			FAIL("bssplit: more than %d sizes", UB_MAX_SPLIT);
		e = &b->split[b->nsplit];
		if (slash)
			*slash = '\0';
		if (!ub_parse_size(tok, &e->bs) || !e->bs)
			FAIL("bssplit: invalid block size '%s'", tok);
		if (slash && slash[1]) {
			if (!ub_parse_uint(slash + 1, &pct) || pct > 100)
				FAIL("bssplit: invalid percentage '%s'", slash + 1);
		} else {
			pct = 0;
			unspecified++;
		}
		e->pct = slash && slash[1] ? (unsigned)pct : UINT32_MAX;
		total += slash && slash[1] ? (unsigned)pct : 0;
		if (!b->nsplit || e->bs < b->min)
			b->min = e->bs;
		if (e->bs > b->max)
			b->max = e->bs;
		b->nsplit++;
	}
	if (!b->nsplit)
		FAIL("bssplit: no block size");
	if (total > 100)
		FAIL("bssplit: percentages add up to %u (more than 100)", total);
	/* entries without a percentage share what is left, as in fio */
	for (unsigned i = 0; i < b->nsplit; i++)
		if (b->split[i].pct == UINT32_MAX)
			b->split[i].pct = unspecified ? (100 - total) / unspecified : 0;
	return true;
}

static const char *const rw_names[UB_NRW] = {
    [UB_RW_READ] = "read",	   [UB_RW_WRITE] = "write",	    [UB_RW_RANDREAD] = "randread",
    [UB_RW_RANDWRITE] = "randwrite", [UB_RW_RW] = "rw",		    [UB_RW_RANDRW] = "randrw",
    [UB_RW_TRIM] = "trim",	   [UB_RW_RANDTRIM] = "randtrim", [UB_RW_TRIMWRITE] = "trimwrite",
    [UB_RW_RANDTRIMWRITE] = "randtrimwrite",
};

const char *ub_rw_name(enum ub_rw rw)
{
	return rw_names[rw];
}

bool ub_rw_parse(const char *s, enum ub_rw *rw)
{
	if (!strcmp(s, "readwrite")) {
		*rw = UB_RW_RW;
		return true;
	}
	for (unsigned i = 0; i < UB_NRW; i++)
		if (!strcmp(s, rw_names[i])) {
			*rw = (enum ub_rw)i;
			return true;
		}
	return false;
}

bool ub_val_rw(const char *s, struct ub_job *j, char *err, size_t errlen)
{
	char mode[32];
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (n >= sizeof(mode))
		FAIL("'%s' is not an I/O pattern", s);
	memcpy(mode, s, n);
	mode[n] = '\0';
	if (!ub_rw_parse(mode, &j->rw))
		FAIL("'%s' is not one of read, write, trim, randread, randwrite, randtrim, rw, "
		     "randrw, trimwrite, randtrimwrite",
		     mode);
	j->rw_skip = 0;
	j->rw_rand_seq = 0;
	if (!colon)
		return true;
	colon++;
	if (ub_rw_is_random(j->rw)) {
		uint64_t v;
		/* randread:8 -> a new random offset every 8 I/Os, sequential in between */
		if (!ub_parse_uint(colon, &v) || !v || v > 1u << 30)
			FAIL("'%s': expected a number of I/Os after ':'", s);
		j->rw_rand_seq = (unsigned)v;
		return true;
	}
	{
		bool neg = *colon == '-';
		uint64_t v;
		if (!ub_parse_size(colon + (neg || *colon == '+'), &v) || v > INT64_MAX / 2)
			FAIL("'%s': expected a size after ':' (e.g. read:8k, read:-8k)", s);
		j->rw_skip = neg ? -(int64_t)v : (int64_t)v;
	}
	return true;
}

bool ub_val_distribution(const char *s, struct ub_job *j, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	char name[32];
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	char *end;

	if (strchr(s, ','))
		FAIL("per-direction distributions ('%s') are not supported: give one for all", s);
	if (n >= sizeof(name))
		FAIL("unknown distribution '%s'", s);
	memcpy(name, s, n);
	name[n] = '\0';
	j->nzones = 0;
	j->dist_arg = 0;
	if (!strcmp(name, "random")) {
		j->dist = UB_DIST_RANDOM;
		return true;
	}
	if (!strcmp(name, "zipf") || !strcmp(name, "pareto") || !strcmp(name, "normal") ||
	    !strcmp(name, "gauss")) {
		j->dist = name[0] == 'z' ? UB_DIST_ZIPF : name[0] == 'p' ? UB_DIST_PARETO : UB_DIST_NORMAL;
		if (!colon)
			FAIL("%s needs a parameter (e.g. %s:1.2)", name, name);
		j->dist_arg = strtod(colon + 1, &end);
		if (end == colon + 1 || (*end && *end != ':'))
			FAIL("%s: invalid parameter '%s'", name, colon + 1);
		if (j->dist == UB_DIST_ZIPF && (j->dist_arg <= 0 || j->dist_arg == 1.0))
			FAIL("zipf: theta must be > 0 and not 1");
		if (j->dist == UB_DIST_PARETO && (j->dist_arg <= 0 || j->dist_arg >= 1))
			FAIL("pareto: h must be between 0 and 1");
		if (j->dist == UB_DIST_NORMAL && (j->dist_arg <= 0 || j->dist_arg > 100))
			FAIL("normal: the deviation is a percentage (0..100]");
		return true;
	}
	if (!strcmp(name, "zoned")) {
		char buf[256], *save = NULL, *tok;
		unsigned acc = 0, size = 0;

		if (!colon || strlen(colon + 1) >= sizeof(buf))
			FAIL("zoned needs zones (e.g. zoned:50/5:30/15:20/80)");
		strcpy(buf, colon + 1);
		for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			char *sl = strchr(tok, '/');
			uint64_t a, z = 0;
			if (j->nzones == UB_MAX_ZONES)
				FAIL("zoned: more than %d zones", UB_MAX_ZONES);
			if (!sl)
				FAIL("zoned: '%s' is not access%%/size%%", tok);
			*sl = '\0';
			if (!ub_parse_uint(tok, &a) || (sl[1] && !ub_parse_uint(sl + 1, &z)))
				FAIL("zoned: invalid zone '%s'", tok);
			if (!sl[1]) /* "20/": the rest of the region */
				z = size < 100 ? 100 - size : 0;
			j->zones[j->nzones].access_pct = (unsigned)a;
			j->zones[j->nzones].size_pct = (unsigned)z;
			j->nzones++;
			acc += (unsigned)a;
			size += (unsigned)z;
		}
		if (acc != 100 || size > 100)
			FAIL("zoned: access percentages must add up to 100 (got %u), sizes to at "
			     "most 100 (got %u)",
			     acc, size);
		j->dist = UB_DIST_ZONED;
		return true;
	}
	FAIL("unknown distribution '%s' (random, zipf:T, pareto:H, normal:D, zoned:...)", name);
}

bool ub_val_percentiles(const char *s, double *out, unsigned max, unsigned *n, char *err,
			size_t errlen)
{
	const char *p = s;

	*n = 0;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || v < 0 || v > 100 || (*end && *end != ':'))
			FAIL("invalid percentile list '%s' (e.g. 50:99:99.9)", s);
		if (*n == max)
			FAIL("more than %u percentiles", max);
		out[(*n)++] = v;
		p = *end ? end + 1 : end;
	}
	if (!*n)
		FAIL("empty percentile list");
	return true;
}

bool ub_val_cpulist(const char *s, uint64_t *mask, unsigned max, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		FAIL("list too long");
	strcpy(buf, s);
	memset(mask, 0, max / 8);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t a, b;
		if (dash)
			*dash = '\0';
		if (!ub_parse_uint(tok, &a) || (dash && !ub_parse_uint(dash + 1, &b)))
			FAIL("invalid list '%s' (e.g. 0-3,6)", s);
		if (!dash)
			b = a;
		if (a > b || b >= max)
			FAIL("invalid range in '%s' (0..%u)", s, max - 1);
		for (uint64_t i = a; i <= b; i++)
			mask[i / 64] |= 1ull << (i % 64);
	}
	return true;
}


bool ub_val_pattern(const char *s, uint8_t *out, unsigned cap, unsigned *len, char *err,
		    size_t errlen)
{
	const char *p = s;

	*len = 0;
	while (*p) {
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			const char *h = p + 2, *e = h;
			while (parse_hex_digit((unsigned char)*e) >= 0)
				e++;
			if (e == h)
				FAIL("invalid hex pattern '%s'", s);
			/* an odd digit count gets a leading zero: 0x1 is the byte 01 */
			for (const char *q = h; q < e;) {
				int hi = ((e - q) % 2) ? 0 : parse_hex_digit((unsigned char)*q++);
				int lo = parse_hex_digit((unsigned char)*q++);
				if (*len == cap)
					FAIL("pattern longer than %u bytes", cap);
				out[(*len)++] = (uint8_t)(hi << 4 | lo);
			}
			p = e;
		} else if (*p == '\'' || *p == '"') {
			char q = *p++;
			while (*p && *p != q) {
				if (*len == cap)
					FAIL("pattern longer than %u bytes", cap);
				out[(*len)++] = (uint8_t)*p++;
			}
			if (*p != q)
				FAIL("unterminated string in pattern '%s'", s);
			p++;
		} else if (isdigit((unsigned char)*p)) {
			char *e;
			unsigned long v = strtoul(p, &e, 10);
			/* a decimal number is stored as fio does: little-endian, its own width */
			do {
				if (*len == cap)
					FAIL("pattern longer than %u bytes", cap);
				out[(*len)++] = (uint8_t)(v & 0xff);
				v >>= 8;
			} while (v);
			p = e;
		} else if (*p == '|' || isspace((unsigned char)*p)) {
			p++;
		} else {
			FAIL("invalid pattern '%s' (0x..., 'text' or a number)", s);
		}
	}
	if (!*len)
		FAIL("empty pattern");
	return true;
}

static const struct {
	const char *name;
	enum ub_verify v;
} verify_names[] = {
    {"0", UB_VERIFY_NONE},	     {"none", UB_VERIFY_NONE},	    {"crc32c", UB_VERIFY_CRC32C},
    {"crc32c-intel", UB_VERIFY_CRC32C}, {"crc32", UB_VERIFY_CRC32}, {"crc64", UB_VERIFY_CRC64},
    {"md5", UB_VERIFY_MD5},	     {"sha1", UB_VERIFY_SHA1},	    {"sha256", UB_VERIFY_SHA256},
    {"sha512", UB_VERIFY_SHA512},    {"meta", UB_VERIFY_META},	    {"pattern", UB_VERIFY_PATTERN},
    {"1", UB_VERIFY_CRC32C},
};

const char *ub_verify_name(enum ub_verify v)
{
	for (size_t i = 1; i < sizeof(verify_names) / sizeof(verify_names[0]); i++)
		if (verify_names[i].v == v)
			return verify_names[i].name;
	return "none";
}

bool ub_val_verify(const char *s, enum ub_verify *v, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(verify_names) / sizeof(verify_names[0]); i++)
		if (!strcmp(s, verify_names[i].name)) {
			*v = verify_names[i].v;
			return true;
		}
	FAIL("'%s' not supported (crc32c, crc32, crc64, md5, sha1, sha256, sha512, meta, pattern)",
	     s);
}

bool ub_val_cmdprio_bssplit(const char *s, struct ub_job *j, char *err, size_t errlen)
{
	char buf[512], *dsave = NULL, *part;
	unsigned ddir = 0;

	if (strlen(s) >= sizeof(buf))
		FAIL("value too long");
	strcpy(buf, s);
	j->nprio_split = 0;
	for (part = strtok_r(buf, ",", &dsave); part && ddir < 3;
	     part = strtok_r(NULL, ",", &dsave), ddir++) {
		char *save = NULL, *tok;
		for (tok = strtok_r(part, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			struct ub_prio_split *e;
			char *f[4] = {tok, NULL, NULL, NULL};
			uint64_t v[3] = {0, 0, 0};
			unsigned nf = 1;
			while (nf < 4 && (f[nf] = strchr(f[nf - 1], '/'))) {
				*f[nf]++ = '\0';
				nf++;
			}
			if (j->nprio_split == UB_MAX_SPLIT)
				FAIL("more than %d entries", UB_MAX_SPLIT);
			e = &j->prio_split[j->nprio_split];
			if (nf < 2 || !ub_parse_size(f[0], &e->bs) || !ub_parse_uint(f[1], &v[0]) ||
			    v[0] > 100 || (nf == 3) ||
			    (nf == 4 && (!ub_parse_uint(f[2], &v[1]) || !ub_parse_uint(f[3], &v[2]) ||
					 v[1] > 3 || v[2] > 7)))
				FAIL("invalid entry in '%s' (bs/pct or bs/pct/class/level)", s);
			e->pct = (unsigned)v[0];
			e->cls = nf == 4 ? (int)v[1] : -1;
			e->level = nf == 4 ? (int)v[2] : -1;
			e->ddir = (uint8_t)ddir;
			j->nprio_split++;
		}
	}
	return true;
}

bool ub_val_numa_policy(const char *s, struct ub_job *j, char *err, size_t errlen)
{
	static const char *const modes[] = {"default", "bind", "interleave", "prefer", "local"};
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	for (int m = 0; m < 5; m++)
		if (strlen(modes[m]) == n && !strncmp(s, modes[m], n)) {
			j->numa_mem_mode = m;
			j->numa_mem_nodes = 0;
			if ((m == 1 || m == 2 || m == 3) && !colon)
				FAIL("%s needs nodes (e.g. %s:0)", modes[m], modes[m]);
			if (colon && !ub_val_cpulist(colon + 1, &j->numa_mem_nodes, 64, err, errlen))
				return false;
			return true;
		}
	FAIL("'%s': expected default, bind:N, interleave:N-M, prefer:N or local", s);
}

bool ub_val_steadystate(const char *s, struct ub_job *j, char *err, size_t errlen)
{
	static const char *const modes[] = {"iops", "iops_slope", "bw", "bw_slope"};
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	char *end;

	for (int m = 0; m < 4; m++)
		if (strlen(modes[m]) == n && !strncmp(s, modes[m], n)) {
			if (!colon)
				FAIL("ss needs a limit (e.g. iops:10%%)");
			j->ss_limit = strtod(colon + 1, &end);
			if (end == colon + 1 || j->ss_limit < 0)
				FAIL("ss: invalid limit '%s'", colon + 1);
			j->ss_pct = *end == '%';
			if (*end && strcmp(end, "%"))
				FAIL("ss: invalid limit '%s'", colon + 1);
			j->ss_mode = m + 1;
			return true;
		}
	FAIL("'%s': expected iops:L, iops_slope:L, bw:L or bw_slope:L", s);
}

bool ub_val_continue_on_error(const char *s, unsigned *mask, char *err, size_t errlen)
{
	static const struct {
		const char *n;
		unsigned m;
	} t[] = {{"none", 0}, {"0", 0}, {"read", 1}, {"write", 2}, {"io", 3},
		 {"verify", 4}, {"all", 7}, {"1", 7}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n)) {
			*mask = t[i].m;
			return true;
		}
	FAIL("'%s': expected none, read, write, io, verify or all", s);
}

bool ub_val_sg_mode(const char *s, int *mode, char *err, size_t errlen)
{
	static const struct {
		const char *n;
		int m;
	} t[] = {{"write", UB_SG_WRITE},
		 {"verify_bytchk_00", UB_SG_VERIFY_00},
		 {"verify_bytchk_01", UB_SG_VERIFY_01},
		 {"verify", UB_SG_VERIFY_01},
		 {"verify_bytchk_11", UB_SG_VERIFY_11},
		 {"write_same_ndob", UB_SG_SAME_NDOB}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n)) {
			*mode = t[i].m;
			return true;
		}
	FAIL("'%s' not supported (write, verify_bytchk_00, verify_bytchk_01, verify_bytchk_11, "
	     "write_same_ndob)",
	     s);
}
