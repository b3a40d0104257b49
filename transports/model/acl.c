/* Access control: which LUN set an initiator sees on a target (SCST's security groups).
 *
 * SCST searches the target's groups in order and takes the first one holding an INITIATOR
 * pattern that matches the initiator name; no match means the target's own LUN set.  A pattern
 * uses '*' (any run, empty included) and '?' (any one character); a leading '!' inverts the
 * whole pattern.  Names compare case-insensitively as SCST's wildcmp() does (iSCSI names are
 * case-insensitive, RFC 3722). */
#include <ctype.h>
#include <stdio.h>

#include "transports/model/tgt_model.h"

/* Iterative glob with single-star backtracking: linear in practice, never exponential. */
static bool glob_match(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p == '?' ||
			   (*p && tolower((unsigned char)*p) == tolower((unsigned char)*s))) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

bool tgt_wildcard_match(const char *pattern, const char *name)
{
	if (!pattern || !name)
		return false;
	if (*pattern == '!')
		return !glob_match(pattern + 1, name);
	return glob_match(pattern, name);
}

const struct scsi_lun_table *tgt_acl_resolve_portal(const struct tgt_target *t, const char *iname,
						    const char *portal)
{
	char name[SCSI_NAME_MAX + 72];

	if (iname && portal && t->per_portal_acl) {
		snprintf(name, sizeof(name), "%s#%s", iname, portal);
		iname = name;
	}
	return tgt_acl_resolve(t, iname);
}

const struct scsi_lun_table *tgt_acl_resolve(const struct tgt_target *t, const char *iname)
{
	if (iname) {
		for (unsigned g = 0; g < t->ngroups; g++) {
			const struct tgt_group *grp = &t->groups[g];
			for (unsigned i = 0; i < grp->ninitiators; i++)
				if (tgt_wildcard_match(grp->initiators[i], iname))
					return &grp->table;
		}
	}
	return &t->table;
}
