/* scsi_dev_configure: an SCST DEVICE block (handler, name, attributes) -> struct backstore +
 * struct scsi_dev_params -> scsi_dev_new().  Nothing is opened here, so `utgtd --check` can
 * validate a configuration without touching backing files.
 *
 * Every attribute SCST knows for a vdisk device is recognised.  Those we implement set fields;
 * read-only ones that `scstadmin -write_config -nonkey` writes are accepted quietly; tunables
 * that only make sense inside SCST's kernel module draw a warning; anything else, or an
 * attribute the handler does not have in SCST, or a bad value, is an error naming the line. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scsi/scsi_dev.h"

enum {
	H_FILE = 1 << 0,
	H_BLOCK = 1 << 1,
	H_NULL = 1 << 2,
	H_RAM = 1 << 3,
	H_CD = 1 << 4, /* vcdrom: an ISO image as a read-only CD-ROM LU */
	H_RBD = 1 << 5, /* vdisk_rbd: an image in a Ceph cluster (utgt's own handler) */
	H_DISK = H_FILE | H_BLOCK,
	H_ALL = H_FILE | H_BLOCK | H_NULL | H_RAM | H_CD | H_RBD,
};

/* SCST's limits (scst_vdisk.c): INQUIRY vendor 8, product 16, revision 4; unit serial number
 * 20; T10 device id 25; vendor specific id 128; SCSI device name 256; vendor specific INQUIRY
 * data 160. */
#define MAX_VENDOR	 8
#define MAX_PRODUCT	 16
#define MAX_REVISION	 4
#define MAX_USN		 20
#define MAX_T10_DEV_ID	 25
#define MAX_VEND_SPEC_ID 128
#define MAX_SCSI_NAME	 256
#define MAX_INQ_VEND	 160

struct cfg {
	const char *handler;
	unsigned hmask;
	struct backstore *bs;
	struct scsi_dev_params *p;
	struct diag *d;
	bool have_size, have_size_mb, have_thin, have_filename, have_pool, have_image;
	uint64_t size, size_mb;
	int size_line, size_mb_line;
};

enum kind {
	K_USED,	  /* sets something */
	K_QUIET,  /* read-only / informational as -nonkey writes it: accepted, no message */
	K_UNUSED, /* a real SCST attribute utgt does not implement: accepted with a warning */
	K_KERNEL, /* SCST-kernel tuning: warning "SCST-kernel only; ignored" */
	K_RO,	  /* read-only state SCST reports, nothing to check it against: warning */
};

struct attr_def {
	const char *name;
	unsigned handlers;
	enum kind kind;
	bool (*apply)(struct cfg *c, const struct utgt_attr *a);
};

