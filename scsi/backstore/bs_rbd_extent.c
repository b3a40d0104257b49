/* GET LBA STATUS from librbd's allocated extents: see bs_rbd_extent.h. */
#include "scsi/backstore/bs_rbd_extent.h"

void bs_rbd_run_init(struct bs_rbd_run *r, uint64_t off, uint64_t len, uint32_t block)
{
	*r = (struct bs_rbd_run){.off = off, .end = off + len, .block = block ? block : 512};
}

bool bs_rbd_run_extent(struct bs_rbd_run *r, uint64_t off, uint64_t len, bool exists)
{
	/* the blocks the extent touches, inside the question */
	uint64_t s = off / r->block * r->block;
	uint64_t e = (off + len + r->block - 1) / r->block * r->block;

	if (r->decided || !exists || !len)
		return r->decided;
	if (s < r->off)
		s = r->off;
	if (e > r->end)
		e = r->end;
	if (e <= s || e <= r->off)
		return false;
	if (!r->started) {
		r->started = true;
		r->mapped = s <= r->off;
		r->edge = r->mapped ? e : s; /* mapped up to e, or a hole up to s */
		r->decided = !r->mapped;
	} else if (s <= r->edge) {
		if (e > r->edge)
			r->edge = e; /* contiguous: the mapped run goes on */
	} else {
		r->decided = true; /* a hole after the mapped run */
	}
	return r->decided;
}

void bs_rbd_run_result(const struct bs_rbd_run *r, bool *mapped, uint64_t *run)
{
	uint64_t edge = r->started ? r->edge : r->end;

	if (edge > r->end)
		edge = r->end;
	*mapped = r->started && r->mapped;
	*run = edge > r->off ? edge - r->off : r->end - r->off;
}
