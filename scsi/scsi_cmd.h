/* Inside the core: the per-opcode table that both dispatches commands and generates REPORT
 * SUPPORTED OPERATION CODES, the handler signature, and the helpers handlers use to move data
 * and to finish asynchronously.  Transports never include this. */
#ifndef UTGT_SCSI_CMD_H
#define UTGT_SCSI_CMD_H

#include "scsi/scsi_dev.h"
#include "scsi/scsi_lun.h"
#include "scsi/scsi_sense.h"
#include "scsi/scsi_task.h"

/* What a handler returns: SR_OK (data and result ready), another scsi_sr (error), or SR_ASYNC
 * (it will call scsi_task_complete() later, from any thread). */
typedef enum scsi_sr (*scsi_handler_fn)(struct scsi_task *t);

/* Command flags. */
enum {
	SCSI_CF_SA          = 1u << 0,  /* service action in byte 1 bits 0-4 selects the entry */
	SCSI_CF_DATA_IN     = 1u << 1,
	SCSI_CF_DATA_OUT    = 1u << 2,
	SCSI_CF_MEDIA       = 1u << 3,  /* touches the medium: NOT READY when stopped/ejected */
	SCSI_CF_WRITE       = 1u << 4,  /* modifies the medium: DATA PROTECT when read-only */
	SCSI_CF_NO_UA       = 1u << 5,  /* neither reports nor clears a pending UNIT ATTENTION */
	SCSI_CF_NO_LU       = 1u << 6,  /* runs even when the LUN addresses no LU */
	SCSI_CF_SPC2_OK     = 1u << 7,  /* allowed while another nexus holds an SPC-2 reservation */
	SCSI_CF_ALUA_SB_OK  = 1u << 8,  /* allowed in ALUA standby/unavailable */
	SCSI_CF_HOQ_ONLY    = 1u << 9,  /* never waits behind the task set (INQUIRY, REPORT LUNS) */
	SCSI_CF_CONFLICT_RO = 1u << 10, /* refused on a read-only LU even though not CF_WRITE */
	SCSI_CF_SANITIZE_OK = 1u << 11, /* served while a sanitize runs (others: NOT READY 04/1B) */
	SCSI_CF_MMC         = 1u << 12, /* a CD-ROM LU offers it too (the rest are block-only) */
	SCSI_CF_MMC_ONLY    = 1u << 13, /* MMC: only a CD-ROM LU offers it */
	SCSI_CF_FAST        = 1u << 14, /* READ/WRITE: may be admitted lock-free (scsi_exec.c) */
};

/* How a command fares under a persistent reservation held by another I_T nexus (SPC-4 5.13,
 * table "SPC commands that are allowed in the presence of various reservations"). */
enum scsi_pr_class {
	PRC_ALLOWED, /* allowed under every reservation type */
	PRC_READ,    /* conflicts only with Exclusive Access types (non-registrants for *_RO/AR) */
	PRC_WRITE,   /* conflicts with Write Exclusive and Exclusive Access types */
	PRC_PROUT,   /* PERSISTENT RESERVE OUT: checks itself */
};

struct scsi_cmd_desc {
	uint8_t opcode;
	uint8_t sa;
	uint8_t cdb_len;
	uint8_t pr_class;
	uint32_t flags;
	const char *name;
	scsi_handler_fn fn;
	/* CDB usage data for REPORT SUPPORTED OPERATION CODES: which bits the handler examines. */
	uint8_t usage[16];
	/* Optional per-LU view of the entry (NULL: every LU offers it as described).  Returns
	 * false when this LU does not offer the command: dispatch then answers INVALID COMMAND
	 * OPERATION CODE (after a pending UNIT ATTENTION) and REPORT SUPPORTED OPERATION CODES
	 * leaves it out.  With usage non-NULL (a copy of the usage data above) it also clears
	 * the bits of CDB fields this LU refuses (e.g. WRITE SAME's UNMAP on a fully provisioned
	 * LU).  Must not block: it runs on the dispatch path. */
	bool (*lu_support)(const struct scsi_dev *dev, uint8_t *usage);
};

