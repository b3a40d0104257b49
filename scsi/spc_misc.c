/* TEST UNIT READY, REQUEST SENSE, START STOP UNIT, PREVENT ALLOW MEDIUM REMOVAL. */
#include <string.h>

#include "scsi/scsi_core.h"

enum scsi_sr spc_test_unit_ready(struct scsi_task *t)
{
	return scsi_dev_readiness(t->core.dev);
}

/* REQUEST SENSE returns, as data with GOOD status, what a command would have been told:
 * a pending UNIT ATTENTION (and clears it), the medium's not-ready state, or NO SENSE. */
enum scsi_sr spc_request_sense(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	bool desc = t->cdb[1] & 0x01;
	uint8_t alloc = t->cdb[4];
	uint8_t buf[SCSI_SENSE_MAX];
	uint8_t key = SK_NO_SENSE, asc = 0, ascq = 0;
	size_t len;

	if (t->cdb[1] & 0xfe)
		return scsi_invalid_cdb(t, 1, scsi_msb(t->cdb[1] & 0xfe));
	if (!dev) {
		const struct scsi_sr_info *i = scsi_sr_info(SR_LUN_NOT_SUPPORTED);
		key = i->key;
		asc = i->asc;
		ascq = i->ascq;
	} else if (scsi_ua_pop(dev, t->nexus, &asc, &ascq)) {
		key = SK_UNIT_ATTENTION;
	} else {
		enum scsi_sr sr = scsi_dev_readiness(dev);
		if (sr != SR_OK) {
			const struct scsi_sr_info *i = scsi_sr_info(sr);
			key = i->key;
			asc = i->asc;
			ascq = i->ascq;
		}
	}
	len = scsi_build_sense(buf, sizeof(buf), desc, key, asc, ascq, NULL);
	scsi_data_in(t, buf, (uint32_t)(len < alloc ? len : alloc));
	return SR_OK;
}

/* SBC-3 5.25.  A non-zero POWER CONDITION makes the device server ignore START and LOEJ; we
 * have no power conditions to enter, so such a command succeeds and changes nothing (what
 * libiscsi's StartStopUnit.PowerCondition test expects).  LOEJ applies to removable media
 * only, and not while removal is prevented.  START=0 without LOEJ stops a fixed-medium LU
 * (NOT READY 04/02 until START=1, as a disk would); on a removable LU it leaves the loaded
 * medium accessible, as libiscsi's StartStopUnit.NoLoej expects (and SCST's and LIO's virtual
 * disks behave). */
enum scsi_sr spc_start_stop_unit(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint8_t pc = t->cdb[4] >> 4;
	bool loej = t->cdb[4] & 0x02, start = t->cdb[4] & 0x01;
	enum scsi_sr sr = SR_OK;

	if (t->cdb[1] & 0xfe)
		return scsi_invalid_cdb(t, 1, scsi_msb(t->cdb[1] & 0xfe));
	if (pc != 0)
		return SR_OK;
	if (loej && !dev->p.removable)
		return scsi_invalid_cdb(t, 4, 1);

	pthread_mutex_lock(&dev->lock);
	if (loej && dev->prevent) {
		sr = SR_MEDIUM_REMOVAL_PREVENTED;
	} else if (start) {
		dev->stopped = false;
		/* loading: a CD-ROM without an image (SCST's empty vcdrom) stays empty */
		if (loej && dev->medium_removed && dev->nr_blocks) {
			dev->medium_removed = false;
			dev->media_event = MEDIA_EV_NEW;
		}
	} else if (loej) {
		if (!dev->medium_removed)
			dev->media_event = MEDIA_EV_REMOVAL;
		dev->medium_removed = true;
	} else if (!dev->p.removable) {
		dev->stopped = true;
	}
	scsi_dev_medium_changed(dev);
	pthread_mutex_unlock(&dev->lock);
	return sr;
}

/* Removal prevention is kept per I_T nexus (with the nexus's UA state); dev->prevent counts
 * the nexuses that hold it. */
enum scsi_sr spc_prevent_allow(struct scsi_task *t)
{
	struct scsi_dev *dev = t->core.dev;
	uint8_t prevent = t->cdb[4] & 0x03;

	if (prevent > 1)
		return scsi_invalid_cdb(t, 4, 1);
	if (!dev->p.removable)
		return SR_OK; /* nothing can be removed: nothing to prevent */
	scsi_ua_set_prevent(dev, t->nexus, prevent == 1);
	return SR_OK;
}
