/* One TCMU device (see tcmu_dev.h): ring entries become scsi_tasks whose iovecs point
 * straight into the kernel's data area (zero copy), and task completions go back into the
 * ring in the order the ring allows (tcmu_ring.c decides).
 *
 * Completions are written into the ring by whichever thread completes the task (a backstore's
 * reaper, a core worker, the poller itself), under the device's mutex, which the poller also
 * takes around each entry it parses: no hand-off to the event thread, whose wakeup (an
 * eventfd write, an epoll return, a read) cost more than the completion itself.  The kick
 * that tells the kernel is made right there too, except for completions inside
 * tcmu_dev_poll() (the poller's caller kicks once for all of them, tcmu_dev_reap()).
 *
 * Task management: with tmr_notification=1 LIO queues a TMR entry after it aborted commands
 * that are in the ring; it answers the TMF to the initiator only once each of them came back
 * through the ring (or its cmd_time_out fired).  Each command the entry names becomes the
 * core's ABORT TASK on this device's nexus (the task's tag is its cmd_id), so a command queued
 * or parked in the core ends at once and one in a backstore ends when its I/O does; either
 * way it is completed once, as TASK ABORTED (LIO ignores the status of an aborted command).
 * The entry names exactly the commands LIO aborted, so a LUN reset aborts those and nothing
 * else: another LIO device backed by the same DEVICE keeps its commands, and LIO, not utgt,
 * raises the reset's UNIT ATTENTION.
 *
 * A second ring thread (tcmu_dev_set_second_thread()): the ring thread wakes it when entries
 * wait behind the one it just took, and from then on both take entries (one at a time, under
 * the device's mutex) and run them, each on its own vCPU, until the ring is empty; each ends
 * its run with one kick for the completions it made.  A lone command (QD1) never wakes it.
 * A command is parsed under the mutex and given to the core a moment later: a TMR entry the
 * other thread parses in between marks it (tmr_named) and its own thread completes it as
 * aborted instead of running it (in_core says which side of that moment it is on). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "scsi/scsi_lun.h"
#include "scsi/scsi_task.h"
#include "common/ut_log.h"
#include "transports/tcmu/tcmu_cdb.h"
#include "transports/tcmu/tcmu_dev.h"
#include "transports/tcmu/tcmu_ring.h"

#define IOV_INLINE 16
#define FREE_MAX   64 /* finished commands kept for reuse (no malloc/free per command) */
/* A thread's run kicks early once its commands moved this much data: a kick makes LIO copy
 * every finished READ out of the data area, and the commands behind need not wait for that */
#define KICK_BYTES (256u << 10)

struct tcmu_cmd {
	struct scsi_task task;
	struct tcmu_dev *dev;
	struct tcmu_req req;
	struct tcmu_cmd *next;		   /* tcmu_dev_close(): the held ones; the free list */
	struct tcmu_cmd *fl_prev, *fl_next; /* in flight, under the device's mu */
	/* where it is (mu): parsed, then held (parked by hang_lba: never given to the core until
	 * a TMR aborts it or the device closes) or in the core */
	bool hold;			   /* hang_lba picked it (decided when parsed) */
	bool held;
	bool in_core;
	bool tmr_named;			   /* a TMR aborted it already */
	uint32_t iov_cap;
	struct iovec iov[];
};

/* Counters: written under mu or on the owner thread (tmf_left by TMF completions on core
 * threads), read by the admin thread; relaxed atomics. */
#define CNT_ADD(f, n) __atomic_fetch_add(&(f), (n), __ATOMIC_RELAXED)
#define CNT_GET(f)    __atomic_load_n(&(f), __ATOMIC_RELAXED)

