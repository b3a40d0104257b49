/* The kernel's TCM-USER generic netlink family (target_core_user.c), spoken without libnl.
 *
 * LIO multicasts ADDED_DEVICE, REMOVED_DEVICE and RECONFIG_DEVICE to the family's "config"
 * group.  A RECONFIG_DEVICE is sent when an enabled user backstore's attrib/dev_config,
 * attrib/dev_size or attrib/emulate_write_cache is written; with nobody in the group the
 * multicast fails (ESRCH) and so does the configfs write, which is why a handler has to
 * listen.  When the device's nl_reply_supported is above 0 (tcmu-runner switched replies on
 * with SET_FEATURES) the kernel also waits for a *_DONE message carrying a status, and
 * refuses the change when it is not 0.
 *
 * Parsing and building are plain functions on byte buffers (tests feed them what the kernel
 * sends); tcmu_nl_open() and friends do the socket work. */
#ifndef UTGT_TCMU_NL_H
#define UTGT_TCMU_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCMU_NL_STR 256

struct tcmu_nl_event {
	uint8_t cmd;	 /* TCMU_CMD_ADDED_DEVICE / REMOVED_DEVICE / RECONFIG_DEVICE */
	uint8_t version; /* genl header version: replies are expected from version 2 on */
	bool has_minor, has_dev_id, has_cfg, has_size, has_wce;
	uint32_t minor;		      /* uioN */
	uint32_t dev_id;	      /* LIO's device index: what a reply names */
	char device[TCMU_NL_STR * 2]; /* the uio name: tcm-user/<hba>/<name>/<subtype>/<cfg> */
	char cfg[TCMU_NL_STR];	      /* RECONFIG: the new dev_config */
	uint64_t size;		      /* RECONFIG: the new dev_size */
	uint8_t wce;		      /* RECONFIG: the new emulate_write_cache */
};

/* One message of buf (len bytes at most) from the family `family`.  Returns its aligned
 * length (the next message starts there), 0 when buf holds no whole message, -1 when the
 * header is malformed (stop reading this buffer).  *ev is filled, and *is_event set, only
 * for a well-formed event of this family; anything else (NLMSG_ERROR for a reply of ours,
 * another family, a command we do not know, an attribute with a bad length) leaves
 * *is_event false. */
long tcmu_nl_parse(const void *buf, size_t len, uint16_t family, struct tcmu_nl_event *ev,
		   bool *is_event);
/* The reply for ev (cmd + 3: ADDED_DEVICE_DONE, REMOVED_DEVICE_DONE, RECONFIG_DEVICE_DONE)
 * with status (0 or -errno) into buf; its length, or 0 when cap is too small. */
size_t tcmu_nl_build_reply(void *buf, size_t cap, uint16_t family, uint32_t seq,
			   const struct tcmu_nl_event *ev, int32_t status);
/* A CTRL_CMD_GETFAMILY request for name. */
size_t tcmu_nl_build_getfamily(void *buf, size_t cap, const char *name, uint32_t seq);
/* From the controller's answer: the family id and the id of multicast group grp.  0, or -1
 * (not an answer, or no such group). */
int tcmu_nl_parse_family(const void *buf, size_t len, const char *grp, uint16_t *family,
			 uint32_t *group);

/* A socket in the TCM-USER "config" group (read it with MSG_DONTWAIT).  The fd, or -1 with err
 * filled (no such family: target_core_user is not loaded). */
int tcmu_nl_open(uint16_t *family, char *err, size_t errlen);
/* Send a reply; 0, or -1 (errno). */
int tcmu_nl_send(int fd, const void *msg, size_t len);

#endif
