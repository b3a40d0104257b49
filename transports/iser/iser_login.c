/* Login glue; see iser_login.h. */
#include "transports/iser/iser_login.h"

#include <stdio.h>
#include <string.h>

int iser_login_split_keys(struct iser_keys *k, struct iscsit_kv *kv, unsigned n,
			  struct iscsit_text *out, uint16_t *status)
{
	unsigned left = 0;

	for (unsigned i = 0; i < n; i++) {
		int rc = iser_keys_take(k, kv[i].key, kv[i].val, out, status);

		if (rc == ISER_KEY_FAIL)
			return -1;
		if (rc == ISER_KEY_NOT_MINE)
			kv[left++] = kv[i];
	}
	return (int)left;
}

unsigned iser_login_fix_answer(struct iscsit_text *t, uint32_t limit)
{
	static const char key[] = "MaxRecvDataSegmentLength=";
	const size_t kl = sizeof(key) - 1;
	size_t r = 0, w = 0;
	unsigned fixed = 0;

	if (!t->p)
		return 0;
	/* In place: a value above limit is never shorter than limit written in decimal (limit <
	 * 2^24, and 0x... costs two characters), so the text only shrinks. */
	while (r < t->len) {
		size_t l = strnlen(t->p + r, t->len - r);
		size_t step = l < t->len - r ? l + 1 : l; /* with its NUL when there is one */
		char num[24];
		uint64_t v;

		if (l > kl && l - kl < sizeof(num) && !memcmp(t->p + r, key, kl)) {
			memcpy(num, t->p + r + kl, l - kl);
			num[l - kl] = 0;
			if (iscsit_parse_num(num, UINT64_MAX, &v) && v > limit) {
				int n = snprintf(num, sizeof(num), "%u", limit);

				memmove(t->p + w, key, kl);
				memcpy(t->p + w + kl, num, (size_t)n);
				w += kl + (size_t)n;
				if (step > l) /* keep the entry's NUL only if it had one */
					t->p[w++] = '\0';
				r += step;
				fixed++;
				continue;
			}
		}
		memmove(t->p + w, t->p + r, step);
		w += step;
		r += step;
	}
	t->len = w;
	return fixed;
}