/* Is d in the command set of dev's device type (any type when dev is NULL)? */
static inline bool scsi_cmd_for_type(const struct scsi_cmd_desc *d, const struct scsi_dev *dev)
{
	bool cdrom = dev && dev->p.type == SCSI_TYPE_CDROM;

	return cdrom ? (d->flags & (SCSI_CF_MMC | SCSI_CF_MMC_ONLY)) != 0
		     : !(dev && (d->flags & SCSI_CF_MMC_ONLY));
}

/* Does dev offer d (its device type's command set, then lu_support)?  usage: NULL, or a copy
 * of d->usage to adjust. */
static inline bool scsi_cmd_on_lu(const struct scsi_cmd_desc *d, const struct scsi_dev *dev,
				  uint8_t *usage)
{
	if (!scsi_cmd_for_type(d, dev))
		return false;
	return !d->lu_support || !dev || d->lu_support(dev, usage);
}

extern const struct scsi_cmd_desc scsi_cmd_table[];
extern const unsigned scsi_cmd_table_len;
/* Find the entry for a CDB (opcode, and service action where the opcode has them). */
const struct scsi_cmd_desc *scsi_cmd_lookup(const uint8_t *cdb);
/* The same for a CDB addressed to dev: where device types give an opcode different commands
 * (42h: UNMAP on a disk, READ SUB-CHANNEL on a CD-ROM), the row of dev's type; else, or with
 * dev NULL, the first row (which dev may then not offer: scsi_cmd_on_lu). */
const struct scsi_cmd_desc *scsi_cmd_lookup_dev(const uint8_t *cdb, const struct scsi_dev *dev);
/* The row of (opcode, service action) for dev's type, as REPORT SUPPORTED OPERATION CODES
 * names a command; use_sa false: the opcode's row when it has no service actions. */
const struct scsi_cmd_desc *scsi_cmd_find(uint8_t opcode, uint16_t sa, bool use_sa,
					  const struct scsi_dev *dev);
/* Does any entry use this opcode (to tell "invalid opcode" from "invalid service action")? */
bool scsi_cmd_opcode_known(uint8_t opcode);

/* ---- helpers for handlers (scsi/scsi_data.c) ---- */
/* Copy data-in to the task's buffer, bounded by exp_xfer_len; `len` is what the command
 * would return (already cut to its allocation length).  Records it for residuals. */
void scsi_data_in(struct scsi_task *t, const void *buf, uint32_t len);
/* Copy up to len bytes of data-out (parameter list) from the task; returns bytes copied. */
uint32_t scsi_data_out(struct scsi_task *t, void *buf, uint32_t len);
/* Record the transfer length the CDB asks for (bytes) so residuals can be computed for
 * commands whose data goes straight between iov and backstore. */
void scsi_xfer_wanted(struct scsi_task *t, uint64_t bytes);
/* Bytes the command may really move: min(wanted, exp_xfer_len) (rule in scsi/scsi_data.c). */
uint32_t scsi_xfer_len(const struct scsi_task *t);
/* Record what a data-out command of `nblocks` blocks of `bsz` bytes wants and refuse it when
 * the expected length ends inside a block (rule in scsi/scsi_data.c): SR_OK or
 * SR_INVALID_FIELD_IN_IU, with the residual still reported. */
enum scsi_sr scsi_xfer_blocks_out(struct scsi_task *t, uint64_t nblocks, uint32_t bsz);

/* Finish an SR_ASYNC command. */
void scsi_task_complete(struct scsi_task *t, enum scsi_sr sr);
/* Run fn on a core worker thread where it may block on backstore I/O (bs_submit_sync);
 * its return value finishes the task.  Returns SR_ASYNC for the handler to return. */
enum scsi_sr scsi_run_blocking(struct scsi_task *t, scsi_handler_fn fn);
/* Bracket a wait, on a core worker, for something that itself needs a worker (the tasks
 * PREEMPT AND ABORT waits for, a range lock whose holder may be a queued job).  Meanwhile the
 * pool starts another thread, so the configured number of workers stay available and every
 * worker waiting at once cannot deadlock.  Waits for backstore I/O need no bracket.  Off a
 * worker thread both are no-ops. */
