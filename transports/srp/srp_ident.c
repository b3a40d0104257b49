/* Target identity derivation and the add_target strings (see srp_ident.h). */
#include "transports/srp/srp_ident.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "transports/srp/srp_proto.h"

/* Exactly n groups of 1..4 hex digits separated by ':' (no "::"). */
static int parse_groups(const char *s, unsigned n, uint8_t *out)
{
	for (unsigned g = 0; g < n; g++) {
		unsigned v = 0, digits = 0;

		while (isxdigit((unsigned char)*s) && digits < 5) {
			char c = (char)tolower((unsigned char)*s++);
			v = v << 4 | (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
			digits++;
		}
		if (!digits || digits > 4)
			return -1;
		out[2 * g] = (uint8_t)(v >> 8);
		out[2 * g + 1] = (uint8_t)v;
		if (g + 1 < n && *s++ != ':')
			return -1;
	}
	return *s ? -1 : 0;
}

int srp_gid_parse(const char *s, uint8_t gid[16])
{
	struct in6_addr a;

	if (!s || !*s)
		return -1;
	if (!parse_groups(s, 8, gid))
		return 0;
	if (!parse_groups(s, 4, gid + 8)) {
		static const uint8_t link_local[8] = {0xfe, 0x80};
		memcpy(gid, link_local, 8);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a) == 1) {
		memcpy(gid, a.s6_addr, 16);
		return 0;
	}
	return -1;
}

void srp_gid_format(const uint8_t gid[16], char out[40])
{
	for (int g = 0; g < 8; g++)
		snprintf(out + 5 * g, 6, g < 7 ? "%02x%02x:" : "%02x%02x", gid[2 * g],
			 gid[2 * g + 1]);
}

void srp_ident_from_gid(const uint8_t gid[16], struct srp_ident *out)
{
	uint64_t guid = srp_get64(gid + 8);

	memset(out, 0, sizeof(*out));
	memcpy(out->gid, gid, 16);
	/* One port, one target: the port's GUID serves as ID extension, IOC GUID and service
	 * id alike, which is what SCST's ib_srpt advertises for a port. */
	out->id_ext = guid;
	out->ioc_guid = guid;
	out->service_id = guid;
	srp_put64(out->port_id, out->id_ext);
	srp_put64(out->port_id + 8, out->ioc_guid);
}

void srp_port_id_hex(const uint8_t id[16], char out[35])
{
	out[0] = '0';
	out[1] = 'x';
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 + 2 * i, 3, "%02x", id[i]);
}

int srp_add_target_rdma(const struct srp_ident *id, const char *dest, char *out, size_t room)
{
	return snprintf(out, room, "id_ext=%016llx,ioc_guid=%016llx,dest=%s",
			(unsigned long long)id->id_ext, (unsigned long long)id->ioc_guid, dest);
}

int srp_add_target_ib(const struct srp_ident *id, uint16_t pkey, char *out, size_t room)
{
	char dgid[33];

	for (int i = 0; i < 16; i++)
		snprintf(dgid + 2 * i, 3, "%02x", id->gid[i]);
	return snprintf(out, room,
			"id_ext=%016llx,ioc_guid=%016llx,dgid=%s,pkey=%04x,service_id=%016llx",
			(unsigned long long)id->id_ext, (unsigned long long)id->ioc_guid, dgid,
			pkey, (unsigned long long)id->service_id);
}
