/* What an LIO RECONFIG_DEVICE (attrib/dev_size, attrib/emulate_write_cache, attrib/dev_config
 * written while the user backstore is enabled) does to the scst.conf DEVICE serving it, as
 * tcmu-runner does for its handlers:
 *
 *   dev_size             the DEVICE takes that size (utgtadm resize device), which raises
 *                        CAPACITY DATA HAS CHANGED (2A/09) on every nexus of it; the same size
 *                        again is accepted and changes nothing; a DEVICE that cannot resize
 *                        while open (ramdisk) refuses it
 *   emulate_write_cache  the caching mode page's WCE (MODE PARAMETERS CHANGED, 2A/01, when it
 *                        moved): 0 makes every write durable before it completes
 *   dev_config           the same DEVICE and options: accepted; another one is refused (the
 *                        LIO device keeps its DEVICE: re-create it to change that), as
 *                        tcmu-runner's handlers refuse a new cfgstring
 *
 * The status is what the netlink reply carries (0 or -errno); msg says what happened. */
#ifndef UTGT_TCMU_RECONFIG_H
#define UTGT_TCMU_RECONFIG_H

#include <stddef.h>

struct scsi_dev;
struct tcmu_nl_event;

/* sdev: the DEVICE serving the LIO device; cfg: its dev_config after "utgt/". */
int tcmu_reconfig(struct scsi_dev *sdev, const char *cfg, const struct tcmu_nl_event *ev, char *msg,
		  size_t msglen);

#endif