void scsi_worker_block_begin(void);
void scsi_worker_block_end(void);
/* Threads in the worker pool right now (the configured ones plus stand-ins). */
unsigned scsi_core_workers(void);

/* The one mapping from backstore status to sense reason. */
enum scsi_sr scsi_sr_from_bs(enum bs_status st, bool write);

/* CDB field access */
static inline uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get_be24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]; }
static inline uint32_t get_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static inline uint64_t get_be64(const uint8_t *p) { return (uint64_t)get_be32(p) << 32 | get_be32(p + 4); }
static inline void put_be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static inline void put_be24(uint8_t *p, uint32_t v) { p[0] = v >> 16; p[1] = v >> 8; p[2] = v; }
static inline void put_be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static inline void put_be64(uint8_t *p, uint64_t v) { put_be32(p, v >> 32); put_be32(p + 4, (uint32_t)v); }

/* ---- identity shared by VPD 83, XCOPY and the bench's path check (scsi/spc_vpd.c) ---- */
/* 16-byte NAA IEEE Registered Extended (type 6) designator utgt derives for the LU. */
void scsi_dev_naa(const struct scsi_dev *dev, uint8_t out[16]);
/* Does VPD 83 report this LU designator (type 2 EUI-64 or 3 NAA, binary) for dev?  What
 * EXTENDED COPY uses to find a copy target by the identity the initiator read. */
bool scsi_dev_has_lu_designator(const struct scsi_dev *dev, uint8_t type, const uint8_t *id,
				uint8_t len);
/* Target port group of rel_tgt_id on dev (ALUA), or NULL when access is symmetric. */
const struct scsi_tpg *scsi_dev_tpg(const struct scsi_dev *dev, uint16_t rel_tgt_id);

/* ---- reservations (scsi/spc_pr.c, scsi/spc_reserve.c) ---- */
/* NULL with a reason in err when the state cannot be had (a shared store unreadable). */
struct scsi_pr *scsi_pr_create(struct scsi_dev *dev, char *err, size_t errlen);
void scsi_pr_destroy(struct scsi_pr *pr);
/* RESERVATION CONFLICT check for the task's command, SPC-2 and persistent. */
enum scsi_sr scsi_reservation_check(struct scsi_task *t);
/* I_T nexus loss (I_T NEXUS RESET, logout, a LUN unmapped) on reservations: an SPC-2
 * reservation nx holds is released (on every gateway of a shared store: stored and
 * published from a thread of its own), persistent reservations stay. */
void scsi_reservation_reset(struct scsi_dev *dev, const struct scsi_nexus *nx);
/* A LOGICAL UNIT RESET on reservations: the SPC-2 reservation released, persistent ones
 * kept.  With a store shared by several gateways the release is stored and, with the reset's
 * UNIT ATTENTION (asc/ascq) for their nexuses, published to every gateway from a thread of
 * its own: true then, and done(arg) is called once every gateway has it in force (or it
 * failed, which is logged).  false: done already, done() will not be called. */
bool scsi_reservation_lu_reset(struct scsi_dev *dev, uint8_t asc, uint8_t ascq,
			       void (*done)(void *arg), void *arg);
/* PREEMPT AND ABORT (scsi/scsi_taskset.c): abort, as ABORT TASK SET would for each of them,
 * the tasks in dev's task set whose I_T nexus match() accepts, except `keep`; returns once
 * every aborted task has completed.  Blocks: call it from a core worker. */
void scsi_ts_abort_nexuses(struct scsi_dev *dev,
			   bool (*match)(const struct scsi_nexus *nx, void *arg), void *arg,
			   const struct scsi_task *keep);

/* ---- copy manager (scsi/spc_xcopy.c) ---- */
struct scsi_xcopy *scsi_xcopy_create(struct scsi_dev *dev);
void scsi_xcopy_destroy(struct scsi_xcopy *xc);

