/* The connection calls of the verbs layer as a table, so a transport above it (SRP, iSER) can
 * run its channels against a test's stand-ins without an RDMA device.  rdma_verbs_io holds the
 * real functions; each transport keeps a pointer to the table it uses (srpt_io, iser_io). */
#ifndef UTGT_RDMA_IO_H
#define UTGT_RDMA_IO_H

#include "transports/rdma/rdma.h"

struct rdma_io {
	void *(*priv)(const struct rdma_conn *c);
	void (*set_priv)(struct rdma_conn *c, void *priv);
	const char *(*name)(const struct rdma_conn *c);
	void *(*ctx)(struct rdma_conn *c); /* the service's context (rdma_srv_ctx) */
	int (*accept)(struct rdma_conn *c, const struct rdma_conn_params *p);
	void (*reject)(struct rdma_conn *c, const void *priv, uint8_t priv_len);
	struct rdma_buf *(*send_buf)(struct rdma_conn *c);
	void (*put_send_buf)(struct rdma_conn *c, struct rdma_buf *b);
	int (*send)(struct rdma_conn *c, struct rdma_buf *b, uint32_t len, bool solicited,
		    struct rdma_op *op);
	int (*write_send)(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
			  const struct rdma_seg *loc, unsigned nloc, uint64_t bytes,
			  struct rdma_buf *b, uint32_t len, bool solicited, struct rdma_op *op);
	int (*read)(struct rdma_conn *c, const struct rdma_rseg *rem, unsigned nrem,
		    const struct rdma_seg *loc, unsigned nloc, uint64_t bytes, struct rdma_op *op);
	void (*repost)(struct rdma_conn *c, struct rdma_buf *b);
	void (*disconnect)(struct rdma_conn *c);
	void (*release)(struct rdma_conn *c);
	struct rdma_pool *(*pool)(struct rdma_conn *c);
	void (*call)(struct rdma_conn *c, struct ut_msg *m);
	void (*set_cpu)(struct rdma_conn *c, int cpu);
};

extern const struct rdma_io rdma_verbs_io;

#endif
