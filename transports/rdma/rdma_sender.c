/* Sender threads: chains moving much data (a large READ's response, a large WRITE's data-out
 * fetch) posted by a thread per CPU, each connection always by the same one
 * (cfg.handoff_bytes; rdma_int.h says why).  A sender only calls
 * ibv_post_send: the operations stay their connection's, their completions come to its event
 * thread as before, and their send queue room (sq_used) was taken when they were staged.
 * What must hold:
 *   - a connection's chains reach the device in the order they were staged: once one is
 *     queued, the connection's later ones follow it (ho_pending), and a sender posts a
 *     connection's chains in queue order;
 *   - a connection is never freed while a sender may touch it: going down takes its chains
 *     back (rdma_sender_take_back), waiting for one being posted at that moment, and a chain
 *     the device refused stays counted until its thread has failed it. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"

#define RDMA_MAX_SENDERS 64

/* Unlink c's posts from the list at *from, in order, into a list of their own. */
static struct rdma_post *unlink_conn(struct rdma_post **from, const struct rdma_conn *c)
{
	struct rdma_post *out = NULL, **end = &out;

	while (*from) {
		struct rdma_post *p = *from;

		if (p->c != c) {
			from = &p->next;
			continue;
		}
		*from = p->next;
		p->next = NULL;
		*end = p;
		end = &p->next;
	}
	return out;
}

/* c's queued posts out of s's queue, in order.  Under s->lock. */
static struct rdma_post *dequeue_conn(struct rdma_sender *s, const struct rdma_conn *c)
{
	struct rdma_post *out = unlink_conn(&s->head, c);

	s->tail = NULL;
	for (struct rdma_post *p = s->head; p; p = p->next)
		s->tail = p;
	return out;
}

/* After one ibv_post_send of the chain made of list (rc, bad as it returned): the posts the
 * device took whole are done; the one it stopped in and those after go to s->failed, each
 * unlinked from the next so that failing it stops at its own end.  Under s->lock. */
static void settle_posts(struct rdma_sender *s, struct rdma_post *list, int rc,
			 struct ibv_send_wr *bad)
{
	struct rdma_conn *c = list->c;
	struct rdma_post **fend = &s->failed;
	bool refused = false;

	while (*fend)
		fend = &(*fend)->next;
	while (list) {
		struct rdma_post *p = list;

		list = p->next;
		p->wr[p->nwr - 1].next = NULL;
		if (rc && !refused && (!bad || (bad >= &p->wr[0] && bad < &p->wr[p->nwr]))) {
			refused = true;
			p->bad = bad ? bad : &p->wr[0];
		} else if (refused) {
			p->bad = &p->wr[0];
		}
		if (!refused) {
			atomic_fetch_sub_explicit(&c->ho_pending, 1, memory_order_release);
			free(p);
			continue;
		}
		/* still pending: its thread fails it (rdma_sender_failed); oldest first */
		p->err = rc;
		p->next = NULL;
		*fend = p;
		fend = &p->next;
	}
	if (refused && c->t && c->t->ut && !atomic_exchange(&c->t->ho_msg_posted, true))
		ut_thread_post(c->t->ut, &c->t->ho_msg);
}

/* Everything queued for the connection at the head goes in one ibv_post_send: with rxe the
 * first 1,024 packets are sent in the call and the rest from a tasklet on this CPU, which
 * costs the CPU less than the system call does. */
static void *sender_main(void *arg)
{
	struct rdma_sender *s = arg;
	char name[16];

	snprintf(name, sizeof(name), "rdma-tx%u", s->idx % 1000u);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct rdma_post *list;
		struct ibv_send_wr *bad = NULL;
		struct rdma_conn *c;
		int rc;

		if (!s->head) {
			if (s->stop)
				break;
			pthread_cond_wait(&s->cv, &s->lock);
			continue;
		}
		c = s->head->c;
		list = dequeue_conn(s, c);
		for (struct rdma_post *p = list; p->next; p = p->next)
			p->wr[p->nwr - 1].next = &p->next->wr[0];
		s->posting = c;
		pthread_mutex_unlock(&s->lock);

		rc = ibv_post_send(c->qp, &list->wr[0], &bad);

		pthread_mutex_lock(&s->lock);
		s->posting = NULL;
		s->posts++;
		settle_posts(s, list, rc, bad);
		pthread_cond_broadcast(&s->cv); /* rdma_sender_take_back may wait for it */
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* One sender per CPU the process may run on (up to RDMA_MAX_SENDERS), each pinned to its CPU. */
int rdma_senders_start(struct rdma_srv *s)
{
	cpu_set_t allowed;
	int cpus[RDMA_MAX_SENDERS];
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < RDMA_MAX_SENDERS; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			cpus[n++] = cpu;
	if (n < 2)
		return 0; /* one CPU: nothing to spread over */
	s->senders = calloc(n, sizeof(*s->senders));
	if (!s->senders)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct rdma_sender *x = &s->senders[i];
		cpu_set_t one;
		int rc;

		x->srv = s;
		x->idx = i;
		x->cpu = cpus[i];
		pthread_mutex_init(&x->lock, NULL);
		pthread_cond_init(&x->cv, NULL);
		s->nsenders = i + 1;
		rc = pthread_create(&x->thr, NULL, sender_main, x);
		if (rc)
			return -rc;
		x->started = true;
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		if (pthread_setaffinity_np(x->thr, sizeof(one), &one))
			rdma_log(s, LOG_DEBUG, "sender %u: cannot pin to CPU %d", i, cpus[i]);
	}
	return 0;
}