/* ---- lending a store's memory (scsi/sbc_lend.c): NULL when the store cannot ---- */
struct scsi_lendgate *scsi_lendgate_create(const struct backstore *bs);
/* Waits until every lent READ was released: they still point into the store. */
void scsi_lendgate_destroy(struct scsi_lendgate *lg);
/* Writers parked behind lent data (tests observe queueing through this). */
unsigned scsi_lendgate_parked(struct scsi_dev *dev);

/* ---- LBA range locks (scsi/sbc_rangelock.c): COMPARE AND WRITE atomicity ---- */
struct scsi_rangelock *scsi_rangelock_create(void);
void scsi_rangelock_destroy(struct scsi_rangelock *rl);
/* For work outside the SBC handlers that moves blocks itself (EXTENDED COPY): lock
 * [lba, lba+n) of dev as its READ/WRITE would (shared) or exclusively, waiting as long as
 * needed.  Call it from a core worker holding no other range: the pool stands in for the
 * waiting worker, so the holders it waits for (maybe jobs still queued) run.  NULL when out
 * of memory. */
struct scsi_range_hold;
struct scsi_range_hold *scsi_range_lock_blocking(struct scsi_dev *dev, uint64_t lba, uint64_t n,
						 bool excl);
void scsi_range_unlock_blocking(struct scsi_range_hold *h);

/* ---- task set (scsi/scsi_taskset.c) and UA (scsi/spc_ua.c) ---- */
struct scsi_taskset *scsi_taskset_create(void);
void scsi_taskset_destroy(struct scsi_taskset *ts);
struct scsi_ua_state *scsi_ua_create(void);
void scsi_ua_destroy(struct scsi_ua_state *ua);

/* ---- handlers: SPC (spc_*.c) ---- */
enum scsi_sr spc_test_unit_ready(struct scsi_task *t);
enum scsi_sr spc_request_sense(struct scsi_task *t);
enum scsi_sr spc_inquiry(struct scsi_task *t);
enum scsi_sr spc_report_luns(struct scsi_task *t);
enum scsi_sr spc_mode_sense(struct scsi_task *t);   /* 6 and 10 */
enum scsi_sr spc_mode_select(struct scsi_task *t);  /* 6 and 10 */
enum scsi_sr spc_start_stop_unit(struct scsi_task *t);
enum scsi_sr spc_prevent_allow(struct scsi_task *t);
enum scsi_sr spc_report_supported_opcodes(struct scsi_task *t);
enum scsi_sr spc_report_supported_tmfs(struct scsi_task *t);
enum scsi_sr spc_report_target_port_groups(struct scsi_task *t);
enum scsi_sr spc_set_target_port_groups(struct scsi_task *t);
/* Explicit ALUA: an LU whose owner may be changed by SET TARGET PORT GROUPS (a shared store
 * with alua_follow_lock and alua_explicit); INQUIRY then reports TPGS 11b. */
bool scsi_dev_explicit_alua(const struct scsi_dev *dev);
/* reservations */
enum scsi_sr spc_reserve(struct scsi_task *t);      /* 6 and 10 */
enum scsi_sr spc_release(struct scsi_task *t);      /* 6 and 10 */
enum scsi_sr spc_pr_in(struct scsi_task *t);
enum scsi_sr spc_pr_out(struct scsi_task *t);
/* copy */
enum scsi_sr spc_extended_copy(struct scsi_task *t);
enum scsi_sr spc_receive_copy_results(struct scsi_task *t);

/* ---- handlers: MMC, CD-ROM LUs (mmc_*.c) ---- */
enum scsi_sr mmc_read_toc(struct scsi_task *t);
enum scsi_sr mmc_read_disc_info(struct scsi_task *t);
enum scsi_sr mmc_read_track_info(struct scsi_task *t);
enum scsi_sr mmc_get_configuration(struct scsi_task *t);
enum scsi_sr mmc_get_event_status(struct scsi_task *t);
enum scsi_sr mmc_mechanism_status(struct scsi_task *t);
enum scsi_sr mmc_set_cd_speed(struct scsi_task *t);
enum scsi_sr mmc_read_subchannel(struct scsi_task *t);
enum scsi_sr mmc_get_performance(struct scsi_task *t);
/* Mode page 2Ah, MM capabilities and mechanical status (MODE SENSE on a CD-ROM LU). */
unsigned mmc_caps_page(const struct scsi_dev *dev, uint8_t *p, bool changeable);

