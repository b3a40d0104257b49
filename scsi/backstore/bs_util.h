/* Helpers shared by the backstore implementations (not part of the backstore contract); the
 * iovec walkers also serve the SCSI core (scsi_data.c, sbc_rw.c). */
#ifndef UTGT_BS_UTIL_H
#define UTGT_BS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "scsi/backstore/backstore.h"

/* Total bytes described by an iovec array. */
size_t bs_iov_total(const struct iovec *iov, int iovcnt);

/* Copy between a flat buffer and an iovec array, starting `skip` bytes into the iovecs.
 * Returns the number of bytes copied (less than len when the iovecs run out). */
size_t bs_iov_to_buf(void *buf, const struct iovec *iov, int iovcnt, size_t skip, size_t len);
size_t bs_buf_to_iov(const struct iovec *iov, int iovcnt, size_t skip, const void *buf, size_t len);
/* Zero len bytes of the iovecs from `skip`. */
size_t bs_iov_zero(const struct iovec *iov, int iovcnt, size_t skip, size_t len);

/* Validate an io against the store before touching anything: range inside the store, data
 * buffers large enough, verb allowed on a read-only store.  BS_OK or the status to complete
 * with. */
enum bs_status bs_check_io(const struct backstore *bs, const struct bs_io *io);

/* The pattern block of a WRITE SAME: the first block_size bytes of io->iov flattened into
 * buf (zeros when the io carries no data: WRITE SAME with NDOB). */
void bs_write_same_block(const struct backstore *bs, const struct bs_io *io, void *buf);

/* The end of a resize: bytes cut to a block multiple, refused when that leaves nothing,
 * then published to the I/O path's range checks (an aligned store, read without a lock). */
int bs_set_size(struct backstore *bs, uint64_t bytes, char *err, size_t errlen);

/* Geometry checks every store applies at open. */
bool bs_valid_block_size(uint32_t bsz);
/* At open: an unset block size becomes 512; an unsupported one is refused with a message in
 * err (false). */
bool bs_open_block_size(struct backstore *bs, char *err, size_t errlen);

#endif
