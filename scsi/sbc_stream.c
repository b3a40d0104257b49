/* A READ longer than the room its transport gave it, produced in pieces (the contract is in
 * scsi/scsi_task.h, "Data-in in pieces").  The command is one task from admission to status:
 * one range lock over the whole range, one task set entry, one status; only its backstore
 * reads are cut, into pieces of half the room, so at most the room is ever held for it however
 * long the transfer.  The transport sends each piece as it is handed over and gives its room
 * back once the socket took it, which lets the next piece be read: the backstore delivers and
 * the link drains at their own pace, two pieces overlapping.
 *
 * Everything that happens (a read completing, room given back, a stop) records itself under
 * the stream's lock and then runs pump(), which takes the next actions one at a time outside
 * the lock: hand over the next piece read, submit the next read that fits the room, or end
 * the command.  Only one thread pumps at a time (a caller that finds another pumping leaves
 * it a note), so a store that completes inside submit never recurses and the transport
 * never sees two din_ready calls at once. */
#include <pthread.h>
#include <stdlib.h>

#include "scsi/sbc.h"
#include "scsi/scsi_core.h"

struct sbc_piece {
	struct bs_io io;
	struct sbc_stream *s;
	uint32_t off, len; /* bytes of the transfer */
	bool busy;	   /* read submitted, not yet handed over (or still in the ring) */
	bool done;	   /* the read came back */
	enum bs_status st;
	struct iovec *iov; /* room for the ring's pieces plus a scratch tail */
};

struct sbc_stream {
	pthread_mutex_t mu;
	struct sbc_cmd *c;
	uint64_t off0;	/* byte offset of the first LBA in the store */
	uint32_t total; /* bytes the command moves */
	uint32_t piece; /* room / 2 */
	uint32_t room;
	uint32_t next;	 /* first byte not yet submitted */
	uint32_t handed; /* bytes handed over to the transport */
	uint32_t given;	 /* bytes given back */
	unsigned inflight;
	bool stop;   /* the transport will take nothing more */
	bool failed; /* a read failed or a TMF aborted the command: no more pieces */
	bool pumping, again;
	enum scsi_sr sr;
	uint32_t bsz;
	struct sbc_piece p[2];
};