static void bad(struct cfg *c, const struct utgt_attr *a, const char *why, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(struct cfg *c, const struct utgt_attr *a, const char *why, ...)
{
	char msg[256];
	const char *v = a->value ? a->value : "";
	int vlen = (int)strlen(v);
	va_list ap;

	va_start(ap, why);
	vsnprintf(msg, sizeof(msg), why, ap);
	va_end(ap);
	/* echo at most 60 characters of the value */
	diag_error(c->d, a->line, "DEVICE %s: bad %s '%.*s%s': %s", c->p->name, a->key,
		   vlen > 60 ? 57 : vlen, v, vlen > 60 ? "..." : "", msg);
}

static bool get_bool(struct cfg *c, const struct utgt_attr *a, bool *out)
{
	if (parse_bool(a->value, out))
		return true;
	bad(c, a, "expected 0 or 1");
	return false;
}

/* T10 identification strings: printable ASCII, at most max characters. */
static bool get_ident(struct cfg *c, const struct utgt_attr *a, char *out, size_t outsz, size_t max)
{
	size_t n = strlen(a->value);

	if (n > max) {
		bad(c, a, "longer than %zu characters", max);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (a->value[i] < 0x20 || a->value[i] > 0x7e) {
			bad(c, a, "only printable ASCII is allowed");
			return false;
		}
	}
	if (out && n < outsz)
		memcpy(out, a->value, n + 1);
	return true;
}

static bool set_filename(struct cfg *c, const struct utgt_attr *a)
{
	c->have_filename = true;
	/* an empty vcdrom (no medium) is written with no file, "" or SCST's "none" */
	if (c->hmask == H_CD && (!a->value[0] || !strcmp(a->value, "none"))) {
		c->bs->filename[0] = '\0';
		return true;
	}
	if (!a->value[0]) {
		bad(c, a, "empty");
		return false;
	}
	if (a->value[0] != '/') {
		bad(c, a, "the path must be absolute (as in SCST)");
		return false;
	}
	if (strlen(a->value) >= sizeof(c->bs->filename)) {
		bad(c, a, "path too long");
		return false;
	}
	snprintf(c->bs->filename, sizeof(c->bs->filename), "%s", a->value);
	return true;
}

static bool set_blocksize(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (c->hmask == H_CD) { /* as SCST: a CD-ROM has 2048-byte blocks, whatever is asked */
		if (!parse_u64(a->value, &v) || v != 2048)
			diag_warn(c->d, a->line, "blocksize %s ignored: a CD-ROM has 2048-byte blocks",
				  a->value);
		return true;
	}
	if (!parse_u64(a->value, &v) || (v != 512 && v != 4096)) {
		bad(c, a, "blocksize must be 512 or 4096");
		return false;
	}
	c->bs->block_size = (uint32_t)v;
	return true;
}

#define BOOL_SETTER(fn, field)                                                                     \
	static bool fn(struct cfg *c, const struct utgt_attr *a)                                   \
	{                                                                                          \
		return get_bool(c, a, &(field));                                                   \
	}

/* A vcdrom is always read-only and removable: 0 draws a warning and changes nothing. */
static bool cd_fixed_on(struct cfg *c, const struct utgt_attr *a, bool *field)
{
	bool v;

	if (!get_bool(c, a, &v))
		return false;
	if (c->hmask == H_CD) {
		if (!v)
			diag_warn(c->d, a->line, "%s 0 ignored: a vcdrom CD-ROM is always %s",
				  a->key, field == &c->bs->read_only ? "read-only" : "removable");
		return true;
	}
	*field = v;
	return true;
}

static bool set_read_only(struct cfg *c, const struct utgt_attr *a)
{
	return cd_fixed_on(c, a, &c->bs->read_only);
}

static bool set_removable(struct cfg *c, const struct utgt_attr *a)
{
	return cd_fixed_on(c, a, &c->p->removable);
}
BOOL_SETTER(set_nv_cache, c->bs->nv_cache)
BOOL_SETTER(set_create_missing, c->bs->create_missing)
BOOL_SETTER(set_o_direct, c->bs->o_direct)
BOOL_SETTER(set_write_through, c->bs->write_through)
BOOL_SETTER(set_dummy, c->bs->dummy)
BOOL_SETTER(set_read_zero, c->bs->read_zero)
BOOL_SETTER(set_rotational, c->p->rotational)

static bool set_thin(struct cfg *c, const struct utgt_attr *a)
{
	c->have_thin = true;
	return get_bool(c, a, &c->bs->thin_provisioned);
}

static bool set_size(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_size(a->value, &v) || v == 0) {
		bad(c, a, "expected a size in bytes (K/M/G/T suffixes allowed), above 0");
		return false;
	}
	c->have_size = true;
	c->size = v;
	c->size_line = a->line;
	return true;
}

static bool set_size_mb(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_u64(a->value, &v) || v == 0 || v > (UINT64_MAX >> 20)) {
		bad(c, a, "expected a number of MiB above 0");
		return false;
	}
	c->have_size_mb = true;
	c->size_mb = v;
	c->size_mb_line = a->line;
	return true;
}

/* vdisk_rbd: a pool or image name, as the rbd tool accepts it (no '/' or '@', which would
 * read as pool/image@snapshot). */
