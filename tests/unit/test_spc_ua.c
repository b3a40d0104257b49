/* scsi/spc_ua.c: UNIT ATTENTION queues per LU and I_T nexus: power on, raise to all / one /
 * by predicate, priority of reset conditions, dedup, bound, survival across reconnects. */
#include "spc_fixture.h"

static const uint8_t tur[6] = {0};

static struct th_result do_tur(struct th_nexus *n)
{
	return th_exec(n, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
}

BOTH_STORES(ua, power_on_per_nexus)
{
	struct th_result r = do_tur(&fx_nx);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	r = do_tur(&fx_nx);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	r = do_tur(&fx_nx2);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
}

BOTH_STORES(ua, raise_all_except_and_order)
{
	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	scsi_ua_raise_all(fx_dev, &fx_nx.nx, 0x2a, 0x01);
	scsi_ua_raise_all(fx_dev, NULL, 0x2a, 0x09);
	scsi_ua_raise_all(fx_dev, NULL, 0x2a, 0x09); /* duplicate: queued once */
	struct th_result r = do_tur(&fx_nx);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(do_tur(&fx_nx).status, SAM_STAT_GOOD);
	r = do_tur(&fx_nx2);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	r = do_tur(&fx_nx2);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	cr_assert_eq(do_tur(&fx_nx2).status, SAM_STAT_GOOD);
}

BOTH_STORES(ua, reset_conditions_come_first_and_replace)
{
	th_clear_ua(&fx_nx, 0);
	scsi_ua_raise(fx_dev, fx_nx.nx.initiator_port, 1, 0x2a, 0x01);
	scsi_ua_raise(fx_dev, fx_nx.nx.initiator_port, 1, 0x29, 0x03);
	scsi_ua_raise(fx_dev, fx_nx.nx.initiator_port, 1, 0x29, 0x07);
	struct th_result r = do_tur(&fx_nx);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x07);
	r = do_tur(&fx_nx);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x01);
	cr_assert_eq(do_tur(&fx_nx).status, SAM_STAT_GOOD);
}

BOTH_STORES(ua, queue_is_bounded)
{
	th_clear_ua(&fx_nx, 0);
	for (uint8_t q = 0; q < 20; q++)
		scsi_ua_raise(fx_dev, fx_nx.nx.initiator_port, 1, 0x3f, q);
	unsigned n = 0;
	for (; n < 30; n++) {
		struct th_result r = do_tur(&fx_nx);
		if (r.status == SAM_STAT_GOOD)
			break;
		cr_assert_eq(th_ascq(&r), n, "oldest first");
	}
	cr_assert_eq(n, 8);
}

BOTH_STORES(ua, survives_reconnect_by_port_name)
{
	th_clear_ua(&fx_nx, 0);
	scsi_ua_raise_all(fx_dev, NULL, 0x2a, 0x09);
	scsi_nexus_unregister(&fx_nx.nx);
	struct th_nexus again;
	th_nexus_init(&again, "iqn.1994-05.com.example:init1", 1, &fx_dev, 1);
	struct th_result r = do_tur(&again);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	/* a different target port is a different I_T nexus */
	struct th_nexus other;
	th_nexus_init(&other, "iqn.1994-05.com.example:init1", 9, &fx_dev, 1);
	r = do_tur(&other);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x00);
	scsi_nexus_unregister(&again.nx);
	scsi_nexus_unregister(&other.nx);
	scsi_nexus_register(&fx_nx.nx);
}

static bool only_init2(const char *port, uint16_t rtpi, void *arg)
{
	(void)rtpi;
	return strstr(port, (const char *)arg) != NULL;
}

BOTH_STORES(ua, raise_match)
{
	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	scsi_ua_raise_match(fx_dev, only_init2, "init2", 0x2a, 0x03);
	cr_assert_eq(do_tur(&fx_nx).status, SAM_STAT_GOOD);
	struct th_result r = do_tur(&fx_nx2);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x03);
}

BOTH_STORES(ua, request_sense_descriptor_format)
{
	uint8_t cdb[6] = {0x03, 1, 0, 0, 252, 0}, b[252];
	struct th_result r = th_exec(&fx_nx, 0, cdb, 6, SCSI_DIR_READ, b, 252);
	cr_assert_eq(r.status, SAM_STAT_GOOD);
	cr_assert_eq(b[0], 0x72);
	cr_assert_eq(b[1], SK_UNIT_ATTENTION);
	cr_assert_eq(b[2], 0x29);
	cr_assert_eq(do_tur(&fx_nx).status, SAM_STAT_GOOD, "REQUEST SENSE cleared it");
}

BOTH_STORES(ua, capacity_change_on_resize)
{
	th_clear_ua(&fx_nx, 0);
	th_clear_ua(&fx_nx2, 0);
	uint64_t old = fx_dev->nr_blocks;
	scsi_dev_resize(fx_dev);
	cr_assert_eq(fx_dev->nr_blocks, old);
	cr_assert_eq(do_tur(&fx_nx).status, SAM_STAT_GOOD, "no change, no UA");
	if (fx_dev->bs->filename[0]) {
		/* the file shrinks below the configured size (growing it would not change a LU
		 * whose size is configured) */
		cr_assert_eq(truncate(fx_dev->bs->filename, 512 << 10), 0);
	} else {
		/* a memory store reports through bs->size (shrinking keeps it in bounds) */
		fx_dev->bs->size = 512 << 10;
	}
	scsi_dev_resize(fx_dev);
	cr_assert_neq(fx_dev->nr_blocks, old);
	struct th_result r = do_tur(&fx_nx);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
	r = do_tur(&fx_nx2);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x2a, 0x09);
}
