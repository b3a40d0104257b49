/* Moving data between handlers and the task's iovecs, and the residual rule.
 *
 * The residual rule (what iSCSI's and SRP's residual fields report, as libiscsi's
 * READ10/WRITE10 residual tests expect):
 *   wanted = bytes the command itself transfers: the CDB's transfer length in bytes for
 *            READ/WRITE-like commands (scsi_xfer_wanted), or for data-in commands with an
 *            allocation length the bytes it really returns, already cut to that allocation
 *            length (scsi_data_in), or the parameter list length it reads (scsi_data_out);
 *   exp    = the transport's expected data transfer length (task->exp_xfer_len).
 *   moved  = min(wanted, exp): a data-in command sends at most exp bytes; a data-out command
 *            uses at most exp bytes of what the initiator sent, so a WRITE whose exp is shorter
 *            than its CDB writes only the whole blocks exp covers and one whose exp is longer
 *            writes only what the CDB asks for (the SBC code applies this through
 *            scsi_xfer_len()).  libiscsi's Write*Residuals want GOOD for both, as FCP-4 9.4.2
 *            a) allows ("process the command normally except that data beyond [the expected
 *            length] shall not be requested or transferred").
 *   wanted > exp: OVERFLOW, resid = wanted - exp;   wanted < exp: UNDERFLOW, resid = exp - wanted.
 * A data-out block command whose exp ends inside a logical block cannot be carried out that
 * way (a part of a block is never written, and GOOD would claim that exp bytes were used):
 * it is refused before anything is written, CHECK CONDITION, ILLEGAL REQUEST, INVALID FIELD
 * IN COMMAND INFORMATION UNIT (FCP-4 9.4.2 b), what LIO answers to any length mismatch of a
 * WRITE), and still reports its OVERFLOW residual (RFC 7143 11.4.5.2: the residual MUST be
 * signalled; libiscsi's Write10Residuals checks it with that CHECK CONDITION).
 * Any other command that fails (any status other than GOOD / CONDITION MET) moved nothing
 * the initiator may use: data_len = 0 and, when exp > 0, UNDERFLOW by exp. */
#include "scsi/backstore/bs_util.h"
#include "scsi/scsi_core.h"

void scsi_xfer_wanted(struct scsi_task *t, uint64_t bytes)
{
	t->core.xfer_wanted = bytes;
	t->core.xfer_set = true;
}

uint32_t scsi_xfer_len(const struct scsi_task *t)
{
	uint64_t w = t->core.xfer_set ? t->core.xfer_wanted : 0;
	return w < t->exp_xfer_len ? (uint32_t)w : t->exp_xfer_len;
}

enum scsi_sr scsi_xfer_blocks_out(struct scsi_task *t, uint64_t nblocks, uint32_t bsz)
{
	scsi_xfer_wanted(t, nblocks * bsz);
	if (t->dir != SCSI_DIR_WRITE || scsi_xfer_len(t) % bsz == 0)
		return SR_OK;
	t->core.xfer_refused = true;
	return SR_INVALID_FIELD_IN_IU;
}

void scsi_data_in(struct scsi_task *t, const void *buf, uint32_t len)
{
	uint32_t n = len < t->exp_xfer_len ? len : t->exp_xfer_len;

	scsi_xfer_wanted(t, len);
	if (t->dir != SCSI_DIR_READ)
		n = 0;
	t->data_len = (uint32_t)bs_buf_to_iov(t->iov, t->iovcnt, 0, buf, n);
}

uint32_t scsi_data_out(struct scsi_task *t, void *buf, uint32_t len)
{
	uint32_t n = len < t->exp_xfer_len ? len : t->exp_xfer_len;

	if (!t->core.xfer_set || t->core.xfer_wanted < len)
		scsi_xfer_wanted(t, len);
	if (t->dir != SCSI_DIR_WRITE)
		return 0;
	n = (uint32_t)bs_iov_to_buf(buf, t->iov, t->iovcnt, 0, n);
	if (n > t->data_len)
		t->data_len = n;
	return n;
}

void scsi_resid_compute(struct scsi_task *t, bool good)
{
	uint64_t wanted = t->core.xfer_set ? t->core.xfer_wanted : 0;
	uint32_t exp = t->exp_xfer_len;

	t->resid_kind = SCSI_RESID_NONE;
	t->resid = 0;
	if (!good && !t->core.xfer_refused) {
		t->data_len = 0;
		if (exp) {
			t->resid_kind = SCSI_RESID_UNDER;
			t->resid = exp;
		}
		return;
	}
	t->data_len = !good ? 0 : wanted < exp ? (uint32_t)wanted : exp;
	if (wanted > exp) {
		t->resid_kind = SCSI_RESID_OVER;
		t->resid = wanted - exp > UINT32_MAX ? UINT32_MAX : (uint32_t)(wanted - exp);
	} else if (wanted < exp) {
		t->resid_kind = SCSI_RESID_UNDER;
		t->resid = exp - (uint32_t)wanted;
	}
}