static bool get_rbd_name(struct cfg *c, const struct utgt_attr *a, char *out, size_t outsz)
{
	size_t n = strlen(a->value);

	if (!n || n >= outsz) {
		bad(c, a, "expected 1 to %zu characters", outsz - 1);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)a->value[i];

		if (ch <= 0x20 || ch > 0x7e || ch == '/' || ch == '@') {
			bad(c, a, "printable characters without spaces, '/' or '@'");
			return false;
		}
	}
	memcpy(out, a->value, n + 1);
	return true;
}

static bool set_rbd_pool(struct cfg *c, const struct utgt_attr *a)
{
	c->have_pool = true;
	return get_rbd_name(c, a, c->bs->ceph.pool, sizeof(c->bs->ceph.pool));
}

static bool set_rbd_image(struct cfg *c, const struct utgt_attr *a)
{
	c->have_image = true;
	return get_rbd_name(c, a, c->bs->ceph.image, sizeof(c->bs->ceph.image));
}

/* ceph_user is the id alone, as the rbd tool's --id: "admin" means client.admin. */
static bool set_ceph_user(struct cfg *c, const struct utgt_attr *a)
{
	if (!strncmp(a->value, "client.", 7)) {
		bad(c, a, "give the id without 'client.' (ceph_user %s)", a->value + 7);
		return false;
	}
	return get_rbd_name(c, a, c->bs->ceph.user, sizeof(c->bs->ceph.user));
}

static bool get_abs_path(struct cfg *c, const struct utgt_attr *a, char *out, size_t outsz)
{
	if (a->value[0] != '/' || strlen(a->value) >= outsz) {
		bad(c, a, "expected an absolute path of at most %zu characters", outsz - 1);
		return false;
	}
	snprintf(out, outsz, "%s", a->value);
	return true;
}

static bool set_ceph_conf(struct cfg *c, const struct utgt_attr *a)
{
	return get_abs_path(c, a, c->bs->ceph.conf, sizeof(c->bs->ceph.conf));
}

static bool set_ceph_keyring(struct cfg *c, const struct utgt_attr *a)
{
	return get_abs_path(c, a, c->bs->ceph.keyring, sizeof(c->bs->ceph.keyring));
}

/* Several gateways on one image (docs/rbd.md): the ALUA state follows the exclusive lock. */
static bool set_alua_follow_lock(struct cfg *c, const struct utgt_attr *a)
{
	return get_bool(c, a, &c->bs->ceph.alua_follow_lock);
}

/* SET TARGET PORT GROUPS moves the lock (TPGS 11b).  Off by default: Linux's alua handler
 * sends STPG for a non-optimized group whenever dm-multipath activates a path in it (a
 * restarted gateway's path reinstated, for one), which would take the lock from a healthy
 * owner and fence it; with implicit ALUA only a silent owner loses the lock. */
static bool set_alua_explicit(struct cfg *c, const struct utgt_attr *a)
{
	return get_bool(c, a, &c->bs->ceph.alua_explicit);
}

/* What the gateways that do not own the image report: active/non-optimized (reads served,
 * writes answered "transitioning") or standby (nothing served). */
static bool set_nonowner_state(struct cfg *c, const struct utgt_attr *a)
{
	if (!strcasecmp(a->value, "nonoptimized") || !strcasecmp(a->value, "standby")) {
		c->bs->ceph.nonowner_standby = !strcasecmp(a->value, "standby");
		return true;
	}
	bad(c, a, "expected nonoptimized or standby");
	return false;
}

/* Seconds the lock owner may stay silent before a peer fences it and takes over. */
static bool set_lock_grace(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_u64(a->value, &v) || v < 2 || v > 3600) {
		bad(c, a, "expected seconds, 2 to 3600");
		return false;
	}
	c->bs->ceph.lock_grace_ms = (unsigned)v * 1000;
	return true;
}

/* utgt's own: pace SANITIZE (a whole-LU overwrite at full speed starves the store's other
 * users; a real medium takes its time too). */
static bool set_sanitize_rate(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_u64(a->value, &v) || v > 1u << 20) {
		bad(c, a, "expected MiB per second (0: unpaced), at most %u", 1u << 20);
		return false;
	}
	c->p->sanitize_rate_mb = (unsigned)v;
	return true;
}

