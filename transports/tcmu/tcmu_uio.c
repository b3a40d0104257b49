/* TCMU devices through UIO (see tcmu_uio.h).  Discovery reads sysfs only; the kernel's
 * TCM-USER netlink family is not needed (docs/tcmu.md says why). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transports/tcmu/tcmu_uio.h"

static int copy_part(char *dst, const char *src, size_t n)
{
	if (n == 0 || n >= TCMU_UIO_STR)
		return -1;
	memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}

int tcmu_uio_parse_name(const char *name, struct tcmu_uio_name *out)
{
	static const char pfx[] = "tcm-user/";
	const char *p = name, *s;
	char *end;
	unsigned long hba;

	memset(out, 0, sizeof(*out));
	if (strncmp(p, pfx, sizeof(pfx) - 1))
		return -1;
	p += sizeof(pfx) - 1;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	hba = strtoul(p, &end, 10);
	if (errno || *end != '/' || hba > UINT32_MAX)
		return -1;
	out->hba = (unsigned)hba;
	p = end + 1;
	if (!(s = strchr(p, '/')) || copy_part(out->dev, p, (size_t)(s - p)))
		return -1; /* no dev_config at all */
	p = s + 1;
	if (!(s = strchr(p, '/')) || copy_part(out->subtype, p, (size_t)(s - p)))
		return -1;
	p = s + 1;
	return copy_part(out->cfg, p, strlen(p));
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = 0;
	return 0;
}

unsigned tcmu_uio_scan(const char *root, struct tcmu_uio_info *out, unsigned max)
{
	DIR *d = opendir(root);
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char path[512], buf[32];
		struct tcmu_uio_name nm;
		char *end;
		unsigned long minor;
		unsigned long long size;

		if (strncmp(de->d_name, "uio", 3) || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		minor = strtoul(de->d_name + 3, &end, 10);
		if (*end || minor > 1u << 20)
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", root, de->d_name);
		if (read_line(path, out[n].name, sizeof(out[n].name)) < 0 ||
		    tcmu_uio_parse_name(out[n].name, &nm) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/maps/map0/size", root, de->d_name);
		if (read_line(path, buf, sizeof(buf)) < 0)
			continue;
		errno = 0;
		size = strtoull(buf, &end, 0);
		if (errno || *end || !size)
			continue;
		out[n].minor = (unsigned)minor;
		out[n].map_size = size;
		n++;
	}
	closedir(d);
	return n;
}

int tcmu_uio_open(const char *devdir, unsigned minor, size_t size, void **map, char *err,
		  size_t errlen)
{
	char path[256];
	int fd;
	void *m;

	snprintf(path, sizeof(path), "%s/uio%u", devdir, minor);
	/* blocking: the ring thread's read() is its wait for the kernel (tcmu_uio_wait) */
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EBUSY ? " (another daemon, tcmu-runner?, has it open)" : "");
		return -1;
	}
	/* map0 is at offset 0; pages of the data area exist only while a command uses them,
	 * so nothing is touched before the kernel hands it to us */
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "mmap %s (%zu bytes): %s", path, size, strerror(errno));
		close(fd);
		return -1;
	}
	*map = m;
	return fd;
}

int tcmu_uio_wait(int fd)
{
	uint32_t n;
	ssize_t r = read(fd, &n, sizeof(n));

	if (r == (ssize_t)sizeof(n))
		return 1;
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r == 0)
		return -ENOTTY; /* end of file: a plain file, not a uio device */
	return r < 0 ? -errno : -EIO;
}

void tcmu_uio_kick(int fd)
{
	uint32_t one = 1;
	ssize_t r = write(fd, &one, sizeof(one));
	(void)r; /* a gone device is noticed by poll/read */
}
