/* CHAP authentication for iSCSI login (RFC 7143 12.1.3, RFC 1994): CHAP_A 5 (MD5),
 * 6 (SHA-1) and 7 (SHA-256) through OpenSSL's EVP; one-way (the initiator proves it knows an
 * IncomingUser secret) and mutual (we answer its challenge with the OutgoingUser secret).
 * Responses are compared in constant time; a challenge reflected back at us is refused. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"
#include "common/parse.h"

#define CHAP_MIN_INITIATOR_CHAL 16 /* bytes of the initiator's challenge, mutual CHAP */

#define CHAP_MAX_DIGEST 32
#define CHAP_MAX_CHAL	1024

enum chap_state {
	CH_WAIT_A,
	CH_WAIT_RESPONSE,
	CH_DONE,
};

struct iscsit_chap {
	const struct iscsit_auth *auth;
	enum chap_state st;
	int alg;
	uint8_t id;
	uint8_t chal[CHAP_MAX_DIGEST];
	size_t chal_len;
	bool fixed; /* test hook: challenge given, not random */
	char user[256];
};

static const EVP_MD *chap_md(int alg)
{
	switch (alg) {
	case 5:
		return EVP_md5();
	case 6:
		return EVP_sha1();
	case 7:
		return EVP_sha256();
	default:
		return NULL;
	}
}

size_t iscsit_chap_response(int alg, uint8_t id, const char *secret, const uint8_t *chal,
			    size_t chal_len, uint8_t *out)
{
	const EVP_MD *md = chap_md(alg);
	EVP_MD_CTX *ctx;
	unsigned int len = 0;

	if (!md || !(ctx = EVP_MD_CTX_new()))
		return 0;
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, &id, 1) != 1 ||
	    EVP_DigestUpdate(ctx, secret, strlen(secret)) != 1 ||
	    EVP_DigestUpdate(ctx, chal, chal_len) != 1 || EVP_DigestFinal_ex(ctx, out, &len) != 1)
		len = 0;
	EVP_MD_CTX_free(ctx);
	return len;
}

long iscsit_chap_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n;

	if (s[0] != '0' || !s[1])
		return -1;
	if (s[1] == 'x' || s[1] == 'X') {
		const char *h = s + 2;
		size_t digits = strlen(h), o = 0;

		if (!digits)
			return -1;
		/* an odd number of digits has an implied leading zero */
		if (digits & 1) {
			int v = parse_hex_digit((unsigned char)*h++);

			if (v < 0 || max < 1)
				return -1;
			out[o++] = (uint8_t)v;
			digits--;
		}
		for (; digits; digits -= 2, h += 2) {
			int hi = parse_hex_digit((unsigned char)h[0]),
			    lo = parse_hex_digit((unsigned char)h[1]);

			if (hi < 0 || lo < 0 || o >= max)
				return -1;
			out[o++] = (uint8_t)(hi << 4 | lo);
		}
		return (long)o;
	}
	if (s[1] == 'b' || s[1] == 'B') {
		const char *b = s + 2;
		size_t l = strlen(b), pad = 0;
		uint8_t tmp[CHAP_MAX_CHAL + 4];
		int r;

		if (!l || l % 4 || l / 4 * 3 > sizeof(tmp))
			return -1;
		if (b[l - 1] == '=')
			pad++;
		if (l > 1 && b[l - 2] == '=')
			pad++;
		r = EVP_DecodeBlock(tmp, (const unsigned char *)b, (int)l);
		if (r < 0 || (size_t)r < pad)
			return -1;
		n = (size_t)r - pad;
		if (n > max)
			return -1;
		memcpy(out, tmp, n);
		return (long)n;
	}
	return -1;
}

static void hex_encode(const uint8_t *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";

	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < n; i++) {
		out[2 + 2 * i] = hx[p[i] >> 4];
		out[3 + 2 * i] = hx[p[i] & 15];
	}
	out[2 + 2 * n] = '\0';
}

struct iscsit_chap *iscsit_chap_new(const struct iscsit_auth *auth)
{
	struct iscsit_chap *ch = calloc(1, sizeof(*ch));

	if (ch)
		ch->auth = auth;
	return ch;
}

void iscsit_chap_free(struct iscsit_chap *ch)
{
	if (ch)
		OPENSSL_cleanse(ch, sizeof(*ch));
	free(ch);
}

void iscsit_chap_set_challenge(struct iscsit_chap *ch, uint8_t id, const uint8_t *c, size_t len)
{
	if (len > sizeof(ch->chal))
		len = sizeof(ch->chal);
	ch->id = id;
	memcpy(ch->chal, c, len);
	ch->chal_len = len;
	ch->fixed = true;
}

const char *iscsit_chap_name(const struct iscsit_chap *ch)
{
	return ch->user;
}

/* First algorithm of the initiator's list we implement. */
static int pick_alg(const char *list)
{
	const char *p = list;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end != p && (*end == ',' || *end == '\0') && chap_md((int)v))
			return (int)v;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return 0;
}

static const struct iscsit_chap_user *find_user(const struct iscsit_auth *a, const char *name)
{
	for (unsigned i = 0; i < a->nin; i++)
		if (!strcmp(a->in[i].name, name))
			return &a->in[i];
	return NULL;
}