/* SCST keeps lb_per_pb_exp in a one-bit field: 1 reports the physical block in READ
 * CAPACITY(16), 0 reports one logical block per physical block.  Any other number would be
 * cut to its low bit there (2 turns the report off), so it is refused rather than guessed. */
static bool set_lb_per_pb_exp(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_u64(a->value, &v) || v > 1) {
		bad(c, a,
		    "expected 0 or 1 (SCST's switch for reporting the physical block; the "
		    "exponent itself follows from the block sizes)");
		return false;
	}
	c->p->lb_per_pb_exp = v == 1;
	return true;
}

static bool set_vendor(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->vendor, sizeof(c->p->vendor), MAX_VENDOR);
}

static bool set_product(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->product, sizeof(c->p->product), MAX_PRODUCT);
}

static bool set_revision(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->revision, sizeof(c->p->revision), MAX_REVISION);
}

static bool set_t10_dev_id(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->t10_dev_id, sizeof(c->p->t10_dev_id), MAX_T10_DEV_ID);
}

static bool set_usn(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->usn, sizeof(c->p->usn), MAX_USN);
}

#define IDENT_CHECK(fn, max)                                                                       \
	static bool fn(struct cfg *c, const struct utgt_attr *a)                                   \
	{                                                                                          \
		return get_ident(c, a, NULL, 0, max);                                              \
	}

IDENT_CHECK(check_inq_vend_specific, MAX_INQ_VEND)

static bool set_vend_specific_id(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->vend_specific_id, sizeof(c->p->vend_specific_id),
			 MAX_VEND_SPEC_ID);
}

static bool set_scsi_device_name(struct cfg *c, const struct utgt_attr *a)
{
	return get_ident(c, a, c->p->scsi_device_name, sizeof(c->p->scsi_device_name),
			 MAX_SCSI_NAME);
}

/* A hex identifier as SCST takes it: optional 0x, then exactly one of the allowed lengths of
 * hex digits.  Returns the number of bytes, 0 on error. */
static unsigned get_hex_id(const char *s, const unsigned *lens, unsigned nlens, uint8_t out[16])
{
	size_t n;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	for (unsigned i = 0; i < nlens; i++) {
		if (n != lens[i] * 2)
			continue;
		for (size_t k = 0; k < n; k += 2) {
			char two[3] = {s[k], s[k + 1], 0};
			if (!isxdigit((unsigned char)s[k]) || !isxdigit((unsigned char)s[k + 1]))
				return 0;
			out[k / 2] = (uint8_t)strtoul(two, NULL, 16);
		}
		return lens[i];
	}
	return 0;
}

static bool set_naa_id(struct cfg *c, const struct utgt_attr *a)
{
	static const unsigned lens[] = {8, 16};
	uint8_t b[16];
	unsigned n;
	uint64_t low = 0;

	if (!a->value[0])
		return true; /* empty: derive one (as an unset SCST naa_id) */
	n = get_hex_id(a->value, lens, 2, b);
	/* SCST: 8-byte identifiers are NAA 2, 3 or 5; 16-byte ones NAA 6 */
	if (!n || (n == 8 && !strchr("235", "0123456789abcdef"[b[0] >> 4])) ||
	    (n == 16 && (b[0] >> 4) != 6)) {
		bad(c, a, "expected 16 hex digits starting with 2, 3 or 5, or 32 starting with 6");
		return false;
	}
	memcpy(c->p->naa_bytes, b, n);
	c->p->naa_len = (uint8_t)n;
	for (unsigned i = n - 8; i < n; i++)
		low = low << 8 | b[i];
	c->p->naa_id = low;
	return true;
}

static bool set_eui64_id(struct cfg *c, const struct utgt_attr *a)
{
	static const unsigned lens[] = {8, 12, 16};
	uint8_t b[16];
	unsigned n;

	if (!a->value[0])
		return true; /* empty: none, as an unset SCST eui64_id */
	n = get_hex_id(a->value, lens, 3, b);
	if (!n) {
		bad(c, a, "expected 16, 24 or 32 hex digits");
		return false;
	}
	memcpy(c->p->eui64, b, n);
	c->p->eui64_len = (uint8_t)n;
	return true;
}

