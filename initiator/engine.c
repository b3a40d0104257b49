/* Engine selection and the small synchronous helpers used while setting paths up. */
#include "initiator/engine.h"
#include "initiator/iscsi_url.h"
#include "initiator/srp_url.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t ub_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fio's engines that move blocks through the kernel: the block engine serves them all (sg,
 * io_uring_cmd and xnvme reach a device node the same way, without their pass-through). */
static const char *const kernel_engines[] = {
    "libaio", "io_uring", "psync", "sync",	   "pvsync", "pvsync2", "posixaio",
    "vsync",  "mmap",	  "block", "io_uring_cmd", "xnvme",  "sg",
};

const struct ub_engine *ub_engine_resolve(const char *ioengine, const char *filename, char *note,
					  size_t notelen, char *err, size_t errlen)
{
	bool kernel = false;

	note[0] = '\0';
	if (ub_is_srp_url(filename)) {
		if (ioengine[0] && strcmp(ioengine, "srp"))
			snprintf(note, notelen, "ioengine=%s replaced by srp for an srp: target",
				 ioengine);
		return &ub_engine_srp;
	}
	if (ub_is_iscsi_url(filename)) {
		if (ioengine[0] && strcmp(ioengine, "iscsi") && strcmp(ioengine, "libiscsi"))
			snprintf(note, notelen, "ioengine=%s replaced by iscsi for %s", ioengine,
				 "an iscsi:// or iser:// target");
		return &ub_engine_iscsi;
	}
	if (!strcmp(ioengine, "null") || !strcmp(ioengine, "cpp_null"))
		return &ub_engine_null;
	if (!ioengine[0] || !strcmp(ioengine, "iscsi") || !strcmp(ioengine, "libiscsi")) {
		if (ioengine[0]) {
			snprintf(err, errlen,
				 "ioengine=%s needs an iscsi:// or iser:// filename, got '%s'",
				 ioengine, filename);
			return NULL;
		}
		return &ub_engine_block;
	}
	for (size_t i = 0; i < sizeof(kernel_engines) / sizeof(kernel_engines[0]); i++)
		kernel |= !strcmp(ioengine, kernel_engines[i]);
	if (!kernel) {
		snprintf(err, errlen,
			 "ioengine=%s is not available (engines: iscsi, srp, block, null; fio's "
			 "kernel engines map to block); override with --ioengine=",
			 ioengine);
		return NULL;
	}
	if (strcmp(ioengine, "block") && strcmp(ioengine, "io_uring"))
		snprintf(note, notelen, "ioengine=%s served by the io_uring block engine",
			 ioengine);
	return &ub_engine_block;
}

bool ub_epath_wait(const struct ub_engine *e, struct ub_epath *p, const bool *flag,
		   uint64_t deadline_ns)
{
	while (!*flag) {
		struct pollfd pfd = {.fd = -1};
		uint64_t now = ub_now_ns();
		int ms;

		if (now >= deadline_ns)
			return false;
		ms = (int)((deadline_ns - now) / 1000000) + 1;
		if (ms > 100)
			ms = 100;
		if (e->pollfd(p, &pfd) > 0) {
			int n = poll(&pfd, 1, ms);
			if (n < 0 && errno != EINTR)
				return false;
			e->service(p, n > 0 ? pfd.revents : 0);
		} else {
			struct timespec ts = {0, (long)ms * 1000000};
			nanosleep(&ts, NULL);
			e->service(p, 0);
		}
		if (e->state(p) == UB_PS_DOWN && !*flag)
			return *flag;
	}
	return true;
}

struct sync_ctx {
	bool done;
};

static void sync_done(struct ub_io *io)
{
	((struct sync_ctx *)io->owner)->done = true;
}

enum ub_io_result ub_epath_scsi_in(const struct ub_engine *e, struct ub_epath *p,
				   const uint8_t *cdb, uint8_t cdb_len, void *buf, uint32_t len,
				   struct ub_io *out, uint64_t timeout_ns)
{
	struct sync_ctx c = {false};
	struct iovec iov = {buf, len};
	int rc;

	memset(out, 0, sizeof(*out));
	memcpy(out->cdb, cdb, cdb_len);
	out->cdb_len = cdb_len;
	out->xfer_len = len;
	out->iov = &iov;
	out->iovcnt = 1;
	out->done = sync_done;
	out->owner = &c;
	rc = e->submit(p, out);
	if (rc == -ENOTSUP)
		return out->result = UB_IO_NOT_SUPPORTED;
	if (rc < 0)
		return out->result = UB_IO_PATH_ERROR;
	if (!ub_epath_wait(e, p, &c.done, ub_now_ns() + timeout_ns)) {
		if (!c.done)
			e->disconnect(p, "command timed out during setup");
		if (!c.done)
			return out->result = UB_IO_PATH_ERROR;
	}
	out->iov = NULL;
	return out->result;
}
