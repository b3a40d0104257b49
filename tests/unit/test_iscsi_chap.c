/* CHAP for iSCSI login: response vectors for MD5/SHA-1/SHA-256 (computed independently with
 * Python's hashlib), one-way and mutual exchanges, and the refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

static void hex2bin(const char *hex, uint8_t *out)
{
	for (size_t i = 0; hex[2 * i]; i++)
		sscanf(hex + 2 * i, "%2hhx", &out[i]);
}

static void expect_resp(int alg, uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
			const char *want_hex)
{
	uint8_t got[32], want[32];
	size_t n = iscsit_chap_response(alg, id, secret, chal, clen, got);

	cr_assert_eq(n, strlen(want_hex) / 2);
	hex2bin(want_hex, want);
	cr_assert_eq(memcmp(got, want, n), 0, "alg %d", alg);
}

Test(iscsi_chap, response_vectors)
{
	uint8_t c16[16], c32[32];

	for (int i = 0; i < 32; i++)
		c32[i] = (uint8_t)i;
	memcpy(c16, c32, 16);
	expect_resp(5, 0x2a, "topsecret1234", c16, 16, "9d43f03c62dc5dfbbacfb00fe6608bb6");
	expect_resp(6, 0x2a, "topsecret1234", c16, 16, "b7578e8f4f0e41be49c5f4916ea771a5f12c62ba");
	expect_resp(7, 0x2a, "topsecret1234", c32, 32,
		    "e93af26888898ce776d8db41a6b06b405283375505978305b0ea0d8fb85f9804");
	cr_assert_eq(iscsit_chap_response(4, 1, "x", c16, 16, c32), 0, "unknown algorithm");
}

Test(iscsi_chap, decode_hex_and_base64)
{
	uint8_t b[16];

	cr_assert_eq(iscsit_chap_decode("0x0102ff", b, sizeof(b)), 3);
	cr_assert_eq(b[2], 0xff);
	cr_assert_eq(iscsit_chap_decode("0X102", b, sizeof(b)), 2, "odd digit count");
	cr_assert_eq(b[0], 0x01);
	cr_assert_eq(b[1], 0x02);
	cr_assert_eq(iscsit_chap_decode("0bAQID", b, sizeof(b)), 3);
	cr_assert_eq(b[0], 1);
	cr_assert_eq(b[2], 3);
	cr_assert_eq(iscsit_chap_decode("0bAQ==", b, sizeof(b)), 1);
	cr_assert_eq(iscsit_chap_decode("0x", b, sizeof(b)), -1);
	cr_assert_eq(iscsit_chap_decode("0xzz", b, sizeof(b)), -1);
	cr_assert_eq(iscsit_chap_decode("1234", b, sizeof(b)), -1, "no prefix");
	cr_assert_eq(iscsit_chap_decode("0bAQI", b, sizeof(b)), -1, "base64 length");
	cr_assert_eq(iscsit_chap_decode("0x000102030405060708090a0b0c0d0e0f10", b, 16), -1,
		     "too long for the buffer");
}

struct chapfix {
	struct iscsit_chap_user in[2];
	struct iscsit_auth auth;
	struct iscsit_chap *ch;
	struct iscsit_text out;
	char buf[1024];
	struct iscsit_kv kv[16];
	unsigned idx[16], n;
};

static void cf_init(struct chapfix *f, bool mutual)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->in[0].name, sizeof(f->in[0].name), "alice");
	snprintf(f->in[0].secret, sizeof(f->in[0].secret), "topsecret1234");
	snprintf(f->in[1].name, sizeof(f->in[1].name), "bob");
	snprintf(f->in[1].secret, sizeof(f->in[1].secret), "anothersecret9");
	f->auth.in = f->in;
	f->auth.nin = 2;
	if (mutual) {
		snprintf(f->auth.out.name, sizeof(f->auth.out.name), "target1");
		snprintf(f->auth.out.secret, sizeof(f->auth.out.secret), "targetsecret99");
		f->auth.has_out = true;
	}
	f->ch = iscsit_chap_new(&f->auth);
}

static enum iscsit_chap_result step(struct chapfix *f, const char *spec)
{
	size_t n = strlen(spec);

	memcpy(f->buf, spec, n + 1);
	for (size_t i = 0; i < n; i++)
		if (f->buf[i] == '|')
			f->buf[i] = '\0';
	cr_assert_eq(iscsit_kv_parse(f->buf, n + 1, f->kv, 16, &f->n), ISCSIT_KV_OK);
	for (unsigned i = 0; i < f->n; i++)
		f->idx[i] = i;
	iscsit_text_free(&f->out);
	return iscsit_chap_step(f->ch, f->kv, f->idx, f->n, &f->out);
}

static const char *rsp(const struct iscsit_text *t, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < t->len; off += strlen(t->p + off) + 1)
		if (!strncmp(t->p + off, key, kl) && t->p[off + kl] == '=')
			return t->p + off + kl + 1;
	return NULL;
}

static void cf_free(struct chapfix *f)
{
	iscsit_chap_free(f->ch);
	iscsit_text_free(&f->out);
}

Test(iscsi_chap, one_way_md5)
{
	struct chapfix f;
	uint8_t chal[16];

	cf_init(&f, false);
	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	cr_assert_eq(step(&f, "CHAP_A=5"), CHAP_CONTINUE);
	cr_assert_str_eq(rsp(&f.out, "CHAP_A"), "5");
	cr_assert_str_eq(rsp(&f.out, "CHAP_I"), "42");
	cr_assert_str_eq(rsp(&f.out, "CHAP_C"), "0x000102030405060708090a0b0c0d0e0f");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6"), CHAP_DONE);
	cr_assert_str_eq(iscsit_chap_name(f.ch), "alice");
	cr_assert_eq(f.out.len, 0, "nothing to send back one-way");
	cf_free(&f);
}

Test(iscsi_chap, picks_first_supported_algorithm)
{
	struct chapfix f;

	cf_init(&f, false);
	cr_assert_eq(step(&f, "CHAP_A=99,7,5"), CHAP_CONTINUE);
	cr_assert_str_eq(rsp(&f.out, "CHAP_A"), "7");
	/* random challenge sized to the digest: 32 bytes = 64 hex digits */
	cr_assert_eq(strlen(rsp(&f.out, "CHAP_C")), 2 + 64);
	cf_free(&f);

	cf_init(&f, false);
	cr_assert_eq(step(&f, "CHAP_A=1,2,3"), CHAP_FAIL);
	cr_assert_str_eq(rsp(&f.out, "CHAP_A"), "Reject");
	cf_free(&f);
}

