/* scsi/spc_pr_sync.c: persistent reservations over a store shared by two gateways, through
 * a fake store (one "object" with a version, watchers called synchronously on publish) in
 * place of RADOS.  Gateway A serves LU ga through relative target port 1, gateway B LU gb
 * through port 2, both on the same object: a change through one is enforced by the other,
 * a change computed from an old version loses the compare-and-store and is redone, a store
 * that keeps losing ends in a retryable error with nothing changed, the LU's power on
 * (first gateway up) drops registrations without APTPL only, and the side effects travel.
 * SPC-2 RESERVE/RELEASE go through the same state: a RESERVE through A conflicts through B,
 * and a LU reset through B (or the holder's nexus loss on A) releases it on both, with the
 * reset's UNIT ATTENTION on A's nexus and persistent reservations kept. */
#include <errno.h>
#include <unistd.h>

#include "pr_harness.h"

struct fake_obj {
	pthread_mutex_t mu;
	char *text;
	uint64_t ver;
	unsigned stores;       /* compare-and-store attempts */
	unsigned force_stale;  /* the next n attempts lose */
	int fail_rc;           /* every attempt fails with this */
	struct fake_store *w[4];
	unsigned nw;
};

struct fake_store {
	struct pr_store s;
	struct fake_obj *o;
	pr_store_changed_fn cb;
	bool deaf; /* misses publications (a lost watch) */
};

static struct fake_obj obj = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int fk_load(struct pr_store *s, char **text, uint64_t *ver, char *err, size_t errlen)
{
	struct fake_obj *o = ((struct fake_store *)s)->o;

	(void)err;
	(void)errlen;
	pthread_mutex_lock(&o->mu);
	*text = o->text ? strdup(o->text) : NULL;
	*ver = o->ver;
	pthread_mutex_unlock(&o->mu);
	return 0;
}

static int fk_store(struct pr_store *s, const char *text, uint64_t *ver)
{
	struct fake_obj *o = ((struct fake_store *)s)->o;
	int rc = 0;

	pthread_mutex_lock(&o->mu);
	o->stores++;
	if (o->fail_rc) {
		rc = o->fail_rc;
	} else if (o->force_stale || *ver != o->ver) {
		if (o->force_stale)
			o->force_stale--;
		rc = -ESTALE;
	} else {
		free(o->text);
		o->text = text ? strdup(text) : NULL;
		*ver = ++o->ver;
	}
	pthread_mutex_unlock(&o->mu);
	return rc;
}

static int fk_watch(struct pr_store *s, pr_store_changed_fn cb, char *err, size_t errlen)
{
	struct fake_store *f = (struct fake_store *)s;

	(void)err;
	(void)errlen;
	f->cb = cb;
	s->alone = f->o->nw == 0;
	f->o->w[f->o->nw++] = f;
	return 0;
}

static int fk_publish(struct pr_store *s, uint64_t ver, const char *payload, size_t len)
{
	struct fake_obj *o = ((struct fake_store *)s)->o;

	(void)ver;
	for (unsigned i = 0; i < o->nw; i++)
		if (&o->w[i]->s != s && !o->w[i]->deaf)
			o->w[i]->cb(&o->w[i]->s, payload, len);
	return 0;
}

static void fk_close(struct pr_store *s)
{
	struct fake_obj *o = ((struct fake_store *)s)->o;

	for (unsigned i = 0; i < o->nw; i++)
		if (&o->w[i]->s == s) {
			o->w[i] = o->w[--o->nw];
			break;
		}
	free(s);
}

static const struct pr_store_ops fk_ops = {
    .name = "fake",
    .load = fk_load,
    .store = fk_store,
    .watch = fk_watch,
    .publish = fk_publish,
    .close = fk_close,
};

static struct pr_store *fk_open(struct backstore *bs, char *err, size_t errlen)
{
	struct fake_store *f = calloc(1, sizeof(*f));

	(void)bs;
	(void)err;
	(void)errlen;
	f->s.ops = &fk_ops;
	f->s.shared = true;
	f->o = &obj;
	snprintf(f->s.name, sizeof(f->s.name), "fakeimg");
	snprintf(f->s.where, sizeof(f->s.where), "the fake object");
	return &f->s;
}

static struct backstore_ops shared_ram_ops;
static struct scsi_dev *ga, *gb;
static struct th_nexus a, b, b2; /* h1 through A, h1 through B, h2 through B */

