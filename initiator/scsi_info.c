/* VPD 83 / REPORT TARGET PORT GROUPS decoding and status names. */
#include "initiator/scsi_info.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return false;                                                                      \
	} while (0)

enum { ASSOC_LU = 0, ASSOC_PORT = 1 };
enum {
	DT_VENDOR = 0,
	DT_T10 = 1,
	DT_EUI64 = 2,
	DT_NAA = 3,
	DT_RELPORT = 4,
	DT_TPG = 5,
	DT_NAME = 8
};

bool ub_vpd83_parse(const uint8_t *buf, size_t len, struct ub_lu_ident *id, char *err,
		    size_t errlen)
{
	size_t plen, off;

	memset(id, 0, sizeof(*id));
	id->port_group = -1;
	id->rel_port = -1;
	if (len < 4)
		FAIL("VPD 83 response too short (%zu bytes)", len);
	if (buf[1] != 0x83)
		FAIL("VPD page code 0x%02x, expected 0x83", buf[1]);
	plen = (size_t)buf[2] << 8 | buf[3];
	if (plen + 4 > len)
		plen = len - 4; /* truncated by the allocation length: parse what we have */
	for (off = 4; off + 4 <= plen + 4;) {
		const uint8_t *d = buf + off;
		uint8_t dlen = d[3];
		uint8_t assoc = (d[1] >> 4) & 3, type = d[1] & 0xf;

		if (off + 4 + dlen > plen + 4)
			FAIL("VPD 83 designator at offset %zu overruns the page", off);
		if (assoc == ASSOC_LU && id->ndesig < UB_MAX_DESIG) {
			struct ub_designator *x = &id->desig[id->ndesig++];
			x->code_set = d[0] & 0xf;
			x->assoc = assoc;
			x->type = type;
			x->len = dlen > sizeof(x->value) ? sizeof(x->value) : dlen;
			memcpy(x->value, d + 4, x->len);
		} else if (assoc == ASSOC_PORT && type == DT_TPG && dlen >= 4) {
			id->port_group = d[6] << 8 | d[7];
		} else if (assoc == ASSOC_PORT && type == DT_RELPORT && dlen >= 4) {
			id->rel_port = d[6] << 8 | d[7];
		}
		off += 4 + (size_t)dlen;
	}
	if (!id->ndesig)
		FAIL("VPD 83 carries no logical-unit designator");
	return true;
}

static bool desig_eq(const struct ub_designator *a, const struct ub_designator *b)
{
	return a->type == b->type && a->code_set == b->code_set && a->len == b->len &&
	       !memcmp(a->value, b->value, a->len);
}

bool ub_lu_ident_same(const struct ub_lu_ident *a, const struct ub_lu_ident *b)
{
	if (a->ndesig != b->ndesig)
		return false;
	for (unsigned i = 0; i < a->ndesig; i++) {
		bool found = false;
		for (unsigned k = 0; k < b->ndesig && !found; k++)
			found = desig_eq(&a->desig[i], &b->desig[k]);
		if (!found)
			return false;
	}
	return true;
}

static int rank(uint8_t type)
{
	switch (type) {
	case DT_NAA:
		return 4;
	case DT_EUI64:
		return 3;
	case DT_NAME:
		return 2;
	case DT_T10:
		return 1;
	default:
		return 0;
	}
}

