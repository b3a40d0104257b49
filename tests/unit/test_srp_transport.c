/* The ib_srpt driver's configuration: defaults, every attribute, errors at the right line,
 * TARGET names that are not GIDs; and start/stop on a machine without an RDMA device. */
#include <criterion/criterion.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "tests/unit/conf_test_util.h"
#include "transports/srp/srp_int.h"

extern const struct tgt_transport srpt_transport;

static const char *BASE = "HANDLER vdisk_nullio {\n"
			  "\tDEVICE d0 {\n\t\tsize_mb 16\n\t}\n"
			  "}\n";

static struct tgt_config *load_drv(const char *drv_block, struct captured *c, struct diag *d)
{
	static char text[4096];

	snprintf(text, sizeof(text), "%s%s", BASE, drv_block);
	return load_str(text, c, d);
}

Test(srp_transport, defaults)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_drv("TARGET_DRIVER ib_srpt {\n"
					  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n"
					  "\t\tenabled 1\n\t\tLUN 0 d0\n\t}\n}\n",
					  &c, &d);
	struct srpt_opts o;
	char a[64];

	assert_loads(cfg, c, 0);
	cr_assert_eq(srpt_opts_parse(tgt_config_driver(cfg, "ib_srpt"), &o, &d), 0);
	cr_assert_eq(o.rdma.nlisten, 1);
	rdma_format_addr(&o.rdma.listen[0], a, sizeof(a));
	cr_assert_str_eq(a, "0.0.0.0:5555");
	{
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned want = n < 1 ? 1 : n > SRPT_MAX_DEFAULT_THREADS ? SRPT_MAX_DEFAULT_THREADS
									 : (unsigned)n;

		cr_assert_eq(o.rdma.threads, want, "one event thread per CPU, up to %d",
			     SRPT_MAX_DEFAULT_THREADS);
		cr_assert_eq(srpt_default_threads(), want);
	}
	cr_assert_eq(o.rdma.poll_us, 0);
	cr_assert_eq(o.rdma.pin, RDMA_PIN_AUTO, "event threads placed by load");
	cr_assert_eq(o.rdma.handoff_bytes, 256u << 10, "large data-in posted by sender threads");
	cr_assert_not(o.rdma.srq);
	cr_assert_eq(o.lim.req_lim, 128);
	cr_assert_eq(o.lim.max_it_iu_len, 65536);
	cr_assert_eq(o.lim.max_ti_iu_len, 288);
	cr_assert(o.lim.imm);
	cr_assert_eq(o.lim.buf_fmt, SRP_BUF_FMT_DIRECT | SRP_BUF_FMT_INDIRECT);
	cr_assert_eq(o.rdma.pool_max, 128u << 20);
	cr_assert_eq(o.logout_wait, 5);
	tgt_config_free(cfg);
}

Test(srp_transport, every_attribute)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg =
	    load_drv("TARGET_DRIVER ib_srpt {\n"
		     "\tlisten 10.0.2.15:6000\n"
		     "\tlisten [::]:6001\n"
		     "\tthreads 2\n\tpoll_us 50\n\tsrq 1\n\tsrq_size 512\n"
		     "\tqueue_depth 64\n\tmax_req_size 16K\n\tmax_rsp_size 512\n"
		     "\tmax_channels 4\n\timmediate_data 0\n\tpool_mb 32\n"
		     "\tmax_inline 64\n\tlogout_wait 9\n\tpin 1\n\thandoff_kb 512\n"
		     "\tTARGET fe80::2:c903:f:41a7 {\n\t\tenabled 1\n\t}\n}\n",
		     &c, &d);
	struct srpt_opts o;
	char a[64];

	assert_loads(cfg, c, 0);
	cr_assert_eq(srpt_opts_parse(tgt_config_driver(cfg, "ib_srpt"), &o, &d), 0);
	cr_assert_eq(o.rdma.nlisten, 2);
	rdma_format_addr(&o.rdma.listen[0], a, sizeof(a));
	cr_assert_str_eq(a, "10.0.2.15:6000");
	rdma_format_addr(&o.rdma.listen[1], a, sizeof(a));
	cr_assert_str_eq(a, "[::]:6001");
	cr_assert_eq(o.rdma.threads, 2);
	cr_assert_eq(o.rdma.poll_us, 50);
	cr_assert(o.rdma.srq);
	cr_assert_eq(o.rdma.srq_depth, 512);
	cr_assert_eq(o.rdma.srq_buf_size, 16384, "SRQ buffers hold the largest request");
	cr_assert_eq(o.lim.req_lim, 64);
	cr_assert_eq(o.lim.max_it_iu_len, 16384);
	cr_assert_eq(o.lim.max_ti_iu_len, 512);
	cr_assert_eq(o.lim.max_channels, 4);
	cr_assert_not(o.lim.imm);
	cr_assert_eq(o.rdma.pool_max, 32u << 20);
	cr_assert_eq(o.rdma.max_inline, 64);
	cr_assert_eq(o.logout_wait, 9);
	cr_assert_eq(o.rdma.pin, RDMA_PIN_ON);
	cr_assert_eq(o.rdma.handoff_bytes, 512u << 10);
	tgt_config_free(cfg);
}