static bool check_bool(struct cfg *c, const struct utgt_attr *a)
{
	bool v;
	return get_bool(c, a, &v);
}

static bool check_number(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (parse_u64(a->value, &v))
		return true;
	bad(c, a, "expected a number");
	return false;
}

/* Off (0) is what utgt does; asking for the SCST feature draws a warning. */
static bool check_off_or_warn(struct cfg *c, const struct utgt_attr *a)
{
	bool v;

	if (!get_bool(c, a, &v))
		return false;
	if (v)
		diag_warn(c->d, a->line, "%s 1 is not supported by utgt; ignored", a->key);
	return true;
}

static bool check_tst(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (!parse_u64(a->value, &v) || v > 1) {
		bad(c, a, "expected 0 or 1");
		return false;
	}
	if (v == 0)
		diag_warn(c->d, a->line,
			  "tst 0 (one task set shared by all initiators) is not supported; "
			  "each I_T nexus has its own task set");
	return true;
}

static bool check_type(struct cfg *c, const struct utgt_attr *a)
{
	uint64_t v;

	if (c->hmask == H_CD) {
		if (!parse_u64(a->value, &v) || v != SCSI_TYPE_CDROM) {
			bad(c, a, "a vcdrom device is a CD-ROM device (type 5)");
			return false;
		}
		return true;
	}
	if (!parse_u64(a->value, &v) || v != 0) {
		bad(c, a, "a %s device is a direct-access device (type 0)", c->handler);
		return false;
	}
	return true;
}

static bool check_active(struct cfg *c, const struct utgt_attr *a)
{
	bool v;

	if (!get_bool(c, a, &v))
		return false;
	if (!v)
		diag_warn(c->d, a->line, "active 0 is not supported; the device is active");
	return true;
}

