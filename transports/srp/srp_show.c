/* `utgtd --show-srp-login -c FILE`: for every enabled ib_srpt TARGET, the line to write into
 * /sys/class/infiniband_srp/srp-DEV-PORT/add_target on a Linux initiator.
 *
 * utgtd serves SRP through RDMA/CM, so the line is the RDMA/CM form: id_ext and ioc_guid from
 * the port GID, dest = the address and port the target listens on.  With a wildcard listen
 * address the IPv4 addresses come from the GID table of the local port that has the TARGET's
 * GID (RoCE ports list one IPv4-mapped GID per address of their netdev).  The lines go to the
 * caller's stream; a reason for printing none goes to err (utgtd prints it). */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/srp/srp_int.h"

#define MAX_IPS 8

struct port_ips {
	char dev[64];
	unsigned port;
	unsigned nip;
	char ip[MAX_IPS][INET_ADDRSTRLEN];
	bool found;
};

static bool ipv4_mapped(const uint8_t *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !memcmp(g, prefix, 12);
}

/* Look through every local port for gid; fill the port's IPv4 addresses. */
static void find_port(const uint8_t gid[16], struct port_ips *out)
{
	struct ibv_device **list;
	int n = 0;

	memset(out, 0, sizeof(*out));
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !out->found; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr da;

		if (!ctx)
			continue;
		if (ibv_query_device(ctx, &da)) {
			ibv_close_device(ctx);
			continue;
		}
		for (uint8_t p = 1; p <= da.phys_port_cnt && !out->found; p++) {
			struct ibv_port_attr pa;
			union ibv_gid g;

			if (ibv_query_port(ctx, p, &pa))
				continue;
			for (int k = 0; k < pa.gid_tbl_len; k++)
				if (!ibv_query_gid(ctx, p, k, &g) && !memcmp(g.raw, gid, 16))
					out->found = true;
			if (!out->found)
				continue;
			snprintf(out->dev, sizeof(out->dev), "%s", ibv_get_device_name(list[i]));
			out->port = p;
			for (int k = 0; k < pa.gid_tbl_len && out->nip < MAX_IPS; k++) {
				if (ibv_query_gid(ctx, p, k, &g) || !ipv4_mapped(g.raw))
					continue;
				inet_ntop(AF_INET, g.raw + 12, out->ip[out->nip], INET_ADDRSTRLEN);
				bool dup = false;
				for (unsigned j = 0; j < out->nip; j++)
					dup |= !strcmp(out->ip[j], out->ip[out->nip]);
				if (!dup)
					out->nip++;
			}
		}
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
}

static bool wildcard(const struct sockaddr_storage *ss, uint16_t *port)
{
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;
		*port = ntohs(a->sin6_port);
		return IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr);
	}
	const struct sockaddr_in *a = (const void *)ss;
	*port = ntohs(a->sin_port);
	return a->sin_addr.s_addr == htonl(INADDR_ANY);
}

int srpt_show_login(const struct tgt_config *cfg, FILE *out, char *err, size_t errlen)
{
	const struct tgt_driver *drv = tgt_config_driver(cfg, "ib_srpt");
	struct srpt_ctx ctx = {0};
	unsigned printed = 0;
	char line[256];

	if (!drv) {
		snprintf(err, errlen, "%s has no TARGET_DRIVER ib_srpt", cfg->path);
		return 1;
	}
	ctx.drv = drv;
	if (srpt_opts_parse(drv, &ctx.o, NULL) || srpt_targets_setup(&ctx, NULL)) {
		snprintf(err, errlen, "the ib_srpt block has errors (utgtd --check -c %s)",
			 cfg->path);
		free(ctx.tgts);
		return 1;
	}
	for (unsigned i = 0; i < ctx.ntgts; i++) {
		const struct srpt_tgt *t = &ctx.tgts[i];
		struct port_ips pi;

		find_port(t->id.gid, &pi);
		if (pi.found)
			fprintf(out, "# TARGET %s (rel_tgt_id %u): local port %s/%u\n", t->t->name,
				t->rel_tgt_id, pi.dev, pi.port);
		else
			fprintf(out,
				"# TARGET %s (rel_tgt_id %u): no local RDMA port has this GID\n",
				t->t->name, t->rel_tgt_id);
		for (unsigned l = 0; l < ctx.o.rdma.nlisten; l++) {
			const struct sockaddr_storage *ss = &ctx.o.rdma.listen[l];
			char dest[80];
			uint16_t port;

			if (!wildcard(ss, &port)) {
				rdma_format_addr(ss, dest, sizeof(dest));
				srp_add_target_rdma(&t->id, dest, line, sizeof(line));
				fprintf(out, "%s\n", line);
				printed++;
				continue;
			}
			if (!pi.nip) {
				snprintf(dest, sizeof(dest), "ADDRESS:%u", port);
				srp_add_target_rdma(&t->id, dest, line, sizeof(line));
				fprintf(out,
					"# no IPv4 address known for it: put the target's in\n");
				fprintf(out, "%s\n", line);
				printed++;
				continue;
			}
			for (unsigned k = 0; k < pi.nip; k++) {
				snprintf(dest, sizeof(dest), "%s:%u", pi.ip[k], port);
				srp_add_target_rdma(&t->id, dest, line, sizeof(line));
				fprintf(out, "%s\n", line);
				printed++;
			}
		}
	}
	if (printed)
		fprintf(out, "# echo LINE > /sys/class/infiniband_srp/srp-DEV-PORT/add_target "
			     "(initiator_ext=N distinguishes several logins of one initiator)\n");
	free(ctx.tgts);
	return printed ? 0 : 1;
}
