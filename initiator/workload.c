/* Offset and direction generators. */
#include "initiator/workload.h"

uint64_t ub_rand64(uint64_t *s)
{
	/* splitmix64: good enough for offsets and mixes, and any seed works */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rekey(struct ub_gen *g)
{
	for (int r = 0; r < 3; r++) {
		g->key[r] = ub_rand64(&g->rng) & g->mask;
		g->mul[r] = (ub_rand64(&g->rng) | 1) & (g->mask | 1);
	}
}

void ub_gen_init(struct ub_gen *g, enum ub_rw rw, unsigned rwmixread, uint64_t nchunks,
		 uint64_t seed)
{
	unsigned bits = 0;

	*g = (struct ub_gen){0};
	g->random = ub_rw_is_random(rw);
	g->mixed = rw == UB_RW_RW || rw == UB_RW_RANDRW;
	g->reads = rw == UB_RW_READ || rw == UB_RW_RANDREAD;
	g->rwmixread = rwmixread;
	g->nchunks = nchunks ? nchunks : 1;
	g->rng = seed;
	while (bits < 64 && (1ull << bits) < g->nchunks)
		bits++;
	g->mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	g->shift = bits / 2 ? bits / 2 : 1;
	rekey(g);
}

/* A bijection on [0, 2^bits): xor with a key, multiply by an odd number, xor-shift — each
 * step is invertible modulo 2^bits, so the composition permutes the range. */
static uint64_t permute(const struct ub_gen *g, uint64_t x)
{
	for (int r = 0; r < 3; r++) {
		x = (x ^ g->key[r]) & g->mask;
		x = (x * g->mul[r]) & g->mask;
		x ^= x >> g->shift;
	}
	return x;
}

uint64_t ub_gen_next(struct ub_gen *g)
{
	uint64_t v;

	if (g->pos == g->nchunks) {
		g->pos = 0;
		g->ctr = 0;
		g->passes++;
		if (g->random)
			rekey(g);
	}
	if (!g->random)
		return g->pos++;
	do
		v = permute(g, g->ctr++);
	while (v >= g->nchunks);
	g->pos++;
	return v;
}

bool ub_gen_is_read(struct ub_gen *g)
{
	if (!g->mixed)
		return g->reads;
	return ub_rand64(&g->rng) % 100 < g->rwmixread;
}