struct tcmu_dev {
	char name[64];
	struct tcmu_ring ring;
	struct tcmu_dev_hooks hooks;
	struct scsi_nexus nx;
	struct scsi_lun_entry lun0;
	struct scsi_lun_table luns;
	unsigned inflight; /* under mu (stats read it atomically) */
	unsigned tmf_left; /* ABORT TASKs given to the core and not yet done (atomic) */
	bool closing;
	struct tcmu_cmd *fl_head; /* commands in flight, for TMRs to find by cmd_id (mu) */
	uint64_t hang_lba;	  /* fault injection; UINT64_MAX: off */
	uint64_t hang_hits;
	struct {
		uint64_t cmds, completions, aborted, tmrs, tmr_cmds, held, polled, allocs, second,
		    second_wakes;
	} st;
	struct tcmu_cmd *spare; /* reused for the next entry (the ring thread's) */
	struct {		/* the second ring thread (tcmu_dev_set_second_thread) */
		bool on;
		bool active; /* in its run (atomic): the ring thread need not wake it */
		bool work, stop; /* (h.mu) */
		pthread_t th;
		pthread_mutex_t mu;
		pthread_cond_t cv;
		struct tcmu_cmd *spare; /* its own next command */
	} h;
	struct tcmu_cmd *free;	/* finished commands of IOV_INLINE iovecs, for reuse (mu) */
	unsigned nfree;		/* (mu) */
	/* the ring (parsing and completing), the in-flight list and count, kick_owed, the free
	 * list */
	pthread_mutex_t mu;
	bool kick_owed; /* the tail moved during tcmu_dev_poll(): tcmu_dev_reap() kicks */
	bool kick_large; /* ...and it covers a large READ (dev_kick) */
	unsigned kick_want; /* kicks asked for since the running one began (atomic; dev_kick) */
};

static struct tcmu_cmd *cmd_alloc(struct tcmu_dev *d, uint32_t niov)
{
	struct tcmu_cmd *c;

	if (niov <= IOV_INLINE) {
		pthread_mutex_lock(&d->mu);
		c = d->free;
		if (c) {
			d->free = c->next;
			d->nfree--;
		}
		pthread_mutex_unlock(&d->mu);
		if (c)
			return c; /* every field a command uses is set when it is parsed */
		niov = IOV_INLINE;
	}
	c = calloc(1, sizeof(*c) + niov * sizeof(struct iovec));
	if (!c)
		return NULL;
	CNT_ADD(d->st.allocs, 1);
	c->dev = d;
	c->iov_cap = niov;
	return c;
}

struct tcmu_dev *tcmu_dev_new(const char *name, void *map, size_t size, struct scsi_dev *sdev,
			      uint32_t max_xfer, const struct tcmu_dev_hooks *hooks, char *err,
			      size_t errlen)
{
	struct tcmu_dev *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (tcmu_ring_init(&d->ring, map, size, name, err, errlen) < 0) {
		free(d);
		return NULL;
	}
	d->hooks = *hooks;
	d->hang_lba = UINT64_MAX;
	pthread_mutex_init(&d->mu, NULL);
	d->lun0 = (struct scsi_lun_entry){.lun = 0, .dev = sdev};
	d->luns = (struct scsi_lun_table){.n = 1, .e = &d->lun0};
	/* LIO does not tell us who the initiator is (it keeps PR and ACLs itself); one nexus
	 * per TCMU device, named after it.  The protocol is the fabric's once a fabric LUN links
	 * to the device (tcmu_dev_set_proto()); SAS until then. */
	d->nx.proto = SCSI_PROTO_SAS;
	snprintf(d->nx.initiator_name, sizeof(d->nx.initiator_name), "lio-tcmu");
	snprintf(d->nx.initiator_port, sizeof(d->nx.initiator_port), "lio-tcmu,%s", name);
	d->nx.rel_tgt_id = 1;
	d->nx.luns = &d->luns;
	d->nx.max_xfer_bytes = max_xfer; /* VPD B0 must not promise more than LIO takes */
	d->nx.transport_priv = d;
	scsi_nexus_register(&d->nx);
	ut_log(LOG_INFO,
		"tcmu %s: ring of %u bytes at %u, data area %zu bytes, mailbox flags 0x%x: %s "
		"completion%s; commands up to %u bytes (0: no limit)",
		name, d->ring.cmdr_size, d->ring.cmdr_off, size - (size_t)d->ring.data_off,
		d->ring.flags, d->ring.oooc ? "out-of-order" : "in-order",
		d->ring.read_len ? ", read length reported" : "", max_xfer);
	return d;
}

