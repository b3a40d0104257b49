/* The tcmu driver (tcmu_transport.c): its place in the registry, its configuration, and
 * discovery on a fake sysfs tree: a dev_config naming no DEVICE and another subtype are left
 * alone, utgt/<DEVICE> is opened and served (a plain file stands in for /dev/uioN); a refused
 * one is served after a live change adds its DEVICE; `show devices` lists it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scsi/scsi_task.h"
#include "common/ut_json.h"
#include "tests/unit/conf_test_util.h"
#include "tests/unit/test_tcmu_fake.h"

extern const struct tgt_transport tcmu_transport;
int tcmu_transport_start_at(const struct tgt_config *cfg, const char *sysfs, const char *devdir,
			    const char *configfs, char *err, size_t errlen);

static const char *BASE = "HANDLER ramdisk {\n"
			  "\tDEVICE d0 {\n\t\tsize_mb 1\n\t}\n"
			  "}\n";

static struct tgt_config *load(const char *drv, struct captured *c, struct diag *d)
{
	static char text[2048];
	snprintf(text, sizeof(text), "%s%s", BASE, drv);
	return load_str(text, c, d);
}

Test(tcmu_transport, registered_as_tcmu)
{
	const struct tgt_transport *t = tgt_transport_find("tcmu");
	cr_assert_eq(t, &tcmu_transport);
	cr_assert_str_eq(t->driver, "tcmu");
	cr_assert_str_eq(t->driver_attrs[0], "enabled");
}

Test(tcmu_transport, config_enabled_loads_clean)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load("TARGET_DRIVER tcmu {\n\tenabled 1\n}\n", &c, &d);

	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(c.n, 0, "%s", cap_dump(&c));
	const struct tgt_driver *drv = tgt_config_driver(cfg, "tcmu");
	cr_assert_not_null(drv);
	cr_assert(drv->enabled);
	cr_assert_eq(drv->transport, &tcmu_transport);
	tgt_config_free(cfg);
}

Test(tcmu_transport, config_errors)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg;
	int line = 0;

	cfg = load("TARGET_DRIVER tcmu {\n\tenabled 1\n\tring_mb 8\n}\n", &c, &d);
	cr_assert_null(cfg, "an attribute tcmu does not know is an error");
	cr_assert_not_null(cap_first_error(&c, &line), "%s", cap_dump(&c));
	cr_assert_eq(line, 8, "%s", cap_dump(&c));
	cfg = load("TARGET_DRIVER tcmu {\n\tenabled 1\n\tring_threads 3\n}\n", &c, &d);
	cr_assert_null(cfg, "ring_threads is 1, 2 or auto");
	cr_assert_not_null(cap_first_error(&c, &line), "%s", cap_dump(&c));
	cr_assert_eq(line, 8, "%s", cap_dump(&c));
	cr_assert(strstr(cap_dump(&c), "ring_threads '3': want 1, 2 or auto"), "%s", cap_dump(&c));
	for (unsigned i = 0; i < 4; i++) {
		static const char *const bad[] = {"1001", "-1", "5us", ""};
		char text[128];

		snprintf(text, sizeof(text), "TARGET_DRIVER tcmu {\n\tpoll_us %s\n}\n", bad[i]);
		cfg = load(text, &c, &d);
		cr_assert_null(cfg, "poll_us %s is refused", bad[i]);
		cr_assert(strstr(cap_dump(&c), "poll_us"), "%s", cap_dump(&c));
	}
	cfg = load("TARGET_DRIVER tcmu {\n\tpoll_us 1000\n}\n", &c, &d);
	cr_assert_not_null(cfg, "poll_us 1000: %s", cap_dump(&c));
	tgt_config_free(cfg);
	for (unsigned i = 0; i < 3; i++) {
		static const char *const ok[] = {"1", "2", "auto"};
		char text[128];

		snprintf(text, sizeof(text), "TARGET_DRIVER tcmu {\n\tring_threads %s\n}\n", ok[i]);
		cfg = load(text, &c, &d);
		cr_assert_not_null(cfg, "ring_threads %s: %s", ok[i], cap_dump(&c));
		cr_assert_eq(c.n, 0, "%s", cap_dump(&c));
		tgt_config_free(cfg);
	}
	cfg =
	    load("TARGET_DRIVER tcmu {\n\tenabled 1\n\tTARGET x {\n\t\tLUN 0 d0\n\t}\n}\n", &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert(strstr(cap_dump(&c), "TARGET x is ignored"), "%s", cap_dump(&c));
	tgt_config_free(cfg);
}

static void put(const char *dir, const char *rel, const void *data, size_t len)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void uio(const char *root, unsigned minor, const char *name, size_t size)
{
	char p[512], s[32];
	snprintf(p, sizeof(p), "%s/uio%u", root, minor);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/uio%u/maps", root, minor);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/uio%u/maps/map0", root, minor);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "uio%u/name", minor);
	put(root, p, name, strlen(name));
	snprintf(p, sizeof(p), "uio%u/maps/map0/size", minor);
	snprintf(s, sizeof(s), "0x%zx\n", size);
	put(root, p, s, strlen(s));
}

/* Wait (bounded) until the ring file's cmd_tail reaches head. */
static void wait_tail(const char *dev, const char *name, uint32_t head)
{
	char path[512];
	uint32_t tail = UINT32_MAX;
	time_t end = time(NULL) + 10;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dev, name);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	while (tail != head) {
		cr_assert_eq(pread(fd, &tail, 4, offsetof(struct tcmu_mailbox, cmd_tail)), 4);
		cr_assert_lt(time(NULL), end, "%s: the queued command was never completed", name);
		usleep(10000);
	}
	close(fd);
}

