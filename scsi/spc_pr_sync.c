/* The persistent reservation state and its store (scsi/pr_store.h): loading it when the LU
 * opens, compare-and-store of a change, reloading what another gateway changed, and the
 * changes other gateways publish to this one.
 *
 * Shared store (several gateways, one LU):
 *   - every change (PERSISTENT RESERVE OUT, SPC-2 RESERVE/RELEASE, a LU reset, the SPC-2
 *     holder's nexus loss: pr_sync_change) is computed on this gateway's copy and stored
 *     only if the stored version is still the one the copy came from; otherwise the copy is
 *     reloaded and the change redone, so two gateways never both win;
 *   - the change is then published and the command completes only when every other gateway
 *     has it in force (or was cut off from the cluster): once the initiator has GOOD, no
 *     gateway admits a command under the old state.  Commands are admitted against the copy
 *     in memory, which is what keeps the I/O path free of cluster round trips;
 *   - PERSISTENT RESERVE IN reloads first, so it never reports an older state than the
 *     cluster holds even if a publication was missed (a watch lost and re-established);
 *   - APTPL.  The state is in the cluster whatever APTPL says, so one gateway restarting
 *     never clears it: for the initiators the LU did not lose power, one of its ports went
 *     away.  The LU's power on (SPC-4 5.13.5: without APTPL the registrations are gone) is
 *     when a gateway opens the store and no other gateway has it open (the store's `alone`).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_log.h"
#include "scsi/backstore/backstore.h"
#include "scsi/pr_store.h"
#include "scsi/scsi_core.h"
#include "scsi/spc_pr.h"

enum scsi_sr pr_sync_sr(int err)
{
	switch (-err) {
	case ETIMEDOUT:
	case ESTALE: /* lost the race PR_CAS_TRIES times: the initiator retries */
		return SR_LU_TIMEOUT;
	case ESHUTDOWN: /* this gateway was blocklisted: another one must serve the LU */
		return SR_ALUA_UNAVAILABLE;
	case ENOMEM:
		return SR_NO_MEMORY;
	default:
		return SR_INTERNAL_ERROR;
	}
}

/* Does a change of pr->st need storing?  Every change for a shared store; with a file, only
 * while APTPL is or was in force, and never one of SPC-2 state, which a file does not keep. */
static bool wanted(const struct scsi_pr *pr, bool was_aptpl, bool spc2_only)
{
	if (!pr->store)
		return false;
	if (pr->store->shared)
		return true;
	return !spc2_only && (was_aptpl || pr->st.aptpl);
}

/* Compare-and-store st against *ver (the version it was computed from); *ver becomes the new
 * one.  Caller holds pr->lock.  0, -ESTALE (reload and redo), -errno. */
static int commit(struct scsi_pr *pr, const struct pr_state *st, uint64_t *ver)
{
	struct pr_store *s = pr->store;
	char *text = NULL;
	int rc;

	/* a file holds only APTPL state: without it there is nothing to keep */
	if (s->shared || st->aptpl) {
		text = malloc(PR_TEXT_MAX);
		if (!text)
			return -ENOMEM;
		if (pr_state_format(st, s->name, text, PR_TEXT_MAX) < 0) {
			free(text);
			return -EOVERFLOW;
		}
	}
	rc = s->ops->store(s, text, ver);
	free(text);
	if (rc != 0 && rc != -ESTALE)
		UT_LOG_RL(LOG_ERR, "%s: cannot write persistent reservation state to %s: %s",
			  pr->dev->p.name, s->where, strerror(-rc));
	return rc;
}

/* Put st (version ver) in force unless what is in force is as new. */
static void install(struct scsi_pr *pr, const struct pr_state *st, uint64_t ver)
{
	pthread_mutex_lock(&pr->lock);
	if (ver > pr->ver) {
		pr->st = *st;
		pr->ver = ver;
		pr_update_active(pr);
	}
	pthread_mutex_unlock(&pr->lock);
}

