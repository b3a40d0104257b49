/* The transport registry (tgt_transport.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "target/tgt_config.h"

Test(tgt_transport, served_driver_names)
{
	static const char *const known[] = {"iscsi", "ib_srpt", "copy_manager", "tcmu"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		cr_assert(tgt_driver_is_known(known[i]), "%s", known[i]);
	cr_assert_not(tgt_driver_is_known("qla2x00t"));
	cr_assert_not(tgt_driver_is_known("iser"), "iSER is a transport of the iscsi driver");
	cr_assert_not(tgt_driver_is_known("ISCSI"), "driver names are case-sensitive, as in SCST");
	cr_assert_not(tgt_driver_is_known(NULL));
}

Test(tgt_transport, unknown_drivers_have_no_transport)
{
	cr_assert_null(tgt_transport_find("qla2x00t"));
	cr_assert_null(tgt_transport_find(NULL));
}

Test(tgt_transport, copy_manager_is_built_in)
{
	const struct tgt_transport *t = tgt_transport_find("copy_manager");
	char err[64] = "";
	cr_assert_not_null(t);
	cr_assert_str_eq(t->driver, "copy_manager");
	cr_assert_null(t->driver_attrs[0]);
	cr_assert_eq(t->start(NULL, NULL, err, sizeof(err)), 0);
	t->stop();
}

Test(tgt_transport, a_present_transport_names_its_driver)
{
	static const char *const known[] = {"iscsi", "ib_srpt", "tcmu"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct tgt_transport *t = tgt_transport_find(known[i]);
		if (!t)
			continue; /* not in this build */
		cr_assert_str_eq(t->driver, known[i]);
		cr_assert_not_null(t->start);
		cr_assert_not_null(t->stop);
		cr_assert_not_null(t->driver_attrs);
		cr_assert_not_null(t->target_attrs);
	}
}
