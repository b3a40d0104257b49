/* Fixture shared by the SCSI core / SPC unit tests: one LU (ramdisk or fileio) seen by one or
 * two nexuses, and BOTH_STORES() to run a test body on each store. */
#ifndef UTGT_TEST_SPC_FIXTURE_H
#define UTGT_TEST_SPC_FIXTURE_H

#include "scsi_harness.h"

#include "scsi/scsi_core.h"

static struct scsi_dev *fx_dev;
static struct th_nexus fx_nx, fx_nx2;
static const char *fx_handler;

static void fx_open(const char *handler, uint64_t size, uint32_t bs)
{
	fx_handler = handler;
	fx_dev = th_make_dev(handler, "fx0", size, bs);
	th_nexus_init(&fx_nx, "iqn.1994-05.com.example:init1", 1, &fx_dev, 1);
	th_nexus_init(&fx_nx2, "iqn.1994-05.com.example:init2", 2, &fx_dev, 1);
}

static void fx_close(void)
{
	scsi_nexus_unregister(&fx_nx.nx);
	scsi_nexus_unregister(&fx_nx2.nx);
	if (fx_dev && fx_dev->bs && fx_dev->bs->filename[0])
		unlink(fx_dev->bs->filename);
	scsi_dev_destroy(fx_dev);
	fx_dev = NULL;
	scsi_core_shutdown();
}

static void fx_init_ram(void)
{
	fx_open("ramdisk", 1 << 20, 512);
}
static void fx_init_file(void)
{
	fx_open("vdisk_fileio", 1 << 20, 512);
}

/* BOTH_STORES(suite, name) { body } : the body runs as suite_ram/name and suite_file/name. */
#define BOTH_STORES(suite, name)                                                                   \
	static void name##_body(void);                                                             \
	Test(suite##_ram, name, .init = fx_init_ram, .fini = fx_close)                             \
	{                                                                                          \
		name##_body();                                                                     \
	}                                                                                          \
	Test(suite##_file, name, .init = fx_init_file, .fini = fx_close)                           \
	{                                                                                          \
		name##_body();                                                                     \
	}                                                                                          \
	static void name##_body(void)

/* Field pointer in fixed sense data: SKSV set, C/D, BPV+bit (bit < 0: no BPV), byte. */
#define fx_assert_sks(r, cd, bit, field)                                                           \
	do {                                                                                       \
		uint8_t want_ = (uint8_t)(0x80 | ((cd) ? 0x40 : 0) |                               \
					  ((bit) >= 0 ? 0x08 | (bit) : 0));                        \
		cr_assert_eq((r).sense[15], want_, "SKS byte %#x want %#x", (r).sense[15], want_); \
		cr_assert_eq(get_be16((r).sense + 16), (field), "field %u want %u",                \
			     get_be16((r).sense + 16), (unsigned)(field));                         \
	} while (0)

#endif
