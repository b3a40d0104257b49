/* The diff half of the engine (tgt_plan.c): what a next configuration changes and whether it
 * may while initiators work, with the exact reasons (and lines of the next file) when not. */
#include <criterion/criterion.h>

#include "target/tgt_plan.h"
#include "tests/unit/conf_test_util.h"

#define T "iqn.2026-12.org.utgt:plan"

/* The running configuration: %s slots for more devices and more inside the target. */
static const char *FMT = "HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n%s }\n"
			 " DEVICE idle {\n  size_mb 1\n%s }\n}\n"
			 "HANDLER vdisk_nullio {\n DEVICE n0 {\n  size_mb 8\n%s }\n}\n"
			 "HANDLER vcdrom {\n DEVICE cd {\n%s }\n}\n"
			 "TARGET_DRIVER iscsi {\n listen 127.0.0.1:%s\n TARGET " T " {\n"
			 "  enabled 1\n  rel_tgt_id %s\n  LUN 0 d0\n  LUN 1 n0\n%s }\n}\n%s";

struct parts {
	const char *d0, *idle, *n0, *cd, *port, *rtpi, *tgt, *tail;
};

static struct tgt_config *make(struct parts p, bool open)
{
	char text[4096];
	struct captured c;
	struct diag d;
	struct tgt_config *cfg;

	snprintf(text, sizeof(text), FMT, p.d0 ? p.d0 : "", p.idle ? p.idle : "", p.n0 ? p.n0 : "",
		 p.cd ? p.cd : "", p.port ? p.port : "3260", p.rtpi ? p.rtpi : "1",
		 p.tgt ? p.tgt : "", p.tail ? p.tail : "");
	cfg = load_str(text, &c, &d);
	cr_assert_not_null(cfg, "%s\n%s", cap_dump(&c), text);
	if (open)
		cr_assert_eq(tgt_config_open_devices(cfg, &d), 0, "%s", cap_dump(&c));
	return cfg;
}

static const struct tgt_transport with_update = {.driver = "iscsi",
						 .update = (void *)1 /* never called here */};
static const struct tgt_transport without_update = {.driver = "iscsi"};
static const struct tgt_transport *iscsi_tp;
static const char *tcmu_uses;

static const struct tgt_transport *running(void *ctx, const char *driver)
{
	(void)ctx;
	return !strcmp(driver, "iscsi") ? iscsi_tp : NULL;
}

static const char *device_user(void *ctx, const char *device)
{
	(void)ctx;
	return tcmu_uses && !strcmp(device, tcmu_uses) ? "tcmu" : NULL;
}

static const struct tgt_plan_env env = {running, device_user, NULL};
static struct tgt_config *old;
static struct captured cap;

static void setup(void)
{
	iscsi_tp = &with_update;
	tcmu_uses = NULL;
	old = make((struct parts){0}, true);
}

static void teardown(void)
{
	tgt_config_free(old);
}

TestSuite(tgt_plan, .init = setup, .fini = teardown);

/* A plan that must build. */
static struct tgt_plan plan_ok(struct tgt_config *next)
{
	struct diag d = cap_diag(&cap);
	struct tgt_plan p;

	cr_assert_eq(tgt_plan_build(old, next, &env, &p, &d), 0, "%s", cap_dump(&cap));
	return p;
}

/* A plan refused with this first error at this line of next. */
static void plan_refused(struct tgt_config *next, const char *msg, int line)
{
	struct diag d = cap_diag(&cap);
	struct tgt_plan p;
	int l = -1;

	cr_assert_eq(tgt_plan_build(old, next, &env, &p, &d), -1, "accepted; wanted: %s", msg);
	cr_assert_str_eq(cap_first_error(&cap, &l), msg);
	cr_assert_eq(l, line, "line %d, expected %d", l, line);
	tgt_config_free(next);
}

static const struct tgt_dev_plan *dev(const struct tgt_plan *p, const char *name)
{
	for (unsigned i = 0; i < p->ndevs; i++) {
		const struct tgt_device *d = p->devs[i].next ? p->devs[i].next : p->devs[i].old;
		if (!strcmp(d->name, name))
			return &p->devs[i];
	}
	cr_assert_fail("no plan for %s", name);
	return NULL;
}

Test(tgt_plan, the_same_configuration_changes_nothing)
{
	struct tgt_config *next = make((struct parts){0}, false);
	struct tgt_plan p = plan_ok(next);

	cr_assert(p.same);
	cr_assert_eq(p.ndevs, 4);
	for (unsigned i = 0; i < p.ndevs; i++) {
		cr_assert_eq(p.devs[i].act, DEV_KEEP);
		cr_assert_not(p.devs[i].identity || p.devs[i].resize || p.devs[i].medium);
	}
	cr_assert_eq(p.ndrvs, 1);
	cr_assert_eq(p.drvs[0].act, DRV_UPDATE);
	cr_assert_eq(p.ntgts, 0);
	tgt_plan_free(&p);
	tgt_config_free(next);
}

