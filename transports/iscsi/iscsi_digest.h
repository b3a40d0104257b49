/* CRC32C (Castagnoli) as iSCSI HeaderDigest/DataDigest use it (RFC 7143 13.1, test vectors in
 * RFC 3720 appendix B.4).  ISA-L's crc32_iscsi() picks the CPU's crc32 instruction (and
 * PCLMULQDQ folding) at run time. */
#ifndef UTGT_ISCSI_DIGEST_H
#define UTGT_ISCSI_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define ISCSI_CRC32C_INIT 0xffffffffu

/* Incremental form: crc = iscsi_crc32c_update(ISCSI_CRC32C_INIT, ...) ... then
 * iscsi_crc32c_final(crc) gives the digest value. */
uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len);
static inline uint32_t iscsi_crc32c_final(uint32_t crc)
{
	return crc ^ 0xffffffffu;
}
/* One-shot digest of a buffer. */
uint32_t iscsi_crc32c(const void *buf, size_t len);
/* Digest of a data segment spread over iovecs, followed by `pad` zero bytes. */
uint32_t iscsi_crc32c_iov(const struct iovec *iov, int iovcnt, unsigned pad);

/* The digest goes on the wire least significant byte first (RFC 3720 B.4 shows the bytes). */
static inline void iscsi_digest_put(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}
static inline uint32_t iscsi_digest_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
