/* Next I/O: direction, size, offset. */
#include "initiator/iogen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ZIPF_MAX_ITEMS 10000000ull /* fio also caps the zeta sum (cost grows with n) */

double ub_iogen_unit(uint64_t *rng)
{
	return (double)(ub_rand64(rng) >> 11) / 9007199254740992.0;
}

/* fio scrambles distribution values so the hot blocks are spread over the region. */
static uint64_t scramble(uint64_t v, uint64_t n)
{
	uint64_t s = v;
	return ub_rand64(&s) % n;
}

static void zipf_init(struct ub_iogen *g)
{
	double theta = g->j->dist_arg;
	uint64_t n = g->nunits < ZIPF_MAX_ITEMS ? g->nunits : ZIPF_MAX_ITEMS;

	g->zipf_zetan = 0;
	for (uint64_t i = 1; i <= n; i++)
		g->zipf_zetan += pow(1.0 / (double)i, theta);
	g->zipf_zeta2 = 1.0 + pow(0.5, theta);
	g->zipf_alpha = 1.0 / (1.0 - theta);
	g->zipf_eta = (1.0 - pow(2.0 / (double)g->nunits, 1.0 - theta)) /
		      (1.0 - g->zipf_zeta2 / g->zipf_zetan);
}

/* Gray et al., "Quickly generating billion-record synthetic databases", as fio's zipf.c. */
static uint64_t zipf_next(struct ub_iogen *g)
{
	double u = ub_iogen_unit(&g->rng), uz = u * g->zipf_zetan;
	uint64_t v;

	if (uz < 1.0)
		v = 1;
	else if (uz < g->zipf_zeta2)
		v = 2;
	else
		v = 1 + (uint64_t)((double)g->nunits *
				   pow(g->zipf_eta * u - g->zipf_eta + 1.0, g->zipf_alpha));
	if (v > g->nunits)
		v = g->nunits;
	return scramble(v - 1, g->nunits);
}

static uint64_t pareto_next(struct ub_iogen *g)
{
	double u = ub_iogen_unit(&g->rng);
	uint64_t v = (uint64_t)((double)(g->nunits - 1) * pow(u, g->pareto_pow));

	return scramble(v, g->nunits);
}

/* Box-Muller around the middle of the region, deviation dist_arg percent of it. */
static uint64_t normal_next(struct ub_iogen *g)
{
	double u1 = ub_iogen_unit(&g->rng), u2 = ub_iogen_unit(&g->rng);
	double z = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
	double c = (double)g->nunits / 2, sd = (double)g->nunits * g->j->dist_arg / 100.0;
	double v = c + z * sd;

	if (v < 0)
		v = 0;
	if (v > (double)(g->nunits - 1))
		v = (double)(g->nunits - 1);
	return (uint64_t)v;
}

static uint64_t zoned_next(struct ub_iogen *g)
{
	unsigned r = (unsigned)(ub_rand64(&g->rng) % 100), acc = 0, start = 0;

	for (unsigned z = 0; z < g->j->nzones; z++) {
		const struct ub_zone *zn = &g->j->zones[z];
		acc += zn->access_pct;
		if (r < acc && zn->size_pct) {
			uint64_t lo = g->nunits * start / 100, hi = g->nunits * (start + zn->size_pct) / 100;
			if (hi <= lo)
				hi = lo + 1;
			return lo + ub_rand64(&g->rng) % (hi - lo);
		}
		start += zn->size_pct;
	}
	return ub_rand64(&g->rng) % g->nunits;
}

uint64_t ub_iogen_bs(struct ub_iogen *g, int ddir)
{
	const struct ub_bsspec *b = &g->bs[ddir];
	uint64_t v;

	if (b->nsplit) {
		unsigned r = (unsigned)(ub_rand64(&g->rng) % 100), acc = 0;
		for (unsigned i = 0; i < b->nsplit; i++) {
			acc += b->split[i].pct;
			if (r < acc)
				return b->split[i].bs;
		}
		return b->split[b->nsplit - 1].bs;
	}
	if (b->min == b->max)
		return b->min;
	/* bsrange: a multiple of the minimum between min and max, as fio picks it */
	v = b->min + ub_rand64(&g->rng) % (b->max - b->min + 1);
	v -= v % b->min;
	return v < b->min ? b->min : v;
}

