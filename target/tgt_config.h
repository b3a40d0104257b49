/* Loading, opening and printing the object model of transports/model/tgt_model.h from
 * scst.conf (conf_*.c), and finding the transport that serves a TARGET_DRIVER
 * (tgt_transport.c). */
#ifndef UTGT_TGT_CONFIG_H
#define UTGT_TGT_CONFIG_H

#include <stdio.h>

#include "transports/model/tgt_model.h"

/* Parse and validate; errors and warnings go to d with FILE:LINE.  NULL when d->errors. */
struct tgt_config *tgt_config_load(const char *path, struct diag *d);
struct tgt_config *tgt_config_parse(const char *text, size_t len, const char *name, struct diag *d);
/* Open every device's backstore (start, or --check=full). */
int tgt_config_open_devices(struct tgt_config *cfg, struct diag *d);
void tgt_config_free(struct tgt_config *cfg);
/* Print the resolved configuration (what --check shows) in scst.conf syntax: loading the
 * output gives the same model. */
void tgt_config_print(const struct tgt_config *cfg, FILE *out);
enum {
	TGT_PRINT_MASK_SECRETS = 1 << 0, /* CHAP secrets (IncomingUser/OutgoingUser) as ******** */
	TGT_PRINT_NO_HEADER = 1 << 1,	 /* no "# resolved configuration of PATH" line */
	/* SCST's layout, as `scstadmin -write_config -nonkey` writes it (`utgtadm
	 * write-config`): each block's attributes, then "# Non-key attributes" with the values
	 * utgt derived (size, blocksize, identity defaults, ...); loads back as the same
	 * running state. */
	TGT_PRINT_SCST = 1 << 2,
};
void tgt_config_print_opts(const struct tgt_config *cfg, FILE *out, unsigned flags);

const struct tgt_transport *tgt_transport_find(const char *driver);
/* Whether utgt serves this TARGET_DRIVER name at all (built or not). */
bool tgt_driver_is_known(const char *driver);

#endif
