/* RDMA/CM: each thread's event channel, the listeners (thread 0), connection requests handed
 * to the least loaded thread, and the events that move a connection through its states.
 *
 * Without RDMA/CM (no rdma_ucm module, no device) the channel cannot be made: that is logged
 * once and retried on every tick, as are listeners that cannot bind yet (no device has the
 * address), so utgtd may start before the RDMA device exists. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/ut_log.h"
#include "transports/rdma/rdma_int.h"

static void cm_ready(struct ut_watch *w, uint32_t events)
{
	(void)events;
	rdma_cm_events((struct rdma_thread *)((char *)w - offsetof(struct rdma_thread, cm_watch)));
}

static int open_channel(struct rdma_thread *t)
{
	int fl;

	if (t->cm)
		return 0;
	t->cm = rdma_create_event_channel();
	if (!t->cm)
		return -1;
	t->cm_watch.fn = cm_ready;
	t->cm_watch.fd = t->cm->fd;
	fl = fcntl(t->cm->fd, F_GETFL);
	if (fl < 0 || fcntl(t->cm->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    ut_thread_watch(t->ut, &t->cm_watch, EPOLLIN)) {
		rdma_destroy_event_channel(t->cm);
		t->cm = NULL;
		return -1;
	}
	return 0;
}

static void open_listeners(struct rdma_thread *t)
{
	struct rdma_srv *s = t->srv;

	for (unsigned i = 0; i < s->cfg.nlisten; i++) {
		struct rdma_cm_id *id;
		char a[64];
		int e = 0;

		if (t->listen_id[i])
			continue;
		rdma_format_addr(&s->cfg.listen[i], a, sizeof(a));
		if (rdma_create_id(t->cm, &id, NULL, RDMA_PS_TCP)) {
			e = errno;
		} else if (rdma_bind_addr(id, (struct sockaddr *)&s->cfg.listen[i]) ||
			   rdma_listen(id, 128)) {
			e = errno;
			rdma_destroy_id(id);
		}
		if (e) {
			if (t->listen_err[i] != e)
				rdma_log(s, LOG_WARNING, "listen %s: %s (retrying)", a,
					 strerror(e));
			t->listen_err[i] = e;
			continue;
		}
		t->listen_id[i] = id;
		t->listen_err[i] = 0;
		rdma_log(s, LOG_INFO, "listening on %s (RDMA/CM)", a);
	}
}

static void tick_conns(struct rdma_thread *t)
{
	struct rdma_conn *c, *nx;

	if (!t->srv->ops->tick)
		return;
	for (c = t->conns; c; c = c->next)
		c->busy++;
	for (c = t->conns; c; c = nx) {
		nx = c->next;
		if (c->upper_knows && c->state <= RDMA_CONN_LIVE)
			t->srv->ops->tick(c);
	}
	for (c = t->conns; c; c = nx) {
		nx = c->next;
		c->busy--;
		rdma_conn_maybe_free(c);
	}
}

void rdma_cm_tick(struct rdma_thread *t)
{
	struct rdma_srv *s = t->srv;

	tick_conns(t);
	if (atomic_load(&s->closing))
		return;
	if (open_channel(t)) {
		if (t->idx == 0 && !t->no_cm_logged) {
			rdma_log(s, LOG_NOTICE,
				 "no RDMA device (RDMA/CM unavailable: %s); serving nothing until "
				 "one appears",
				 strerror(errno));
			t->no_cm_logged = true;
		}
		return;
	}
	if (t->idx == 0) {
		struct ibv_context **devs;

		if (t->no_cm_logged)
			rdma_log(s, LOG_INFO, "RDMA/CM available");
		t->no_cm_logged = false;
		open_listeners(t);
		/* librdmacm keeps every device it has seen open until a look at the device list
		 * finds it gone; a removal (rdma link delete) waits for that on drivers without
		 * disassociation, such as rxe.  Looking once a second lets go of removed ones. */
		devs = rdma_get_devices(NULL);
		if (devs)
			rdma_free_devices(devs);
	}
}