/* The driver's configuration (drv: its TARGET_DRIVER block) with its devices open, the core,
 * a fake sysfs and /dev, and a ring with one TEST UNIT READY queued (to be put behind a uio
 * device file). */
static struct tgt_config *setup_drv(struct fk *k, char *sys, char *dev, struct captured *c,
				    struct diag *d, const char *drv)
{
	static const uint8_t tur[6] = {0};
	struct tgt_config *cfg = load(drv, c, d);

	cr_assert_not_null(cfg);
	cr_assert_eq(tgt_config_open_devices(cfg, d), 0, "%s", cap_dump(c));
	cr_assert_eq(scsi_core_init(1), 0);
	cr_assert_not_null(mkdtemp(sys));
	cr_assert_not_null(mkdtemp(dev));
	fk_init(k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC);
	fk_cmd(k, tur, 6, NULL, 0);
	return cfg;
}

static struct tgt_config *setup(struct fk *k, char *sys, char *dev, struct captured *c,
				struct diag *d)
{
	return setup_drv(k, sys, dev, c, d, "TARGET_DRIVER tcmu {\n\tenabled 1\n}\n");
}

Test(tcmu_transport, discovery_serves_utgt_devices_only)
{
	char sys[] = "/tmp/utgt-tcmu-sys-XXXXXX", dev[] = "/tmp/utgt-tcmu-devs-XXXXXX";
	char err[256] = "";
	struct captured c;
	struct diag d;
	struct fk k;
	struct tgt_config *cfg = setup(&k, sys, dev, &c, &d);

	uio(sys, 0, "tcm-user/1/lio0/utgt/nosuch", k.size);
	uio(sys, 1, "tcm-user/1/lio1/file/x.img", k.size);
	uio(sys, 2, "tcm-user/1/lio2/utgt/d0", k.size);
	put(dev, "uio2", k.mem, k.size);
	/* uio0 and uio1 have no device file: opening them would fail loudly */
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), 0, "%s", err);
	wait_tail(dev, "uio2", k.head);
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), -1,
		     "a second start is refused");
	tcmu_transport.stop();
	tcmu_transport.stop(); /* twice: harmless */
	fk_fini(&k);
	scsi_core_shutdown();
	tgt_config_free(cfg);
}

