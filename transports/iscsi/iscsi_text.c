/* Text Request/Response (RFC 7143 11.10-11.11): SendTargets discovery, declarations in full
 * feature phase, and answers longer than the initiator's MaxRecvDataSegmentLength sent in
 * pieces (C bit + Target Transfer Tag, the initiator asking for each next piece).
 *
 * SendTargets lists only enabled targets that give this initiator at least one LUN, with
 * the portals that serve them (allowed_portal) over the transport the question came on (TCP
 * or iSER); a wildcard portal is announced with the address the initiator reached us at,
 * which is one it can certainly reach. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

#define MAX_KEYS 64

/* Family of a local address, counting IPv4-mapped IPv6 as IPv4. */
static int real_family(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)ss)->sin6_addr))
		return AF_INET;
	return ss->ss_family;
}

/* The concrete "ip" and "ip:port" strings for portal p as seen by a connection to local. */
static void portal_strings(const struct iscsit_portal *p, const struct sockaddr_storage *local,
			   char *ip, size_t iplen, char *ipport, size_t iplen2)
{
	const struct sockaddr_storage *a = p->wildcard && local ? local : &p->addr;

	iscsit_sockaddr_str(a, ip, iplen, false);
	if (real_family(a) == AF_INET6)
		snprintf(ipport, iplen2, "[%s]:%u", ip, p->port);
	else
		snprintf(ipport, iplen2, "%s:%u", ip, p->port);
}

bool iscsit_portal_allowed(const struct iscsit_tgt *t, const struct iscsit_portal *p,
			   const struct sockaddr_storage *local)
{
	char ip[INET6_ADDRSTRLEN + 8], ipport[INET6_ADDRSTRLEN + 16];

	if (!t->nallowed)
		return true;
	portal_strings(p, local, ip, sizeof(ip), ipport, sizeof(ipport));
	for (unsigned i = 0; i < t->nallowed; i++)
		if (tgt_wildcard_match(t->allowed_portals[i], ip) ||
		    tgt_wildcard_match(t->allowed_portals[i], ipport))
			return true;
	return false;
}

const struct scsi_lun_table *iscsit_acl_luns(const struct iscsit_tgt *t, const char *iname,
					     const struct sockaddr_storage *local)
{
	char addr[INET6_ADDRSTRLEN + 2] = "";

	if (local && t->t->per_portal_acl) {
		iscsit_sockaddr_str(local, addr + 1, sizeof(addr) - 2, false);
		/* iSCSI-SCST writes an IPv6 portal in brackets (IPv4-mapped ones are IPv4) */
		if (strchr(addr + 1, ':')) {
			addr[0] = '[';
			strcat(addr, "]");
		} else {
			memmove(addr, addr + 1, strlen(addr + 1) + 1);
		}
	}
	return tgt_acl_resolve_portal(t->t, iname, addr[0] ? addr : NULL);
}

void iscsit_sendtargets(struct iscsit_ctx *ctx, const char *what, const char *iname,
			const struct sockaddr_storage *local, const struct iscsit_portal *via,
			const struct iscsit_tgt *session_tgt, struct iscsit_text *out)
{
	/* the targets as configured now (a session's own target by name: it may have been
	 * configured anew since its login) */
	pthread_rwlock_rdlock(&ctx->tgt_lock);
	for (unsigned i = 0; i < ctx->ntgts; i++) {
		const struct iscsit_tgt *t = &ctx->tgts[i];
		char addrs[16][INET6_ADDRSTRLEN + 32];
		unsigned naddr = 0;

		if (session_tgt && strcmp(t->name, session_tgt->name))
			continue;
		if (!session_tgt && strcmp(what, "All") && strcmp(what, t->name))
			continue;
		if (!t->t->enabled || iscsit_acl_luns(t, iname, local)->n == 0)
			continue;
		for (unsigned k = 0; k < ctx->nportals && naddr < 16; k++) {
			const struct iscsit_portal *p = &ctx->portals[k];
			char ip[INET6_ADDRSTRLEN + 8], ipport[INET6_ADDRSTRLEN + 16];
			bool dup = false;

			/* only the portals of the transport the question came over: an iSER
			 * initiator logs in to what it discovered with the same transport */
			if (via && (p->xp != via->xp || !p->xp->target_allowed(t)))
				continue;
			/* a wildcard of the other family says nothing about a reachable address */
			if (p->wildcard && (!local || real_family(local) != p->family))
				continue;
			if (!iscsit_portal_allowed(t, p, local))
				continue;
			portal_strings(p, local, ip, sizeof(ip), ipport, sizeof(ipport));
			snprintf(addrs[naddr], sizeof(addrs[naddr]), "%s,%u", ipport, t->tpgt);
			for (unsigned j = 0; j < naddr; j++)
				dup |= !strcmp(addrs[j], addrs[naddr]);
			if (!dup)
				naddr++;
		}
		if (!naddr)
			continue;
		iscsit_text_add(out, "TargetName", t->name);
		for (unsigned j = 0; j < naddr; j++)
			iscsit_text_add(out, "TargetAddress", addrs[j]);
	}
	pthread_rwlock_unlock(&ctx->tgt_lock);
}