#define H1 "iqn.2026-01.org.example:h1"
#define H2 "iqn.2026-01.org.example:h2"
#define KA 0xa1a1ull
#define KB 0xb2b2ull

/* An LU on a ramdisk whose backstore offers the fake shared store. */
static struct scsi_dev *gateway(const char *name)
{
	struct scsi_dev_params p;
	struct backstore *bs = calloc(1, sizeof(*bs));
	struct scsi_dev *dev;
	char err[256] = "";

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	bs->ops = &shared_ram_ops;
	snprintf(bs->name, sizeof(bs->name), "%s", name);
	bs->size = 1 << 20;
	bs->block_size = 512;
	bs->read_zero = true;
	dev = scsi_dev_new(&p, bs);
	cr_assert_not_null(dev);
	cr_assert_eq(scsi_dev_open(dev, err, sizeof(err)), 0, "open: %s", err);
	return dev;
}

static void up_gateways(void)
{
	shared_ram_ops = bs_ramdisk_ops;
	shared_ram_ops.pr_store_open = fk_open;
	ga = gateway("ga");
	gb = gateway("gb");
	th_nexus_init(&a, H1, 1, &ga, 1);
	th_nexus_init(&b, H1, 2, &gb, 1);
	th_nexus_init(&b2, H2, 2, &gb, 1);
	th_clear_ua(&a, 0);
	th_clear_ua(&b, 0);
	th_clear_ua(&b2, 0);
}

static void drop_gateways(void)
{
	scsi_nexus_unregister(&a.nx);
	scsi_nexus_unregister(&b.nx);
	scsi_nexus_unregister(&b2.nx);
	scsi_dev_destroy(ga);
	scsi_dev_destroy(gb);
}

static void down(void)
{
	drop_gateways();
	free(obj.text);
	obj.text = NULL;
	obj.ver = 0;
	obj.stores = obj.force_stale = 0;
	obj.fail_rc = 0;
	scsi_core_shutdown();
}

TestSuite(pr_sync, .init = up_gateways, .fini = down);

Test(pr_sync, change_through_one_gateway_is_enforced_by_the_other)
{
	uint8_t blk[512] = {0};
	uint64_t key;
	uint8_t type;

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	/* B learned it by publication: its I/O admission uses the copy in memory */
	assert_conflict(write10(&b2, 0, blk));
	assert_conflict(write10(&b, 0, blk)); /* h1 through B: another, unregistered nexus */
	assert_good(write10(&a, 0, blk));
	cr_assert(pr_read_res(&b, &key, &type));
	cr_assert_eq(key, KA);
	cr_assert_eq(type, PR_TYPE_WE);
	cr_assert_eq(obj.stores, 2, "one compare-and-store per command");
}

Test(pr_sync, stale_copy_loses_and_is_redone_on_the_stored_state)
{
	uint64_t k[4];
	unsigned n;

	/* B misses A's change (its watch is down): its copy is one version behind */
	obj.w[1]->deaf = true;
	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	obj.stores = 0;
	assert_good(prout(&b2, PRO_REGISTER, 0, 0, KB));
	cr_assert_eq(obj.stores, 2, "lost once, redone after reloading");
	obj.w[1]->deaf = false;
	pr_read_keys(&a, k, 4, &n);
	cr_assert_eq(n, 2, "A's registration kept: %u keys", n);
	cr_assert(k[0] == KA && k[1] == KB);
}

