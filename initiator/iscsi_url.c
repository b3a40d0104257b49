/* iSCSI URL parsing (libiscsi syntax) with errors that say what is wrong. */
#include "initiator/iscsi_url.h"
#include "common/parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX_TCP  "iscsi://"
#define PREFIX_ISER "iser://"

bool ub_is_iser_url(const char *s)
{
	return s && !strncmp(s, PREFIX_ISER, strlen(PREFIX_ISER));
}

bool ub_is_iscsi_url(const char *s)
{
	return s && (!strncmp(s, PREFIX_TCP, strlen(PREFIX_TCP)) || ub_is_iser_url(s));
}

/* Length of the scheme ("iscsi://" or "iser://"); 0 when neither. */
static size_t scheme_len(const char *s)
{
	if (ub_is_iser_url(s))
		return strlen(PREFIX_ISER);
	return ub_is_iscsi_url(s) ? strlen(PREFIX_TCP) : 0;
}

static bool copy_span(char *dst, size_t cap, const char *b, size_t n)
{
	if (n >= cap)
		return false;
	memcpy(dst, b, n);
	dst[n] = '\0';
	return true;
}

/* libiscsi url-decodes target names ("iqn.x%3A1" -> "iqn.x:1"); do the same. */
static bool pct_decode(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '%') {
			int hi = parse_hex_digit((unsigned char)r[1]),
			    lo = hi < 0 ? -1 : parse_hex_digit((unsigned char)r[2]);
			if (hi < 0 || lo < 0)
				return false;
			*w++ = (char)(hi * 16 + lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return true;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return false;                                                                      \
	} while (0)

bool ub_iscsi_url_parse(const char *s, struct ub_iscsi_url *u, char *err, size_t errlen)
{
	const char *p, *at, *slash, *lun_s, *hp_end;
	char *end;
	long lun;

	memset(u, 0, sizeof(*u));
	u->port = 3260;
	if (!ub_is_iscsi_url(s))
		FAIL("not an iSCSI URL (expected iscsi:// or iser:// "
		     "[user%%secret@]host[:port]/iqn/lun)");
	u->iser = ub_is_iser_url(s);
	p = s + scheme_len(s);

	/* The LUN is the last path segment and the target the one before it; user info ends at
	 * the last '@' before the host (a secret may contain '/', an IQN never contains '@'). */
	lun_s = strrchr(p, '/');
	if (!lun_s)
		FAIL("missing /target-iqn/lun");
	at = NULL;
	for (const char *q = p; q < lun_s; q++)
		if (*q == '@')
			at = q;
	if (at) {
		const char *pct = memchr(p, '%', (size_t)(at - p));
		size_t ulen = pct ? (size_t)(pct - p) : (size_t)(at - p);
		if (!ulen)
			FAIL("empty CHAP user name before '@'");
		if (!copy_span(u->user, sizeof(u->user), p, ulen))
			FAIL("CHAP user name too long");
		if (pct &&
		    !copy_span(u->secret, sizeof(u->secret), pct + 1, (size_t)(at - pct - 1)))
			FAIL("CHAP secret too long");
		p = at + 1;
	}
	slash = strchr(p, '/');
	if (!slash || slash >= lun_s)
		FAIL("missing target name: expected host[:port]/target-iqn/lun");
	hp_end = slash;
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(hp_end - p));
		if (!rb)
			FAIL("missing ']' in IPv6 address");
		if (!copy_span(u->host, sizeof(u->host), p + 1, (size_t)(rb - p - 1)))
			FAIL("host too long");
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(hp_end - p));
		const char *he = colon ? colon : hp_end;
		if (!copy_span(u->host, sizeof(u->host), p, (size_t)(he - p)))
			FAIL("host too long");
		p = he;
	}
	if (!u->host[0])
		FAIL("empty host");
	if (p < hp_end) {
		if (*p != ':')
			FAIL("unexpected text after host");
		char portbuf[16];
		if (!copy_span(portbuf, sizeof(portbuf), p + 1, (size_t)(hp_end - p - 1)) ||
		    !portbuf[0])
			FAIL("bad port");
		long port = strtol(portbuf, &end, 10);
		if (*end || port < 1 || port > 65535 || !isdigit((unsigned char)portbuf[0]))
			FAIL("bad port '%s' (1..65535)", portbuf);
		u->port = (int)port;
	}
	if (!copy_span(u->target, sizeof(u->target), slash + 1, (size_t)(lun_s - slash - 1)))
		FAIL("target name too long");
	if (!u->target[0])
		FAIL("empty target name");
	if (strchr(u->target, '/'))
		FAIL("target name contains '/'");
	if (!pct_decode(u->target))
		FAIL("bad %%XX escape in target name");
	if (!isdigit((unsigned char)lun_s[1]))
		FAIL("missing LUN number after the target name");
	lun = strtol(lun_s + 1, &end, 10);
	if (*end || lun < 0 || lun > 16383)
		FAIL("bad LUN '%s' (0..16383)", lun_s + 1);
	u->lun = (int)lun;
	if (strchr(u->host, ':'))
		snprintf(u->portal, sizeof(u->portal), "[%s]:%d", u->host, u->port);
	else
		snprintf(u->portal, sizeof(u->portal), "%s:%d", u->host, u->port);
	return true;
}

void ub_iscsi_url_redact(const char *s, char *out, size_t outlen)
{
	const char *p, *at = NULL, *lun_s, *pct;

	if (!ub_is_iscsi_url(s) || !(lun_s = strrchr(s + scheme_len(s), '/'))) {
		snprintf(out, outlen, "%s", s);
		return;
	}
	p = s + scheme_len(s);
	for (const char *q = p; q < lun_s; q++)
		if (*q == '@')
			at = q;
	if (!at || !(pct = memchr(p, '%', (size_t)(at - p)))) {
		snprintf(out, outlen, "%s", s);
		return;
	}
	snprintf(out, outlen, "%.*s%%***%s", (int)(pct - s), s, at);
}
