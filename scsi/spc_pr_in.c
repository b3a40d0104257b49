/* PERSISTENT RESERVE IN (SPC-4 6.16): READ KEYS, READ RESERVATION, REPORT CAPABILITIES and
 * READ FULL STATUS.  The whole answer is built under the lock (one consistent generation) and
 * cut to the allocation length by scsi_data_in(); the length fields always report the full
 * size so an initiator can retry with a bigger buffer.  With a store shared by several
 * gateways the state is reloaded first, on a core worker (a round trip to the cluster), so
 * the answer is never older than what another gateway last completed. */
#include <stdlib.h>
#include <string.h>

#include "scsi/pr_store.h"
#include "scsi/spc_pr.h"

/* Largest TransportID we produce: 4-byte header + iSCSI port name, NUL, padding. */
#define TID_MAX (4 + PR_PORT_MAX + 4)

static uint32_t read_keys(const struct pr_state *st, uint8_t *b)
{
	put_be32(b, st->generation);
	put_be32(b + 4, st->nregs * 8);
	for (unsigned i = 0; i < st->nregs; i++)
		put_be64(b + 8 + 8 * i, st->regs[i].key);
	return 8 + st->nregs * 8;
}

static uint32_t read_reservation(const struct pr_state *st, uint8_t *b)
{
	put_be32(b, st->generation);
	if (st->type == PR_TYPE_NONE) {
		put_be32(b + 4, 0);
		return 8;
	}
	put_be32(b + 4, 16);
	/* an all-registrants reservation has no single holder: its key reads as 0 (5.13.10) */
	put_be64(b + 8, pr_type_all_reg(st->type) ? 0 : st->regs[st->holder].key);
	b[21] = (uint8_t)(PR_SCOPE_LU << 4 | st->type);
	return 24;
}

static uint32_t report_capabilities(const struct scsi_pr *pr, uint8_t *b)
{
	put_be16(b, 8);
	/* CRH: RESERVE/RELEASE follow 5.13.3; SIP_C, ATP_C: SPEC_I_PT and ALL_TG_PT work;
	 * PTPL_C only when the state has a store (the state directory, the Ceph cluster). */
	b[2] = 0x10 | 0x08 | 0x04 | (pr->store ? 0x01 : 0);
	/* TMV: the type mask is valid; ALLOW COMMANDS 001b: TEST UNIT READY is allowed through
	 * Write Exclusive and Exclusive Access reservations; PTPL_A */
	b[3] = 0x80 | 0x10 | (pr->st.aptpl ? 0x01 : 0);
	b[4] = 0x80 /* WR_EX_AR */ | 0x40 /* EX_AC_RO */ | 0x20 /* WR_EX_RO */ | 0x08 /* EX_AC */ |
	       0x02 /* WR_EX */;
	b[5] = 0x01; /* EX_AC_AR */
	return 8;
}

static uint32_t read_full_status(const struct pr_state *st, uint8_t *b)
{
	uint32_t off = 8;

	put_be32(b, st->generation);
	for (unsigned i = 0; i < st->nregs; i++) {
		const struct pr_reg *r = &st->regs[i];
		uint8_t *d = b + off;
		uint32_t tid_len;

		put_be64(d, r->key);
		d[12] =
		    (uint8_t)((r->all_tg_pt ? 0x02 : 0) | (pr_is_holder(st, (int)i) ? 0x01 : 0));
		if (pr_is_holder(st, (int)i))
			d[13] = (uint8_t)(PR_SCOPE_LU << 4 | st->type);
		put_be16(d + 18, r->rtpi);
		tid_len = pr_tid_encode(&r->port, d + 24, TID_MAX);
		put_be32(d + 20, tid_len);
		off += 24 + tid_len;
	}
	put_be32(b + 4, off - 8);
	return off;
}

static enum scsi_sr pr_in_answer(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_pr *pr = dev->pr;
	uint16_t alloc = get_be16(t->cdb + 7);
	uint8_t sa = t->cdb[1] & 0x1f;
	uint8_t *b;
	uint32_t len;

	b = calloc(1, 8 + PR_MAX_REGS * (24 + TID_MAX));
	if (!b)
		return SR_NO_MEMORY;
	pthread_mutex_lock(&pr->lock);
	if (pr->st.spc2) {
		/* SPC-2 5.5.1: PR commands conflict while a RESERVE(6/10) reservation exists */
		pthread_mutex_unlock(&pr->lock);
		free(b);
		return SR_RESERVATION_CONFLICT;
	}
	switch (sa) {
	case PRI_READ_KEYS:
		len = read_keys(&pr->st, b);
		break;
	case PRI_READ_RESERVATION:
		len = read_reservation(&pr->st, b);
		break;
	case PRI_REPORT_CAPABILITIES:
		len = report_capabilities(pr, b);
		break;
	default:
		len = read_full_status(&pr->st, b);
		break;
	}
	pthread_mutex_unlock(&pr->lock);
	scsi_data_in(t, b, len < alloc ? len : alloc);
	free(b);
	return SR_OK;
}

static enum scsi_sr pr_in_refreshed(struct scsi_task *t)
{
	int rc = pr_sync_refresh(t->core.dev->pr);

	return rc ? pr_sync_sr(rc) : pr_in_answer(t);
}

enum scsi_sr spc_pr_in(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	struct scsi_pr *pr = dev ? dev->pr : NULL;

	if (!pr)
		return SR_INTERNAL_ERROR;
	if ((t->cdb[1] & 0x1f) > PRI_READ_FULL_STATUS)
		return scsi_invalid_cdb(t, 1, 4);
	if (pr->store && pr->store->shared)
		return scsi_run_blocking(t, pr_in_refreshed);
	return pr_in_answer(t);
}
