/* Header-only harness for the iSCSI target's unit tests: start the real transport on
 * 127.0.0.1 (kernel-chosen port) from an scst.conf text, and talk to it with a small blocking
 * initiator written from RFC 7143 (login with CHAP, SCSI commands with Data-Out/R2T/Data-In,
 * raw PDUs for the malformed cases). */
#ifndef UTGT_TEST_ISCSI_HARNESS_H
#define UTGT_TEST_ISCSI_HARNESS_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "target/tgt_config.h"
#include "transports/iscsi/iscsi_digest.h"
#include "transports/iscsi/iscsi_int.h"
#include "transports/iscsi/iscsi_pdu.h"

extern const struct tgt_transport iscsi_transport;

#define IH_TARGET    "iqn.2026-12.org.utgt:unit"
#define IH_INITIATOR "iqn.2026-12.org.utgt:unit-initiator"

/* ---------------------------------------------------------------- the target */
struct ih_target {
	struct tgt_config *cfg;
	uint16_t port;
};

static inline void ih_diag_emit(struct diag *d, bool error, int line, const char *msg)
{
	(void)d;
	fprintf(stderr, "config line %d: %s: %s\n", line, error ? "error" : "warning", msg);
}

/* conf_body goes inside TARGET_DRIVER iscsi { TARGET IH_TARGET { ... } } after a ramdisk
 * device rd0 (64 MiB) and LUN 0 rd0 are declared; driver_extra goes at driver level. */
static inline void ih_start_conf(struct ih_target *t, const char *text)
{
	struct diag d = {.file = "unit", .emit = ih_diag_emit};
	const struct tgt_driver *drv;
	char err[256] = "";

	t->cfg = tgt_config_parse(text, strlen(text), "unit.conf", &d);
	cr_assert_not_null(t->cfg, "config did not parse");
	cr_assert_eq(tgt_config_open_devices(t->cfg, &d), 0);
	drv = tgt_config_driver(t->cfg, "iscsi");
	cr_assert_not_null(drv);
	cr_assert_eq(iscsi_transport.start(t->cfg, drv, err, sizeof(err)), 0, "start: %s", err);
	cr_assert_not_null(iscsit_global);
	t->port = iscsit_global->portals[0].port;
}

/* The stop closes what is left at once (logout_wait 0) unless driver_extra sets logout_wait:
 * the tests' initiators never answer the stop's request to log out, which would cost every
 * test the default's 2 s. */
static inline void ih_start(struct ih_target *t, const char *driver_extra, const char *target_extra)
{
	char text[8192];

	driver_extra = driver_extra ? driver_extra : "";
	snprintf(text, sizeof(text),
		 "HANDLER ramdisk {\n DEVICE rd0 {\n  size_mb 64\n }\n DEVICE rd1 {\n  size_mb 8\n "
		 "}\n}\n"
		 "TARGET_DRIVER iscsi {\n listen 127.0.0.1:0\n %s\n %s\n"
		 " TARGET " IH_TARGET " {\n  enabled 1\n  LUN 0 rd0\n  %s\n }\n}\n",
		 strstr(driver_extra, "logout_wait") ? "" : "logout_wait 0", driver_extra,
		 target_extra ? target_extra : "");
	ih_start_conf(t, text);
}

static inline void ih_stop(struct ih_target *t)
{
	iscsi_transport.stop();
	tgt_config_free(t->cfg);
	t->cfg = NULL;
}

/* ---------------------------------------------------------------- the initiator */
struct ih_conn {
	int fd;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint32_t cmd_sn, exp_stat_sn, max_cmd_sn;
	bool hd, dd;	      /* digests on (after login) */
	uint32_t their_mrdsl; /* what the target accepts per PDU */
	uint32_t first_burst, max_burst;
	bool initial_r2t, immediate_data;
	/* the last response's text keys */
	char keys[16384];
	size_t keys_len;
};

