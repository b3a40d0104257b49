/* The kernel side of a TCMU device as files: /sys/class/uio/uioN/name says which LIO user
 * backstore it is ("tcm-user/<hba>/<name>/<subtype>/<cfgstring>"), maps/map0/size how much to
 * map, /dev/uioN is the fd to mmap, wait on (a blocking 4-byte read) and kick (write 4). */
#ifndef UTGT_TCMU_UIO_H
#define UTGT_TCMU_UIO_H

#include <stddef.h>
#include <stdint.h>

#define TCMU_UIO_STR 256

struct tcmu_uio_name {
	unsigned hba;
	char dev[TCMU_UIO_STR];	    /* the LIO device name (configfs core/user_<hba>/<dev>) */
	char subtype[TCMU_UIO_STR]; /* dev_config up to the first '/': "utgt" is ours */
	char cfg[TCMU_UIO_STR];	    /* the rest of dev_config: for us, the DEVICE name */
};

struct tcmu_uio_info {
	unsigned minor; /* N in uioN */
	char name[TCMU_UIO_STR * 2];
	uint64_t map_size;
};

/* Parse a uio name; 0 when it is a TCMU device with a dev_config, -1 otherwise. */
int tcmu_uio_parse_name(const char *name, struct tcmu_uio_name *out);
/* The uio devices under root (normally /sys/class/uio) that are TCMU devices; at most max.
 * Returns how many were found (devices whose map size cannot be read are left out). */
unsigned tcmu_uio_scan(const char *root, struct tcmu_uio_info *out, unsigned max);
/* Open /dev/uio<minor> and map size bytes; the fd, or -1 with err filled. */
int tcmu_uio_open(const char *devdir, unsigned minor, size_t size, void **map, char *err,
		  size_t errlen);
/* Wait for the kernel's next notification (a blocking 4-byte read, which also acknowledges
 * it): 1 when it came, 0 when a signal interrupted the wait, -errno when the device is gone
 * (EIO) or the fd reads to its end (-ENOTTY: a plain file standing in for /dev/uioN). */
int tcmu_uio_wait(int fd);
/* Tell the kernel cmd_tail moved. */
void tcmu_uio_kick(int fd);

#endif
