/* UIO discovery and device files (tcmu_uio.c) on a fake sysfs tree and a plain file in place
 * of /dev/uioN. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transports/tcmu/tcmu_uio.h"

Test(tcmu_uio, parse_name)
{
	struct tcmu_uio_name n;

	cr_assert_eq(tcmu_uio_parse_name("tcm-user/1/tcmu0/utgt/ram0", &n), 0);
	cr_assert_eq(n.hba, 1);
	cr_assert_str_eq(n.dev, "tcmu0");
	cr_assert_str_eq(n.subtype, "utgt");
	cr_assert_str_eq(n.cfg, "ram0");
	/* tcmu-runner's handlers: cfgstring may hold more slashes */
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/0/f/file//var/tmp/x.img", &n), 0);
	cr_assert_str_eq(n.subtype, "file");
	cr_assert_str_eq(n.cfg, "/var/tmp/x.img");
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/3/nocfg", &n), -1, "no dev_config");
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/3/d/utgt/", &n), -1, "empty cfgstring");
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/3/d/utgt", &n), -1);
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/x/d/utgt/a", &n), -1);
	cr_assert_eq(tcmu_uio_parse_name("tcm-user//d/utgt/a", &n), -1);
	cr_assert_eq(tcmu_uio_parse_name("uio_pci_generic", &n), -1);
	cr_assert_eq(tcmu_uio_parse_name("tcm-user/99999999999/d/utgt/a", &n), -1);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *dir, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	cr_assert_eq(mkdir(p, 0755), 0, "%s", p);
}

Test(tcmu_uio, scan_finds_tcmu_devices_only)
{
	char root[] = "/tmp/utgt-tcmu-uio-XXXXXX";
	struct tcmu_uio_info u[8];
	unsigned n;

	cr_assert_not_null(mkdtemp(root));
	mk(root, "uio0"), mk(root, "uio0/maps"), mk(root, "uio0/maps/map0");
	put(root, "uio0/name", "tcm-user/1/tcmu0/utgt/ram0\n");
	put(root, "uio0/maps/map0/size", "0x48800000\n");
	mk(root, "uio1");
	put(root, "uio1/name", "uio_pci_generic\n");
	mk(root, "uio7"), mk(root, "uio7/maps"), mk(root, "uio7/maps/map0");
	put(root, "uio7/name", "tcm-user/2/other/file/x\n");
	put(root, "uio7/maps/map0/size", "4096\n");
	mk(root, "uio9"); /* no map: left out */
	put(root, "uio9/name", "tcm-user/2/nomap/utgt/ram0\n");
	mk(root, "notuio");
	n = tcmu_uio_scan(root, u, 8);
	cr_assert_eq(n, 2);
	if (u[0].minor != 0) {
		struct tcmu_uio_info x = u[0];
		u[0] = u[1], u[1] = x;
	}
	cr_assert_eq(u[0].minor, 0);
	cr_assert_str_eq(u[0].name, "tcm-user/1/tcmu0/utgt/ram0");
	cr_assert_eq(u[0].map_size, 0x48800000ull);
	cr_assert_eq(u[1].minor, 7);
	cr_assert_eq(u[1].map_size, 4096);
	cr_assert_eq(tcmu_uio_scan(root, u, 1), 1, "bounded by max");
	cr_assert_eq(tcmu_uio_scan("/nonexistent/utgt", u, 8), 0);
}

Test(tcmu_uio, open_maps_and_kicks)
{
	char dir[] = "/tmp/utgt-tcmu-dev-XXXXXX", p[512], err[256] = "";
	void *map = NULL;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(tcmu_uio_open(dir, 3, 4096, &map, err, sizeof(err)), -1);
	cr_assert(strstr(err, "uio3"), "%s", err);
	snprintf(p, sizeof(p), "%s/uio3", dir);
	fd = open(p, O_CREAT | O_RDWR, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 8192), 0);
	close(fd);
	fd = tcmu_uio_open(dir, 3, 8192, &map, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	((uint8_t *)map)[8191] = 1; /* the whole size is mapped */
	cr_assert_eq(tcmu_uio_wait(fd), 1, "4 bytes read: an event");
	cr_assert_eq(lseek(fd, 0, SEEK_END), 8192);
	cr_assert_eq(tcmu_uio_wait(fd), -ENOTTY, "the end of a plain file: no uio device");
	tcmu_uio_kick(fd);
	munmap(map, 8192);
	close(fd);
	cr_assert_eq(tcmu_uio_wait(fd), -EBADF, "a closed fd reads as gone");
}

static void on_sig(int sig)
{
	(void)sig;
}

static int waited = 2; /* what tcmu_uio_wait() returned on the waiter thread */

static void *waiter(void *arg)
{
	__atomic_store_n(&waited, tcmu_uio_wait(*(int *)arg), __ATOMIC_RELEASE);
	return NULL;
}

/* The wait blocks until the fd has 4 bytes for it, and a signal (with a handler that does not
 * restart system calls) ends it with 0: how the ring thread is stopped. */
Test(tcmu_uio, wait_blocks_until_an_event_or_a_signal)
{
	struct sigaction sa = {.sa_handler = on_sig};
	uint32_t one = 1;
	pthread_t th;
	int p[2];

	cr_assert_eq(sigaction(SIGUSR2, &sa, NULL), 0);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], &one, 4), 4);
	cr_assert_eq(tcmu_uio_wait(p[0]), 1);
	cr_assert_eq(pthread_create(&th, NULL, waiter, &p[0]), 0);
	/* the signal may come before the thread is in read(): send it until the wait ends */
	for (int i = 0; __atomic_load_n(&waited, __ATOMIC_ACQUIRE) == 2; i++) {
		cr_assert_lt(i, 1000, "the wait did not end on a signal");
		pthread_kill(th, SIGUSR2);
		usleep(10000);
	}
	pthread_join(th, NULL);
	cr_assert_eq(waited, 0, "a signal ends the wait with 0 (got %d)", waited);
	close(p[0]);
	close(p[1]);
}