static inline int ih_connect(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	/* a bound on every answer and close the tests wait for, not a delay: 30 s so that a close
	 * the target makes after its own timer (RspTimeout, NopInTimeout: 1-6 s in these tests)
	 * is still seen on a loaded machine (it was 5 s) */
	struct timeval tv = {30, 0};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert(fd >= 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "connect: %s",
		     strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static inline void ih_init(struct ih_conn *c, uint16_t port)
{
	static uint8_t n;

	memset(c, 0, sizeof(*c));
	c->fd = ih_connect(port);
	memcpy(c->isid, "\x80\x00\x00\x11\x22\x00", 6);
	c->isid[5] = ++n;
	c->itt = 0x100;
	c->cmd_sn = 1;
	c->their_mrdsl = 8192;
	c->initial_r2t = true;
	c->immediate_data = true;
}

static inline void ih_close(struct ih_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static inline int ih_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL);

		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static inline int ih_read_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = recv(fd, b, n, 0);

		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Send a PDU: hdr is 48 bytes, its DSL is set from dlen. */
static inline int ih_send(struct ih_conn *c, uint8_t *hdr, const void *data, uint32_t dlen)
{
	uint8_t dig[4], pad[4] = {0};
	unsigned p = iscsi_pad4(dlen);

	iscsi_put24(hdr + 5, dlen);
	if (ih_write_all(c->fd, hdr, 48))
		return -1;
	if (c->hd) {
		iscsi_digest_put(dig, iscsi_crc32c(hdr, 48));
		if (ih_write_all(c->fd, dig, 4))
			return -1;
	}
	if (dlen) {
		if (ih_write_all(c->fd, data, dlen) || ih_write_all(c->fd, pad, p))
			return -1;
		if (c->dd) {
			struct iovec v = {(void *)(uintptr_t)data, dlen};

			iscsi_digest_put(dig, iscsi_crc32c_iov(&v, 1, p));
			if (ih_write_all(c->fd, dig, 4))
				return -1;
		}
	}
	return 0;
}

/* Receive one PDU; data (if any) goes to *data (malloc'd, NUL-terminated), caller frees.
 * Returns 0, or -1 on close/timeout/bad digest. */
static inline int ih_recv(struct ih_conn *c, uint8_t *hdr, uint8_t **data, uint32_t *dlen)
{
	uint8_t dig[4], pad[4];
	uint32_t n;
	uint8_t *d = NULL;

	if (data)
		*data = NULL;
	if (ih_read_all(c->fd, hdr, 48))
		return -1;
	if (bhs_ahs_len(hdr))
		return -1; /* targets send none */
	if (c->hd) {
		if (ih_read_all(c->fd, dig, 4) || iscsi_digest_get(dig) != iscsi_crc32c(hdr, 48))
			return -1;
	}
	n = bhs_dsl(hdr);
	if (n) {
		d = malloc(n + 1);
		if (ih_read_all(c->fd, d, n) || ih_read_all(c->fd, pad, iscsi_pad4(n))) {
			free(d);
			return -1;
		}
		d[n] = 0;
		if (c->dd) {
			struct iovec v = {d, n};

			if (ih_read_all(c->fd, dig, 4) ||
			    iscsi_digest_get(dig) != iscsi_crc32c_iov(&v, 1, iscsi_pad4(n))) {
				free(d);
				return -1;
			}
		}
	}
	if (dlen)
		*dlen = n;
	if (data)
		*data = d;
	else
		free(d);
	/* track the sequence numbers the target gives us */
	if (bhs_opcode(hdr) != ISCSI_OP_DATA_IN || (hdr[1] & ISCSI_DATAIN_STATUS)) {
		uint8_t op = bhs_opcode(hdr);

		if (op != ISCSI_OP_R2T &&
		    !(op == ISCSI_OP_NOP_IN && bhs_w20(hdr) != ISCSI_RSVD_TAG))
			c->exp_stat_sn = bhs_w24(hdr) + 1;
	}
	if (bhs_opcode(hdr) != ISCSI_OP_LOGIN_RSP || bhs_w32(hdr))
		c->max_cmd_sn = bhs_w32(hdr);
	return 0;
}

/* Is the connection closed by the target (EOF within the receive timeout)? */
static inline bool ih_closed(struct ih_conn *c)
{
	uint8_t b[256];

	for (;;) {
		ssize_t r = recv(c->fd, b, sizeof(b), 0);

		if (r == 0)
			return true;
		if (r < 0)
			return errno == ECONNRESET;
	}
}

/* "k=v|k=v" into NUL-separated text; returns length. */
static inline size_t ih_keys(char *out, const char *spec)
{
	size_t n = strlen(spec);

	memcpy(out, spec, n + 1);
	for (size_t i = 0; i < n; i++)
		if (out[i] == '|')
			out[i] = '\0';
	return n ? n + 1 : 0;
}

static inline const char *ih_key(const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);

	for (size_t off = 0; off < len; off += strlen(text + off) + 1)
		if (!strncmp(text + off, key, kl) && text[off + kl] == '=')
			return text + off + kl + 1;
	return NULL;
}

static inline const char *ih_rkey(const struct ih_conn *c, const char *key)
{
	return ih_key(c->keys, c->keys_len, key);
}

static uint16_t ih_cid; /* CID the next login requests use */

/* One login request/response exchange. */
static inline int ih_login_pdu(struct ih_conn *c, uint8_t csg, uint8_t nsg, bool transit,
			       const char *text, size_t tlen, uint8_t *rsp)
{
	uint8_t h[48] = {0};
	uint8_t *d;
	uint32_t dl;

	h[0] = 0x40 | ISCSI_OP_LOGIN_REQ;
	h[1] = (uint8_t)((transit ? 0x80 : 0) | csg << 2 | (transit ? nsg : 0));
	memcpy(h + 8, c->isid, 6);
	iscsi_put16(h + 14, c->tsih);
	iscsi_put32(h + 16, c->itt);
	iscsi_put16(h + 20, ih_cid);
	iscsi_put32(h + 24, c->cmd_sn);
	iscsi_put32(h + 28, c->exp_stat_sn);
	if (ih_send(c, h, text, (uint32_t)tlen) || ih_recv(c, rsp, &d, &dl))
		return -1;
	c->keys_len = dl < sizeof(c->keys) ? dl : sizeof(c->keys) - 1;
	if (d)
		memcpy(c->keys, d, c->keys_len);
	c->keys[c->keys_len] = 0;
	free(d);
	return 0;
}

struct ih_login_opts {
	const char *iname;			 /* default IH_INITIATOR */
	const char *tname;			 /* NULL: discovery */
	const char *sec_extra;			 /* extra keys in the first PDU, "k=v|k=v" */
	const char *op_keys;			 /* operational keys, default a libiscsi-like set */
	const char *chap_user, *chap_secret;	 /* one-way CHAP */
	const char *mutual_user, *mutual_secret; /* expected target identity */
};

/* Full login.  Returns the login status (0 on success), or -1 when the connection dropped. */
static inline int ih_login(struct ih_conn *c, const struct ih_login_opts *o)
{
	char text[4096], spec[4096];
	uint8_t rsp[48];
	size_t tl;
	const char *iname = o->iname ? o->iname : IH_INITIATOR;
	uint16_t st;

	if (o->tname)
		snprintf(spec, sizeof(spec),
			 "InitiatorName=%s|TargetName=%s|SessionType=Normal|"
			 "AuthMethod=%s%s%s",
			 iname, o->tname, o->chap_user ? "CHAP,None" : "None",
			 o->sec_extra ? "|" : "", o->sec_extra ? o->sec_extra : "");
	else
		snprintf(spec, sizeof(spec),
			 "InitiatorName=%s|SessionType=Discovery|AuthMethod=%s%s%s", iname,
			 o->chap_user ? "CHAP,None" : "None", o->sec_extra ? "|" : "",
			 o->sec_extra ? o->sec_extra : "");
	tl = ih_keys(text, spec);
	if (ih_login_pdu(c, 0, 1, !o->chap_user, text, tl, rsp))
		return -1;
	st = (uint16_t)(rsp[36] << 8 | rsp[37]);
	if (st)
		return st;
	if (o->chap_user) {
		const char *am = ih_rkey(c, "AuthMethod");
		uint8_t chal[1024], resp[64];
		char hex[200];
		long cl;
		size_t rl;
		int id, alg;

		if (!am || strcmp(am, "CHAP"))
			return 0x0201;
		tl = ih_keys(text, "CHAP_A=7,6,5");
		if (ih_login_pdu(c, 0, 1, false, text, tl, rsp))
			return -1;
		st = (uint16_t)(rsp[36] << 8 | rsp[37]);
		if (st)
			return st;
		if (!ih_rkey(c, "CHAP_I") || !ih_rkey(c, "CHAP_C") || !ih_rkey(c, "CHAP_A"))
			return -2;
		id = atoi(ih_rkey(c, "CHAP_I"));
		alg = atoi(ih_rkey(c, "CHAP_A"));
		cl = iscsit_chap_decode(ih_rkey(c, "CHAP_C"), chal, sizeof(chal));
		rl = iscsit_chap_response(alg, (uint8_t)id, o->chap_secret, chal, (size_t)cl, resp);
		strcpy(hex, "0x");
		for (size_t i = 0; i < rl; i++)
			sprintf(hex + 2 + 2 * i, "%02x", resp[i]);
		if (o->mutual_user)
			snprintf(spec, sizeof(spec),
				 "CHAP_N=%s|CHAP_R=%s|CHAP_I=77|CHAP_C="
				 "0xa0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
				 o->chap_user, hex);
		else
			snprintf(spec, sizeof(spec), "CHAP_N=%s|CHAP_R=%s", o->chap_user, hex);
		tl = ih_keys(text, spec);
		if (ih_login_pdu(c, 0, 1, true, text, tl, rsp))
			return -1;
		st = (uint16_t)(rsp[36] << 8 | rsp[37]);
		if (st)
			return st;
		if (o->mutual_user) {
			uint8_t mc[16], want[64], got[64];
			const char *n = ih_rkey(c, "CHAP_N"), *r = ih_rkey(c, "CHAP_R");
			size_t wl;

			for (int i = 0; i < 16; i++)
				mc[i] = (uint8_t)(0xa0 + i);
			if (!n || !r || strcmp(n, o->mutual_user))
				return -3;
			wl = iscsit_chap_response(alg, 77, o->mutual_secret, mc, 16, want);
			if (iscsit_chap_decode(r, got, sizeof(got)) != (long)wl ||
			    memcmp(got, want, wl))
				return -3;
		}
	}
	/* operational stage */
	{
		const char *ops = o->op_keys
				      ? o->op_keys
				      : "HeaderDigest=None|DataDigest=None|InitialR2T=No|"
					"ImmediateData=Yes|MaxBurstLength=262144|"
					"FirstBurstLength=65536|MaxRecvDataSegmentLength=262144|"
					"MaxOutstandingR2T=4|DefaultTime2Wait=2|"
					"DefaultTime2Retain=0|ErrorRecoveryLevel=0|"
					"MaxConnections=1|DataPDUInOrder=Yes|"
					"DataSequenceInOrder=Yes";
		bool hd = false, dd = false;

		/* RFC 7143 defaults until negotiated otherwise */
		c->initial_r2t = true;
		c->immediate_data = true;
		c->first_burst = 65536;
		c->max_burst = 262144;
		tl = ih_keys(text, ops);
		for (int round = 0; round < 4; round++) {
			if (ih_login_pdu(c, 1, 3, true, text, tl, rsp))
				return -1;
			st = (uint16_t)(rsp[36] << 8 | rsp[37]);
			if (st)
				return st;
			if (ih_rkey(c, "MaxRecvDataSegmentLength"))
				c->their_mrdsl =
				    (uint32_t)atoi(ih_rkey(c, "MaxRecvDataSegmentLength"));
			if (ih_rkey(c, "FirstBurstLength"))
				c->first_burst = (uint32_t)atoi(ih_rkey(c, "FirstBurstLength"));
			if (ih_rkey(c, "MaxBurstLength"))
				c->max_burst = (uint32_t)atoi(ih_rkey(c, "MaxBurstLength"));
			if (ih_rkey(c, "InitialR2T"))
				c->initial_r2t = !strcmp(ih_rkey(c, "InitialR2T"), "Yes");
			if (ih_rkey(c, "ImmediateData"))
				c->immediate_data = !strcmp(ih_rkey(c, "ImmediateData"), "Yes");
			if (ih_rkey(c, "HeaderDigest"))
				hd = !strcmp(ih_rkey(c, "HeaderDigest"), "CRC32C");
			if (ih_rkey(c, "DataDigest"))
				dd = !strcmp(ih_rkey(c, "DataDigest"), "CRC32C");
			if ((rsp[1] & 0x80) && (rsp[1] & 3) == 3) {
				c->tsih = iscsi_get16(rsp + 14);
				c->hd = hd; /* digests start after the login phase */
				c->dd = dd;
				return 0;
			}
			/* the target offered keys of its own: accept them as offered */
			tl = 0;
			for (size_t off = 0; off < c->keys_len; off += strlen(c->keys + off) + 1) {
				const char *kv = c->keys + off;
				size_t kl = strcspn(kv, "=");
				char key[64];

				if (kl >= sizeof(key) || !strcmp(kv + kl, ""))
					continue;
				memcpy(key, kv, kl);
				key[kl] = 0;
				if (ih_key(ops, strlen(ops) + 1, key) || strstr(ops, key) ||
				    !strcmp(key, "TargetPortalGroupTag") ||
				    !strcmp(key, "TargetAlias") ||
				    !strcmp(key, "MaxRecvDataSegmentLength"))
					continue;
				memcpy(text + tl, kv, strlen(kv) + 1);
				tl += strlen(kv) + 1;
			}
		}
	}
	return -4;
}

static inline int ih_login_cid(struct ih_conn *c, const struct ih_login_opts *o, uint16_t cid)
{
	int r;

	ih_cid = cid;
	r = ih_login(c, o);
	ih_cid = 0;
	return r;
}

static inline int ih_login_normal(struct ih_conn *c, uint16_t port)
{
	struct ih_login_opts o = {.tname = IH_TARGET};

	ih_init(c, port);
	return ih_login(c, &o);
}

static inline void ih_clear_ua(struct ih_conn *c, uint64_t lun);

/* ---------------------------------------------------------------- SCSI commands */
struct ih_result {
	int status;    /* -1: no response (connection dropped / timeout) */
	uint8_t flags; /* U/O bits of the final PDU */
	uint32_t resid;
	uint8_t sense[260];
	uint32_t sense_len;
	uint32_t datain; /* bytes of Data-In received */
	unsigned n_datain, n_r2t;
	uint32_t last_datasn;
	bool reject;
	uint8_t reject_reason;
};

struct ih_cmd_opts {
	bool no_immediate;   /* do not send immediate data even if negotiated */
	bool no_unsolicited; /* F=1 on the command: all data by R2T */
	int corrupt_datasn;  /* Data-Out: send this DataSN in the first PDU (-1 = no) */
	bool bad_ddigest;    /* corrupt the data digest of the first Data-Out */
	uint8_t attr;
};

static inline uint8_t ih_sense_key(const struct ih_result *r)
{
	return r->sense_len > 2
		   ? (r->sense[0] & 0x7f) >= 0x72 ? r->sense[1] & 0xf : r->sense[2] & 0xf
		   : 0;
}
static inline uint8_t ih_asc(const struct ih_result *r)
{
	return r->sense_len > 13 ? (r->sense[0] & 0x7f) >= 0x72 ? r->sense[2] : r->sense[12] : 0;
}
static inline uint8_t ih_ascq(const struct ih_result *r)
{
	return r->sense_len > 13 ? (r->sense[0] & 0x7f) >= 0x72 ? r->sense[3] : r->sense[13] : 0;
}

static inline void ih_dataout(struct ih_conn *c, uint32_t itt, uint32_t ttt, const uint8_t *buf,
			      uint32_t off, uint32_t len, const struct ih_cmd_opts *o,
			      bool *first_do)
{
	uint32_t sn = 0;

	while (len) {
		uint8_t h[48] = {0};
		uint32_t n = len < c->their_mrdsl ? len : c->their_mrdsl;
		uint32_t dsn = sn++;
		bool save_dd = c->dd;

		h[0] = ISCSI_OP_DATA_OUT;
		h[1] = n == len ? 0x80 : 0;
		iscsi_put32(h + 16, itt);
		iscsi_put32(h + 20, ttt);
		iscsi_put32(h + 28, c->exp_stat_sn);
		if (*first_do && o && o->corrupt_datasn >= 0)
			dsn = (uint32_t)o->corrupt_datasn;
		iscsi_put32(h + 36, dsn);
		iscsi_put32(h + 40, off);
		if (*first_do && o && o->bad_ddigest && c->dd) {
			/* send the right data with a wrong digest */
			uint8_t dig[4];
			unsigned p = iscsi_pad4(n);
			uint8_t pad[4] = {0};
			struct iovec v = {(void *)(uintptr_t)(buf + off), n};

			iscsi_put24(h + 5, n);
			ih_write_all(c->fd, h, 48);
			if (c->hd) {
				iscsi_digest_put(dig, iscsi_crc32c(h, 48));
				ih_write_all(c->fd, dig, 4);
			}
			ih_write_all(c->fd, buf + off, n);
			ih_write_all(c->fd, pad, p);
			iscsi_digest_put(dig, iscsi_crc32c_iov(&v, 1, p) ^ 1);
			ih_write_all(c->fd, dig, 4);
		} else {
			ih_send(c, h, buf + off, n);
		}
		c->dd = save_dd;
		*first_do = false;
		off += n;
		len -= n;
	}
}

/* Run one command.  buf: data-out for writes, receives data-in for reads (edtl bytes). */
static inline struct ih_result ih_cmd(struct ih_conn *c, uint64_t lun, const uint8_t *cdb,
				      unsigned cdb_len, bool write, bool read, uint8_t *buf,
				      uint32_t edtl, const struct ih_cmd_opts *o)
{
	struct ih_result r = {.status = -1};
	uint8_t h[48] = {0}, rh[48];
	uint32_t itt = c->itt++;
	uint32_t imm = 0, unsol = 0;
	bool first_do = true;

	h[0] = ISCSI_OP_SCSI_CMD;
	h[1] = (uint8_t)((read ? 0x40 : 0) | (write ? 0x20 : 0) | (o ? o->attr : 1));
	h[9] = (uint8_t)lun;
	iscsi_put32(h + 16, itt);
	iscsi_put32(h + 20, edtl);
	iscsi_put32(h + 24, c->cmd_sn++);
	iscsi_put32(h + 28, c->exp_stat_sn);
	memcpy(h + 32, cdb, cdb_len < 16 ? cdb_len : 16);
	if (write && edtl) {
		uint32_t fb = c->first_burst ? c->first_burst : 65536;

		if (c->immediate_data && !(o && o->no_immediate)) {
			imm = edtl < fb ? edtl : fb;
			if (imm > c->their_mrdsl)
				imm = c->their_mrdsl;
		}
		if (!c->initial_r2t && !(o && o->no_unsolicited))
			unsol = (edtl < fb ? edtl : fb) - imm;
	}
	h[1] |= unsol ? 0 : 0x80;
	if (ih_send(c, h, buf, imm))
		return r;
	if (unsol)
		ih_dataout(c, itt, ISCSI_RSVD_TAG, buf, imm, unsol, o, &first_do);
	for (;;) {
		uint8_t *d;
		uint32_t dl;

		if (ih_recv(c, rh, &d, &dl))
			return r;
		switch (bhs_opcode(rh)) {
		case ISCSI_OP_R2T:
			r.n_r2t++;
			ih_dataout(c, itt, bhs_w20(rh), buf, bhs_w40(rh), bhs_w44(rh), o,
				   &first_do);
			break;
		case ISCSI_OP_DATA_IN:
			cr_assert_eq(bhs_itt(rh), itt);
			cr_assert_eq(bhs_w36(rh), r.n_datain, "DataSN in order");
			cr_assert(bhs_w40(rh) + dl <= edtl, "Data-In within EDTL");
			memcpy(buf + bhs_w40(rh), d, dl);
			r.datain += dl;
			r.last_datasn = bhs_w36(rh);
			r.n_datain++;
			if (rh[1] & ISCSI_DATAIN_STATUS) {
				r.status = rh[3];
				r.flags = rh[1] & 0x06;
				r.resid = bhs_w44(rh);
				free(d);
				return r;
			}
			break;
		case ISCSI_OP_SCSI_RSP:
			cr_assert_eq(bhs_itt(rh), itt);
			r.status = rh[3];
			r.flags = rh[1] & 0x06;
			r.resid = bhs_w44(rh);
			if (dl >= 2) {
				r.sense_len = iscsi_get16(d);
				if (r.sense_len > sizeof(r.sense))
					r.sense_len = sizeof(r.sense);
				memcpy(r.sense, d + 2, r.sense_len);
			}
			free(d);
			return r;
		case ISCSI_OP_REJECT:
			r.reject = true;
			r.reject_reason = rh[2];
			free(d);
			return r;
		default:
			break; /* NOP-In pings etc. */
		}
		free(d);
	}
}

static inline struct ih_result ih_rw10(struct ih_conn *c, bool write, uint32_t lba, uint16_t blocks,
				       uint8_t *buf, const struct ih_cmd_opts *o)
{
	uint8_t cdb[10] = {write ? 0x2a : 0x28};

	cdb[2] = (uint8_t)(lba >> 24);
	cdb[3] = (uint8_t)(lba >> 16);
	cdb[4] = (uint8_t)(lba >> 8);
	cdb[5] = (uint8_t)lba;
	cdb[7] = (uint8_t)(blocks >> 8);
	cdb[8] = (uint8_t)blocks;
	return ih_cmd(c, 0, cdb, 10, write, !write, buf, (uint32_t)blocks * 512, o);
}

/* TEST UNIT READY until no UNIT ATTENTION is pending (a new nexus starts with 29/00). */
static inline void ih_clear_ua(struct ih_conn *c, uint64_t lun)
{
	uint8_t tur[6] = {0};

	for (int i = 0; i < 8; i++) {
		struct ih_result r = ih_cmd(c, lun, tur, 6, false, false, NULL, 0, NULL);

		cr_assert_neq(r.status, -1, "no answer to TEST UNIT READY");
		if (r.status == 0 || ih_sense_key(&r) != 6)
			return;
	}
}

/* A NOP-Out ping (non-immediate, ITT set) and its NOP-In: proves the session is alive. */
static inline bool ih_ping(struct ih_conn *c)
{
	uint8_t h[48] = {0}, rh[48];

	h[0] = ISCSI_OP_NOP_OUT;
	h[1] = 0x80;
	iscsi_put32(h + 16, c->itt++);
	iscsi_put32(h + 20, ISCSI_RSVD_TAG);
	iscsi_put32(h + 24, c->cmd_sn++);
	iscsi_put32(h + 28, c->exp_stat_sn);
	if (ih_send(c, h, NULL, 0))
		return false;
	for (;;) {
		if (ih_recv(c, rh, NULL, NULL))
			return false;
		if (bhs_opcode(rh) == ISCSI_OP_NOP_IN && bhs_itt(rh) == bhs_itt(h))
			return true;
	}
}

/* Send a TMF (immediate) and return the response code, skipping other PDUs. */
static inline int ih_tmf(struct ih_conn *c, uint8_t func, uint64_t lun, uint32_t rtt,
			 uint32_t ref_sn)
{
	uint8_t h[48] = {0}, rh[48];
	uint32_t itt = c->itt++;

	h[0] = 0x40 | ISCSI_OP_TMF_REQ;
	h[1] = 0x80 | func;
	h[9] = (uint8_t)lun;
	iscsi_put32(h + 16, itt);
	iscsi_put32(h + 20, rtt);
	iscsi_put32(h + 24, c->cmd_sn);
	iscsi_put32(h + 28, c->exp_stat_sn);
	iscsi_put32(h + 32, ref_sn);
	if (ih_send(c, h, NULL, 0))
		return -1;
	for (;;) {
		if (ih_recv(c, rh, NULL, NULL))
			return -1;
		if (bhs_opcode(rh) == ISCSI_OP_TMF_RSP) {
			cr_assert_eq(bhs_itt(rh), itt);
			return rh[2];
		}
	}
}

static inline void ih_logout(struct ih_conn *c)
{
	uint8_t h[48] = {0}, rh[48];

	h[0] = 0x40 | ISCSI_OP_LOGOUT_REQ;
	h[1] = 0x80;
	iscsi_put32(h + 16, c->itt++);
	iscsi_put32(h + 24, c->cmd_sn);
	iscsi_put32(h + 28, c->exp_stat_sn);
	cr_assert_eq(ih_send(c, h, NULL, 0), 0);
	cr_assert_eq(ih_recv(c, rh, NULL, NULL), 0);
	cr_assert_eq(bhs_opcode(rh), ISCSI_OP_LOGOUT_RSP);
	cr_assert_eq(rh[2], 0);
	cr_assert(ih_closed(c));
	ih_close(c);
}

#endif