void ub_lu_ident_str(const struct ub_lu_ident *id, char *out, size_t outlen)
{
	const struct ub_designator *best = NULL;
	size_t w;

	for (unsigned i = 0; i < id->ndesig; i++)
		if (!best || rank(id->desig[i].type) > rank(best->type))
			best = &id->desig[i];
	if (!best) {
		snprintf(out, outlen, "(none)");
		return;
	}
	if (best->code_set == 2 || best->code_set == 3) { /* ASCII / UTF-8 */
		const char *pfx = best->type == DT_T10 ? "t10." : "";
		int n = best->len;
		while (n > 0 && (best->value[n - 1] == 0 || best->value[n - 1] == ' '))
			n--;
		snprintf(out, outlen, "%s%.*s", pfx, n, (const char *)best->value);
		return;
	}
	w = (size_t)snprintf(out, outlen, "%s",
			     best->type == DT_NAA     ? "naa."
			     : best->type == DT_EUI64 ? "eui."
						      : "bin.");
	for (unsigned i = 0; i < best->len && w + 3 <= outlen; i++)
		w += (size_t)snprintf(out + w, outlen - w, "%02x", best->value[i]);
}

bool ub_rtpg_parse(const uint8_t *buf, size_t len, struct ub_rtpg *r, char *err, size_t errlen)
{
	size_t total, off;

	memset(r, 0, sizeof(*r));
	if (len < 4)
		FAIL("REPORT TARGET PORT GROUPS response too short");
	total = ((size_t)buf[0] << 24 | (size_t)buf[1] << 16 | (size_t)buf[2] << 8 | buf[3]) + 4;
	if (total > len)
		total = len;
	for (off = 4; off + 8 <= total;) {
		const uint8_t *g = buf + off;
		unsigned nports = g[7];
		struct ub_tpg *t;

		if (off + 8 + 4 * (size_t)nports > total)
			FAIL("target port group descriptor at offset %zu overruns the data", off);
		if (r->ngroups < UB_MAX_TPG) {
			t = &r->group[r->ngroups++];
			t->pref = g[0] & 0x80;
			t->state = g[0] & 0xf;
			t->id = (uint16_t)(g[2] << 8 | g[3]);
			for (unsigned i = 0; i < nports && t->nports < UB_MAX_TPG_PORTS; i++)
				t->ports[t->nports++] =
				    (uint16_t)(g[8 + 4 * i + 2] << 8 | g[8 + 4 * i + 3]);
		}
		off += 8 + 4 * (size_t)nports;
	}
	return true;
}

enum ub_alua_state ub_rtpg_state_for(const struct ub_rtpg *r, const struct ub_lu_ident *id)
{
	for (unsigned i = 0; i < r->ngroups; i++)
		if (id->port_group >= 0 && r->group[i].id == id->port_group)
			return (enum ub_alua_state)r->group[i].state;
	for (unsigned i = 0; i < r->ngroups; i++)
		for (unsigned k = 0; k < r->group[i].nports; k++)
			if (id->rel_port >= 0 && r->group[i].ports[k] == id->rel_port)
				return (enum ub_alua_state)r->group[i].state;
	return UB_ALUA_UNKNOWN;
}

const char *ub_alua_state_str(int s)
{
	switch (s) {
	case UB_ALUA_AO:
		return "active/optimized";
	case UB_ALUA_ANO:
		return "active/non-optimized";
	case UB_ALUA_STANDBY:
		return "standby";
	case UB_ALUA_UNAVAILABLE:
		return "unavailable";
	case UB_ALUA_LBA_DEPENDENT:
		return "lba-dependent";
	case UB_ALUA_OFFLINE:
		return "offline";
	case UB_ALUA_TRANSITIONING:
		return "transitioning";
	default:
		return "n/a";
	}
}

void ub_cdb_inquiry_vpd(uint8_t cdb[6], uint8_t page, uint16_t alloc)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x12;
	cdb[1] = 1; /* EVPD */
	cdb[2] = page;
	cdb[3] = (uint8_t)(alloc >> 8);
	cdb[4] = (uint8_t)alloc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void ub_cdb_rtpg(uint8_t cdb[12], uint32_t alloc)
{
	memset(cdb, 0, 12);
	cdb[0] = 0xa3; /* MAINTENANCE IN */
	cdb[1] = 0x0a; /* REPORT TARGET PORT GROUPS */
	put_be32(cdb + 6, alloc);
}

