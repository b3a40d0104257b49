/* iSER data-movement planning: for each command shape, which bytes come in the SEND, which as
 * unsolicited Data-Out (F bit clear), which by RDMA READ from which STag/VA and local offset,
 * and where Data-In is RDMA WRITten; and the protocol errors that drop the connection. */
#include <criterion/criterion.h>
#include <errno.h>

#include "transports/iser/iser_plan.h"

static struct iser_plan_lim lim = {
    .immediate_data = true, .initial_r2t = true, .first_burst = 65536, .max_xfer = 1u << 20};
static struct iser_hdr hw = {
    .opcode = ISER_OP_ISCSI_CTRL, .wsv = true, .write_stag = 0x1234, .write_va = 0x10000};
static struct iser_hdr hr = {
    .opcode = ISER_OP_ISCSI_CTRL, .rsv = true, .read_stag = 0x4321, .read_va = 0x20000};
static struct iser_hdr hnone = {.opcode = ISER_OP_ISCSI_CTRL};

static struct iser_plan p;
static const char *why;

Test(iser_plan, read_is_one_rdma_write_to_the_read_stag)
{
	struct iser_plan_in in = {.read = true, .edtl = 1 << 20, .h = &hr};

	cr_assert_eq(iser_plan_cmd(&in, &lim, &p, &why), 0, "%s", why);
	cr_assert_eq(p.wr.rkey, 0x4321);
	cr_assert_eq(p.wr.addr, 0x20000);
	cr_assert_eq(p.wr.len, 1u << 20);
	cr_assert_eq(p.rd.len, 0, "no RDMA READ for a read");
	cr_assert_eq(p.imm + p.unsol, 0);
	cr_assert_eq(iser_plan_datain_len(&p, 4096), 4096, "short read: residual");
	cr_assert_eq(iser_plan_datain_len(&p, 2u << 20), 1u << 20, "never past the STag");
}

Test(iser_plan, write_all_by_rdma_read_when_no_immediate_data)
{
	struct iser_plan_in in = {.write = true, .edtl = 4096, .h = &hw};

	cr_assert_eq(iser_plan_cmd(&in, &lim, &p, &why), 0, "%s", why);
	cr_assert_eq(p.rd.rkey, 0x1234);
	cr_assert_eq(p.rd.addr, 0x10000);
	cr_assert_eq(p.rd.len, 4096);
	cr_assert_eq(p.rd_local_off, 0);
	cr_assert_eq(p.wr.len, 0);
	cr_assert_eq(p.unsol, 0);
}

Test(iser_plan, immediate_then_rdma_read_of_the_rest)
{
	struct iser_plan_in in = {.write = true, .edtl = 1 << 20, .imm = 8192, .h = &hw};

	cr_assert_eq(iser_plan_cmd(&in, &lim, &p, &why), 0, "%s", why);
	cr_assert_eq(p.imm, 8192);
	cr_assert_eq(p.unsol, 0, "InitialR2T=Yes: no Data-Out");
	cr_assert_eq(p.rd.len, (1u << 20) - 8192);
	cr_assert_eq(p.rd_local_off, 8192);
	cr_assert_eq(p.rd.addr, 0x10000, "ib_iser's Write VA already skips the unsolicited part");
}

Test(iser_plan, all_immediate_needs_no_stag)
{
	struct iser_plan_in in = {.write = true, .edtl = 512, .imm = 512, .h = &hnone};

	cr_assert_eq(iser_plan_cmd(&in, &lim, &p, &why), 0, "%s", why);
	cr_assert_eq(p.imm, 512);
	cr_assert_eq(p.rd.len, 0);
}