static const struct attr_def attr_defs[] = {
    /* what the device is */
    {"filename", H_DISK | H_CD, K_USED, set_filename},
    {"size", H_ALL, K_USED, set_size},
    {"size_mb", H_ALL, K_USED, set_size_mb},
    {"blocksize", H_ALL, K_USED, set_blocksize},
    {"read_only", H_ALL, K_USED, set_read_only},
    {"nv_cache", H_DISK, K_USED, set_nv_cache},
    {"create_missing", H_FILE, K_USED, set_create_missing},
    {"o_direct", H_FILE, K_USED, set_o_direct},
    {"write_through", H_DISK, K_USED, set_write_through},
    {"thin_provisioned", H_DISK | H_RAM | H_RBD, K_USED, set_thin},
    /* vdisk_rbd (utgt's own handler) */
    {"pool", H_RBD, K_USED, set_rbd_pool},
    {"image", H_RBD, K_USED, set_rbd_image},
    {"ceph_conf", H_RBD, K_USED, set_ceph_conf},
    {"ceph_user", H_RBD, K_USED, set_ceph_user},
    {"ceph_keyring", H_RBD, K_USED, set_ceph_keyring},
    {"alua_follow_lock", H_RBD, K_USED, set_alua_follow_lock},
    {"alua_nonowner_state", H_RBD, K_USED, set_nonowner_state},
    {"alua_lock_grace", H_RBD, K_USED, set_lock_grace},
    {"alua_explicit", H_RBD, K_USED, set_alua_explicit},
    {"dummy", H_NULL, K_USED, set_dummy},
    {"read_zero", H_NULL, K_USED, set_read_zero},
    {"rotational", H_ALL, K_USED, set_rotational},
    {"removable", H_ALL, K_USED, set_removable},
    {"sanitize_rate_mb", H_ALL, K_USED, set_sanitize_rate}, /* utgt's own */
    {"lb_per_pb_exp", H_ALL, K_USED, set_lb_per_pb_exp},
    /* identity */
    {"t10_vend_id", H_ALL, K_USED, set_vendor},
    {"prod_id", H_ALL, K_USED, set_product},
    {"prod_rev_lvl", H_ALL, K_USED, set_revision},
    {"t10_dev_id", H_ALL, K_USED, set_t10_dev_id},
    {"usn", H_ALL, K_USED, set_usn},
    {"naa_id", H_ALL, K_USED, set_naa_id},
    {"eui64_id", H_ALL, K_USED, set_eui64_id},
    {"vend_specific_id", H_ALL, K_USED, set_vend_specific_id},
    {"scsi_device_name", H_ALL, K_USED, set_scsi_device_name},
    {"inq_vend_specific", H_ALL, K_UNUSED, check_inq_vend_specific},
    /* read-only, informational, or one-shot actions that -write_config -nonkey writes */
    {"type", H_ALL, K_QUIET, check_type},
    {"tst", H_ALL, K_QUIET, check_tst},
    {"opt_trans_len", H_ALL, K_QUIET, check_number},
    {"expl_alua", H_ALL, K_QUIET, check_bool},
    {"cluster_mode", H_ALL, K_QUIET, check_off_or_warn},
    {"active", H_DISK, K_QUIET, check_active},
    {"bind_alua_state", H_DISK, K_QUIET, check_bool},
    {"resync_size", H_DISK, K_QUIET, NULL},
    {"sync", H_DISK, K_QUIET, NULL},
    {"exported", H_ALL, K_QUIET, NULL},
    {"handler", H_ALL, K_QUIET, NULL},
    {"dif_checks_failed", H_ALL, K_QUIET, NULL},
    {"dump_prs", H_ALL, K_QUIET, NULL},
    {"pr_state", H_ALL, K_RO, NULL},
    /* SCST's kernel module only */
    {"threads_num", H_ALL, K_KERNEL, check_number},
    {"threads_pool_type", H_ALL, K_KERNEL, NULL},
    {"async", H_FILE, K_KERNEL, check_bool},
    {"numa_node_id", H_ALL, K_KERNEL, NULL},
    {"dif_mode", H_ALL, K_KERNEL, NULL},
    {"dif_type", H_ALL, K_KERNEL, NULL},
    {"dif_static_app_tag", H_ALL, K_KERNEL, NULL},
    {"dif_filename", H_ALL, K_KERNEL, NULL},
    {"block", H_ALL, K_KERNEL, NULL}, /* SCST's "blocked commands" switch, written "0 0" */
    {"gen_tp_soft_threshold_reached_UA", H_ALL, K_KERNEL, NULL},
    {"max_tgt_dev_commands", H_ALL, K_KERNEL, NULL},
    {"pr_file_name", H_ALL, K_KERNEL, NULL},
    {"zero_copy", H_ALL, K_KERNEL, NULL},
};

static const struct {
	const char *name;
	unsigned mask;
} handlers[] = {
    {"vdisk_fileio", H_FILE},
    {"vdisk_blockio", H_BLOCK},
    {"vdisk_nullio", H_NULL},
    {"ramdisk", H_RAM},
    {"vcdrom", H_CD},
    {"vdisk_rbd", H_RBD},
};

static const struct attr_def *find_def(const char *key)
{
	for (size_t i = 0; i < sizeof(attr_defs) / sizeof(attr_defs[0]); i++)
		if (!strcasecmp(attr_defs[i].name, key))
			return &attr_defs[i];
	return NULL;
}

/* Defaults that depend on the handler (SCST's, where SCST has the handler). */
static void handler_defaults(struct cfg *c)
{
	if (c->hmask == H_CD) { /* SCST's vcdrom: read-only, removable, 2048-byte blocks */
		c->p->type = SCSI_TYPE_CDROM;
		c->bs->block_size = 2048;
		c->bs->read_only = true;
		c->p->removable = true;
		return;
	}
	c->bs->block_size = 512;
	c->p->rotational = c->hmask != H_RAM; /* SCST: DEF_ROTATIONAL 1 */
	/* SCST's vdisk handlers report the physical block (lb_per_pb_exp 1): an LU moved from
	 * SCST keeps its geometry (a 512-byte LU stays 512e).  ramdisk is utgt's own: 512n. */
	c->p->lb_per_pb_exp = c->hmask != H_RAM;
	c->bs->read_zero = true;	      /* no stale buffer contents to initiators */
	/* blockio: SCST turns thin provisioning on when the device can discard; ramdisk
	 * deallocates by nature */
	c->bs->thin_provisioned = c->hmask & (H_BLOCK | H_RAM | H_RBD);
	/* RBD: librbd's cache is off, a write is in the cluster when it completes (WCE 0) */
	c->bs->write_through = c->hmask == H_RBD;
}

