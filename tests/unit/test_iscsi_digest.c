/* CRC32C for iSCSI digests: the RFC 3720 appendix B.4 vectors, the wire byte order, and the
 * incremental and iovec forms agreeing with the one-shot one. */
#include <criterion/criterion.h>
#include <string.h>

#include "transports/iscsi/iscsi_digest.h"

static void expect_wire(uint32_t crc, const uint8_t want[4])
{
	uint8_t got[4];

	iscsi_digest_put(got, crc);
	cr_assert_eq(memcmp(got, want, 4), 0, "digest bytes %02x %02x %02x %02x", got[0], got[1],
		     got[2], got[3]);
	cr_assert_eq(iscsi_digest_get(got), crc);
}

Test(iscsi_digest, rfc3720_zeros)
{
	uint8_t b[32] = {0};
	const uint8_t want[4] = {0xaa, 0x36, 0x91, 0x8a};

	expect_wire(iscsi_crc32c(b, sizeof(b)), want);
}

Test(iscsi_digest, rfc3720_ones)
{
	uint8_t b[32];
	const uint8_t want[4] = {0x43, 0xab, 0xa8, 0x62};

	memset(b, 0xff, sizeof(b));
	expect_wire(iscsi_crc32c(b, sizeof(b)), want);
}

Test(iscsi_digest, rfc3720_incrementing)
{
	uint8_t b[32];
	const uint8_t want[4] = {0x4e, 0x79, 0xdd, 0x46};

	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	expect_wire(iscsi_crc32c(b, sizeof(b)), want);
}

Test(iscsi_digest, rfc3720_decrementing)
{
	uint8_t b[32];
	const uint8_t want[4] = {0x5c, 0xdb, 0x3f, 0x11};

	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	expect_wire(iscsi_crc32c(b, sizeof(b)), want);
}

Test(iscsi_digest, rfc3720_read10_pdu)
{
	static const uint8_t pdu[48] = {
	    0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	    0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	const uint8_t want[4] = {0x56, 0x3a, 0x96, 0xd9};

	expect_wire(iscsi_crc32c(pdu, sizeof(pdu)), want);
}

Test(iscsi_digest, check_value)
{
	/* the catalogue "check" value of CRC-32C over "123456789" */
	cr_assert_eq(iscsi_crc32c("123456789", 9), 0xe3069283u);
}

Test(iscsi_digest, incremental_and_iov_agree)
{
	uint8_t b[1000];
	uint32_t crc;
	struct iovec iov[3];

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 3);
	crc = iscsi_crc32c_update(ISCSI_CRC32C_INIT, b, 1);
	crc = iscsi_crc32c_update(crc, b + 1, 500);
	crc = iscsi_crc32c_update(crc, b + 501, 499);
	cr_assert_eq(iscsi_crc32c_final(crc), iscsi_crc32c(b, sizeof(b)));
	iov[0] = (struct iovec){b, 10};
	iov[1] = (struct iovec){b + 10, 0};
	iov[2] = (struct iovec){b + 10, 990};
	cr_assert_eq(iscsi_crc32c_iov(iov, 3, 0), iscsi_crc32c(b, sizeof(b)));
}

Test(iscsi_digest, iov_pad_counts_zero_bytes)
{
	uint8_t b[8] = {1, 2, 3, 4, 5, 0, 0, 0};
	struct iovec iov = {b, 5};

	/* a 5-byte segment is digested with its 3 pad bytes */
	cr_assert_eq(iscsi_crc32c_iov(&iov, 1, 3), iscsi_crc32c(b, 8));
	cr_assert_neq(iscsi_crc32c_iov(&iov, 1, 0), iscsi_crc32c(b, 8));
}