void rdma_senders_stop(struct rdma_srv *s)
{
	for (unsigned i = 0; i < s->nsenders; i++) {
		struct rdma_sender *x = &s->senders[i];

		if (x->started) {
			pthread_mutex_lock(&x->lock);
			x->stop = true;
			pthread_cond_broadcast(&x->cv);
			pthread_mutex_unlock(&x->lock);
			pthread_join(x->thr, NULL);
		}
		/* every connection took its chains back before it was freed */
		free(x->failed);
		pthread_mutex_destroy(&x->lock);
		pthread_cond_destroy(&x->cv);
	}
	free(s->senders);
	s->senders = NULL;
	s->nsenders = 0;
}

/* The sender on the CPU the connection's commands come from (its cpu_hint: ib_srp's channel
 * k serves CPU k-1); NULL without a hint or a sender on that CPU.  With rxe the sender's send
 * work and the initiator's receive processing of it run in one context: on the submitting
 * CPU, the initiator completes its commands where it issued them, and the other CPU is left
 * to the other channel.  Measured in the guest against the CPU beside it: 1 MiB reads
 * (docs/srp.md, "Figures"). */
static struct rdma_sender *at_hint(struct rdma_srv *s, int hint)
{
	for (unsigned i = 0; i < s->nsenders && hint >= 0; i++)
		if (s->senders[i].cpu == hint)
			return &s->senders[i];
	return NULL;
}

/* The sender with the fewest connections: each connection's rxe work on a CPU of its own. */
static struct rdma_sender *fewest(struct rdma_srv *s)
{
	struct rdma_sender *best = NULL;

	for (unsigned i = 0; i < s->nsenders; i++) {
		struct rdma_sender *x = &s->senders[i];

		if (!best || atomic_load(&x->nconns) < atomic_load(&best->nconns))
			best = x;
	}
	return best;
}

struct rdma_sender *rdma_sender_pick(struct rdma_conn *c)
{
	struct rdma_srv *s = c->srv;
	struct rdma_sender *best;

	if (c->ho_sender || !s->nsenders)
		return c->ho_sender;
	best = at_hint(s, c->cpu_hint);
	if (!best)
		best = fewest(s);
	atomic_fetch_add(&best->nconns, 1);
	c->ho_sender = best;
	return best;
}

void rdma_sender_conn_gone(struct rdma_conn *c)
{
	if (c->ho_sender)
		atomic_fetch_sub(&c->ho_sender->nconns, 1);
	c->ho_sender = NULL;
}

int rdma_sender_queue(struct rdma_sender *s, struct rdma_conn *c, const struct ibv_send_wr *wr,
		      unsigned nwr)
{
	const struct ibv_send_wr *w;
	struct rdma_post *p;
	struct ibv_sge *sge;
	unsigned nsge = 0, i;

	for (w = wr, i = 0; w && i < nwr; w = w->next, i++)
		nsge += (unsigned)w->num_sge;
	p = malloc(sizeof(*p) + nwr * sizeof(p->wr[0]) + nsge * sizeof(*sge));
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->c = c;
	p->bad = NULL;
	p->err = 0;
	p->nwr = nwr;
	sge = (struct ibv_sge *)&p->wr[nwr];
	for (w = wr, i = 0; i < nwr; w = w->next, i++) {
		p->wr[i] = *w;
		p->wr[i].next = i + 1 < nwr ? &p->wr[i + 1] : NULL;
		if (w->num_sge) {
			memcpy(sge, w->sg_list, (size_t)w->num_sge * sizeof(*sge));
			p->wr[i].sg_list = sge;
			sge += w->num_sge;
		}
	}
	atomic_fetch_add_explicit(&c->ho_pending, 1, memory_order_relaxed);
	c->handoffs++;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = p;
	else
		s->head = p;
	s->tail = p;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

struct rdma_post *rdma_sender_take_back(struct rdma_conn *c)
{
	struct rdma_sender *s = c->ho_sender;
	struct rdma_post *out, **end;

	if (!s)
		return NULL;
	pthread_mutex_lock(&s->lock);
	while (s->posting == c)
		pthread_cond_wait(&s->cv, &s->lock);
	/* refused ones were dequeued before any still queued: they go first */
	out = unlink_conn(&s->failed, c);
	for (end = &out; *end; end = &(*end)->next)
		;
	*end = dequeue_conn(s, c);
	pthread_mutex_unlock(&s->lock);
	for (struct rdma_post *p = out; p; p = p->next)
		atomic_fetch_sub_explicit(&c->ho_pending, 1, memory_order_relaxed);
	return out;
}

void rdma_sender_failed(struct ut_msg *m)
{
	struct rdma_thread *t =
	    (struct rdma_thread *)((char *)m - offsetof(struct rdma_thread, ho_msg));
	struct rdma_srv *s = t->srv;

	atomic_store(&t->ho_msg_posted, false);
	for (unsigned i = 0; i < s->nsenders; i++) {
		struct rdma_sender *x = &s->senders[i];

		for (;;) {
			struct rdma_conn *c = NULL;
			int err = 0;

			pthread_mutex_lock(&x->lock);
			for (struct rdma_post *p = x->failed; p; p = p->next)
				if (p->c->t == t) {
					c = p->c;
					err = p->err;
					break;
				}
			pthread_mutex_unlock(&x->lock);
			if (!c)
				break;
			rdma_log(s, LOG_ERR, "%s: send post failed: %s", c->name, strerror(err));
			c->busy++;
			rdma_conn_go_down(c, "send post failed");
			rdma_conn_handoff_fail(c); /* already down: its chains still come back */
			c->busy--;
			rdma_conn_maybe_free(c);
		}
	}
}