Test(pr_sync, pr_in_reloads_what_a_publication_missed)
{
	uint64_t k[4];
	unsigned n;

	obj.w[1]->deaf = true;
	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	pr_read_keys(&b2, k, 4, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(k[0], KA);
}

Test(pr_sync, losing_every_time_is_retryable_and_changes_nothing)
{
	struct th_result r;
	uint64_t k[4];
	unsigned n;
	uint32_t g;

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	g = pr_read_keys(&b, k, 4, &n);
	obj.stores = 0;
	obj.force_stale = 1000;
	r = prout(&b2, PRO_REGISTER, 0, 0, KB);
	th_assert_sense(r, SK_ABORTED_COMMAND, 0x3e, 0x02);
	cr_assert_eq(obj.stores, PR_CAS_TRIES);
	obj.force_stale = 0;
	cr_assert_eq(pr_read_keys(&b, k, 4, &n), g);
	cr_assert_eq(n, 1);
}

Test(pr_sync, store_error_fails_the_command_and_rolls_back)
{
	struct th_result r;
	uint64_t k[4];
	unsigned n;

	obj.fail_rc = -EIO;
	r = prout(&a, PRO_REGISTER, 0, 0, KA);
	th_assert_sense(r, SK_HARDWARE_ERROR, 0x44, 0x00);
	obj.fail_rc = 0;
	pr_read_keys(&a, k, 4, &n);
	cr_assert_eq(n, 0);
}

Test(pr_sync, preempt_raises_ua_on_the_other_gateway)
{
	uint8_t blk[512] = {0};

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(prout(&b2, PRO_REGISTER, 0, 0, KB));
	assert_good(prout(&b2, PRO_PREEMPT, PR_TYPE_WE, KB, KA));
	assert_ua(&a, PR_UA_REGISTRATIONS_PREEMPTED);
	assert_conflict(write10(&a, 0, blk));
	assert_good(write10(&b2, 0, blk));
	assert_no_ua(&b);
}

Test(pr_sync, one_gateway_restarting_keeps_state_without_aptpl)
{
	uint64_t k[4];
	unsigned n;

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	scsi_nexus_unregister(&b.nx);
	scsi_nexus_unregister(&b2.nx);
	scsi_dev_destroy(gb);
	gb = gateway("gb"); /* A is still watching: not a power on */
	th_nexus_init(&b, H1, 2, &gb, 1);
	th_nexus_init(&b2, H2, 2, &gb, 1);
	th_clear_ua(&b, 0);
	pr_read_keys(&b, k, 4, &n);
	cr_assert_eq(n, 1);
}

static unsigned keys_after_all_restart(uint8_t flags)
{
	uint64_t k[4];
	unsigned n;

	assert_good(prout_flags(&a, PRO_REGISTER, 0, 0, KA, flags));
	drop_gateways();
	cr_assert_eq(obj.nw, 0);
	ga = gateway("ga"); /* alone: the LU powers on */
	gb = gateway("gb");
	th_nexus_init(&a, H1, 1, &ga, 1);
	th_nexus_init(&b, H1, 2, &gb, 1);
	th_nexus_init(&b2, H2, 2, &gb, 1);
	th_clear_ua(&b, 0);
	return pr_read_keys(&b, k, 4, &n), n;
}

Test(pr_sync, every_gateway_restarting_drops_state_without_aptpl)
{
	cr_assert_eq(keys_after_all_restart(0), 0);
}

Test(pr_sync, every_gateway_restarting_keeps_aptpl_state)
{
	cr_assert_eq(keys_after_all_restart(0x01), 1);
}

/* ---- SPC-2 RESERVE and resets through the same state and publication ---- */

Test(pr_sync, spc2_reserve_through_one_gateway_conflicts_on_the_other)
{
	uint8_t blk[512] = {0};

	assert_good(reserve6(&a));
	assert_conflict(write10(&b2, 0, blk));
	assert_conflict(read10(&b, 0, blk)); /* h1 through B: another I_T nexus */
	assert_conflict(reserve6(&b2));
	assert_good(write10(&a, 0, blk));
	assert_good(release6(&b2)); /* not the holder: GOOD, nothing released */
	assert_conflict(write10(&b2, 0, blk));
	assert_good(release6(&a));
	assert_good(write10(&b2, 0, blk));
	cr_assert_eq(obj.stores, 2, "RESERVE and RELEASE stored, the rest changed nothing");
}

Test(pr_sync, spc2_reserve_follows_spc4_rules_against_registrations_elsewhere)
{
	uint8_t buf[64];

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	/* SPC-4 5.13.3: a registration exists and b2 is not a registrant */
	assert_conflict(reserve6(&b2));
	assert_good(prout(&a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	assert_good(reserve6(&a)); /* from the holder: GOOD, changes nothing */
	assert_good(prin(&b2, PRI_READ_KEYS, buf, sizeof(buf)));
	/* and the other way round: PR commands conflict under an SPC-2 reservation */
	assert_good(prout(&a, PRO_CLEAR, 0, KA, 0));
	assert_good(reserve6(&b2));
	assert_conflict(prout(&a, PRO_REGISTER, 0, 0, KA));
	assert_conflict(prin(&a, PRI_READ_KEYS, buf, sizeof(buf)));
}

Test(pr_sync, lu_reset_through_one_gateway_reaches_every_nexus_and_releases_spc2)
{
	uint8_t blk[512] = {0};
	struct th_result r;

	assert_good(reserve6(&a));
	run_tmf(&b2, SCSI_TMF_LOGICAL_UNIT_RESET);
	/* A's nexus got the reset's UNIT ATTENTION from B's publication */
	r = tur_on(&a);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	r = tur_on(&b);
	th_assert_sense(r, SK_UNIT_ATTENTION, 0x29, 0x03);
	th_clear_ua(&b2, 0);
	assert_good(write10(&b2, 0, blk)); /* the SPC-2 reservation is gone everywhere */
	assert_good(reserve6(&b2));
	assert_conflict(write10(&a, 0, blk));
}

Test(pr_sync, persistent_reservation_survives_a_lu_reset_through_the_other_gateway)
{
	uint8_t blk[512] = {0};
	uint64_t key;
	uint8_t type;

	assert_good(prout(&a, PRO_REGISTER, 0, 0, KA));
	assert_good(prout(&a, PRO_RESERVE, PR_TYPE_WE, KA, 0));
	run_tmf(&b, SCSI_TMF_LOGICAL_UNIT_RESET);
	th_clear_ua(&b2, 0);
	assert_conflict(write10(&b2, 0, blk));
	cr_assert(pr_read_res(&b2, &key, &type));
	cr_assert_eq(key, KA);
	th_clear_ua(&a, 0);
	assert_good(write10(&a, 0, blk));
}

Test(pr_sync, spc2_holder_nexus_loss_releases_on_every_gateway)
{
	uint8_t blk[512] = {0};
	struct th_result r;

	assert_good(reserve6(&a));
	assert_conflict(write10(&b2, 0, blk));
	scsi_nexus_unregister(&a.nx); /* h1 logs out of A: stored and published on a thread */
	for (int i = 0; i < 500; i++) {
		r = write10(&b2, 0, blk);
		if (r.status == 0)
			break;
		usleep(10000);
	}
	assert_good(r);
	th_nexus_init(&a, H1, 1, &ga, 1); /* for the teardown */
}

Test(pr_sync_payload, side_effects_round_trip)
{
	struct pr_effects *fx = calloc(1, sizeof(*fx)), *back = calloc(1, sizeof(*back));
	char buf[4096];
	int len;

	fx->nua = 1;
	fx->ua[0].port.proto = SCSI_PROTO_ISCSI;
	snprintf(fx->ua[0].port.id, sizeof(fx->ua[0].port.id), "iqn.x:a b,i,0x1");
	fx->ua[0].rtpi = 2;
	fx->ua[0].ascq = PR_UA_REGISTRATIONS_PREEMPTED;
	fx->nabort = 1;
	fx->abort[0].port.proto = SCSI_PROTO_SRP;
	snprintf(fx->abort[0].port.id, sizeof(fx->abort[0].port.id), "fe80aa");
	fx->abort[0].all_tg_pt = true;
	fx->abort[0].key = KA;
	fx->reset_asc = 0x29;
	fx->reset_ascq = 0x03;
	len = pr_fx_format(fx, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_assert(pr_fx_parse(buf, (size_t)len, back));
	cr_assert_eq(back->nua, 1);
	cr_assert_str_eq(back->ua[0].port.id, "iqn.x:a b,i,0x1");
	cr_assert_eq(back->ua[0].rtpi, 2);
	cr_assert_eq(back->ua[0].ascq, PR_UA_REGISTRATIONS_PREEMPTED);
	cr_assert_eq(back->nabort, 1);
	cr_assert_eq(back->abort[0].key, KA);
	cr_assert(back->abort[0].all_tg_pt);
	cr_assert_eq(back->abort[0].port.proto, SCSI_PROTO_SRP);
	cr_assert_eq(back->reset_asc, 0x29);
	cr_assert_eq(back->reset_ascq, 0x03);
	cr_assert_not(pr_fx_parse("reset 00 00\n", 12, back), "a reset without its ASC");
	cr_assert_eq(pr_fx_format(fx, buf, 10), -1, "too small a buffer");
	cr_assert_not(pr_fx_parse("ua 5 1 2 0 0\n", 13, back), "a field short");
	cr_assert_not(pr_fx_parse("ua 5 9 2 0 0 x\n", 15, back), "unknown protocol");
	cr_assert_not(pr_fx_parse("boom\n", 5, back));
	free(fx);
	free(back);
}
