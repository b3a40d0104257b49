/* utgt-bench SRP target strings (see srp_url.h). */
#include "initiator/srp_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma.h"

bool ub_is_srp_url(const char *s)
{
	return s && !strncmp(s, "srp:", 4);
}

static bool hex64(const char *v, uint64_t *out)
{
	char *end;

	if (!*v || strlen(v) > 18)
		return false;
	errno = 0;
	*out = strtoull(v, &end, 16); /* accepts an optional 0x, as ib_srp does */
	return !errno && !*end && *v != '-';
}

static bool dec(const char *v, uint64_t max, uint64_t *out)
{
	char *end;

	if (!*v || *v == '-')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return !errno && !*end && *out <= max;
}

bool ub_srp_url_parse(const char *s, struct ub_srp_url *u, char *err, size_t errlen)
{
	char buf[512], *save = NULL;
	bool have_id = false, have_ioc = false, have_dest = false;

	memset(u, 0, sizeof(*u));
	u->imm = true;
	u->queue_size = 64;
	if (!ub_is_srp_url(s) || strlen(s + 4) >= sizeof(buf)) {
		snprintf(err, errlen, "not an srp: target: '%s'", s ? s : "");
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", s + 4);
	for (char *kv = strtok_r(buf, ",;", &save); kv; kv = strtok_r(NULL, ",;", &save)) {
		char *eq = strchr(kv, '=');
		const char *k = kv, *v;
		uint64_t n;
		bool ok;

		if (!eq) {
			snprintf(err, errlen, "srp: '%s' is not key=value", kv);
			return false;
		}
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(k, "id_ext"))
			ok = have_id = hex64(v, &u->id_ext);
		else if (!strcmp(k, "ioc_guid"))
			ok = have_ioc = hex64(v, &u->ioc_guid);
		else if (!strcmp(k, "initiator_ext"))
			ok = hex64(v, &u->initiator_ext);
		else if (!strcmp(k, "dest")) {
			ok = !rdma_parse_addr(v, &u->dest) && strchr(v, ':') && v[0] != ':';
			have_dest = ok;
			snprintf(u->dest_str, sizeof(u->dest_str), "%s", v);
		} else if (!strcmp(k, "lun"))
			ok = dec(v, 16383, &u->lun);
		else if (!strcmp(k, "multichannel") || !strcmp(k, "imm")) {
			ok = (!strcmp(v, "0") || !strcmp(v, "1"));
			if (k[0] == 'm')
				u->multichannel = v[0] == '1';
			else
				u->imm = v[0] == '1';
		} else if (!strcmp(k, "queue_size")) {
			ok = dec(v, 1024, &n) && n >= 1;
			u->queue_size = (unsigned)n;
		} else {
			snprintf(
			    err, errlen,
			    "srp: unknown key '%s' (id_ext, ioc_guid, dest, initiator_ext, lun, "
			    "multichannel, imm, queue_size)",
			    k);
			return false;
		}
		if (!ok) {
			snprintf(err, errlen, "srp: bad value for %s: '%s'", k, v);
			return false;
		}
	}
	if (!have_id || !have_ioc || !have_dest) {
		snprintf(err, errlen, "srp: id_ext, ioc_guid and dest=ADDR:PORT are required");
		return false;
	}
	return true;
}