/* Send the next piece of the pending answer. */
static void send_piece(struct iscsit_conn *c)
{
	uint32_t max = c->sess->p.max_xmit_dsl;
	size_t left = c->text_rsp.len - c->text_off;
	uint32_t n = left > max ? max : (uint32_t)left;
	bool more = left > max;
	uint8_t hdr[ISCSI_BHS_LEN];
	struct iscsi_sn sn;

	if (more) {
		if (c->next_ttt == ISCSI_RSVD_TAG)
			c->next_ttt = 1;
		c->text_ttt = c->next_ttt++;
	}
	iscsit_conn_sn(c, &sn, true);
	iscsi_bhs_text_rsp(hdr, c->text_itt, more ? c->text_ttt : ISCSI_RSVD_TAG, !more, more, &sn,
			   n);
	iscsit_tx_pdu(c, hdr, c->text_rsp.p ? c->text_rsp.p + c->text_off : NULL, n, true);
	c->text_off += n;
	if (!more) {
		iscsit_text_free(&c->text_rsp);
		c->text_off = 0;
		c->text_ttt = ISCSI_RSVD_TAG;
	}
}

int iscsit_text_pdu(struct iscsit_conn *c, struct iscsit_rx *rx)
{
	const uint8_t *h = rx->bhs;
	uint32_t itt = bhs_itt(h), ttt = bhs_w20(h), cmd_sn = bhs_w24(h);
	bool cont = h[1] & ISCSI_TEXT_CONTINUE;
	struct iscsit_session *s = c->sess;
	struct iscsit_kv kv[MAX_KEYS];
	unsigned nkv = 0;
	char *data = (char *)iscsit_rx_data(rx);

	if (iscsit_cmdsn_check(s, cmd_sn, bhs_immediate(h), false) == CMDSN_DROP)
		return RX_CB_OK;
	if (ttt != ISCSI_RSVD_TAG) {
		/* the initiator asks for the next piece of our answer */
		if (ttt != c->text_ttt || itt != c->text_itt || !c->text_rsp.len) {
			iscsit_send_reject(c, h, ISCSI_REJECT_INVALID_FIELD);
			return RX_CB_OK;
		}
		send_piece(c);
		return RX_CB_OK;
	}
	if (cont) {
		/* multi-PDU requests are not needed by any key we answer */
		iscsit_send_reject(c, h, ISCSI_REJECT_CMD_UNSUPP);
		return RX_CB_OK;
	}
	/* a new request replaces an unfinished answer (RFC 7143 11.10.2) */
	iscsit_text_free(&c->text_rsp);
	c->text_off = 0;
	c->text_itt = itt;
	c->text_ttt = ISCSI_RSVD_TAG;
	if (rx->dsl) {
		if (iscsit_kv_parse(data, rx->dsl, kv, MAX_KEYS, &nkv) != ISCSIT_KV_OK) {
			iscsit_send_reject(c, h, ISCSI_REJECT_PROTOCOL);
			return RX_CB_OK;
		}
	}
	for (unsigned i = 0; i < nkv; i++) {
		enum iscsit_key k = iscsit_key_lookup(kv[i].key);
		uint64_t v;

		if (k == IK_SendTargets) {
			const char *what = kv[i].val;

			if (s->p.discovery)
				iscsit_sendtargets(c->ctx, *what ? what : "All",
						   s->p.initiator_name, &c->local, c->portal, NULL,
						   &c->text_rsp);
			else if (!*what || !strcmp(what, s->tgt->name))
				iscsit_sendtargets(c->ctx, "All", s->p.initiator_name, &c->local,
						   c->portal, s->tgt, &c->text_rsp);
			/* SendTargets=All in a normal session: nothing (RFC 7143 appendix C) */
		} else if (k == IK_MaxRecvDataSegmentLength) {
			const struct iscsit_tgt_params *tp =
			    s->tgt ? &s->tgt->params : &c->ctx->disc_params;

			if (iscsit_parse_num(kv[i].val, 16777215, &v) && v >= 512)
				s->p.max_xmit_dsl =
				    (uint32_t)(v < tp->max_xmit_dsl ? v : tp->max_xmit_dsl);
			else
				iscsit_text_add(&c->text_rsp, kv[i].key, "Reject");
		} else if (k == IK_UNKNOWN) {
			iscsit_text_add(&c->text_rsp, kv[i].key, "NotUnderstood");
		} else {
			/* Renegotiation in full feature phase is not offered. */
			iscsit_text_add(&c->text_rsp, kv[i].key, "Reject");
		}
	}
	if (c->text_rsp.oom) {
		iscsit_text_free(&c->text_rsp);
		iscsit_send_reject(c, h, ISCSI_REJECT_LONG_OP);
		return RX_CB_OK;
	}
	send_piece(c);
	return RX_CB_OK;
}
