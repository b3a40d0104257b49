/* Target identity from the port GID, as SCST's ib_srpt names its targets: the TARGET name in
 * scst.conf is the port GID ("fe80:0000:0000:0000:0002:c903:000f:41a7"); the SRP target port
 * identifier, the IOC GUID and the IB CM service id all come from its interface id (the port
 * GUID on InfiniBand, the EUI-64 of the MAC on RoCE).  Also the strings Linux's ib_srp takes
 * in /sys/class/infiniband_srp/srp-DEV-PORT/add_target. */
#ifndef UTGT_SRP_IDENT_H
#define UTGT_SRP_IDENT_H

#include <stddef.h>
#include <stdint.h>

struct srp_ident {
	uint8_t gid[16];
	uint64_t id_ext;     /* IDENTIFIER EXTENSION: first half of the target port id */
	uint64_t ioc_guid;   /* second half */
	uint64_t service_id; /* IB CM service id (SRP over IB CM; RDMA/CM uses an IP port) */
	uint8_t port_id[16]; /* id_ext, ioc_guid big-endian: what SRP_LOGIN_REQ names */
};

/* Accepts the GID in SCST's form (eight groups of four hex digits), any IPv6 spelling
 * ("fe80::2:c903:f:41a7"), or a bare GUID in four groups ("0002:c903:000f:41a7", as ib_srpt
 * names targets with use_node_guid_in_target_name): then the subnet prefix is fe80::/64.
 * Returns 0, or -1 when s is none of these. */
int srp_gid_parse(const char *s, uint8_t gid[16]);
void srp_gid_format(const uint8_t gid[16], char out[40]); /* SCST's form */
void srp_ident_from_gid(const uint8_t gid[16], struct srp_ident *out);
/* "0x" and 32 lowercase hex digits: the initiator name SCST gives SRP sessions. */
void srp_port_id_hex(const uint8_t id[16], char out[35]);

/* add_target strings.  RDMA/CM: dest is "IPv4:PORT" or "[IPv6]:PORT".  IB CM: dgid, pkey.
 * Return the length written (snprintf semantics). */
int srp_add_target_rdma(const struct srp_ident *id, const char *dest, char *out, size_t room);
int srp_add_target_ib(const struct srp_ident *id, uint16_t pkey, char *out, size_t room);

#endif
