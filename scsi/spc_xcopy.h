/* EXTENDED COPY (LID1) and RECEIVE COPY RESULTS: the copy manager of one LU.  Private to
 * scsi/spc_xcopy*.c.
 *
 * Security model (the lesson of CVE-2020-28374): a CSCD descriptor names an LU by its NAA
 * designator, and the only LUs we look it up among are those in the requesting I_T nexus's own
 * LUN table (t->nexus->luns), which the ACLs built.  A copy can therefore only read or write an
 * LU the initiator could already read or write with ordinary commands through the same nexus,
 * and it is subject to the same read-only, write-protect, reservation, ALUA and not-ready rules.
 * SCST's copy_manager target in scst.conf is accepted by the config loader, but it grants
 * nothing here: the nexus's LUN table is the authority. */
#ifndef UTGT_SPC_XCOPY_H
#define UTGT_SPC_XCOPY_H

#include <pthread.h>

#include "scsi/scsi_cmd.h"

/* Limits, as RECEIVE COPY RESULTS OPERATING PARAMETERS reports them. */
#define XC_MAX_TARGETS	     16
#define XC_MAX_SEGMENTS	     64
#define XC_MAX_DESC_LIST_LEN (XC_MAX_TARGETS * 32 + XC_MAX_SEGMENTS * 28)
#define XC_MAX_SEGMENT_LEN   (0xffffu * 4096u) /* the 16-bit block count at 4 KiB blocks */
#define XC_MAX_CONCURRENT    16		       /* copies running at once per copy manager */
#define XC_MAX_TRACKED	     32		       /* finished copies kept for RECEIVE COPY RESULTS */
#define XC_CHUNK	     (1u << 20)	       /* bytes per read/write round trip */

/* Descriptor type codes we implement. */
#define XC_SEG_BLOCK_TO_BLOCK 0x02
#define XC_CSCD_ID	      0xe4

#define XC_TARGET_DESC_LEN 32
#define XC_SEG_B2B_LEN	   28

/* LIST ID USAGE (SPC-4 6.4.3, byte 1 bits 4-3). */
enum xc_list_id_usage {
	XC_LID_HOLD = 0,    /* keep the status for RECEIVE COPY RESULTS */
	XC_LID_NO_HOLD = 2, /* do not keep it */
	XC_LID_NONE = 3,    /* no list identifier: LIST ID must be 0 */
};

struct xc_target {
	struct scsi_dev *dev;
	const struct scsi_lun_entry *ent;
};

struct xc_segment {
	uint16_t src, dst; /* CSCD descriptor indexes */
	bool dc;	   /* block count in destination blocks */
	uint32_t nblocks;
	uint64_t src_lba, dst_lba;
	uint32_t desc_off; /* offset of the descriptor in the parameter list */
};

struct xc_list {
	uint8_t list_id;
	uint8_t list_id_usage;
	unsigned ntargets;
	struct xc_target tgt[XC_MAX_TARGETS];
	unsigned nsegs;
	struct xc_segment seg[XC_MAX_SEGMENTS];
};

/* Parse and validate an EXTENDED COPY(LID1) parameter list, resolving every CSCD descriptor
 * among t->nexus's LUs.  Returns SR_OK or the reason (with the parameter-list field pointer set
 * on t). */
enum scsi_sr xc_parse(struct scsi_task *t, const uint8_t *buf, uint32_t len, struct xc_list *out);

/* One copy operation as RECEIVE COPY RESULTS reports it. */
enum xc_state {
	XC_FREE = 0,
	XC_RUNNING,
	XC_DONE_OK,
	XC_DONE_ERROR,
};

struct xc_op {
	enum xc_state state;
	char port[SCSI_NAME_MAX + 24];
	uint16_t rtpi;
	uint8_t list_id;
	bool hold;    /* keep after completion */
	uint64_t seq; /* age, for evicting the oldest finished operation */
	uint16_t segs_done;
	uint64_t bytes_done;
	uint8_t sense_key, asc, ascq; /* the failure, for FAILED SEGMENT DETAILS */
};

struct scsi_xcopy {
	struct scsi_dev *dev;
	pthread_mutex_t mu;
	uint64_t seq;
	struct xc_op ops[XC_MAX_TRACKED];
};

/* Find the operation (nx, list_id), or NULL.  Caller holds xc->mu. */
struct xc_op *xc_op_find(struct scsi_xcopy *xc, const struct scsi_nexus *nx, uint8_t list_id);

#endif
