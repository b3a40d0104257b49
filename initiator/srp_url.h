/* utgt-bench SRP targets: "srp:" followed by the line Linux's add_target takes (what
 * `utgtd --show-srp-login` prints), plus a few keys of the tester's own:
 *
 *   srp:id_ext=505400fffe123456,ioc_guid=505400fffe123456,dest=10.0.2.15:5555
 *       [,initiator_ext=1][,lun=0][,multichannel=1][,imm=0][,queue_size=64]
 *
 * Keys may also be separated by ';' (--paths splits its list at commas).
 *
 * multichannel=1 logs in with MULTI-CHANNEL ACTION "multiple", so several paths with one
 * initiator_ext share one I_T nexus (SRP multichannel); the default (single) makes a login
 * replace the initiator's earlier channels, as a new I_T nexus. */
#ifndef UB_SRP_URL_H
#define UB_SRP_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct ub_srp_url {
	struct sockaddr_storage dest;
	char dest_str[80];
	uint64_t id_ext, ioc_guid, initiator_ext;
	uint64_t lun;
	bool multichannel;
	bool imm;	     /* ask for immediate data (default yes) */
	unsigned queue_size; /* commands in flight on the path (default 64) */
};

bool ub_is_srp_url(const char *s);
bool ub_srp_url_parse(const char *s, struct ub_srp_url *u, char *err, size_t errlen);

#endif