Test(iscsi_chap, wrong_secret_unknown_user_bad_length)
{
	struct chapfix f;
	uint8_t chal[16] = {0};

	cf_init(&f, false);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6"), CHAP_FAIL,
		     "response to another challenge");
	cf_free(&f);

	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	cf_init(&f, false);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=mallory|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6"),
		     CHAP_FAIL, "the right response under an unknown name");
	cf_free(&f);

	cf_init(&f, false);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608b"), CHAP_FAIL,
		     "a prefix of the right response");
	cf_free(&f);
}

Test(iscsi_chap, mutual)
{
	struct chapfix f;
	uint8_t chal[16];

	cf_init(&f, true);
	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=7|"
			      "CHAP_C=0x0102030405060708090a0b0c0d0e0f10"),
		     CHAP_DONE);
	cr_assert_str_eq(rsp(&f.out, "CHAP_N"), "target1");
	cr_assert_str_eq(rsp(&f.out, "CHAP_R"), "0x5dcb2f59dac70f532edbb17c57125741");
	cf_free(&f);
}

Test(iscsi_chap, mutual_refusals)
{
	struct chapfix f;
	uint8_t chal[16];

	for (int i = 0; i < 16; i++)
		chal[i] = (uint8_t)i;
	/* no OutgoingUser configured */
	cf_init(&f, false);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=7|"
			      "CHAP_C=0x0102030405060708090a0b0c0d0e0f10"),
		     CHAP_FAIL);
	cf_free(&f);
	/* our own challenge reflected back */
	cf_init(&f, true);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=42|"
			      "CHAP_C=0x000102030405060708090a0b0c0d0e0f"),
		     CHAP_FAIL);
	cf_free(&f);
	/* an initiator challenge shorter than 16 bytes (a 1-byte one lets the initiator
	 * collect our responses to a challenge of its choosing): authentication failure, and
	 * nothing of ours is sent */
	{
		static const char *const short_chal[] = {"01", "0102030405060708090a0b0c0d0e0f"};

		for (int i = 0; i < 2; i++) {
			char keys[200];

			cf_init(&f, true);
			iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
			step(&f, "CHAP_A=5");
			snprintf(keys, sizeof(keys),
				 "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=7|"
				 "CHAP_C=0x%s",
				 short_chal[i]);
			cr_assert_eq(step(&f, keys), CHAP_FAIL, "challenge %s", short_chal[i]);
			cr_assert_null(rsp(&f.out, "CHAP_R"));
			cf_free(&f);
		}
	}
	/* CHAP_I without CHAP_C */
	cf_init(&f, true);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=7"),
		     CHAP_PROTO);
	cf_free(&f);
	/* CHAP_I out of range */
	cf_init(&f, true);
	iscsit_chap_set_challenge(f.ch, 0x2a, chal, 16);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x9d43f03c62dc5dfbbacfb00fe6608bb6|CHAP_I=256|"
			      "CHAP_C=0x01"),
		     CHAP_PROTO);
	cf_free(&f);
}

Test(iscsi_chap, out_of_order_keys)
{
	struct chapfix f;

	cf_init(&f, false);
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=0x00"), CHAP_PROTO, "response before CHAP_A");
	cf_free(&f);
	cf_init(&f, false);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_A=5"), CHAP_PROTO, "CHAP_A twice");
	cf_free(&f);
	cf_init(&f, false);
	step(&f, "CHAP_A=5");
	cr_assert_eq(step(&f, "CHAP_N=alice|CHAP_R=nothex"), CHAP_PROTO);
	cf_free(&f);
}
