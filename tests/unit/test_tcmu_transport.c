/* The tcmu driver (tcmu_transport.c): its place in the registry, its configuration, and
 * discovery on a fake sysfs tree: a dev_config naming no DEVICE and another subtype are left
 * alone, utgt/<DEVICE> is opened and served (a plain file stands in for /dev/uioN). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "scsi/scsi_task.h"
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

Test(tcmu_transport, discovery_serves_utgt_devices_only)
{
	char sys[] = "/tmp/utgt-tcmu-sys-XXXXXX", dev[] = "/tmp/utgt-tcmu-devs-XXXXXX";
	char err[256] = "", path[512];
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load("TARGET_DRIVER tcmu {\n\tenabled 1\n}\n", &c, &d);
	static const uint8_t tur[6] = {0};
	struct fk k;
	uint32_t tail = 0;
	time_t end;
	int fd;

	cr_assert_not_null(cfg);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0, "%s", cap_dump(&c));
	cr_assert_eq(scsi_core_init(1), 0);
	cr_assert_not_null(mkdtemp(sys));
	cr_assert_not_null(mkdtemp(dev));
	/* a ring with one TEST UNIT READY queued, as the file behind /dev/uio2 */
	fk_init(&k, 4096, 4096, TCMU_MAILBOX_FLAG_CAP_OOOC);
	fk_cmd(&k, tur, 6, NULL, 0);
	uio(sys, 0, "tcm-user/1/lio0/utgt/nosuch", k.size);
	uio(sys, 1, "tcm-user/1/lio1/file/x.img", k.size);
	uio(sys, 2, "tcm-user/1/lio2/utgt/d0", k.size);
	put(dev, "uio2", k.mem, k.size);
	/* uio0 and uio1 have no device file: opening them would fail loudly */
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), 0, "%s", err);
	snprintf(path, sizeof(path), "%s/uio2", dev);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	end = time(NULL) + 10;
	while (tail != k.head) {
		cr_assert_eq(pread(fd, &tail, 4, offsetof(struct tcmu_mailbox, cmd_tail)), 4);
		cr_assert_lt(time(NULL), end, "the queued command was never completed");
		usleep(10000);
	}
	close(fd);
	cr_assert_eq(tcmu_transport_start_at(cfg, sys, dev, sys, err, sizeof(err)), -1,
		     "a second start is refused");
	tcmu_transport.stop();
	tcmu_transport.stop(); /* twice: harmless */
	fk_fini(&k);
	scsi_core_shutdown();
	tgt_config_free(cfg);
}