void ub_cdb_rw16(uint8_t cdb[16], bool write, uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x8a : 0x88;
	put_be32(cdb + 2, (uint32_t)(lba >> 32));
	put_be32(cdb + 6, (uint32_t)lba);
	put_be32(cdb + 10, nblocks);
}

void ub_cdb_sync16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x91; /* SYNCHRONIZE CACHE(16); 0 blocks: to the end of the LU */
	put_be32(cdb + 2, (uint32_t)(lba >> 32));
	put_be32(cdb + 6, (uint32_t)lba);
	put_be32(cdb + 10, nblocks);
}

void ub_cdb_unmap(uint8_t cdb[10], uint8_t param[24], uint64_t lba, uint32_t nblocks)
{
	memset(cdb, 0, 10);
	memset(param, 0, 24);
	cdb[0] = 0x42;
	cdb[8] = 24; /* parameter list length */
	param[1] = 22; /* UNMAP data length */
	param[3] = 16; /* one block descriptor */
	put_be32(param + 8, (uint32_t)(lba >> 32));
	put_be32(param + 12, (uint32_t)lba);
	put_be32(param + 16, nblocks);
}

void ub_cdb_verify16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks, int bytchk)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x8f;
	cdb[1] = (uint8_t)((bytchk & 3) << 1);
	put_be32(cdb + 2, (uint32_t)(lba >> 32));
	put_be32(cdb + 6, (uint32_t)lba);
	put_be32(cdb + 10, nblocks);
}

void ub_cdb_write_same16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks, bool ndob)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x93;
	cdb[1] = ndob ? 0x01 : 0;
	put_be32(cdb + 2, (uint32_t)(lba >> 32));
	put_be32(cdb + 6, (uint32_t)lba);
	put_be32(cdb + 10, nblocks);
}

void ub_cdb_readcap16(uint8_t cdb[16], uint32_t alloc)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x9e; /* SERVICE ACTION IN(16) */
	cdb[1] = 0x10; /* READ CAPACITY(16) */
	put_be32(cdb + 10, alloc);
}

const char *ub_sense_key_str(int key)
{
	static const char *const names[] = {
	    "NO SENSE",	      "RECOVERED ERROR", "NOT READY",	   "MEDIUM ERROR",
	    "HARDWARE ERROR", "ILLEGAL REQUEST", "UNIT ATTENTION", "DATA PROTECT",
	    "BLANK CHECK",    "VENDOR SPECIFIC", "COPY ABORTED",   "ABORTED COMMAND",
	    "RESERVED",	      "VOLUME OVERFLOW", "MISCOMPARE",	   "COMPLETED",
	};
	return key >= 0 && key < 16 ? names[key] : "?";
}

const char *ub_login_class_str(int c)
{
	switch (c) {
	case 0:
		return "success";
	case 1:
		return "redirection";
	case 2:
		return "initiator error";
	case 3:
		return "target error";
	default:
		return "unknown class";
	}
}

const char *ub_login_status_str(int status)
{
	switch (status) {
	case 0x0000:
		return "Success";
	case 0x0101:
		return "Target moved temporarily";
	case 0x0102:
		return "Target moved permanently";
	case 0x0200:
		return "Initiator error";
	case 0x0201:
		return "Authentication failure";
	case 0x0202:
		return "Authorization failure";
	case 0x0203:
		return "Target not found";
	case 0x0204:
		return "Target removed";
	case 0x0205:
		return "Unsupported version";
	case 0x0206:
		return "Too many connections";
	case 0x0207:
		return "Missing parameter";
	case 0x0208:
		return "Can't include in session";
	case 0x0209:
		return "Session type not supported";
	case 0x020a:
		return "Session does not exist";
	case 0x020b:
		return "Invalid request during login";
	case 0x0300:
		return "Target error";
	case 0x0301:
		return "Service unavailable";
	case 0x0302:
		return "Out of resources";
	default:
		return "Unknown status";
	}
}
