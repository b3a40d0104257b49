/* SCSI TransportIDs (SPC-4 7.6.4) for the protocols we serve: iSCSI (format 00: an iSCSI name,
 * every port of it; format 01: one initiator port "name,i,0x<ISID>") and SRP (a 16-byte
 * initiator port identifier).  Used by SPEC_I_PT, REGISTER AND MOVE and READ FULL STATUS. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "scsi/spc_pr.h"
#include "common/parse.h"

#define TID_ISCSI_MIN	24 /* 4-byte header + at least 20 bytes of name */
#define TID_SRP_LEN	24
#define ISID_HEX_DIGITS 12

/* iSCSI names are printable ASCII without spaces (RFC 3720 3.2.6.2); we also refuse the
 * characters that would make the name ambiguous in our own port strings. */
static bool iscsi_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > SCSI_NAME_MAX - 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == ',')
			return false;
	return true;
}

static int parse_iscsi(const uint8_t *buf, uint32_t avail, struct pr_port *out)
{
	uint8_t format = buf[0] >> 6;
	uint32_t len = 4u + get_be16(buf + 2);
	const char *str = (const char *)buf + 4;
	size_t slen, nlen;
	const char *sep;

	if (len > avail)
		return -1;
	if (len < TID_ISCSI_MIN || (len - 4) % 4)
		return 0;
	slen = strnlen(str, len - 4);
	if (slen == len - 4) /* no NUL terminator inside the descriptor */
		return 0;
	memset(out, 0, sizeof(*out));
	out->proto = SCSI_PROTO_ISCSI;
	if (format == 0) {
		if (!iscsi_name_ok(str, slen))
			return 0;
		out->name_only = true;
		memcpy(out->id, str, slen);
		return (int)len;
	}
	if (format != 1)
		return 0;
	sep = strstr(str, ",i,0x");
	if (!sep)
		sep = strstr(str, ",I,0X");
	if (!sep)
		return 0;
	nlen = (size_t)(sep - str);
	if (!iscsi_name_ok(str, nlen) || slen - nlen - 5 != ISID_HEX_DIGITS)
		return 0;
	for (size_t i = nlen + 5; i < slen; i++)
		if (!isxdigit((unsigned char)str[i]))
			return 0;
	memcpy(out->id, str, nlen);
	memcpy(out->id + nlen, ",i,0x", 5);
	for (size_t i = 0; i < ISID_HEX_DIGITS; i++)
		out->id[nlen + 5 + i] = (char)tolower((unsigned char)str[nlen + 5 + i]);
	return (int)len;
}

static int parse_srp(const uint8_t *buf, uint32_t avail, struct pr_port *out)
{
	if (avail < TID_SRP_LEN)
		return -1;
	if (buf[0] >> 6) /* SRP has only format 00 */
		return 0;
	memset(out, 0, sizeof(*out));
	out->proto = SCSI_PROTO_SRP;
	for (int i = 0; i < 16; i++)
		snprintf(out->id + 2 * i, 3, "%02x", buf[8 + i]);
	return TID_SRP_LEN;
}

int pr_tid_parse(const uint8_t *buf, uint32_t avail, struct pr_port *out)
{
	if (avail < 4)
		return -1;
	switch (buf[0] & 0x0f) {
	case SCSI_PROTO_ISCSI:
		return parse_iscsi(buf, avail, out);
	case SCSI_PROTO_SRP:
		return parse_srp(buf, avail, out);
	default:
		return 0;
	}
}

uint32_t pr_tid_encode(const struct pr_port *p, uint8_t *buf, uint32_t room)
{
	uint8_t tid[4 + PR_PORT_MAX + 4];
	uint32_t len;

	memset(tid, 0, sizeof(tid));
	if (p->proto == SCSI_PROTO_SRP) {
		size_t n = strlen(p->id);
		len = TID_SRP_LEN;
		tid[0] = SCSI_PROTO_SRP;
		/* the port id is hex; right-align it in the 16-byte identifier */
		for (size_t i = 0; i < n && i < 32; i++) {
			int v = parse_hex_digit((unsigned char)p->id[n - 1 - i]);
			if (v < 0)
				break;
			tid[23 - i / 2] |= (uint8_t)(i % 2 ? v << 4 : v);
		}
	} else {
		size_t n = strlen(p->id) + 1; /* with the NUL */
		uint32_t add = (uint32_t)((n + 3) & ~(size_t)3);
		if (add < TID_ISCSI_MIN - 4)
			add = TID_ISCSI_MIN - 4;
		len = 4 + add;
		tid[0] = (uint8_t)((p->name_only ? 0x00 : 0x40) | SCSI_PROTO_ISCSI);
		put_be16(tid + 2, (uint16_t)add);
		memcpy(tid + 4, p->id, n - 1);
	}
	memcpy(buf, tid, len < room ? len : room);
	return len;
}
