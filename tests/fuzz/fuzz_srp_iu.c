/* libFuzzer: SRP information unit parsers on arbitrary bytes.  The first byte picks the
 * negotiated limits (immediate data, its offset, buffer formats); the rest is the IU.  Whatever
 * a parser accepts must keep its descriptors, CDB and immediate data inside the IU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/srp/srp_iu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srp_cmd_limits lim;
	struct srp_cmd c;
	struct srp_tsk_mgmt t;
	struct srp_login_req lr;
	struct srp_login_rsp rsp;
	struct srp_login_rej rej;
	struct srp_rsp_view v;
	enum srp_dir bd;
	uint8_t *iu;
	size_t len;

	if (!size)
		return 0;
	lim.imm = data[0] & 1;
	lim.imm_data_offset = (uint16_t)(48 + (data[0] >> 1 & 0x3f));
	lim.buf_fmt = (uint16_t)((data[0] & 0x80 ? SRP_BUF_FMT_DIRECT : 0) | SRP_BUF_FMT_INDIRECT);
	len = size - 1;
	iu = malloc(len ? len : 1); /* exact size: ASan sees any read past the IU */
	memcpy(iu, data + 1, len);
	if (srp_parse_cmd(iu, len, &lim, &c, &bd) == SRP_IU_OK) {
		if (48 + (size_t)c.cdb_len - 16 > len)
			abort();
		if (c.fmt == SRP_FMT_IMM && (size_t)c.imm_off + c.xfer_len > len)
			abort();
		if (c.fmt != SRP_FMT_IMM && c.desc_off + (size_t)c.ndesc * 16 > len)
			abort();
		for (unsigned i = 0; i < c.ndesc; i++)
			(void)srp_cmd_desc(iu, &c, i);
	}
	(void)srp_parse_tsk_mgmt(iu, len, &t);
	(void)srp_parse_login_rdma(iu, len, &lr);
	(void)srp_parse_login_ib(iu, len, &lr);
	(void)srp_parse_login_rsp(iu, len, &rsp);
	(void)srp_parse_login_rej(iu, len, &rej);
	if (srp_parse_rsp(iu, len, &v) == SRP_IU_OK &&
	    36 + (size_t)v.resp_len + v.sense_len > len)
		abort();
	free(iu);
	return 0;
}