int tcmu_dev_set_proto(struct tcmu_dev *d, int proto)
{
	/* a plain word commands read once each; the fabric changes while they run */
	return (int)__atomic_exchange_n(&d->nx.proto, (enum scsi_proto_id)proto, __ATOMIC_RELAXED);
}

static void fl_add(struct tcmu_dev *d, struct tcmu_cmd *c)
{
	c->fl_prev = NULL;
	c->fl_next = d->fl_head;
	if (d->fl_head)
		d->fl_head->fl_prev = c;
	d->fl_head = c;
}

static void fl_del(struct tcmu_dev *d, struct tcmu_cmd *c)
{
	if (c->fl_prev)
		c->fl_prev->fl_next = c->fl_next;
	else
		d->fl_head = c->fl_next;
	if (c->fl_next)
		c->fl_next->fl_prev = c->fl_prev;
}

/* A kick's write() runs LIO's completion of every entry up to cmd_tail under the ring's
 * cmdr_lock, and for a READ that is the copy out of the data area: for a large READ the lock
 * is held a long time, and a second thread kicking meanwhile would only spin on it.  So a kick
 * that covers a large READ, and any kick asked for while such a kick runs, is one at a time:
 * a thread that wants one while another's runs leaves it to that one, which kicks once more
 * when it is done (its next write() sees every completion written before the request).  Small
 * completions kick at once (serializing them too measured 0.93x at 4 KiB QD32 reads). */