/* A dev_config naming a DEVICE the configuration does not have is served once a live change
 * adds it; `show devices` lists it with its counters; a bad option refuses its device. */
Test(tcmu_transport, refused_device_served_after_a_live_change)
{
	char sys[] = "/tmp/utgt-tcmu-sys-XXXXXX", dev[] = "/tmp/utgt-tcmu-devs-XXXXXX";
	char err[256] = "";
	struct captured c;
	struct diag d;
	struct ut_json j;
	struct fk k;
	struct tgt_config *cfg = setup(&k, sys, dev, &c, &d), *cfg2;

	uio(sys, 0, "tcm-user/1/lioL/utgt/late", k.size);
	uio(sys, 1, "tcm-user/1/lioB/utgt/d0;speed=9", k.size);
	put(dev, "uio0", k.mem, k.size);
	put(dev, "uio1", k.mem, k.size);
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(tcmu_transport.uses_device("late"));
	cr_assert_not(tcmu_transport.uses_device("d0"), "a bad option refuses the device");

	cfg2 = load_str("HANDLER ramdisk {\n\tDEVICE d0 {\n\t\tsize_mb 1\n\t}\n"
			"\tDEVICE late {\n\t\tsize_mb 1\n\t}\n}\n"
			"TARGET_DRIVER tcmu {\n\tenabled 1\n}\n",
			&c, &d);
	cr_assert_not_null(cfg2, "%s", cap_dump(&c));
	cr_assert_eq(tgt_config_open_devices(cfg2, &d), 0, "%s", cap_dump(&c));
	cr_assert_eq(tcmu_transport.update(cfg2, tgt_config_driver(cfg2, "tcmu"), err, sizeof(err)),
		     0);
	wait_tail(dev, "uio0", k.head);
	cr_assert(tcmu_transport.uses_device("late"));
	cr_assert_not(tcmu_transport.uses_device("d0"), "still refused: the option is bad");

	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	tcmu_transport.show_device("late", &j);
	ut_json_end_obj(&j);
	cr_assert(strstr(j.buf, "\"lio_device\":\"lioL\""), "%s", j.buf);
	cr_assert(strstr(j.buf, "\"commands\":1,\"completions\":1"), "%s", j.buf);
	cr_assert(strstr(j.buf, "\"refused_completions\":0"), "%s", j.buf);
	/* ring_threads auto: two with a second CPU */
	cr_assert(strstr(j.buf, sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "\"ring_threads\":2"
								   : "\"ring_threads\":1"),
		  "%s", j.buf);
	/* one command: the second ring thread was never woken */
	cr_assert(strstr(j.buf, "\"taken_by_second_thread\":0,\"second_thread_wakeups\":0"), "%s",
		  j.buf);
	ut_json_free(&j);

	tcmu_transport.stop();
	fk_fini(&k);
	scsi_core_shutdown();
	tgt_config_free(cfg2);
	tgt_config_free(cfg);
}

/* `show devices` of DEVICE name into buf. */
static void show(const char *name, char *buf, size_t len)
{
	struct ut_json j;

	ut_json_init(&j);
	ut_json_obj(&j, NULL);
	tcmu_transport.show_device(name, &j);
	ut_json_end_obj(&j);
	snprintf(buf, len, "%s", j.buf);
	ut_json_free(&j);
}

/* Wait (bounded: the scan runs every 500 ms) until `show devices` of name contains want. */
static void wait_show(const char *name, const char *want)
{
	char buf[4096];
	time_t end = time(NULL) + 10;

	for (show(name, buf, sizeof(buf)); !strstr(buf, want); show(name, buf, sizeof(buf))) {
		cr_assert_lt(time(NULL), end, "no %s in %s", want, buf);
		usleep(20000);
	}
}

/* A served device: once an ib_srpt LUN links to it its nexus says SRP (the scan reads
 * configfs), and `show devices` names its uio, dev_config and fabric; LIO rewriting its
 * dev_config (attrib/dev_config while enabled renames the uio device) does not let it go: it
 * keeps its DEVICE and ring. */