/* `size` / `size_mb` as -write_config -nonkey writes them describe the file SCST had open.  A
 * file that has changed size since is worth a word: a smaller LU than the file is served (the
 * configured size bounds it), a larger one cannot be (existing files are never grown).  Only
 * the file's metadata is read, so --check still leaves backing stores alone. */
static void check_size_against_file(struct cfg *c, uint64_t size)
{
	const char *outcome;
	int line = c->have_size ? c->size_line : c->size_mb_line;
	struct stat st;

	if (stat(c->bs->filename, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size == size)
		return;
	if (c->hmask == H_CD)
		outcome = "a CD-ROM is the size of its image";
	else if ((uint64_t)st.st_size > size)
		outcome = "the LU is the configured size";
	else
		outcome = "the file is not grown, so it cannot be opened";
	diag_warn(c->d, line, "DEVICE %s: size %llu disagrees with %s (%llu bytes); %s", c->p->name,
		  (unsigned long long)size, c->bs->filename, (unsigned long long)st.st_size,
		  outcome);
}

/* Cross-attribute rules, once every attribute is in. */
static void finish(struct cfg *c, int dev_line)
{
	uint64_t size = 0;

	if (c->have_size && c->have_size_mb) {
		/* -write_config -nonkey writes both; size_mb is size in MiB, rounded down */
		if (c->size >> 20 != c->size_mb)
			diag_error(c->d, c->size_mb_line,
				   "size_mb %s: %llu MiB disagrees with size %llu (line %d)",
				   c->p->name, (unsigned long long)c->size_mb,
				   (unsigned long long)c->size, c->size_line);
		size = c->size;
	} else if (c->have_size) {
		size = c->size;
	} else if (c->have_size_mb) {
		size = c->size_mb << 20;
	}
	if (size && size < c->bs->block_size)
		diag_error(c->d, c->have_size ? c->size_line : c->size_mb_line,
			   "%s: size %llu is smaller than one %u-byte block", c->p->name,
			   (unsigned long long)size, c->bs->block_size);
	/* Sizes that cannot be served are errors here, not a misleading "out of memory" at
	 * start: offsets are off_t, and a ramdisk is memory of this machine. */
	if (size > (uint64_t)INT64_MAX) {
		diag_error(c->d, c->have_size ? c->size_line : c->size_mb_line,
			   "%s: size %llu is beyond the largest offset a device can have (2^63-1)",
			   c->p->name, (unsigned long long)size);
	} else if (c->hmask == H_RAM && size) {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

		if (ram && size > ram)
			diag_error(c->d, c->have_size ? c->size_line : c->size_mb_line,
				   "%s: a ramdisk of %llu MiB is larger than this machine's memory "
				   "(%llu MiB)",
				   c->p->name, (unsigned long long)(size >> 20),
				   (unsigned long long)(ram >> 20));
	}
	/* a vcdrom's size is read-only in SCST: the image's */
	c->bs->size = c->hmask == H_CD ? 0 : size;
	if (size && (c->hmask & (H_FILE | H_CD)) && c->bs->filename[0])
		check_size_against_file(c, size);
	if ((c->hmask & H_DISK) && !c->have_filename)
		diag_error(c->d, dev_line, "DEVICE %s: %s needs a filename", c->p->name,
			   c->handler);
	if (c->hmask == H_RAM && !size)
		diag_error(c->d, dev_line, "DEVICE %s: ramdisk needs size or size_mb", c->p->name);
	if (c->hmask == H_RBD && (!c->have_pool || !c->have_image))
		diag_error(c->d, dev_line, "DEVICE %s: vdisk_rbd needs pool and image", c->p->name);
	if (c->hmask == H_RBD && !bs_rbd_available)
		diag_error(c->d, dev_line,
			   "DEVICE %s: this utgtd was built without librbd, so vdisk_rbd is not "
			   "available (install librbd-dev and librados-dev, then rebuild)",
			  c->p->name);
	if (c->bs->read_only && c->bs->thin_provisioned && c->have_thin && (c->hmask & H_DISK))
		diag_warn(c->d, dev_line,
			  "DEVICE %s: thin_provisioned has no effect on a read-only device",
			  c->p->name);
}

struct scsi_dev *scsi_dev_configure(const char *handler, const char *name,
				    const struct utgt_attr *attrs, unsigned nattrs, struct diag *d)
{
	return scsi_dev_configure_at(handler, name, nattrs ? attrs[0].line : 0, attrs, nattrs, d);
}

struct scsi_dev *scsi_dev_configure_at(const char *handler, const char *name, int dev_line,
				       const struct utgt_attr *attrs, unsigned nattrs,
				       struct diag *d)
{
	struct diag local = {0};
	struct scsi_dev_params p;
	struct cfg c = {.handler = handler, .p = &p};
	int errors0;
	struct scsi_dev *dev;

	if (!d)
		d = &local;
	c.d = d;
	errors0 = d->errors;
	memset(&p, 0, sizeof(p));
	for (size_t i = 0; handler && i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (!strcmp(handlers[i].name, handler))
			c.hmask = handlers[i].mask;
	if (!c.hmask) {
		diag_error(d, dev_line,
			   "DEVICE %s: unknown handler '%s' (utgt has vdisk_fileio, "
			   "vdisk_blockio, vdisk_nullio, vcdrom, ramdisk and vdisk_rbd)",
			   name ? name : "", handler ? handler : "");
		return NULL;
	}
	if (!name || !name[0] || strlen(name) >= sizeof(p.name)) {
		diag_error(d, dev_line, "DEVICE name '%s' must have 1 to %zu characters",
			   name ? name : "", sizeof(p.name) - 1);
		return NULL;
	}
	c.bs = calloc(1, sizeof(*c.bs));
	if (!c.bs) {
		diag_error(d, dev_line, "DEVICE %s: out of memory", name);
		return NULL;
	}
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(c.bs->name, sizeof(c.bs->name), "%s", name);
	c.bs->ops = backstore_find(handler);
	handler_defaults(&c);

	for (unsigned i = 0; i < nattrs; i++) {
		const struct utgt_attr *a = &attrs[i];
		const struct attr_def *def = find_def(a->key ? a->key : "");
		struct utgt_attr fixed = *a;

		if (!fixed.value)
			fixed.value = "";
		for (unsigned j = i + 1; j < nattrs; j++) {
			if (a->key && attrs[j].key && !strcasecmp(a->key, attrs[j].key)) {
				diag_warn(d, a->line,
					  "%s is set again at line %d; the later value is used",
					  a->key, attrs[j].line);
				break;
			}
		}
		if (!def) {
			diag_error(d, a->line, "unknown attribute '%s' for %s device %s",
				   a->key ? a->key : "", handler, name);
			continue;
		}
		if (def->kind == K_KERNEL) {
			diag_warn(d, a->line, "attribute %s is SCST-kernel only; ignored",
				  def->name);
			continue;
		}
		if (def->kind == K_RO) {
			diag_warn(d, a->line, "attribute %s is read-only state of SCST; ignored",
				  def->name);
			continue;
		}
		if (!(def->handlers & c.hmask)) {
			diag_error(d, a->line,
				   "attribute %s is not valid for handler %s (device %s)",
				   def->name, handler, name);
			continue;
		}
		if (def->apply && !def->apply(&c, &fixed))
			continue;
		if (def->kind == K_UNUSED && fixed.value[0])
			diag_warn(d, a->line, "attribute %s is accepted but not used by utgt",
				  def->name);
	}
	finish(&c, dev_line);
	if (d->errors != errors0) {
		free(c.bs);
		return NULL;
	}
	dev = scsi_dev_new(&p, c.bs);
	if (!dev) {
		diag_error(d, dev_line, "DEVICE %s: out of memory", name);
		free(c.bs);
	}
	return dev;
}