/* Load the stored state into *st and *ver; a corrupt text is reported and read as empty
 * (the next change replaces it).  0 or -errno. */
static int load(struct scsi_pr *pr, struct pr_state *st, uint64_t *ver)
{
	struct pr_store *s = pr->store;
	char *text = NULL, err[256] = "";
	int rc = s->ops->load(s, &text, ver, err, sizeof(err));

	memset(st, 0, sizeof(*st));
	st->holder = -1;
	if (rc != 0) {
		UT_LOG_RL(LOG_ERR, "%s: cannot read the persistent reservation state from %s: %s",
			  pr->dev->p.name, s->where, err);
		return rc;
	}
	if (text && !pr_state_parse(text, s->name, st, err, sizeof(err)))
		/* must not stop the LU: start with no registrations and say why, so the operator
		 * can look at (and keep) the stored text */
		ut_log(LOG_WARNING, "%s: persistent reservation state in %s ignored: %s",
		       pr->dev->p.name, s->where, err);
	free(text);
	return 0;
}

int pr_sync_refresh(struct scsi_pr *pr)
{
	struct pr_state *st;
	uint64_t ver;
	int rc;

	if (!pr->store)
		return 0;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	rc = load(pr, st, &ver);
	if (rc == 0)
		install(pr, st, ver);
	free(st);
	return rc;
}

static int publish(struct scsi_pr *pr, uint64_t ver, const struct pr_effects *fx)
{
	struct pr_store *s = pr->store;
	char *payload;
	int len, rc;

	if (!s || !s->ops->publish)
		return 0;
	payload = malloc(PR_TEXT_MAX);
	if (!payload)
		return -ENOMEM;
	len = pr_fx_format(fx, payload, PR_TEXT_MAX);
	if (len < 0) {
		/* the state still travels (it is reloaded); only some UNIT ATTENTIONs are lost */
		ut_log(LOG_WARNING, "%s: too many side effects to publish; other gateways get the "
				    "state without them", pr->dev->p.name);
		len = 0;
	}
	rc = s->ops->publish(s, ver, payload, (size_t)len);
	free(payload);
	if (rc != 0)
		UT_LOG_RL(LOG_ERR, "%s: cannot publish a persistent reservation change: %s",
			  pr->dev->p.name, strerror(-rc));
	return rc;
}

static bool has_effects(const struct pr_effects *fx)
{
	return fx->nua || fx->nabort || fx->reset_asc;
}

enum scsi_sr pr_sync_change(struct scsi_pr *pr, pr_change_fn fn, void *arg,
			    struct pr_effects *fx, bool spc2_only)
{
	struct pr_state *snap = malloc(sizeof(*snap));
	bool dirty = false;
	enum scsi_sr sr;
	uint64_t ver = 0;
	int rc;

	if (!snap)
		return SR_NO_MEMORY;
	pthread_mutex_lock(&pr->out_lock);
	for (unsigned tries = 1;; tries++) {
		pthread_mutex_lock(&pr->lock);
		*snap = pr->st;
		memset(fx, 0, sizeof(*fx));
		dirty = false;
		sr = fn(&pr->st, fx, arg, &dirty);
		rc = 0;
		ver = pr->ver;
		if (sr == SR_OK && dirty && wanted(pr, snap->aptpl, spc2_only)) {
			rc = commit(pr, &pr->st, &ver);
			if (rc == 0)
				pr->ver = ver;
			else
				sr = pr_sync_sr(rc);
		}
		if (sr != SR_OK)
			pr->st = *snap;
		pr_update_active(pr);
		pthread_mutex_unlock(&pr->lock);
		if (rc != -ESTALE || tries == PR_CAS_TRIES)
			break;
		if ((rc = pr_sync_refresh(pr)) != 0) {
			sr = pr_sync_sr(rc);
			break;
		}
	}
	/* other gateways have the change in force before the initiator hears of it */
	if (sr == SR_OK && pr->store && pr->store->shared && (dirty || has_effects(fx)) &&
	    (rc = publish(pr, ver, fx)) != 0)
		sr = pr_sync_sr(rc);
	pthread_mutex_unlock(&pr->out_lock);
	free(snap);
	return sr;
}

