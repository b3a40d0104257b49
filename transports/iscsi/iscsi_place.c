/* Connection placement: after login, move a connection to the worker that serves the other
 * connections to its target.  The paths of one LU then share one core, so the LU's state
 * (task set, locks, counters) is not pulled between CPUs on every command; measured on
 * loopback this halves the CPU per I/O of two and four paths (docs/performance.md, issue 16).
 * A group holds at most ISCSIT_PLACE_GROUP_MAX connections on one worker: beyond that the
 * connections stay where accept spread them, so many sessions still use every core.
 *
 * The hand-off is a message between the two loops, at the one moment a connection holds
 * nothing of its worker: its final login answer has left (the transport's output is empty),
 * no command has been read (input is paused from the login answer on), no task, TMF or
 * message names it.  The old worker unlinks it, stops watching its link and posts it to the
 * new one, which watches the link and resumes input: what the initiator sent meanwhile waits
 * in the socket.  c->w changes under ctx->sess_lock and the message is posted under it, so a
 * thread that finds c through its session (and posts to c->w under the same lock) reaches the
 * new worker, behind the hand-off, since one inbox keeps the order of its posts. */
#include <string.h>

#include "transports/iscsi/iscsi_int.h"

unsigned iscsit_place_pick(const unsigned *group_on, unsigned n, unsigned cur, unsigned max)
{
	unsigned best = cur, most = group_on[cur] < max ? group_on[cur] : 0;

	for (unsigned i = 0; i < n; i++) {
		if (i != cur && group_on[i] < max && group_on[i] > most) {
			best = i;
			most = group_on[i];
		}
	}
	return best;
}

/* Where a connection runs, or is about to (caller holds sess_lock). */
static struct iscsit_worker *where(const struct iscsit_conn *c)
{
	return c->move_to ? c->move_to : c->w;
}

bool iscsit_place_decide(struct iscsit_conn *c)
{
	struct iscsit_ctx *ctx = c->ctx;
	unsigned group_on[256] = {0};
	unsigned to;

	if (!c->tgt || !c->xp->attach || ctx->nworkers < 2 || ctx->nworkers > 256 ||
	    ctx->placement == ISCSIT_PLACE_SPREAD)
		return false;
	pthread_mutex_lock(&ctx->sess_lock);
	for (const struct iscsit_session *s = ctx->sessions; s; s = s->next)
		if (s->conn && s->conn != c && s->tgt && !strcmp(s->tgt->name, c->tgt->name))
			group_on[where(s->conn)->idx]++;
	to = iscsit_place_pick(group_on, ctx->nworkers, c->w->idx, ISCSIT_PLACE_GROUP_MAX);
	if (to != c->w->idx) {
		c->move_to = &ctx->workers[to];
		/* counted now, as accept counts its pick, so the next login sees it */
		atomic_fetch_sub(&c->w->nconns, 1);
		atomic_fetch_add(&c->move_to->nconns, 1);
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	if (!c->move_to)
		return false;
	iscsit_dbg("conn %llu: moves from worker %u to worker %u (%u of its target's there)",
		   (unsigned long long)c->id, c->w->idx, to, group_on[to]);
	iscsit_conn_pause(c);
	return true;
}

/* Caller holds sess_lock. */
static void give_back(struct iscsit_conn *c)
{
	atomic_fetch_sub(&c->move_to->nconns, 1);
	atomic_fetch_add(&c->w->nconns, 1);
	c->move_to = NULL;
}

void iscsit_place_cancel(struct iscsit_conn *c)
{
	if (!c->move_to)
		return;
	pthread_mutex_lock(&c->ctx->sess_lock);
	give_back(c);
	pthread_mutex_unlock(&c->ctx->sess_lock);
}

static void arrive_fn(struct ut_msg *m)
{
	struct iscsit_conn *c =
	    (struct iscsit_conn *)((char *)m - offsetof(struct iscsit_conn, move_msg));
	struct iscsit_worker *w = c->w;
	int rc;

	iscsit_worker_link(w, c);
	c->last_rx = iscsit_now(w);
	rc = c->xp->attach(c);
	iscsit_log("conn %llu: %s moved to worker %u on cpu %d, with the other connections to %s",
		   (unsigned long long)c->id, c->peer_str, w->idx, w->ut.cpu, c->tgt->name);
	if (rc)
		iscsit_conn_close(c, "cannot watch the link on its new worker");
	else if (atomic_load(&c->ctx->stopping))
		iscsit_conn_close(c, "target shutting down");
	else
		iscsit_conn_resume(c);
}

void iscsit_place_move(struct iscsit_conn *c)
{
	struct iscsit_ctx *ctx = c->ctx;
	struct iscsit_worker *from = c->w;
	bool go;

	pthread_mutex_lock(&ctx->sess_lock);
	/* A message posted to this worker that names c (a close from another login, the
	 * administrator) must find it here; nothing else can hold c yet, but check. */
	go = c->state == CONN_FFP && !atomic_load(&c->refs) && !c->ntasks && !c->ntmf;
	if (go) {
		c->xp->detach(c);
		iscsit_worker_unlink(from, c);
		c->w = c->move_to;
		c->move_to = NULL;
		c->move_msg.fn = arrive_fn;
		ut_thread_post(&c->w->ut, &c->move_msg);
	} else {
		give_back(c);
	}
	pthread_mutex_unlock(&ctx->sess_lock);
	if (!go)
		iscsit_conn_resume(c);
}
