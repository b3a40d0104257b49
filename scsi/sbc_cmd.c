/* The per-command context of SBC commands that outlive their handler call (asynchronous I/O,
 * range-locked work): allocated when the command starts, freed just before it completes. */
#include <stdlib.h>

#include "scsi/sbc.h"

struct sbc_cmd *sbc_cmd_new(struct scsi_task *t)
{
	struct sbc_cmd *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->t = t;
	c->dev = t->core.dev;
	c->io.priv = c;
	t->core.ctx = c;
	return c;
}

void sbc_cmd_free(struct sbc_cmd *c)
{
	if (!c)
		return;
	sbc_range_unlock(c);
	sbc_stream_free(c->stream);
	if (c->t && c->t->core.ctx == c)
		c->t->core.ctx = NULL;
	if (c->iov != c->iov_small)
		free(c->iov);
	free(c->tail);
	free(c);
}

static struct sbc_link *link_of(struct sbc_cmd *c, size_t link)
{
	return (struct sbc_link *)((char *)c + link);
}

void sbc_list_add(struct sbc_list *l, struct sbc_cmd *c, size_t link)
{
	struct sbc_link *k = link_of(c, link);

	k->next = NULL;
	k->prev = l->tail;
	if (l->tail)
		link_of(l->tail, link)->next = c;
	else
		l->head = c;
	l->tail = c;
}

void sbc_list_del(struct sbc_list *l, struct sbc_cmd *c, size_t link)
{
	struct sbc_link *k = link_of(c, link);

	if (k->prev)
		link_of(k->prev, link)->next = k->next;
	else
		l->head = k->next;
	if (k->next)
		link_of(k->next, link)->prev = k->prev;
	else
		l->tail = k->prev;
	k->next = k->prev = NULL;
}

/* ---- range-locked work on a core worker ---- */

static enum scsi_sr locked_trampoline(struct scsi_task *t)
{
	struct sbc_cmd *c = sbc_cmd_of(t);
	enum scsi_sr sr = c->work(t);

	sbc_cmd_free(c); /* unlocks before the task completes */
	return sr;
}

static void locked_resume(struct sbc_cmd *c)
{
	struct scsi_task *t = c->t;
	enum scsi_sr sr = scsi_run_blocking(t, locked_trampoline);

	if (sr != SR_ASYNC) {
		sbc_cmd_free(c);
		scsi_task_complete(t, sr);
	}
}

enum scsi_sr sbc_locked_work(struct scsi_task *t, uint64_t lba, uint64_t n, bool excl,
			     scsi_handler_fn work)
{
	struct sbc_cmd *c = sbc_cmd_new(t);
	enum scsi_sr sr;

	if (!c)
		return SR_NO_MEMORY;
	c->work = work;
	if (!sbc_range_lock(c, lba, n, excl, locked_resume))
		return SR_ASYNC;
	sr = scsi_run_blocking(t, locked_trampoline);
	if (sr != SR_ASYNC)
		sbc_cmd_free(c);
	return sr;
}
