/* Internal to the config loader (conf_model.c, conf_targets.c, conf_alua.c): the state of one
 * semantic pass over a parsed scst.conf and the helpers every block kind shares. */
#ifndef UTGT_CONF_LOAD_H
#define UTGT_CONF_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "target/conf_parser.h"
#include "target/conf_scst_attrs.h"
#include "target/tgt_arena.h"
#include "target/tgt_config.h"

/* Open-addressing name -> object map; case-insensitive when ci. */
struct conf_index {
	struct {
		const char *key;
		void *val;
	} * slot;
	unsigned cap, n;
	bool ci;
	bool oom; /* an insertion failed for lack of memory */
};
bool conf_index_init(struct conf_index *ix, unsigned expected, bool ci);
void *conf_index_get(const struct conf_index *ix, const char *key);
/* Adds key unless present; returns the existing value when it was (and does not replace it). */
void *conf_index_put(struct conf_index *ix, const char *key, void *val);
void conf_index_free(struct conf_index *ix);

enum conf_kw {
	KW_NONE,
	KW_HANDLER,
	KW_DEVICE,
	KW_TARGET_DRIVER,
	KW_TARGET,
	KW_LUN,
	KW_GROUP,
	KW_INITIATOR,
	KW_HW_TARGET,
	KW_DEVICE_GROUP,
	KW_TARGET_GROUP,
};

struct conf_loader {
	struct diag *d;
	struct tgt_arena *ar;
	struct tgt_config *cfg;
	bool oom;
	struct conf_index devices; /* name -> struct tgt_device * */
	struct conf_index targets; /* name -> first struct tgt_target * of that name */
};

/* The statement's keyword (KW_NONE: an attribute).  A keyword in the wrong case is reported
 * and still recognised, so one typo does not cascade. */
enum conf_kw conf_keyword(struct conf_loader *L, const struct conf_node *n);
const char *conf_kw_name(enum conf_kw kw);
/* "'LUN' is not allowed inside HANDLER vdisk_fileio" */
void conf_misplaced(struct conf_loader *L, const struct conf_node *n, const char *where);
/* Exactly nw words and, unless block_ok, no block: else report usage and return false. */
bool conf_shape(struct conf_loader *L, const struct conf_node *n, unsigned nw, bool block_ok,
		const char *usage);
/* Copy a name into a fixed model field; report and return false when it does not fit. */
bool conf_name(struct conf_loader *L, char *dst, size_t cap, const char *src, int line,
	       const char *what);
/* Append attribute statement n to as (room for it was reserved by the caller), classifying
 * it for scope; ctx names the block in messages ("TARGET iqn...").  False when rejected. */
bool conf_attr(struct conf_loader *L, struct tgt_attrs *as, const struct conf_node *n,
	       enum conf_scope scope, const char *driver, const struct tgt_transport *tp,
	       const char *ctx);
/* Room for up to n attributes. */
bool conf_attrs_reserve(struct conf_loader *L, struct tgt_attrs *as, unsigned n);
bool conf_bool(struct conf_loader *L, const struct utgt_attr *a, bool *out);
/* Integer in [lo, hi]; "invalid <what> '<v>': expected an integer lo..hi". */
bool conf_uint(struct conf_loader *L, const char *s, int line, const char *what, uint64_t lo,
	       uint64_t hi, uint64_t *out);
void *conf_alloc(struct conf_loader *L, size_t n, size_t size);
/* Children of n whose first word is kw (any case): the room a block's arrays need. */
unsigned conf_count_kw(const struct conf_node *n, const char *kw);

/* The semantic pass over a parsed tree (tgt_config_parse without the text): live
 * administration edits the running configuration's tree and loads it with the same rules. */
struct tgt_config *tgt_config_from_tree(const struct conf_node *root, const char *name,
					struct diag *d);

void conf_load_targets(struct conf_loader *L, const struct conf_node *const *drivers, unsigned n);
/* After DEVICE_GROUPs had their say on rel_tgt_id: check, assign, build LUN tables. */
void conf_finish_targets(struct conf_loader *L);
void conf_load_alua(struct conf_loader *L, const struct conf_node *const *groups, unsigned n);
void conf_finish_alua(struct conf_loader *L);

#endif