Test(tgt_plan, live_device_changes)
{
	struct tgt_config *next = make((struct parts){.d0 = "  t10_vend_id ACME\n",
						      .n0 = "  size_mb 16\n",
						      .cd = "  filename /srv/new.iso\n"},
				       false);
	struct tgt_plan p;

	/* n0's size_mb appears twice in its block: the later one counts (a warning) */
	p = plan_ok(next);
	cr_assert_not(p.same);
	cr_assert_eq(dev(&p, "d0")->act, DEV_KEEP);
	cr_assert(dev(&p, "d0")->identity);
	cr_assert_not(dev(&p, "d0")->resize);
	cr_assert_eq(dev(&p, "n0")->act, DEV_KEEP);
	cr_assert(dev(&p, "n0")->resize);
	cr_assert_eq(dev(&p, "n0")->size, 16 << 20);
	cr_assert(dev(&p, "cd")->medium);
	cr_assert_not(dev(&p, "idle")->identity || dev(&p, "idle")->resize);
	tgt_plan_free(&p);
	tgt_config_free(next);
}

Test(tgt_plan, create_time_attributes_of_a_device_in_use)
{
	/* line 4: "  blocksize 4096" in d0's block */
	plan_refused(make((struct parts){.d0 = "  blocksize 4096\n"}, false),
		     "DEVICE d0: 'blocksize' cannot change while the device is in use (LUN 0 of "
		     "TARGET " T " (driver iscsi)): remove its LUNs first, or restart utgtd",
		     4);
	plan_refused(make((struct parts){.d0 = "  size_mb 2\n"}, false),
		     "DEVICE d0: the size of a ramdisk device cannot change while the device is in "
		     "use (LUN 0 of TARGET " T " (driver iscsi)): remove its LUNs first, or "
		     "restart utgtd",
		     4);
}

Test(tgt_plan, an_idle_device_is_recreated)
{
	struct tgt_config *next = make((struct parts){.idle = "  blocksize 4096\n"}, false);
	struct tgt_plan p = plan_ok(next);

	cr_assert_eq(dev(&p, "idle")->act, DEV_RECREATE);
	cr_assert_eq(dev(&p, "d0")->act, DEV_KEEP);
	tgt_plan_free(&p);
	tgt_config_free(next);
}

Test(tgt_plan, a_device_a_transport_serves_stays)
{
	char text[4096];
	struct captured c;
	struct diag d;
	struct tgt_config *next;

	tcmu_uses = "idle";
	/* idle removed from the file */
	snprintf(text, sizeof(text),
		 "HANDLER ramdisk {\n DEVICE d0 {\n  size_mb 1\n }\n}\n"
		 "HANDLER vdisk_nullio {\n DEVICE n0 {\n  size_mb 8\n }\n}\n"
		 "HANDLER vcdrom {\n DEVICE cd\n}\n"
		 "TARGET_DRIVER iscsi {\n listen 127.0.0.1:3260\n TARGET " T " {\n  enabled 1\n"
		 "  rel_tgt_id 1\n  LUN 0 d0\n  LUN 1 n0\n }\n}\n");
	next = load_str(text, &c, &d);
	cr_assert_not_null(next);
	plan_refused(next, "DEVICE idle cannot be removed: tcmu uses it", 0);
	plan_refused(make((struct parts){.idle = "  blocksize 4096\n"}, false),
		     "DEVICE idle: 'blocksize' cannot change while tcmu uses it", 7);
}

Test(tgt_plan, drivers_and_targets)
{
	struct tgt_config *next;
	struct tgt_plan p;

	plan_refused(make((struct parts){.port = "3261"}, false),
		     "TARGET_DRIVER iscsi: 'listen' cannot change while the driver runs; disable "
		     "the driver first (enabled 0), or restart utgtd",
		     19);
	plan_refused(make((struct parts){.rtpi = "5"}, false),
		     "TARGET " T
		     ": rel_tgt_id cannot change from 1 to 5 while the target is enabled "
		     "(disable it first)",
		     22);
	iscsi_tp = &without_update;
	plan_refused(
	    make((struct parts){.tgt = "  LUN 2 idle\n"}, false),
	    "TARGET_DRIVER iscsi cannot change while it runs (this transport takes no live "
	    "change); restart utgtd",
	    18);
	iscsi_tp = &with_update;

	next = make((struct parts){.tgt = "  LUN 2 idle\n  GROUP g {\n   INITIATOR x\n  }\n",
				   .tail = "TARGET_DRIVER copy_manager {\n TARGET c {\n }\n}\n"},
		    false);
	p = plan_ok(next);
	cr_assert_eq(p.ntgts, 2);
	cr_assert_eq(p.tgts[0].act, TGT_CHANGED);
	cr_assert_str_eq(p.tgts[0].what, "LUNs, groups");
	cr_assert_eq(p.tgts[1].act, TGT_ADDED);
	cr_assert_str_eq(p.tgts[1].name, "c");
	cr_assert_eq(p.ndrvs, 2);
	cr_assert_eq(p.drvs[1].act, DRV_START, "copy_manager is served by this build");
	tgt_plan_free(&p);
	tgt_config_free(next);

	/* the driver disabled: it stops (its own attributes may then change) */
	next = make((struct parts){.port = "3261\n enabled 0"}, false);
	p = plan_ok(next);
	cr_assert_eq(p.drvs[0].act, DRV_STOP);
	tgt_plan_free(&p);
	tgt_config_free(next);
}