void rdma_cm_close_listeners(struct rdma_thread *t)
{
	for (unsigned i = 0; i < RDMA_MAX_LISTEN; i++) {
		if (t->listen_id[i])
			rdma_destroy_id(t->listen_id[i]);
		t->listen_id[i] = NULL;
	}
}

/* ---- connection requests ---- */

static struct rdma_thread *pick_thread(struct rdma_srv *s)
{
	struct rdma_thread *best = &s->threads[0];

	for (unsigned i = 1; i < s->nthreads; i++) {
		struct rdma_thread *t = &s->threads[i];
		if (t->cm && t->nconns < best->nconns)
			best = t;
	}
	return best;
}

static void request_fn(struct ut_msg *m)
{
	struct rdma_conn *c = (struct rdma_conn *)((char *)m - offsetof(struct rdma_conn, req_msg));
	struct rdma_srv *s = c->srv;

	if (c->state == RDMA_CONN_REQUESTED && atomic_load(&s->closing))
		rdma_conn_reject(c, NULL, 0);
	if (c->state == RDMA_CONN_REQUESTED) {
		c->busy++;
		s->ops->request(c, &c->req);
		c->busy--;
		if (c->state == RDMA_CONN_REQUESTED) /* the upper layer decided nothing */
			rdma_conn_reject(c, NULL, 0);
	}
	rdma_conn_maybe_free(c);
}

static void connect_request(struct rdma_thread *t, struct rdma_cm_event *ev)
{
	struct rdma_srv *s = t->srv;
	struct rdma_thread *to;
	struct rdma_conn *c;

	if (atomic_load(&s->closing)) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	c = rdma_conn_new(s, ev->id, ev);
	if (!c) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	to = pick_thread(s);
	if (to != t && rdma_migrate_id(ev->id, to->cm)) {
		rdma_log(s, LOG_WARNING, "%s: cannot move to thread %u: %s", c->name, to->idx,
			 strerror(errno));
		to = t;
	}
	rdma_conn_attach(to, c);
	c->req_msg.fn = request_fn;
	ut_thread_post(to->ut, &c->req_msg);
}

/* ---- events ---- */

static bool is_listener(struct rdma_thread *t, struct rdma_cm_id *id, unsigned *idx)
{
	for (unsigned i = 0; i < RDMA_MAX_LISTEN; i++)
		if (t->listen_id[i] && t->listen_id[i] == id) {
			*idx = i;
			return true;
		}
	return false;
}

static void dispatch(struct rdma_thread *t, struct rdma_cm_event *ev)
{
	struct rdma_conn *c;
	unsigned li;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		connect_request(t, ev);
		return;
	}
	if (is_listener(t, ev->id, &li)) {
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			char a[64];

			rdma_format_addr(&t->srv->cfg.listen[li], a, sizeof(a));
			rdma_log(t->srv, LOG_WARNING, "listen %s: device removed (retrying)", a);
			rdma_destroy_id(ev->id);
			t->listen_id[li] = NULL;
		}
		return;
	}
	c = ev->id->context;
	if (!c)
		return;
	c->busy++;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_conn_established(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_conn_go_down(c, "peer disconnected");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (c->dev)
			c->dev->removing = true;
		rdma_conn_go_down(c, "device removed");
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		rdma_conn_go_down(c, rdma_event_str(ev->event));
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		break;
	}
	c->busy--;
	rdma_conn_maybe_free(c);
}

void rdma_cm_events(struct rdma_thread *t)
{
	struct rdma_cm_event *ev;

	while (t->cm && !rdma_get_cm_event(t->cm, &ev)) {
		/* A copy outlives the acknowledgement (rdma_destroy_id and rdma_migrate_id wait
		 * for it); the private data is copied by rdma_conn_new before that matters. */
		struct rdma_cm_event copy = *ev;
		uint8_t priv[256];

		if (copy.param.conn.private_data && copy.param.conn.private_data_len) {
			memcpy(priv, copy.param.conn.private_data,
			       copy.param.conn.private_data_len);
			copy.param.conn.private_data = priv;
		}
		rdma_ack_cm_event(ev);
		dispatch(t, &copy);
	}
}