/* ---- handlers: SBC (sbc_*.c) ---- */
enum scsi_sr sbc_read_capacity10(struct scsi_task *t);
enum scsi_sr sbc_read_capacity16(struct scsi_task *t);
enum scsi_sr sbc_read(struct scsi_task *t);          /* 6/10/12/16 */
enum scsi_sr sbc_write(struct scsi_task *t);         /* 6/10/12/16 */
enum scsi_sr sbc_write_verify(struct scsi_task *t);  /* 10/12/16 */
enum scsi_sr sbc_verify(struct scsi_task *t);        /* 10/12/16 */
enum scsi_sr sbc_pre_fetch(struct scsi_task *t);     /* 10/16 */
enum scsi_sr sbc_orwrite(struct scsi_task *t);
enum scsi_sr sbc_write_same(struct scsi_task *t);    /* 10/16 */
enum scsi_sr sbc_unmap(struct scsi_task *t);
enum scsi_sr sbc_get_lba_status(struct scsi_task *t);
enum scsi_sr sbc_sync_cache(struct scsi_task *t);    /* 10/16 */
enum scsi_sr sbc_compare_and_write(struct scsi_task *t);
enum scsi_sr sbc_sanitize(struct scsi_task *t);
enum scsi_sr sbc_read_defect_data(struct scsi_task *t); /* 10/12 */
enum scsi_sr sbc_write_atomic(struct scsi_task *t);

/* Block limits the SBC code enforces and VPD B0 announces (one source of truth). */
struct sbc_limits {
	uint32_t max_xfer_blocks;
	uint32_t opt_xfer_blocks;
	uint32_t max_unmap_lba_count;
	uint32_t max_unmap_descriptors;
	uint64_t max_write_same_blocks;
	uint32_t max_compare_write_blocks;
	uint32_t max_atomic_blocks;
	uint32_t atomic_alignment;
	uint32_t atomic_granularity;
	uint32_t unmap_granularity; /* OPTIMAL UNMAP GRANULARITY; 0 when UNMAP is not supported */
	uint32_t opt_xfer_granularity; /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	bool wsnz;                  /* WRITE SAME NUMBER OF LOGICAL BLOCKS 0 is refused */
};
/* The LU's own limits; _nx: as seen through one I_T nexus, whose transport may carry less per
 * command (scsi_nexus.max_xfer_bytes); sbc_task_limits: through the task's nexus. */
void sbc_get_limits(const struct scsi_dev *dev, struct sbc_limits *out);
void sbc_get_limits_nx(const struct scsi_dev *dev, const struct scsi_nexus *nx,
		       struct sbc_limits *out);
void sbc_task_limits(const struct scsi_task *t, struct sbc_limits *out);
/* Its max_xfer_blocks alone, for the READ/WRITE path that needs nothing else (nx may be NULL). */
uint32_t sbc_max_xfer_blocks(const struct scsi_dev *dev, const struct scsi_nexus *nx);
/* Logical block provisioning management in effect (LBPME): the LU is thin_provisioned and its
 * store can deallocate.  READ CAPACITY(16), VPD B2 (LBPU, LBPWS, LBPWS10), UNMAP and WRITE
 * SAME's UNMAP bit all follow this one answer (scsi/sbc_limits.c). */
bool sbc_thin(const struct scsi_dev *dev);
/* The physical block READ CAPACITY(16) reports, in bytes (lb_per_pb_exp: the block
 * device's own for vdisk_blockio, else 4096), and its LOGICAL BLOCKS PER PHYSICAL BLOCK
 * EXPONENT: 0 (one logical block per physical block) unless lb_per_pb_exp is set. */
uint32_t sbc_phys_block_bytes(const struct scsi_dev *dev);
uint8_t sbc_lbppbe(const struct scsi_dev *dev);
/* Deallocated blocks read back as zeros (LBPRZ). */
bool sbc_lbprz(const struct scsi_dev *dev);

#endif