/* pin: 0 and 1 as booleans, and auto (placed by load, rdma_place.c) */
Test(srp_transport, pin_auto)
{
	const char *vals[] = {"auto", "0", "1", "yes"};
	const unsigned want[] = {RDMA_PIN_AUTO, RDMA_PIN_OFF, RDMA_PIN_ON, RDMA_PIN_ON};

	for (int i = 0; i < 4; i++) {
		char blk[256];
		struct captured c;
		struct diag d;
		struct tgt_config *cfg;
		struct srpt_opts o;

		snprintf(blk, sizeof(blk),
			 "TARGET_DRIVER ib_srpt {\n\tpin %s\n\tTARGET fe80::2 {\n\t\tenabled 1\n"
			 "\t}\n}\n",
			 vals[i]);
		cfg = load_drv(blk, &c, &d);
		assert_loads(cfg, c, 0);
		cr_assert_eq(srpt_opts_parse(tgt_config_driver(cfg, "ib_srpt"), &o, &d), 0, "pin %s",
			     vals[i]);
		cr_assert_eq(o.rdma.pin, want[i], "pin %s", vals[i]);
		tgt_config_free(cfg);
	}
}

static void expect_error(const char *attr_line, int line, const char *msg)
{
	char blk[512];
	struct captured c;
	struct diag d;
	struct tgt_config *cfg;
	int eline = 0;
	const char *e;

	snprintf(blk, sizeof(blk),
		 "TARGET_DRIVER ib_srpt {\n%s\n\tTARGET fe80::1 {\n\t\tenabled 1\n\t}\n}\n",
		 attr_line);
	cfg = load_drv(blk, &c, &d);
	e = cap_first_error(&c, &eline);
	cr_assert_not_null(e, "'%s' accepted", attr_line);
	cr_assert_str_eq(e, msg, "'%s'", attr_line);
	cr_assert_eq(eline, line, "'%s': line %d", attr_line, eline);
	tgt_config_free(cfg);
}

Test(srp_transport, errors_with_lines)
{
	/* BASE takes 5 lines; "TARGET_DRIVER ib_srpt {" is line 6, the attribute line 7 */
	expect_error("\tlisten 10.0.2.15", 7, "ib_srpt: listen: '10.0.2.15' is not ADDR:PORT");
	expect_error("\tqueue_depth 1", 7,
		     "ib_srpt: queue_depth: '1' is not a number from 2 to 4096");
	expect_error("\tmax_req_size 32", 7,
		     "ib_srpt: max_req_size: '32' is not a number from 64 to 1048576");
	expect_error("\tthreads lots", 7, "ib_srpt: threads: 'lots' is not a number from 1 to 64");
	expect_error("\tsrq maybe", 7, "ib_srpt: srq: expected a boolean, got 'maybe'");
	expect_error("\tpin cpu0", 7, "ib_srpt: pin: expected 0, 1 or auto, got 'cpu0'");
	expect_error("\timmediate_data 2", 7,
		     "ib_srpt: immediate_data: expected a boolean, got '2'");
}

Test(srp_transport, target_must_be_a_gid)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_drv("TARGET_DRIVER ib_srpt {\n"
					  "\tTARGET iqn.2024-01.org.utgt:nope {\n"
					  "\t\tenabled 1\n\t}\n}\n",
					  &c, &d);
	int line = 0;
	const char *e = cap_first_error(&c, &line);

	cr_assert_not_null(e);
	cr_assert_str_eq(e, "ib_srpt: TARGET 'iqn.2024-01.org.utgt:nope' is not a port GID "
			    "(fe80:0000:0000:0000:XXXX:XXXX:XXXX:XXXX)");
	cr_assert_eq(line, 7);
	tgt_config_free(cfg);
}

Test(srp_transport, start_and_stop_without_a_device)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_drv("TARGET_DRIVER ib_srpt {\n\tlisten 127.0.0.1:47555\n"
					  "\tTARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n"
					  "\t\tenabled 1\n\t\tLUN 0 d0\n\t}\n}\n",
					  &c, &d);
	const struct tgt_driver *drv;
	char err[256] = "";

	assert_loads(cfg, c, 0);
	drv = tgt_config_driver(cfg, "ib_srpt");
	cr_assert_eq(drv->transport, &srpt_transport);
	cr_assert_eq(srpt_transport.start(cfg, drv, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(srpt_global);
	cr_assert_eq(srpt_global->ntgts, 1);
	cr_assert_neq(srpt_transport.start(cfg, drv, err, sizeof(err)), 0, "started twice");
	srpt_transport.stop();
	cr_assert_null(srpt_global);
	srpt_transport.stop(); /* harmless */
	tgt_config_free(cfg);
}
