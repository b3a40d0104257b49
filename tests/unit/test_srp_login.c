/* SRP login negotiation: accept with the negotiated values, or the right rejection reason. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/srp/srp_login.h"

static const struct srp_login_limits LIM = {.max_it_iu_len = 65536,
					    .max_ti_iu_len = 288,
					    .req_lim = 128,
					    .buf_fmt = SRP_BUF_FMT_DIRECT | SRP_BUF_FMT_INDIRECT,
					    .imm = true,
					    .max_channels = 8};

/* What Linux 6.1's ib_srp sends by default over RDMA/CM. */
static struct srp_login_req linux_req(uint8_t mca)
{
	struct srp_login_req r = {.req_it_iu_len = 8260,
				  .req_buf_fmt = 6,
				  .req_flags = (uint8_t)(SRP_REQ_IMMED | mca),
				  .imm_data_offset = 68};
	memset(r.tag.b, 0x42, 8);
	return r;
}

Test(srp_login, linux_defaults_accepted)
{
	struct srp_login_req r = linux_req(SRP_MCA_SINGLE);
	struct srp_login_decision d;

	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert(d.accept);
	cr_assert_eq(d.it_iu_len, 8260);
	cr_assert(d.imm);
	cr_assert_eq(d.imm_data_offset, 68);
	cr_assert_eq(d.rsp.max_it_iu_len, 8260, "ib_srp warns if below what it asked");
	cr_assert_eq(d.rsp.max_ti_iu_len, 288);
	cr_assert_eq(d.rsp.req_lim_delta, 128);
	cr_assert_eq(d.rsp.buf_fmt, 6);
	cr_assert_eq(d.rsp.rsp_flags, SRP_RSP_IMMED_SUPPORTED | SRP_RSP_MCR_NO_CHAN);
	cr_assert_arr_eq(d.rsp.tag.b, r.tag.b, 8);
	cr_assert_not(d.terminate_others);
}

Test(srp_login, unknown_target)
{
	struct srp_login_req r = linux_req(SRP_MCA_SINGLE);
	struct srp_login_decision d;

	srp_login_decide(&r, &LIM, false, 0, &d);
	cr_assert_not(d.accept);
	cr_assert_eq(d.rej_reason, SRP_REJ_UNABLE_ASSOCIATE_CHANNEL);
}

Test(srp_login, iu_lengths)
{
	struct srp_login_req r = linux_req(SRP_MCA_SINGLE);
	struct srp_login_decision d;

	r.req_it_iu_len = 65537;
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert_not(d.accept);
	cr_assert_eq(d.rej_reason, SRP_REJ_IT_IU_LEN_TOO_LARGE);
	r.req_it_iu_len = 65536;
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert(d.accept);
	r.req_it_iu_len = 63;
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert_not(d.accept);
	cr_assert_eq(d.rej_reason, SRP_REJ_UNABLE_ESTABLISH_CHANNEL);
}

Test(srp_login, buffer_formats)
{
	struct srp_login_req r = linux_req(SRP_MCA_SINGLE);
	struct srp_login_limits direct_only = LIM;
	struct srp_login_decision d;

	direct_only.buf_fmt = SRP_BUF_FMT_DIRECT;
	r.req_buf_fmt = SRP_BUF_FMT_INDIRECT;
	srp_login_decide(&r, &direct_only, true, 0, &d);
	cr_assert_not(d.accept);
	cr_assert_eq(d.rej_reason, SRP_REJ_UNSUPPORTED_DESC_FMT);
	r.req_buf_fmt = 6;
	srp_login_decide(&r, &direct_only, true, 0, &d);
	cr_assert(d.accept);
	cr_assert_eq(d.rsp.buf_fmt, SRP_BUF_FMT_DIRECT);
}

Test(srp_login, multichannel_actions)
{
	struct srp_login_req single = linux_req(SRP_MCA_SINGLE), multi = linux_req(SRP_MCA_MULTI);
	struct srp_login_decision d;

	srp_login_decide(&single, &LIM, true, 3, &d);
	cr_assert(d.accept);
	cr_assert(d.terminate_others);
	cr_assert_eq(d.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_TERMINATED);

	srp_login_decide(&multi, &LIM, true, 0, &d);
	cr_assert(d.accept);
	cr_assert_eq(d.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_NO_CHAN);
	srp_login_decide(&multi, &LIM, true, 3, &d);
	cr_assert(d.accept);
	cr_assert_not(d.terminate_others);
	cr_assert_eq(d.rsp.rsp_flags & SRP_MCA_MASK, SRP_RSP_MCR_MAINTAINED);
	srp_login_decide(&multi, &LIM, true, 8, &d);
	cr_assert_not(d.accept);
	cr_assert_eq(d.rej_reason, SRP_REJ_CHANNEL_LIMIT_REACHED);

	multi.req_flags = 0x02; /* reserved action code */
	srp_login_decide(&multi, &LIM, true, 0, &d);
	cr_assert_not(d.accept);
}

Test(srp_login, immediate_data_only_when_sane)
{
	struct srp_login_req r = linux_req(SRP_MCA_SINGLE);
	struct srp_login_limits no_imm = LIM;
	struct srp_login_decision d;

	no_imm.imm = false;
	srp_login_decide(&r, &no_imm, true, 0, &d);
	cr_assert(d.accept);
	cr_assert_not(d.imm);
	cr_assert_eq(d.rsp.rsp_flags & SRP_RSP_IMMED_SUPPORTED, 0);

	r.imm_data_offset = 40; /* inside the SRP_CMD header */
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert(d.accept);
	cr_assert_not(d.imm);
	r.imm_data_offset = 8260; /* at the very end: no room for data */
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert_not(d.imm);
	r.imm_data_offset = 68;
	r.req_flags = SRP_MCA_SINGLE; /* not requested */
	srp_login_decide(&r, &LIM, true, 0, &d);
	cr_assert_not(d.imm);
}