bool ub_iogen_init(struct ub_iogen *g, const struct ub_job *j, uint64_t region, uint32_t lbs,
		   uint64_t seed, char *err, size_t errlen)
{
	uint64_t maxbs = 0, minbs = UINT64_MAX;

	memset(g, 0, sizeof(*g));
	g->j = j;
	g->region = region;
	g->lbs = lbs;
	g->rng = seed ^ 0x6a09e667f3bcc908ull;
	for (int d = 0; d < UB_NDDIR; d++) {
		g->bs[d] = ub_job_bsspec(j, d);
		for (unsigned i = 0; i < (g->bs[d].nsplit ? g->bs[d].nsplit : 1); i++) {
			uint64_t b = g->bs[d].nsplit ? g->bs[d].split[i].bs : g->bs[d].min;
			if (b % lbs) {
				snprintf(err, errlen,
					 "bs=%llu is not a multiple of the LU block size %u",
					 (unsigned long long)b, lbs);
				return false;
			}
		}
		if (g->bs[d].max > maxbs)
			maxbs = g->bs[d].max;
		if (g->bs[d].min < minbs)
			minbs = g->bs[d].min;
	}
	if (region < maxbs) {
		snprintf(err, errlen, "the region (%llu bytes) is smaller than bs=%llu",
			 (unsigned long long)region, (unsigned long long)maxbs);
		return false;
	}
	g->align = j->blockalign ? j->blockalign : minbs;
	if (g->align % lbs) {
		snprintf(err, errlen, "blockalign=%llu is not a multiple of the LU block size %u",
			 (unsigned long long)g->align, lbs);
		return false;
	}
	if (j->rw_skip % (int64_t)lbs) {
		snprintf(err, errlen, "rw offset %lld is not a multiple of the LU block size %u",
			 (long long)j->rw_skip, lbs);
		return false;
	}
	if (j->zonemode == UB_ZONE_STRIDED &&
	    (j->zonesize % lbs || j->zoneskip % lbs || j->zonerange % lbs || j->zonesize < maxbs ||
	     (j->zonerange && j->zonerange < maxbs))) {
		snprintf(err, errlen, "zonesize/zonerange/zoneskip must be multiples of the LU block "
				      "size and zonesize/zonerange at least bs");
		return false;
	}
	g->nunits = (region - maxbs) / g->align + 1;
	/* The random map needs one size: each block once per pass, as fio without norandommap. */
	g->use_map = !j->norandommap && j->dist == UB_DIST_RANDOM && maxbs == minbs &&
		     g->align == minbs && j->zonemode == UB_ZONE_NONE;
	if (g->use_map)
		ub_gen_init(&g->map, j->rw, j->rwmixread, region / minbs, seed);
	if (j->dist == UB_DIST_ZIPF)
		zipf_init(g);
	if (j->dist == UB_DIST_PARETO)
		g->pareto_pow = log(j->dist_arg) / log(1.0 - j->dist_arg);
	/* backwards jobs start at the end, as fio's rw=read:-8k does */
	for (int d = 0; d < UB_NDDIR; d++)
		g->pos[d] = j->rw_skip < 0 ? region - g->bs[d].min : 0;
	return true;
}

static int pick_ddir(struct ub_iogen *g)
{
	const struct ub_job *j = g->j;

	switch (j->rw) {
	case UB_RW_READ:
	case UB_RW_RANDREAD:
		return UB_DD_READ;
	case UB_RW_WRITE:
	case UB_RW_RANDWRITE:
		return UB_DD_WRITE;
	case UB_RW_TRIM:
	case UB_RW_RANDTRIM:
		return UB_DD_TRIM;
	case UB_RW_TRIMWRITE:
	case UB_RW_RANDTRIMWRITE:
		return g->pending_write ? UB_DD_WRITE : UB_DD_TRIM;
	case UB_RW_RW:
	case UB_RW_RANDRW:
		return ub_rand64(&g->rng) % 100 < j->rwmixread ? UB_DD_READ : UB_DD_WRITE;
	}
	return UB_DD_READ;
}