static void dev_kick(struct tcmu_dev *d, bool large)
{
	unsigned n;

	if (!d->hooks.kick)
		return;
	if (!large && !__atomic_load_n(&d->kick_want, __ATOMIC_ACQUIRE)) {
		d->hooks.kick(d->hooks.ctx);
		return;
	}
	if (__atomic_fetch_add(&d->kick_want, 1, __ATOMIC_ACQ_REL))
		return;
	for (;;) {
		d->hooks.kick(d->hooks.ctx);
		n = 1;
		if (__atomic_compare_exchange_n(&d->kick_want, &n, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return;
		/* asked again while it ran: one more for all of them */
		while (!__atomic_compare_exchange_n(&d->kick_want, &n, 1, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE))
			;
	}
}

/* The device whose tcmu_dev_poll() runs on this thread: its inline completions leave the
 * kick to tcmu_dev_reap(), one for all of them. */
static __thread const struct tcmu_dev *tl_polling;

static void cmd_done(struct scsi_task *t)
{
	struct tcmu_cmd *c = t->priv;
	struct tcmu_dev *d = c->dev;
	struct tcmu_rsp rsp = {
	    .status = t->aborted ? SAM_STAT_TASK_ABORTED : t->status,
	    .sense = t->sense,
	    .sense_len = t->status == SAM_STAT_CHECK_CONDITION ? t->sense_len : 0,
	    /* underflow of a read: LIO trims what it sends to the initiator */
	    .read_len_valid = t->dir == SCSI_DIR_READ && t->data_len < t->exp_xfer_len,
	    .read_len = t->data_len,
	};
	bool closing, large = t->dir == SCSI_DIR_READ && t->exp_xfer_len >= KICK_BYTES;
	int rc;

	pthread_mutex_lock(&d->mu);
	rc = tcmu_ring_complete(&d->ring, &c->req, &rsp);
	if (rc < 0)
		ut_log(LOG_ERR,
			"tcmu %s: completion of cmd_id %u refused: not in flight (a second "
			"completion)",
			d->name, c->req.cmd_id);
	else
		CNT_ADD(d->st.completions, 1);
	if (t->aborted)
		CNT_ADD(d->st.aborted, 1);
	if (tl_polling == d)
		CNT_ADD(d->st.polled, 1);
	if (rc > 0) {
		if (tl_polling == d) {
			d->kick_owed = true;
			d->kick_large |= large;
		} else {
			dev_kick(d, large);
		}
	}
	fl_del(d, c);
	__atomic_fetch_sub(&d->inflight, 1, __ATOMIC_RELAXED);
	closing = d->closing;
	/* a closing device is freed once inflight reads 0 under mu: wake its owner while the
	 * mutex still keeps it */
	if (closing && d->hooks.wake)
		d->hooks.wake(d->hooks.ctx);
	if (c->iov_cap == IOV_INLINE && d->nfree < FREE_MAX) {
		c->next = d->free;
		d->free = c;
		d->nfree++;
		c = NULL;
	}
	pthread_mutex_unlock(&d->mu);
	free(c);
}

/* An entry we cannot run: answer CHECK CONDITION without the core. */
static void refuse(struct tcmu_cmd *c)
{
	struct scsi_task *t = &c->task;
	uint8_t key = 0x04, asc = 0x44; /* HARDWARE ERROR, INTERNAL TARGET FAILURE */

	if (c->req.err == TCMU_REQ_BIDI || c->req.err == TCMU_REQ_TOO_LONG)
		key = 0x05, asc = 0x24; /* ILLEGAL REQUEST, INVALID FIELD IN CDB */
	t->priv = c;
	t->status = SAM_STAT_CHECK_CONDITION;
	tcmu_sense_fixed(t->sense, key, asc, 0);
	t->sense_len = 18;
	cmd_done(t);
}

/* hang_lba: every other READ/WRITE starting there is held (the first, the third...). */
static bool hang(struct tcmu_dev *d, const struct tcmu_cmd *c)
{
	uint64_t lba;

	if (d->hang_lba == UINT64_MAX || !tcmu_cdb_rw_lba(c->req.cdb, &lba) || lba != d->hang_lba)
		return false;
	return d->hang_hits++ % 2 == 0;
}

/* A command the core never saw, aborted (held by hang_lba, or named by a TMR before its
 * thread gave it to the core): it completes here. */
static void abort_unrun(struct tcmu_dev *d, struct tcmu_cmd *c, bool held)
{
	c->task.priv = c;
	c->task.aborted = true;
	c->task.status = SAM_STAT_TASK_ABORTED;
	if (held)
		ut_log(LOG_NOTICE, "tcmu %s: held cmd_id %u aborted", d->name, c->req.cmd_id);
	else
		ut_log(LOG_NOTICE, "tcmu %s: cmd_id %u aborted before it ran", d->name,
			c->req.cmd_id);
	cmd_done(&c->task);
}

static void submit(struct tcmu_dev *d, struct tcmu_cmd *c)
{
	struct scsi_task *t = &c->task;
	bool held, aborted;

	memset(t, 0, sizeof(*t));
	if (c->req.err) {
		refuse(c);
		return;
	}
	memcpy(t->cdb, c->req.cdb, c->req.cdb_len);
	t->cdb_len = c->req.cdb_len;
	t->lun = 0;
	t->nexus = &d->nx;
	t->attr = SCSI_ATTR_SIMPLE;
	t->tag = c->req.cmd_id;
	t->exp_xfer_len = (uint32_t)c->req.len;
	t->dir = !c->req.len			 ? SCSI_DIR_NONE
		 : tcmu_cdb_data_out(c->req.cdb) ? SCSI_DIR_WRITE
						 : SCSI_DIR_READ;
	t->iov = c->iov;
	t->iovcnt = (int)c->req.iovcnt;
	t->done = cmd_done;
	t->priv = c;
	/* a READ/WRITE the page cache answers completes right here, on the ring thread (no
	 * hop to an I/O thread, one kick for the poll: the QD1 path); with a second ring thread
	 * a buffered WRITE may wait here too: the other thread keeps serving the ring */
	t->inline_io = true;
	t->inline_wait = d->h.on;
	t->inline_large = true;
	pthread_mutex_lock(&d->mu);
	aborted = c->tmr_named; /* the other ring thread parsed a TMR naming it */
	held = !aborted && c->hold && !d->closing;
	c->held = held;
	c->in_core = !held && !aborted;
	pthread_mutex_unlock(&d->mu);
	if (held) {
		CNT_ADD(d->st.held, 1);
		ut_log(LOG_WARNING,
			"tcmu %s: cmd_id %u (LBA %llu) held by fault injection hang_lba until a "
			"task management function aborts it",
			d->name, c->req.cmd_id, (unsigned long long)d->hang_lba);
		return;
	}
	if (aborted) {
		abort_unrun(d, c, false);
		return;
	}
	scsi_task_execute(t);
}

static void tmf_done(struct scsi_tmf *tmf)
{
	struct tcmu_dev *d = tmf->priv;
	struct tcmu_dev_hooks h = d->hooks; /* the owner's, which outlive the device */

	free(tmf);
	/* the last touch of d: once tmf_left is 0 the owner may free it */
	__atomic_fetch_sub(&d->tmf_left, 1, __ATOMIC_RELEASE);
	if (h.wake)
		h.wake(h.ctx);
}

static struct tcmu_cmd *fl_find(struct tcmu_dev *d, uint16_t cmd_id)
{
	for (struct tcmu_cmd *c = d->fl_head; c; c = c->fl_next)
		if (c->req.cmd_id == cmd_id)
			return c;
	return NULL;
}

/* The command may complete (and be freed) at any time: only its id is used. */
static void abort_in_core(struct tcmu_dev *d, uint16_t cmd_id)
{
	struct scsi_tmf *tmf = calloc(1, sizeof(*tmf));

	if (!tmf) {
		/* it still completes, on its own; LIO waits for it (or times it out) */
		ut_log(LOG_ERR, "tcmu %s: out of memory aborting cmd_id %u", d->name, cmd_id);
		return;
	}
	tmf->fn = SCSI_TMF_ABORT_TASK;
	tmf->lun = 0;
	tmf->ref_tag = cmd_id;
	tmf->nexus = &d->nx;
	tmf->done = tmf_done;
	tmf->priv = d;
	__atomic_fetch_add(&d->tmf_left, 1, __ATOMIC_RELAXED);
	scsi_tmf_execute(tmf); /* may complete c (cmd_done) before it returns */
}

static void handle_tmr(struct tcmu_dev *d, const struct tcmu_tmr *m)
{
	unsigned ours = 0;

	CNT_ADD(d->st.tmrs, 1);
	scsi_nexus_count_tmf(&d->nx);
	for (uint32_t i = 0; i < m->n; i++) {
		struct tcmu_cmd *c;
		bool held = false, in_core = false;

		pthread_mutex_lock(&d->mu);
		c = fl_find(d, m->ids[i]);
		/* not found: we completed it before LIO built the list.  Neither held nor in
		 * the core: a refused entry (completed already), or one the other ring thread
		 * is about to give to the core (it sees tmr_named and aborts it instead) */
		if (c && !c->tmr_named) {
			c->tmr_named = true;
			ours++;
			held = c->held;
			c->held = false; /* ours now: nobody else completes a held command */
			in_core = c->in_core;
		}
		pthread_mutex_unlock(&d->mu);
		if (held)
			abort_unrun(d, c, true);
		else if (in_core)
			abort_in_core(d, m->ids[i]);
	}
	CNT_ADD(d->st.tmr_cmds, ours);
	ut_log(LOG_NOTICE,
		"tcmu %s: task management notification: %s, %u command(s) aborted by LIO, %u of "
		"them still ours",
		d->name, tcmu_tmr_name(m->type), m->n, ours);
}

static void *second_main(void *arg);

static void second_wake(struct tcmu_dev *d)
{
	if (__atomic_exchange_n(&d->h.active, true, __ATOMIC_ACQ_REL))
		return; /* in its run: it takes entries until the ring is empty */
	CNT_ADD(d->st.second_wakes, 1);
	pthread_mutex_lock(&d->h.mu);
	d->h.work = true;
	pthread_cond_signal(&d->h.cv);
	pthread_mutex_unlock(&d->h.mu);
}

/* A TMR entry's list, copied out under mu (the other ring thread may parse the next one). */
static int tmr_copy(const struct tcmu_tmr *m, struct tcmu_tmr *out)
{
	*out = (struct tcmu_tmr){.type = m->type, .n = m->n};
	if (!m->n)
		return 0;
	out->ids = malloc(m->n * sizeof(*out->ids));
	if (!out->ids)
		return -1;
	memcpy(out->ids, m->ids, m->n * sizeof(*out->ids));
	out->cap = m->n;
	return 0;
}

/* Take what the kernel queued and run it on this thread until the ring is empty; *spare is
 * this thread's next command.  The ring thread (second = false) calls the second thread in
 * when entries wait behind the one it took. */
static unsigned take_and_run(struct tcmu_dev *d, struct tcmu_cmd **spare, bool second)
{
	unsigned n = 0;
	uint64_t bytes = 0;

	tl_polling = d;
	for (;;) {
		struct tcmu_cmd *c = *spare;
		struct tcmu_tmr tmr;
		enum tcmu_next r;
		bool more = false, tmr_ok = true;

		if (!c && !(c = *spare = cmd_alloc(d, IOV_INLINE)))
			break; /* out of memory: the entries wait in the ring */
		c->req.iov = c->iov;
		c->req.iov_cap = c->iov_cap;
		pthread_mutex_lock(&d->mu); /* completers move the tail meanwhile */
		if (d->closing) {	    /* (under mu: nothing is taken once close returned) */
			pthread_mutex_unlock(&d->mu);
			break;
		}
		r = tcmu_ring_next(&d->ring, &c->req);
		if (r == TCMU_NEXT_CMD) {
			c->tmr_named = c->in_core = c->held = false;
			c->hold = !c->req.err && hang(d, c);
			fl_add(d, c);
			CNT_ADD(d->inflight, 1);
			more = !second && d->h.on && tcmu_ring_pending(&d->ring);
		} else if (r == TCMU_NEXT_TMR) {
			tmr_ok = tmr_copy(&d->ring.tmr, &tmr) == 0;
		}
		pthread_mutex_unlock(&d->mu);
		if (r == TCMU_NEXT_TMR) {
			if (tmr_ok)
				handle_tmr(d, &tmr);
			else /* its commands still complete on their own; LIO waits for them */
				ut_log(LOG_ERR, "tcmu %s: out of memory for a TMR entry; ignored",
					d->name);
			free(tmr.ids);
			continue;
		}
		if (r == TCMU_NEXT_IOV_ROOM) {
			struct tcmu_cmd *b = cmd_alloc(d, c->req.iovcnt);
			if (!b)
				break;
			free(c);
			*spare = b;
			continue;
		}
		if (r != TCMU_NEXT_CMD)
			break;
		*spare = NULL;
		CNT_ADD(d->st.cmds, 1);
		if (second)
			CNT_ADD(d->st.second, 1);
		if (more)
			second_wake(d);
		bytes += c->req.len; /* (c may be finished and reused once submitted) */
		submit(d, c);
		n++;
		if (bytes >= KICK_BYTES) {
			tcmu_dev_reap(d);
			bytes = 0;
		}
	}
	tl_polling = NULL;
	return n;
}

unsigned tcmu_dev_poll(struct tcmu_dev *d)
{
	return take_and_run(d, &d->spare, false);
}

unsigned tcmu_dev_poll_second(struct tcmu_dev *d)
{
	return take_and_run(d, &d->h.spare, true);
}

/* The second ring thread: woken by the ring thread, it takes entries beside it until the ring
 * is empty, then kicks once for what it completed. */
static void *second_main(void *arg)
{
	struct tcmu_dev *d = arg;

	pthread_setname_np(pthread_self(), "tcmu-ring2");
	pthread_mutex_lock(&d->h.mu);
	for (;;) {
		while (!d->h.work && !d->h.stop)
			pthread_cond_wait(&d->h.cv, &d->h.mu);
		if (d->h.stop)
			break;
		d->h.work = false;
		pthread_mutex_unlock(&d->h.mu);
		tcmu_dev_poll_second(d);
		tcmu_dev_reap(d);
		__atomic_store_n(&d->h.active, false, __ATOMIC_RELEASE);
		pthread_mutex_lock(&d->h.mu);
	}
	pthread_mutex_unlock(&d->h.mu);
	return NULL;
}

int tcmu_dev_set_second_thread(struct tcmu_dev *d)
{
	int rc;

	if (d->h.on)
		return 0;
	pthread_mutex_init(&d->h.mu, NULL);
	pthread_cond_init(&d->h.cv, NULL);
	rc = pthread_create(&d->h.th, NULL, second_main, d);
	if (rc) {
		pthread_cond_destroy(&d->h.cv);
		pthread_mutex_destroy(&d->h.mu);
		return -rc;
	}
	d->h.on = true;
	return 0;
}

unsigned tcmu_dev_reap(struct tcmu_dev *d)
{
	bool kick, large;

	pthread_mutex_lock(&d->mu);
	kick = d->kick_owed;
	large = d->kick_large;
	d->kick_owed = d->kick_large = false;
	pthread_mutex_unlock(&d->mu);
	/* outside mu: the kick's write runs LIO's completion of every entry it finds (for a
	 * READ the copy out of the data area), and the other ring thread and the completers
	 * need mu meanwhile; the caller owns the device, so it is not freed under us */
	if (kick)
		dev_kick(d, large);
	return kick;
}

unsigned tcmu_dev_inflight(const struct tcmu_dev *d)
{
	struct tcmu_dev *w = (struct tcmu_dev *)d;
	unsigned n;

	/* under mu: a completer that made it 0 has left the device when we see it */
	pthread_mutex_lock(&w->mu);
	n = d->inflight;
	pthread_mutex_unlock(&w->mu);
	return n + __atomic_load_n(&d->tmf_left, __ATOMIC_ACQUIRE);
}

void tcmu_dev_set_hang_lba(struct tcmu_dev *d, uint64_t lba)
{
	d->hang_lba = lba;
}

void tcmu_dev_get_stats(const struct tcmu_dev *d, struct tcmu_dev_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->ring_bytes = d->ring.cmdr_size;
	o->data_bytes = d->ring.size - d->ring.data_off;
	o->flags = d->ring.flags;
	o->inflight = CNT_GET(((struct tcmu_dev *)d)->inflight);
	o->cmds = CNT_GET(d->st.cmds);
	o->completions = CNT_GET(d->st.completions);
	o->aborted = CNT_GET(d->st.aborted);
	o->tmrs = CNT_GET(d->st.tmrs);
	o->tmr_cmds = CNT_GET(d->st.tmr_cmds);
	o->held = CNT_GET(d->st.held);
	o->polled = CNT_GET(d->st.polled);
	o->refused = CNT_GET(d->ring.refused);
	o->allocs = CNT_GET(d->st.allocs);
	o->second = CNT_GET(d->st.second);
	o->second_wakes = CNT_GET(d->st.second_wakes);
}

bool tcmu_dev_broken(const struct tcmu_dev *d)
{
	return d->ring.broken;
}

bool tcmu_dev_pending(struct tcmu_dev *d)
{
	bool p;

	pthread_mutex_lock(&d->mu); /* the second thread moves the ring's fetch point too */
	p = !d->closing && tcmu_ring_pending(&d->ring);
	pthread_mutex_unlock(&d->mu);
	return p;
}

void tcmu_dev_close(struct tcmu_dev *d)
{
	struct tcmu_cmd *held = NULL;

	pthread_mutex_lock(&d->mu);
	d->closing = true;
	/* nobody will abort the held ones now: run them so the drain ends */
	for (struct tcmu_cmd *c = d->fl_head; c; c = c->fl_next)
		if (c->held) { /* (one still on its way to being held runs: closing) */
			c->held = false;
			c->in_core = true;
			c->next = held;
			held = c;
		}
	pthread_mutex_unlock(&d->mu);
	while (held) {
		struct tcmu_cmd *c = held;
		held = c->next;
		scsi_task_execute(&c->task);
	}
}

void tcmu_dev_free(struct tcmu_dev *d)
{
	if (!d)
		return;
	if (d->h.on) {
		pthread_mutex_lock(&d->h.mu);
		d->h.stop = true;
		pthread_cond_signal(&d->h.cv);
		pthread_mutex_unlock(&d->h.mu);
		pthread_join(d->h.th, NULL);
		pthread_cond_destroy(&d->h.cv);
		pthread_mutex_destroy(&d->h.mu);
	}
	free(d->h.spare);
	scsi_nexus_unregister(&d->nx);
	tcmu_ring_fini(&d->ring);
	pthread_mutex_destroy(&d->mu);
	free(d->spare);
	while (d->free) {
		struct tcmu_cmd *c = d->free;
		d->free = c->next;
		free(c);
	}
	free(d);
}
