/* The cfgstring of a utgt user backstore (dev_config=utgt/<cfgstring>): the scst.conf DEVICE
 * name, then options separated by ';' (a ',' cannot appear: LIO splits its control string on
 * commas).  The one option is a test's fault injection:
 *
 *   utgt/ram0;hang_lba=100000
 *
 * makes every other READ/WRITE starting at that LBA hang until a task management function
 * aborts it (tcmu_dev_set_hang_lba()). */
#ifndef UTGT_TCMU_CFG_H
#define UTGT_TCMU_CFG_H

#include <stddef.h>
#include <stdint.h>

struct tcmu_cfg {
	char device[64];
	uint64_t hang_lba; /* UINT64_MAX: off */
};

/* 0, or -1 with err filled (unknown option, bad number, DEVICE name empty or too long). */
int tcmu_cfg_parse(const char *s, struct tcmu_cfg *out, char *err, size_t errlen);

#endif
