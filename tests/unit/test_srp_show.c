/* `utgtd --show-srp-login`: the add_target line of each enabled target (this machine has no
 * RDMA port, so a wildcard listen address is left for the user to fill in). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tests/unit/conf_test_util.h"

int srpt_show_login(const struct tgt_config *cfg, FILE *out, char *err, size_t errlen);

static char err[256];

static char *show(const char *conf, int *rc)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(conf, &c, &d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	f = open_memstream(&buf, &len);
	err[0] = 0;
	*rc = srpt_show_login(cfg, f, err, sizeof(err));
	fclose(f);
	tgt_config_free(cfg);
	return buf;
}

Test(srp_show, specific_and_wildcard_listen)
{
	int rc;
	char *out = show("TARGET_DRIVER ib_srpt {\n"
			 "\tlisten 10.1.2.3:7000\n\tlisten 0.0.0.0:7001\n"
			 "\tTARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n\t\tenabled 1\n\t}\n"
			 "\tTARGET fe80:0000:0000:0000:0002:c903:000f:8395 {\n\t\tenabled 0\n\t}\n"
			 "}\n",
			 &rc);

	cr_assert_eq(rc, 0);
	cr_assert_str_eq(err, "");
	cr_assert(strstr(out, "\nid_ext=0002c903000f41a7,ioc_guid=0002c903000f41a7,"
			      "dest=10.1.2.3:7000\n"),
		  "%s", out);
	cr_assert(strstr(out, "\nid_ext=0002c903000f41a7,ioc_guid=0002c903000f41a7,"
			      "dest=ADDRESS:7001\n"),
		  "%s", out);
	cr_assert(strstr(out, "# TARGET fe80:0000:0000:0000:0002:c903:000f:41a7 (rel_tgt_id 1): "
			      "no local RDMA port has this GID\n"),
		  "%s", out);
	cr_assert_null(strstr(out, "8395"), "disabled target listed:\n%s", out);
	free(out);
}

Test(srp_show, no_ib_srpt_driver)
{
	int rc;
	char *out = show("TARGET_DRIVER iscsi {\n\tTARGET iqn.2024-01.x:y {\n\t}\n}\n", &rc);

	cr_assert_eq(rc, 1);
	cr_assert_str_eq(out, "");
	cr_assert(strstr(err, "has no TARGET_DRIVER ib_srpt"), "err: %s", err);
	free(out);
}
