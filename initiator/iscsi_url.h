/* iscsi://[user[%secret]@]host[:port]/target-iqn/lun — libiscsi's URL syntax, parsed here so
 * errors are ours to word and the pieces (portal, CHAP, LUN) are available to every layer.
 * iser://... is the same URL over iSER (RFC 7145): the host is reached through RDMA CM and
 * libiscsi's iSER transport carries the session (initiator/engine_iscsi.c). */
#ifndef UB_ISCSI_URL_H
#define UB_ISCSI_URL_H

#include <stdbool.h>
#include <stddef.h>

#define UB_URL_FIELD 256

struct ub_iscsi_url {
	char user[UB_URL_FIELD];
	char secret[UB_URL_FIELD];
	char host[UB_URL_FIELD];       /* without IPv6 brackets */
	int port;		       /* 3260 when absent */
	char portal[UB_URL_FIELD + 8]; /* "host:port" or "[v6]:port", as libiscsi takes it */
	char target[UB_URL_FIELD];     /* %XX-decoded */
	int lun;
	bool iser; /* iser:// (RDMA CM + libiscsi's iSER transport), else iscsi:// (TCP) */
};

/* libiscsi 1.19's iSER transport moves one command's data through a registered buffer of
 * this size (DATA_BUFFER_SIZE, 0x40000) and refuses larger transfers with "Libiscsi-iSER
 * supports messages smaller than 512k", whatever its message says. */
#define UB_ISER_MAX_XFER (256u * 1024u)

/* iscsi:// or iser:// */
bool ub_is_iscsi_url(const char *s);
/* iser:// only */
bool ub_is_iser_url(const char *s);
/* false and a one-line reason in err on malformed input. */
bool ub_iscsi_url_parse(const char *s, struct ub_iscsi_url *u, char *err, size_t errlen);
/* The URL without the secret, for reports and logs. */
void ub_iscsi_url_redact(const char *s, char *out, size_t outlen);

#endif
