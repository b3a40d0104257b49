/* utgtadm's command line as an admin socket request (target/adm_cli.c): utgtadm's own words
 * (`utgtadm add lun 1 driver=iscsi target=T device=d1`), each quoted for the protocol, or the
 * scstadmin commands people script with, translated to the same requests:
 *
 *   -config FILE            reload FILE          -write_config FILE     write-config FILE
 *   -list_target [T]        show targets         -list_device [D]       show devices
 *   -list_group [G]         show targets         -list_sessions         show sessions
 *   -set_dev_attr D -attributes a=v,...          set device D a=v ...
 *   -set_tgt_attr T -driver X -attributes ...    set target T driver=X ...
 *   -add_lun N -driver X -target T [-group G] -device D [-attributes read_only=1]
 *   -rem_lun N -driver X -target T [-group G]
 *   -add_init I / -rem_init I -driver X -target T -group G
 *   -enable_target T / -disable_target T -driver X
 *   -resync_dev D           resync device D
 *   and -open_dev, -close_dev, -add_target, -rem_target, -add_group, -rem_group,
 *   -set_drv_attr, -set_grp_attr, -set_tgrp_attr (ALUA state).
 * scstadmin's modifiers -noprompt, -force, -nonkey, -cont_on_err are accepted (the daemon
 * always asks nothing, writes non-key attributes, and applies a change whole or not at all). */
#ifndef UTGT_ADM_CLI_H
#define UTGT_ADM_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* How utgtadm prints the answer. */
enum adm_render {
	ADM_RENDER_DEFAULT,	  /* tables for show, the version line, help, "changed" */
	ADM_RENDER_SCST_TARGETS,  /* -list_target [T] */
	ADM_RENDER_SCST_DEVICES,  /* -list_device [D] */
	ADM_RENDER_SCST_GROUPS,	  /* -list_group [G] */
	ADM_RENDER_SCST_SESSIONS, /* -list_sessions */
};

struct adm_cmd {
	char req[1024]; /* the request line, newline included */
	enum adm_render render;
	const char *filter; /* -list_*: the one object asked for, NULL: all */
	const char *driver; /* -list_*: -driver, NULL: any */
	const char *target; /* -list_group: -target, NULL: any */
	bool changes;	    /* a request that changes things (a longer answer timeout) */
};

/* argv[0..argc) after utgtadm's own options.  Relative FILE arguments are made absolute (the
 * daemon runs in /).  0, or -1 with a message in err (usage). */
int adm_cli_request(int argc, char **argv, struct adm_cmd *cmd, char *err, size_t errlen);

#endif
