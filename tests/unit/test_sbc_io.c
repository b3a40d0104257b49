/* Synchronous I/O helpers for worker-run SBC commands: data-out compare and slicing across
 * iovecs, WRITE SAME emulation on a store without the verb, chunked deallocation. */
#include "tests/unit/sbc_test.h"

static struct scsi_task *iov_task(struct iovec *iov, int n)
{
	struct scsi_task *t = calloc(1, sizeof(*t));

	t->iov = iov;
	t->iovcnt = n;
	return t;
}

Test(io, compare_across_iovecs)
{
	uint8_t a[10], b[1], c[30], ref[41];
	struct iovec iov[3] = {{a, 10}, {b, 1}, {c, 30}};
	struct scsi_task *t = iov_task(iov, 3);

	for (int i = 0; i < 41; i++)
		ref[i] = (uint8_t)i;
	memcpy(a, ref, 10);
	memcpy(b, ref + 10, 1);
	memcpy(c, ref + 11, 30);
	cr_assert_eq(sbc_iov_cmp(t, 0, ref, 41), 41);
	cr_assert_eq(sbc_iov_cmp(t, 5, ref + 5, 36), 36);
	for (int at = 0; at < 41; at++) {
		ref[at] ^= 0x80;
		cr_assert_eq(sbc_iov_cmp(t, 0, ref, 41), (size_t)at);
		if (at >= 7)
			cr_assert_eq(sbc_iov_cmp(t, 7, ref + 7, 34), (size_t)(at - 7));
		ref[at] ^= 0x80;
	}
	free(t);
}

Test(io, slice)
{
	uint8_t a[10], b[1], c[30];
	struct iovec iov[3] = {{a, 10}, {b, 1}, {c, 30}}, out[3];
	struct scsi_task *t = iov_task(iov, 3);

	cr_assert_eq(sbc_iov_slice(t, 0, 41, out, 3), 3);
	cr_assert_eq(sbc_iov_slice(t, 9, 3, out, 3), 3);
	cr_assert(out[0].iov_base == a + 9 && out[0].iov_len == 1);
	cr_assert(out[1].iov_base == b && out[1].iov_len == 1);
	cr_assert(out[2].iov_base == c && out[2].iov_len == 1);
	cr_assert_eq(sbc_iov_slice(t, 11, 30, out, 1), 1);
	cr_assert(out[0].iov_base == c && out[0].iov_len == 30);
	cr_assert_eq(sbc_iov_slice(t, 0, 41, out, 2), -1, "needs three");
	cr_assert_eq(sbc_iov_slice(t, 20, 30, out, 3), -1, "runs past the buffer");
	free(t);
}

/* A ramdisk that refuses BS_WRITE_SAME. */
static void nows_submit(struct backstore *bs, struct bs_io *io)
{
	if (io->op == BS_WRITE_SAME) {
		io->cb(io, BS_ENOTSUP);
		return;
	}
	spy_submit(bs, io);
}

static const struct backstore_ops nows_ops = {
	.name = "nows",
	.open = spy_open,
	.close = spy_close,
	.submit = nows_submit,
};

Test(io, fill_without_write_same)
{
	struct sbc_fx fx;
	uint8_t blk[512];

	fx_init_ops(&fx, &nows_ops);
	for (int i = 0; i < 512; i++)
		blk[i] = (uint8_t)(i ^ 0x5a);
	cr_assert_eq(sbc_fill_sync(fx.dev, 3, 5000, blk, false), BS_OK);
	cr_assert_geq(atomic_load(&spy.writes), 3, "5000 blocks in 1 MiB writes");
	for (uint64_t lba = 3; lba < 5003; lba += 999) {
		uint8_t rd[512];

		cr_assert_eq(fx_read(&fx, lba, 1, rd).status, SAM_STAT_GOOD);
		cr_assert(!memcmp(rd, blk, 512), "LBA %llu", (unsigned long long)lba);
	}
	fx_expect(&fx, 2, 1, 0);
	fx_expect(&fx, 5003, 1, 0);
	fx_fini(&fx);
}

Test(io, long_unmap_in_chunks)
{
	struct scsi_dev_params p;
	struct backstore *b = calloc(1, sizeof(*b));
	struct scsi_dev *dev;
	char err[128];

	memset(&p, 0, sizeof(p));
	memset(&spy, 0, sizeof(spy));
	snprintf(p.name, sizeof(p.name), "big");
	b->ops = &spy_ops;
	b->size = 3ull << 30; /* untouched: costs nothing */
	b->block_size = 512;
	dev = scsi_dev_new(&p, b);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sbc_unmap_sync(dev, 0, dev->nr_blocks), BS_OK);
	cr_assert_eq(atomic_load(&spy.unmaps), 3, "1 GiB per deallocation");
	cr_assert_eq(sbc_io_sync(dev, BS_FLUSH, 0, 0, NULL, false), BS_OK);
	cr_assert_eq(atomic_load(&spy.flushes), 1);
	scsi_dev_destroy(dev);
}
