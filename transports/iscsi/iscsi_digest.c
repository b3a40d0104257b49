/* CRC32C through ISA-L.  crc32_iscsi() takes an int length, so long buffers go in slices. */
#include "transports/iscsi/iscsi_digest.h"

#include <isa-l/crc.h>
#include <limits.h>

uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	unsigned char *p = (unsigned char *)(uintptr_t)buf;

	while (len) {
		size_t n = len > (size_t)INT_MAX / 2 ? (size_t)INT_MAX / 2 : len;

		crc = crc32_iscsi(p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

uint32_t iscsi_crc32c(const void *buf, size_t len)
{
	return iscsi_crc32c_final(iscsi_crc32c_update(ISCSI_CRC32C_INIT, buf, len));
}

uint32_t iscsi_crc32c_iov(const struct iovec *iov, int iovcnt, unsigned pad)
{
	static const uint8_t zeros[4];
	uint32_t crc = ISCSI_CRC32C_INIT;

	for (int i = 0; i < iovcnt; i++)
		crc = iscsi_crc32c_update(crc, iov[i].iov_base, iov[i].iov_len);
	if (pad)
		crc = iscsi_crc32c_update(crc, zeros, pad & 3);
	return iscsi_crc32c_final(crc);
}