/* Another gateway changed the state: reload it, then raise its UNIT ATTENTIONs and abort
 * its PREEMPT AND ABORT victims on this gateway's nexuses (a registration names one relative
 * target port, so the ones of other gateways match none here).  The store acknowledges when
 * this returns. */
static void changed(struct pr_store *s, const char *payload, size_t len)
{
	struct scsi_pr *pr = s->owner;
	struct pr_effects *fx = calloc(1, sizeof(*fx));

	pr_sync_refresh(pr);
	if (!fx)
		return;
	if (len && !pr_fx_parse(payload, len, fx))
		UT_LOG_RL(LOG_WARNING, "%s: malformed persistent reservation change payload",
			  pr->dev->p.name);
	else
		pr_fx_apply(pr->dev, fx, NULL);
	free(fx);
}

/* This gateway is the only one: the LU was powered off as a whole.  State without APTPL is
 * gone, and so is an SPC-2 reservation in any case.  Store what remains (an empty state has
 * generation 0), unless another gateway came up and changed it meanwhile. */
static void power_on(struct scsi_pr *pr)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	uint64_t ver = pr->ver;

	if (!st)
		return;
	st->holder = -1;
	pthread_mutex_lock(&pr->lock);
	if (pr->st.aptpl)
		*st = pr->st;
	st->spc2 = false;
	if (commit(pr, st, &ver) == 0) {
		pr->st = *st;
		pr->ver = ver;
		ut_log(LOG_NOTICE, "%s: first gateway up: %s", pr->dev->p.name,
		       st->aptpl ? "SPC-2 reservation released"
				 : "registrations without APTPL cleared");
	}
	pthread_mutex_unlock(&pr->lock);
	free(st);
}

int pr_sync_open(struct scsi_pr *pr, char *err, size_t errlen)
{
	struct scsi_dev *dev = pr->dev;
	struct backstore *bs = dev->bs;
	struct pr_state *st;
	char path[PATH_MAX];
	int rc;

	if (bs && bs->ops && bs->ops->pr_store_open) {
		pr->store = bs->ops->pr_store_open(bs, err, errlen);
		if (!pr->store)
			return -1;
	} else if (dev->p.pr_file_dir[0]) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s.pr", dev->p.pr_file_dir,
				     dev->p.name) >= sizeof(path) ||
		    !(pr->store = pr_file_store_open(path, dev->p.name))) {
			ut_log(LOG_WARNING, "%s: persistent reservation file path too long; APTPL off",
			       dev->p.name);
			return 0;
		}
	} else {
		return 0;
	}
	pr->store->owner = pr;
	/* watch before loading, so no change falls between the two */
	if (pr->store->ops->watch &&
	    (rc = pr->store->ops->watch(pr->store, changed, err, errlen)) != 0)
		goto fail;
	st = malloc(sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "%s: out of memory", dev->p.name);
		goto fail;
	}
	rc = load(pr, st, &pr->ver);
	if (rc == 0) {
		if (!pr->store->shared)
			st->spc2 = false; /* never kept in a file; ignore one put there by hand */
		pr->st = *st;
	} else if (pr->store->shared) {
		snprintf(err, errlen, "%s: cannot read the shared persistent reservation state: %s",
			 dev->p.name, strerror(-rc));
		free(st);
		goto fail;
	}
	free(st);
	if (pr->store->shared && pr->store->alone &&
	    (pr->st.spc2 || (!pr->st.aptpl && (pr->st.nregs || pr->st.generation))))
		power_on(pr);
	return 0;
fail:
	pr_sync_close(pr);
	return -1;
}

void pr_sync_close(struct scsi_pr *pr)
{
	if (pr->store && pr->store->ops->close)
		pr->store->ops->close(pr->store);
	pr->store = NULL;
}
