/* Helpers for the EXTENDED COPY tests (test_spc_xcopy*.c): LUs seen by a nexus, parameter
 * list builders, and block I/O through the nexus to put and check data. */
#ifndef UTGT_TEST_XCOPY_HARNESS_H
#define UTGT_TEST_XCOPY_HARNESS_H

#include "scsi_harness.h"

#include "scsi/spc_xcopy.h"

/* CSCD identification descriptor (E4h) naming dev by its NAA 6 designator. */
static inline uint32_t xc_cscd(uint8_t *d, const struct scsi_dev *dev)
{
	memset(d, 0, 32);
	d[0] = XC_CSCD_ID;
	d[1] = 0x00; /* peripheral device type 0 */
	d[4] = 0x01; /* code set binary */
	d[5] = 0x03; /* association LU, designator type NAA */
	d[7] = 16;
	scsi_dev_naa(dev, d + 8);
	put_be24(d + 29, dev->block_size);
	return 32;
}

/* Block to block segment descriptor (02h). */
static inline uint32_t xc_seg(uint8_t *d, uint16_t src, uint16_t dst, uint16_t nblocks,
			      uint64_t src_lba, uint64_t dst_lba, bool dc)
{
	memset(d, 0, 28);
	d[0] = XC_SEG_BLOCK_TO_BLOCK;
	d[1] = dc ? 0x02 : 0;
	put_be16(d + 2, 0x18);
	put_be16(d + 4, src);
	put_be16(d + 6, dst);
	put_be16(d + 10, nblocks);
	put_be64(d + 12, src_lba);
	put_be64(d + 20, dst_lba);
	return 28;
}

static inline void xc_header(uint8_t *p, uint8_t list_id, uint8_t usage, uint16_t tdl, uint32_t sdl)
{
	memset(p, 0, 16);
	p[0] = list_id;
	p[1] = (uint8_t)(usage << 3);
	put_be16(p + 2, tdl);
	put_be32(p + 8, sdl);
}

/* A list copying nblocks from src (CSCD 0) to dst (CSCD 1). */
static inline uint32_t xc_simple(uint8_t *p, uint8_t list_id, const struct scsi_dev *src,
				 const struct scsi_dev *dst, uint16_t nblocks, uint64_t slba,
				 uint64_t dlba)
{
	xc_header(p, list_id, XC_LID_HOLD, 64, 28);
	xc_cscd(p + 16, src);
	xc_cscd(p + 48, dst);
	xc_seg(p + 80, 0, 1, nblocks, slba, dlba, false);
	return 108;
}

static inline struct th_result xc_exec(struct th_nexus *n, uint64_t lun, const uint8_t *p,
				       uint32_t len)
{
	uint8_t cdb[16] = {0x83, 0x00};

	put_be32(cdb + 10, len);
	return th_exec(n, lun, cdb, 16, SCSI_DIR_WRITE, (void *)p, len);
}

static inline struct th_result xc_results(struct th_nexus *n, uint64_t lun, uint8_t sa,
					  uint8_t list_id, uint8_t *buf, uint32_t alloc)
{
	uint8_t cdb[16] = {0x84, sa, list_id};

	put_be32(cdb + 10, alloc);
	memset(buf, 0xee, alloc);
	return th_exec(n, lun, cdb, 16, SCSI_DIR_READ, buf, alloc);
}

/* WRITE(16)/READ(16) of nblocks at lba through the nexus. */
static inline struct th_result xc_rw(struct th_nexus *n, uint64_t lun, bool write, uint64_t lba,
				     uint32_t nblocks, void *buf, uint32_t bs)
{
	uint8_t cdb[16] = {write ? 0x8a : 0x88};

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, nblocks);
	return th_exec(n, lun, cdb, 16, write ? SCSI_DIR_WRITE : SCSI_DIR_READ, buf, nblocks * bs);
}

/* A recognisable pattern: byte i of block b. */
static inline void xc_fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7 + (i >> 9) * 13);
}

#define xc_assert_good(x)                                                                          \
	do {                                                                                       \
		struct th_result _r = (x);                                                         \
		cr_assert_eq(_r.status, SAM_STAT_GOOD, "status %#x key %#x asc %#x/%#x",           \
			     _r.status, th_sense_key(&_r), th_asc(&_r), th_ascq(&_r));             \
	} while (0)

#endif