enum iscsit_chap_result iscsit_chap_step(struct iscsit_chap *ch, struct iscsit_kv *kv,
					 const unsigned *idx, unsigned n, struct iscsit_text *out)
{
	const char *A = NULL, *I = NULL, *C = NULL, *N = NULL, *R = NULL;

	for (unsigned i = 0; i < n; i++) {
		const char *k = kv[idx[i]].key, *v = kv[idx[i]].val;

		if (!strcmp(k, "CHAP_A"))
			A = v;
		else if (!strcmp(k, "CHAP_I"))
			I = v;
		else if (!strcmp(k, "CHAP_C"))
			C = v;
		else if (!strcmp(k, "CHAP_N"))
			N = v;
		else if (!strcmp(k, "CHAP_R"))
			R = v;
	}

	switch (ch->st) {
	case CH_WAIT_A: {
		char hex[2 + 2 * CHAP_MAX_DIGEST + 1];
		const EVP_MD *md;

		if (!A) {
			/* CHAP_N/R before the algorithm was agreed is out of order */
			return (I || C || N || R) ? CHAP_PROTO : CHAP_CONTINUE;
		}
		if (I || C || N || R)
			return CHAP_PROTO;
		ch->alg = pick_alg(A);
		if (!ch->alg) {
			iscsit_text_add(out, "CHAP_A", "Reject");
			return CHAP_FAIL;
		}
		md = chap_md(ch->alg);
		if (!ch->fixed) {
			ch->chal_len = (size_t)EVP_MD_get_size(md);
			if (ch->chal_len < 16)
				ch->chal_len = 16;
			if (RAND_bytes(ch->chal, (int)ch->chal_len) != 1 ||
			    RAND_bytes(&ch->id, 1) != 1)
				return CHAP_FAIL;
		}
		iscsit_text_addf(out, "CHAP_A", "%d", ch->alg);
		iscsit_text_addf(out, "CHAP_I", "%u", ch->id);
		hex_encode(ch->chal, ch->chal_len, hex);
		iscsit_text_add(out, "CHAP_C", hex);
		ch->st = CH_WAIT_RESPONSE;
		return CHAP_CONTINUE;
	}
	case CH_WAIT_RESPONSE: {
		uint8_t got[CHAP_MAX_DIGEST + 1], want[CHAP_MAX_DIGEST];
		const struct iscsit_chap_user *u;
		long glen;
		size_t wlen;
		bool ok;

		if (A)
			return CHAP_PROTO;
		if (!N || !R)
			return (N || R || I || C) ? CHAP_PROTO : CHAP_CONTINUE;
		if ((I && !C) || (!I && C))
			return CHAP_PROTO;
		snprintf(ch->user, sizeof(ch->user), "%s", N);
		glen = iscsit_chap_decode(R, got, sizeof(got));
		u = find_user(ch->auth, N);
		if (glen < 0)
			return CHAP_PROTO;
		/* Compute even for an unknown user so timing does not reveal which names exist. */
		wlen = iscsit_chap_response(ch->alg, ch->id, u ? u->secret : "", ch->chal,
					    ch->chal_len, want);
		ok = u && wlen && (size_t)glen == wlen && CRYPTO_memcmp(got, want, wlen) == 0;
		OPENSSL_cleanse(want, sizeof(want));
		if (!ok)
			return CHAP_FAIL;
		if (I) {
			/* Mutual CHAP: prove who we are with the OutgoingUser secret. */
			uint8_t chal[CHAP_MAX_CHAL], resp[CHAP_MAX_DIGEST];
			char hex[2 + 2 * CHAP_MAX_DIGEST + 1];
			uint64_t id;
			long clen;
			size_t rlen;

			if (!iscsit_parse_num(I, 255, &id))
				return CHAP_PROTO;
			clen = iscsit_chap_decode(C, chal, sizeof(chal));
			if (clen <= 0)
				return CHAP_PROTO;
			if (!ch->auth->has_out)
				return CHAP_FAIL;
			/* A short challenge makes our answer easy to precompute and replay: at
			 * least 16 bytes (RFC 7143 12.1.3's guidance; LIO refuses less too). */
			if (clen < CHAP_MIN_INITIATOR_CHAL)
				return CHAP_FAIL;
			/* Our own challenge sent back would let an attacker use us as an oracle. */
			if ((size_t)clen == ch->chal_len && !memcmp(chal, ch->chal, ch->chal_len))
				return CHAP_FAIL;
			rlen = iscsit_chap_response(ch->alg, (uint8_t)id, ch->auth->out.secret,
						    chal, (size_t)clen, resp);
			if (!rlen)
				return CHAP_FAIL;
			hex_encode(resp, rlen, hex);
			iscsit_text_add(out, "CHAP_N", ch->auth->out.name);
			iscsit_text_add(out, "CHAP_R", hex);
		}
		ch->st = CH_DONE;
		return CHAP_DONE;
	}
	case CH_DONE:
		return n ? CHAP_PROTO : CHAP_DONE;
	}
	return CHAP_PROTO;
}