Test(tcmu_transport, fabric_and_dev_config_rename)
{
	char sys[] = "/tmp/utgt-tcmu-sys-XXXXXX", dev[] = "/tmp/utgt-tcmu-devs-XXXXXX";
	char err[256] = "", p[512];
	struct captured c;
	struct diag d;
	struct fk k;
	struct tgt_config *cfg = setup(&k, sys, dev, &c, &d);

	uio(sys, 3, "tcm-user/1/lioS/utgt/d0", k.size);
	put(dev, "uio3", k.mem, k.size);
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), 0, "%s", err);
	wait_tail(dev, "uio3", k.head);
	wait_show("d0", "\"uio_name\":\"uio3\",\"dev_config\":\"d0\",\"fabric\":\"\","
			"\"protocol\":\"sas\"");
	/* configfs: srpt/<port>/<port>/lun/lun_0/lioS -> core/user_1/lioS */
	const char *dirs[] = {"srpt", "srpt/fe80::2", "srpt/fe80::2/fe80::2",
			      "srpt/fe80::2/fe80::2/lun", "srpt/fe80::2/fe80::2/lun/lun_0"};
	for (unsigned i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/%s", sys, dirs[i]);
		cr_assert_eq(mkdir(p, 0755), 0, "%s", p);
	}
	snprintf(p, sizeof(p), "%s/srpt/fe80::2/fe80::2/lun/lun_0/lioS", sys);
	cr_assert_eq(symlink("../../../../../core/user_1/lioS", p), 0);
	wait_show("d0", "\"fabric\":\"srpt\",\"protocol\":\"srp\"");

	put(sys, "uio3/name", "tcm-user/1/lioS/utgt/other", 26);
	usleep(1200000); /* two scans */
	cr_assert(tcmu_transport.uses_device("d0"), "still served by d0");
	wait_show("d0", "\"uio_name\":\"uio3\",\"dev_config\":\"d0\"");

	tcmu_transport.stop();
	fk_fini(&k);
	scsi_core_shutdown();
	tgt_config_free(cfg);
}

/* ring_threads 1: the device is served by its ring thread alone (`show devices` says so),
 * and a live change to 2 is for devices served from then on: the served one keeps one. */
Test(tcmu_transport, ring_threads_attribute)
{
	char sys[] = "/tmp/utgt-tcmu-sys-XXXXXX", dev[] = "/tmp/utgt-tcmu-devs-XXXXXX";
	char err[256] = "";
	struct captured c;
	struct diag d;
	struct fk k;
	struct tgt_config *cfg, *cfg2;

	cfg = setup_drv(&k, sys, dev, &c, &d,
			"TARGET_DRIVER tcmu {\n\tenabled 1\n\tring_threads 1\n}\n");
	uio(sys, 4, "tcm-user/1/lio1/utgt/d0", k.size);
	put(dev, "uio4", k.mem, k.size);
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), 0, "%s", err);
	wait_tail(dev, "uio4", k.head);
	wait_show("d0", "\"ring_threads\":1,");
	wait_show("d0", "\"poll_us\":0,");

	cfg2 = load("TARGET_DRIVER tcmu {\n\tenabled 1\n\tring_threads 2\n}\n", &c, &d);
	cr_assert_not_null(cfg2, "%s", cap_dump(&c));
	cr_assert_eq(tgt_config_open_devices(cfg2, &d), 0, "%s", cap_dump(&c));
	cr_assert_eq(tcmu_transport.update(cfg2, tgt_config_driver(cfg2, "tcmu"), err, sizeof(err)),
		     0, "%s", err);
	wait_show("d0", "\"ring_threads\":1,");

	tcmu_transport.stop();
	fk_fini(&k);
	scsi_core_shutdown();
	tgt_config_free(cfg2);
	tgt_config_free(cfg);
}
