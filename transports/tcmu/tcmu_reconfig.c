/* RECONFIG_DEVICE applied to a DEVICE (see tcmu_reconfig.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scsi/scsi_dev.h"
#include "transports/tcmu/tcmu_nl.h"
#include "transports/tcmu/tcmu_reconfig.h"

/* configfs hands the written page as it came: `echo` adds a newline */
static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static int new_size(struct scsi_dev *sdev, uint64_t bytes, char *msg, size_t msglen)
{
	uint64_t now = sdev->nr_blocks * sdev->block_size;
	char err[256] = "";

	if (bytes == now) {
		snprintf(msg, msglen, "dev_size %" PRIu64 ": the DEVICE's size already", bytes);
		return 0;
	}
	if (!bytes || bytes % sdev->block_size) {
		snprintf(msg, msglen, "dev_size %" PRIu64 " refused: not a multiple of %u", bytes,
			 sdev->block_size);
		return -EINVAL;
	}
	if (scsi_dev_set_size(sdev, bytes, err, sizeof(err)) != 0) {
		snprintf(msg, msglen, "dev_size %" PRIu64 " refused: %s", bytes, err);
		return -EOPNOTSUPP;
	}
	snprintf(msg, msglen, "dev_size: DEVICE resized from %" PRIu64 " to %" PRIu64 " bytes", now,
		 sdev->nr_blocks * sdev->block_size);
	return 0;
}

int tcmu_reconfig(struct scsi_dev *sdev, const char *cfg, const struct tcmu_nl_event *ev, char *msg,
		  size_t msglen)
{
	if (ev->has_size)
		return new_size(sdev, ev->size, msg, msglen);
	if (ev->has_wce) {
		bool changed = scsi_dev_set_wce(sdev, ev->wce != 0);

		snprintf(msg, msglen, "emulate_write_cache %u: WCE %s", ev->wce,
			 changed ? "changed" : "unchanged");
		return 0;
	}
	if (ev->has_cfg) {
		char want[TCMU_NL_STR];

		snprintf(want, sizeof(want), "%s", ev->cfg);
		chomp(want);
		if (!strncmp(want, "utgt/", 5) && !strcmp(want + 5, cfg)) {
			snprintf(msg, msglen, "dev_config %s: unchanged", want);
			return 0;
		}
		snprintf(msg, msglen,
			 "dev_config %s refused: a running LIO device keeps utgt/%s (re-create it "
			 "to serve another DEVICE)",
			 want, cfg);
		return -EOPNOTSUPP;
	}
	snprintf(msg, msglen, "reconfiguration with no attribute utgt knows refused");
	return -EOPNOTSUPP;
}