Test(iser_plan, initial_r2t_no_unsolicited_data_out_up_to_first_burst)
{
	struct iser_plan_lim l = lim;
	struct iser_plan_in in = {.write = true, .edtl = 1 << 20, .imm = 8192, .h = &hw};

	l.initial_r2t = false;
	cr_assert_eq(iser_plan_cmd(&in, &l, &p, &why), 0, "%s", why);
	cr_assert_eq(p.imm, 8192);
	cr_assert_eq(p.unsol, 65536 - 8192);
	cr_assert_eq(p.rd_local_off, 65536);
	cr_assert_eq(p.rd.len, (1u << 20) - 65536);
}

Test(iser_plan, f_bit_means_no_unsolicited_data_out)
{
	struct iser_plan_lim l = lim;
	struct iser_plan_in in = {
	    .write = true, .final = true, .edtl = 1 << 20, .imm = 8192, .h = &hw};

	/* InitialR2T=No allows a burst, but the initiator sent only immediate data */
	l.initial_r2t = false;
	cr_assert_eq(iser_plan_cmd(&in, &l, &p, &why), 0, "%s", why);
	cr_assert_eq(p.unsol, 0);
	cr_assert_eq(p.rd_local_off, 8192);
	cr_assert_eq(p.rd.len, (1u << 20) - 8192);
}

Test(iser_plan, short_write_under_first_burst_is_all_unsolicited)
{
	struct iser_plan_lim l = lim;
	struct iser_plan_in in = {.write = true, .edtl = 16384, .imm = 8192, .h = &hnone};

	l.initial_r2t = false;
	cr_assert_eq(iser_plan_cmd(&in, &l, &p, &why), 0, "%s", why);
	cr_assert_eq(p.unsol, 8192);
	cr_assert_eq(p.rd.len, 0);
}

Test(iser_plan, missing_stags_are_protocol_errors)
{
	struct iser_plan_in w = {.write = true, .edtl = 4096, .h = &hnone};
	struct iser_plan_in r = {.read = true, .edtl = 4096, .h = &hw};

	cr_assert_eq(iser_plan_cmd(&w, &lim, &p, &why), -EPROTO);
	cr_assert_eq(iser_plan_cmd(&r, &lim, &p, &why), -EPROTO, "a Write STag is no Read STag");
	/* zero-length commands need none */
	struct iser_plan_in z = {.read = true, .edtl = 0, .h = &hnone};
	cr_assert_eq(iser_plan_cmd(&z, &lim, &p, &why), 0);
	cr_assert_eq(p.wr.len, 0);
}

Test(iser_plan, lengths_beyond_the_negotiated_limits)
{
	struct iser_plan_in big = {.read = true, .edtl = (1u << 20) + 1, .h = &hr};
	struct iser_plan_in imm_over = {.write = true, .edtl = 4096, .imm = 8192, .h = &hw};
	struct iser_plan_in imm_read = {.read = true, .edtl = 4096, .imm = 512, .h = &hr};
	struct iser_plan_in imm_fb = {.write = true, .edtl = 1 << 20, .imm = 65537, .h = &hw};
	struct iser_plan_lim noimm = lim;
	struct iser_plan_in imm = {.write = true, .edtl = 4096, .imm = 512, .h = &hw};

	noimm.immediate_data = false;
	cr_assert_eq(iser_plan_cmd(&big, &lim, &p, &why), -EMSGSIZE);
	cr_assert_eq(iser_plan_cmd(&imm_over, &lim, &p, &why), -EPROTO);
	cr_assert_eq(iser_plan_cmd(&imm_read, &lim, &p, &why), -EPROTO);
	cr_assert_eq(iser_plan_cmd(&imm_fb, &lim, &p, &why), -EPROTO);
	cr_assert_eq(iser_plan_cmd(&imm, &noimm, &p, &why), -EPROTO);
}

Test(iser_plan, bidirectional_is_refused)
{
	struct iser_hdr both = hw;
	struct iser_plan_in in = {.read = true, .write = true, .edtl = 4096, .h = &both};

	both.rsv = true;
	cr_assert_eq(iser_plan_cmd(&in, &lim, &p, &why), -EOPNOTSUPP);
}
