/* Decoding what a target tells the initiator about an LU and its ports: VPD page 83 (LU
 * identity, target port group), REPORT TARGET PORT GROUPS (ALUA states), and names for
 * sense keys and iSCSI login status, so reports can say what went wrong. */
#ifndef UB_SCSI_INFO_H
#define UB_SCSI_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UB_MAX_DESIG 8

struct ub_designator {
	uint8_t code_set, assoc, type, len;
	uint8_t value[64];
};

struct ub_lu_ident {
	unsigned ndesig; /* designators with LU association */
	struct ub_designator desig[UB_MAX_DESIG];
	int port_group; /* target port group of the port answering, -1 if not reported */
	int rel_port;	/* relative target port identifier, -1 if not reported */
};

/* Parse an INQUIRY VPD 0x83 response.  false on malformed data (reason in err). */
bool ub_vpd83_parse(const uint8_t *buf, size_t len, struct ub_lu_ident *id, char *err,
		    size_t errlen);
/* Same LU: every LU designator of one appears in the other and both have the same count. */
bool ub_lu_ident_same(const struct ub_lu_ident *a, const struct ub_lu_ident *b);
/* "naa.60014051234..." for the most specific designator (NAA > EUI-64 > name > T10). */
void ub_lu_ident_str(const struct ub_lu_ident *id, char *out, size_t outlen);

enum ub_alua_state {
	UB_ALUA_AO = 0x0,
	UB_ALUA_ANO = 0x1,
	UB_ALUA_STANDBY = 0x2,
	UB_ALUA_UNAVAILABLE = 0x3,
	UB_ALUA_LBA_DEPENDENT = 0x4,
	UB_ALUA_OFFLINE = 0xe,
	UB_ALUA_TRANSITIONING = 0xf,
	UB_ALUA_UNKNOWN = 0x10, /* target does not report ALUA */
};

#define UB_MAX_TPG	 16
#define UB_MAX_TPG_PORTS 16

struct ub_tpg {
	uint16_t id;
	uint8_t state;
	bool pref;
	unsigned nports;
	uint16_t ports[UB_MAX_TPG_PORTS];
};

struct ub_rtpg {
	unsigned ngroups;
	struct ub_tpg group[UB_MAX_TPG];
};

bool ub_rtpg_parse(const uint8_t *buf, size_t len, struct ub_rtpg *r, char *err, size_t errlen);
/* ALUA state of the port a path reaches: by target port group from VPD 83, else by relative
 * target port.  UB_ALUA_UNKNOWN when neither matches. */
enum ub_alua_state ub_rtpg_state_for(const struct ub_rtpg *r, const struct ub_lu_ident *id);
const char *ub_alua_state_str(int state);

/* CDB builders for the few commands the tester sends besides READ/WRITE. */
void ub_cdb_inquiry_vpd(uint8_t cdb[6], uint8_t page, uint16_t alloc);
void ub_cdb_rtpg(uint8_t cdb[12], uint32_t alloc);
void ub_cdb_rw16(uint8_t cdb[16], bool write, uint64_t lba, uint32_t nblocks);
void ub_cdb_readcap16(uint8_t cdb[16], uint32_t alloc);
void ub_cdb_sync16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks);
/* UNMAP with its 24-byte parameter list (one descriptor). */
void ub_cdb_unmap(uint8_t cdb[10], uint8_t param[24], uint64_t lba, uint32_t nblocks);
/* VERIFY(16): bytchk 0 (medium only), 1 (compare each block), 3 (one block against all). */
void ub_cdb_verify16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks, int bytchk);
void ub_cdb_write_same16(uint8_t cdb[16], uint64_t lba, uint32_t nblocks, bool ndob);

const char *ub_sense_key_str(int key);
/* "Authentication failure" etc. for an iSCSI login status (class << 8 | detail). */
const char *ub_login_status_str(int status);
const char *ub_login_class_str(int status_class);

#endif
