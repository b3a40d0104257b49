/* The real verbs layer behind struct rdma_io (see rdma_io.h). */
#include "transports/rdma/rdma_io.h"

static void *ctx_of(struct rdma_conn *c)
{
	return rdma_srv_ctx(rdma_conn_srv(c));
}

const struct rdma_io rdma_verbs_io = {
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
    .pool = rdma_conn_pool,
    .call = rdma_conn_call,
    .set_cpu = rdma_conn_set_cpu,
};
