/* dev_config options of a utgt user backstore (see tcmu_cfg.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/tcmu/tcmu_cfg.h"

static int parse_opt(const char *o, size_t n, struct tcmu_cfg *out, char *err, size_t errlen)
{
	static const char key[] = "hang_lba=";
	char num[32], *end;
	unsigned long long v;

	if (n <= sizeof(key) - 1 || strncmp(o, key, sizeof(key) - 1)) {
		snprintf(err, errlen, "unknown option '%.*s' (known: hang_lba=LBA)", (int)n, o);
		return -1;
	}
	n -= sizeof(key) - 1;
	o += sizeof(key) - 1;
	if (n >= sizeof(num) || *o < '0' || *o > '9') {
		snprintf(err, errlen, "hang_lba: expected a block number, got '%.*s'", (int)n, o);
		return -1;
	}
	memcpy(num, o, n);
	num[n] = '\0';
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || *end || v == UINT64_MAX) {
		snprintf(err, errlen, "hang_lba: expected a block number, got '%s'", num);
		return -1;
	}
	out->hang_lba = v;
	return 0;
}

int tcmu_cfg_parse(const char *s, struct tcmu_cfg *out, char *err, size_t errlen)
{
	size_t n = strcspn(s, ";");

	out->hang_lba = UINT64_MAX;
	if (!n || n >= sizeof(out->device)) {
		snprintf(err, errlen, "DEVICE name %s", n ? "too long" : "missing");
		return -1;
	}
	memcpy(out->device, s, n);
	out->device[n] = '\0';
	for (s += n; *s == ';';) {
		s++;
		n = strcspn(s, ";");
		if (n && parse_opt(s, n, out, err, errlen) < 0)
			return -1;
		s += n;
	}
	return 0;
}
