/* CDB length and data direction from the opcode (see tcmu_cdb.h).  The data-out list is the
 * set of commands SPC-4/SBC-4 define with a Data-Out buffer, the ones our core serves and the
 * few others LIO may pass through; everything else that has data is data-in. */
#include "transports/tcmu/tcmu_cdb.h"

unsigned tcmu_cdb_len(const uint8_t *cdb)
{
	static const uint8_t by_group[8] = {6, 10, 10, 12, 16, 12, 10, 10};

	if (cdb[0] == 0x7f)
		return 8u + cdb[7];
	return by_group[cdb[0] >> 5];
}

bool tcmu_cdb_data_out(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case 0x04: /* FORMAT UNIT */
	case 0x07: /* REASSIGN BLOCKS */
	case 0x0a: /* WRITE(6) */
	case 0x15: /* MODE SELECT(6) */
	case 0x1d: /* SEND DIAGNOSTIC */
	case 0x2a: /* WRITE(10) */
	case 0x2e: /* WRITE AND VERIFY(10) */
	case 0x2f: /* VERIFY(10): data only with BYTCHK, then it is data-out */
	case 0x3b: /* WRITE BUFFER */
	case 0x41: /* WRITE SAME(10) */
	case 0x42: /* UNMAP */
	case 0x48: /* SANITIZE */
	case 0x4c: /* LOG SELECT */
	case 0x55: /* MODE SELECT(10) */
	case 0x5f: /* PERSISTENT RESERVE OUT */
	case 0x83: /* EXTENDED COPY */
	case 0x89: /* COMPARE AND WRITE */
	case 0x8a: /* WRITE(16) */
	case 0x8b: /* ORWRITE(16) */
	case 0x8e: /* WRITE AND VERIFY(16) */
	case 0x8f: /* VERIFY(16) */
	case 0x93: /* WRITE SAME(16) */
	case 0x9c: /* WRITE ATOMIC(16) */
	case 0xaa: /* WRITE(12) */
	case 0xae: /* WRITE AND VERIFY(12) */
	case 0xaf: /* VERIFY(12) */
	case 0xb5: /* SECURITY PROTOCOL OUT */
		return true;
	case 0xa4: /* MAINTENANCE OUT: SET TARGET PORT GROUPS and friends */
		return true;
	case 0x7f: /* variable length: WRITE(32), WRITE SAME(32), ... by service action */
		switch ((cdb[8] << 8) | cdb[9]) {
		case 0x000b: /* WRITE(32) */
		case 0x000c: /* WRITE AND VERIFY(32) */
		case 0x000a: /* VERIFY(32) */
		case 0x000d: /* WRITE SAME(32) */
		case 0x000e: /* ORWRITE(32) */
			return true;
		}
		return false;
	default:
		return false;
	}
}

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

bool tcmu_cdb_rw_lba(const uint8_t *cdb, uint64_t *lba)
{
	switch (cdb[0]) {
	case 0x08: /* READ(6) */
	case 0x0a: /* WRITE(6) */
		*lba = be(cdb + 1, 3) & 0x1fffff;
		return true;
	case 0x28: /* READ(10) */
	case 0x2a: /* WRITE(10) */
	case 0xa8: /* READ(12) */
	case 0xaa: /* WRITE(12) */
		*lba = be(cdb + 2, 4);
		return true;
	case 0x88: /* READ(16) */
	case 0x8a: /* WRITE(16) */
		*lba = be(cdb + 2, 8);
		return true;
	default:
		return false;
	}
}