void sbc_stream_free(struct sbc_stream *s)
{
	if (!s)
		return;
	for (int i = 0; i < 2; i++)
		free(s->p[i].iov);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static struct sbc_piece *slot_of(struct sbc_stream *s, uint32_t off)
{
	return &s->p[(off / s->piece) % 2];
}

static void piece_done(struct bs_io *io, enum bs_status st);

enum action { A_NONE, A_SUBMIT, A_HAND, A_FINISH };

/* Under s->mu: the next thing to do, with the piece it concerns. */
static enum action decide(struct sbc_stream *s, struct sbc_piece **pp)
{
	struct sbc_piece *p;

	if (s->handed < s->total && !s->failed && !s->stop) {
		p = slot_of(s, s->handed);
		/* the last piece stays in the ring: done() carries it with the status */
		if (p->busy && p->done && p->off == s->handed && p->off + p->len < s->total) {
			if (p->st != BS_OK) {
				s->failed = true;
				s->sr = scsi_sr_from_bs(p->st, false);
			} else {
				*pp = p;
				return A_HAND;
			}
		}
	}
	if (s->next < s->total && !s->failed && !s->stop &&
	    s->next + s->piece <= s->given + s->room) {
		p = slot_of(s, s->next);
		if (!p->busy) {
			*pp = p;
			return A_SUBMIT;
		}
	}
	if (s->inflight || s->given < s->handed)
		return A_NONE;
	if (s->failed || s->stop)
		return A_FINISH;
	p = slot_of(s, s->total - 1);
	if (s->next == s->total && p->done) {
		if (p->st != BS_OK) {
			s->failed = true;
			s->sr = scsi_sr_from_bs(p->st, false);
		}
		return A_FINISH;
	}
	return A_NONE;
}

/* Point p's read at [off, off + len) of the transfer: its place in the ring, and for the last
 * piece a scratch tail for the rest of a block the transfer ends inside. */
static void piece_build(struct sbc_stream *s, struct sbc_piece *p, uint32_t off, uint32_t len)
{
	struct scsi_task *t = s->c->t;
	uint32_t io_len = (len + s->bsz - 1) / s->bsz * s->bsz;
	int n = sbc_iov_slice(t, off % s->room, len, p->iov, t->iovcnt);

	if (io_len > len) {
		p->iov[n].iov_base = s->c->tail;
		p->iov[n].iov_len = io_len - len;
		n++;
	}
	memset(&p->io, 0, sizeof(p->io));
	p->io.op = BS_READ;
	p->io.off = s->off0 + off;
	p->io.len = io_len;
	p->io.iov = p->iov;
	p->io.iovcnt = n;
	p->io.cb = piece_done;
	p->io.priv = p;
	p->off = off;
	p->len = len;
	p->done = false;
	p->busy = true;
}

static void finish(struct sbc_stream *s)
{
	struct sbc_cmd *c = s->c;
	struct scsi_task *t = c->t;
	enum scsi_sr sr = s->stop ? SR_ABORTED : s->failed ? s->sr : SR_OK;

	sbc_cmd_free(c); /* the stream with it: nothing calls in any more */
	scsi_task_complete(t, sr);
}

static void pump(struct sbc_stream *s)
{
	struct scsi_task *t = s->c->t;

	pthread_mutex_lock(&s->mu);
	if (s->pumping) {
		s->again = true;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	s->pumping = true;
	for (;;) {
		struct sbc_piece *p = NULL;
		enum action a;
		uint32_t off, len;

		s->again = false;
		a = decide(s, &p);
		if (a == A_NONE) {
			s->pumping = false;
			pthread_mutex_unlock(&s->mu);
			return;
		}
		if (a == A_FINISH) {
			pthread_mutex_unlock(&s->mu);
			finish(s);
			return;
		}
		if (a == A_HAND) {
			off = p->off;
			len = p->len;
			s->handed += len;
			p->busy = false; /* its room is the transport's until given back */
			pthread_mutex_unlock(&s->mu);
			t->din_ready(t, off, len);
		} else {
			off = s->next;
			len = s->total - off < s->piece ? s->total - off : s->piece;
			piece_build(s, p, off, len);
			s->next += len;
			s->inflight++;
			pthread_mutex_unlock(&s->mu);
			/* a TMF that aborted the command stops it before its next read */
			if (off && scsi_ts_aborted(t->core.dev->ts, t)) {
				pthread_mutex_lock(&s->mu);
				s->inflight--;
				p->busy = false;
				s->failed = true;
				s->sr = SR_ABORTED;
				continue;
			}
			s->c->dev->bs->ops->submit(s->c->dev->bs, &p->io);
		}
		pthread_mutex_lock(&s->mu);
	}
}

static void piece_done(struct bs_io *io, enum bs_status st)
{
	struct sbc_piece *p = io->priv;
	struct sbc_stream *s = p->s;

	pthread_mutex_lock(&s->mu);
	p->done = true;
	p->st = st;
	s->inflight--;
	pthread_mutex_unlock(&s->mu);
	pump(s);
}

static void stream_resume(struct sbc_cmd *c)
{
	pump(c->stream);
}

static struct sbc_stream *stream_of(struct scsi_task *t)
{
	struct sbc_cmd *c = t->core.ctx;

	return c ? c->stream : NULL;
}

void scsi_task_din_sent(struct scsi_task *t, uint32_t upto)
{
	struct sbc_stream *s = stream_of(t);

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	if (upto > s->given && upto <= s->handed)
		s->given = upto;
	pthread_mutex_unlock(&s->mu);
	pump(s);
}

void scsi_task_din_stop(struct scsi_task *t)
{
	struct sbc_stream *s = stream_of(t);

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	s->given = s->handed;
	pthread_mutex_unlock(&s->mu);
	pump(s);
}

enum scsi_sr sbc_read_stream(struct scsi_task *t, const struct sbc_cdb *cdb, uint32_t bytes,
			     size_t room)
{
	struct scsi_dev *dev = t->core.dev;
	uint32_t bsz = dev->block_size;
	struct sbc_stream *s;
	struct sbc_cmd *c;

	if (room < SCSI_DIN_ROOM_MIN || room % SCSI_DIN_ROOM_ALIGN || (room / 2) % bsz)
		return SR_INTERNAL_ERROR; /* the transport broke the contract of scsi_task.h */
	c = sbc_cmd_new(t);
	s = c ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		sbc_cmd_free(c);
		return SR_NO_MEMORY;
	}
	c->stream = s;
	pthread_mutex_init(&s->mu, NULL);
	s->c = c;
	s->off0 = cdb->lba * bsz;
	s->total = bytes;
	s->room = (uint32_t)room;
	s->piece = s->room / 2;
	s->bsz = bsz;
	for (int i = 0; i < 2; i++) {
		s->p[i].s = s;
		s->p[i].iov = calloc((size_t)t->iovcnt + 1, sizeof(struct iovec));
		if (!s->p[i].iov) {
			sbc_cmd_free(c);
			return SR_NO_MEMORY;
		}
	}
	if (bytes % bsz) {
		c->tail = malloc(bsz - bytes % bsz);
		if (!c->tail) {
			sbc_cmd_free(c);
			return SR_NO_MEMORY;
		}
	}
	if (sbc_range_lock(c, cdb->lba, ((uint64_t)bytes + bsz - 1) / bsz, false, stream_resume))
		pump(s);
	return SR_ASYNC;
}
