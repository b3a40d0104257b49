/* libFuzzer: login text parsing and key negotiation, then the CHAP exchange, as the login
 * code drives them across several PDUs.  Input: flags byte, then NUL-separated key=value
 * text; a byte 0x01 splits the text into separate "PDUs". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iscsit_tgt_params tp;
	struct iscsit_sess_params res;
	struct iscsit_neg n;
	struct iscsit_chap_user users[1] = {{"user", "secretsecret1"}};
	struct iscsit_auth auth = {
	    .in = users, .nin = 1, .out = {"tgt", "tgtsecret1234"}, .has_out = true};
	struct iscsit_chap *ch;
	size_t off = 1;
	unsigned stage;

	if (size < 1)
		return 0;
	iscsit_tgt_params_default(&tp);
	tp.max_burst = (data[0] & 0x10) ? 4096 : tp.max_burst; /* makes the target offer keys */
	iscsit_sess_params_rfc_default(&res);
	iscsit_neg_init(&n, &tp, &res, !(data[0] & 1));
	n.auth_chap_allowed = data[0] & 2;
	n.auth_none_allowed = !(data[0] & 4);
	stage = (data[0] >> 3) & 1;
	ch = iscsit_chap_new(&auth);
	while (off < size) {
		const uint8_t *end = memchr(data + off, 0x01, size - off);
		size_t len = end ? (size_t)(end - (data + off)) : size - off;
		char *buf = malloc(len + 1);
		struct iscsit_kv kv[64];
		unsigned nkv = 0, sec[64], nsec = 0;
		struct iscsit_text out = {0};

		memcpy(buf, data + off, len);
		buf[len] = '\0';
		if (iscsit_kv_parse(buf, len, kv, 64, &nkv) == ISCSIT_KV_OK &&
		    iscsit_neg_login(&n, kv, nkv, stage, &out, sec, &nsec) == 0) {
			if (nsec && iscsit_chap_step(ch, kv, sec, nsec, &out) != CHAP_CONTINUE) {
				iscsit_chap_free(ch);
				ch = iscsit_chap_new(&auth);
			}
			iscsit_neg_offer(&n, &out);
			iscsit_neg_finish(&n);
			if (res.first_burst > res.max_burst || res.max_xmit_dsl < 512)
				__builtin_trap();
			/* the answer must itself be well-formed text */
			for (size_t i = 0; i < out.len; i += strlen(out.p + i) + 1)
				if (!strchr(out.p + i, '='))
					__builtin_trap();
		}
		iscsit_text_free(&out);
		free(buf);
		off += len + 1;
		stage = 1;
	}
	iscsit_chap_free(ch);
	return 0;
}
