/* The verbs layer as the iSER target uses it, through one table (iser_io): the real
 * transports/rdma functions here; unit tests put a fake in its place. */
#include "transports/iser/iser_int.h"

static void *ctx_of(struct rdma_conn *c)
{
	return rdma_srv_ctx(rdma_conn_srv(c));
}

static const struct iser_io verbs_io = {
    .priv = rdma_conn_priv,
    .set_priv = rdma_conn_set_priv,
    .name = rdma_conn_name,
    .ctx = ctx_of,
    .accept = rdma_conn_accept,
    .reject = rdma_conn_reject,
    .send_buf = rdma_conn_send_buf,
    .put_send_buf = rdma_conn_put_send_buf,
    .send = rdma_conn_send,
    .write_send = rdma_conn_write_send,
    .read = rdma_conn_read,
    .repost = rdma_conn_repost,
    .disconnect = rdma_conn_disconnect,
    .release = rdma_conn_release,
};

const struct iser_io *iser_io = &verbs_io;
