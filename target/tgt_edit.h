/* Live administration's verbs as edits of the running configuration: the configuration is
 * printed (tgt_config_print: it loads back as the same model), parsed, edited here, and loaded
 * again with the loader's own rules, so a verb accepts exactly what scst.conf would and the
 * result goes through the same diff/apply engine as a reload (target/tgt_apply.c). */
#ifndef UTGT_TGT_EDIT_H
#define UTGT_TGT_EDIT_H

#include <stddef.h>

#include "target/conf_parser.h"
#include "target/tgt_config.h"

enum tgt_edit_verb {
	EDIT_ADD,
	EDIT_REMOVE,
	EDIT_SET, /* attributes; an empty value removes the attribute (back to its default) */
	EDIT_ENABLE,
	EDIT_DISABLE,
};

enum tgt_edit_obj {
	OBJ_DEVICE,    /* name; add: handler=H, attributes */
	OBJ_TARGET,    /* name; driver=D; add/set: attributes */
	OBJ_DRIVER,    /* name; set: attributes */
	OBJ_GROUP,     /* name; driver=D target=T; add/set: attributes */
	OBJ_LUN,       /* number; driver=D target=T [group=G]; add: device=DEV [read_only=0|1] */
	OBJ_INITIATOR, /* pattern; driver=D target=T group=G */
	OBJ_TGROUP,    /* ALUA target group name; dgroup=DG; set: state, preferred */
};

struct tgt_edit_opt {
	const char *key, *value;
};

struct tgt_edit {
	enum tgt_edit_verb verb;
	enum tgt_edit_obj obj;
	const char *name;
	const struct tgt_edit_opt *opts;
	unsigned nopts;
};

/* Edit root, the parsed text of cfg, as e says.  Checks what the loader could not say in the
 * verb's terms (the object exists, is not there yet, is not in use).  0, or -1 with err. */
int tgt_edit_tree(struct conf_node *root, const struct tgt_config *cfg, const struct tgt_edit *e,
		  char *err, size_t errlen);
/* cfg printed, parsed, edited and loaded: the configuration to apply, named like cfg; NULL
 * with err (the first error of the loader, when it refused the result). */
struct tgt_config *tgt_edit_config(const struct tgt_config *cfg, const struct tgt_edit *e,
				   char *err, size_t errlen);
/* Where DEVICE `name` is used by a LUN of cfg ("LUN 0 of TARGET t (driver iscsi)", a GROUP
 * too), copy_manager's automatic ones aside; false when nowhere. */
bool tgt_device_used_by(const struct tgt_config *cfg, const char *name, char *where, size_t len);

#endif