static uint64_t sequential(struct ub_iogen *g, int d, uint64_t len)
{
	const struct ub_job *j = g->j;
	int64_t next;
	uint64_t off = g->pos[d];

	if (off + len > g->region)
		off = j->rw_skip < 0 ? g->region - len : 0;
	next = (int64_t)off + (int64_t)len + j->rw_skip;
	if (next < 0)
		next = (int64_t)(g->region - len);
	g->pos[d] = (uint64_t)next;
	return off;
}

static uint64_t random_off(struct ub_iogen *g, uint64_t len)
{
	uint64_t unit, off;

	if (g->use_map)
		return ub_gen_next(&g->map) * len;
	switch (g->j->dist) {
	case UB_DIST_ZIPF:
		unit = zipf_next(g);
		break;
	case UB_DIST_PARETO:
		unit = pareto_next(g);
		break;
	case UB_DIST_NORMAL:
		unit = normal_next(g);
		break;
	case UB_DIST_ZONED:
		unit = zoned_next(g);
		break;
	default:
		unit = ub_rand64(&g->rng) % g->nunits;
		break;
	}
	off = unit * g->align;
	if (off + len > g->region)
		off = (g->region - len) / g->align * g->align;
	return off;
}

/* zonemode=strided: zones of zonerange bytes (zonesize when not given) start every
 * zonerange + zoneskip bytes; zonesize bytes of I/O go to a zone before the next one (less than
 * zonerange touches only the zone's start, more goes round the zone again). */
static uint64_t strided(struct ub_iogen *g, int d, uint64_t len, bool rnd)
{
	const struct ub_job *j = g->j;
	uint64_t zs = j->zonesize, zr = j->zonerange ? j->zonerange : j->zonesize, off;

	if (g->zone_done + len > zs) {
		g->zone_start += zr + j->zoneskip;
		g->zone_done = 0;
		g->pos[d] = 0;
	}
	if (g->zone_start + len > g->region)
		g->zone_start = 0;
	if (rnd) {
		uint64_t room = (zr < g->region - g->zone_start ? zr : g->region - g->zone_start);
		off = g->zone_start + (ub_rand64(&g->rng) % ((room - len) / g->align + 1)) * g->align;
	} else {
		off = g->zone_start + (zr >= len ? g->zone_done % (zr - zr % len) : 0);
		if (off + len > g->region)
			off = g->region - len;
	}
	g->zone_done += len;
	return off;
}

void ub_iogen_next(struct ub_iogen *g, struct ub_ionext *n)
{
	const struct ub_job *j = g->j;
	bool rnd = ub_rw_is_random(j->rw);

	n->ddir = pick_ddir(g);
	if (n->ddir == UB_DD_WRITE && g->pending_write) {
		/* trimwrite: write what was just trimmed */
		g->pending_write = false;
		n->off = g->pending_off;
		n->len = g->pending_len;
		return;
	}
	n->len = ub_iogen_bs(g, n->ddir);
	if (j->zonemode == UB_ZONE_STRIDED)
		n->off = strided(g, n->ddir, n->len, rnd);
	else if (!rnd)
		n->off = sequential(g, n->ddir, n->len);
	else if (g->seq_left && g->seq_next + n->len <= g->region) {
		n->off = g->seq_next;
		g->seq_next += n->len;
		g->seq_left--;
	} else {
		n->off = random_off(g, n->len);
		if (j->rw_rand_seq > 1) {
			g->seq_left = j->rw_rand_seq - 1;
			g->seq_next = n->off + n->len;
		}
	}
	if (j->rw == UB_RW_TRIMWRITE || j->rw == UB_RW_RANDTRIMWRITE) {
		g->pending_write = true;
		g->pending_off = n->off;
		g->pending_len = n->len;
	}
}
