/* The real verbs layer behind struct rdma_io: every call is the transports/rdma function. */
#include <criterion/criterion.h>

#include "transports/rdma/rdma_io.h"

Test(rdma_io, the_real_functions)
{
	cr_assert_eq(rdma_verbs_io.accept, rdma_conn_accept);
	cr_assert_eq(rdma_verbs_io.reject, rdma_conn_reject);
	cr_assert_eq(rdma_verbs_io.send, rdma_conn_send);
	cr_assert_eq(rdma_verbs_io.write_send, rdma_conn_write_send);
	cr_assert_eq(rdma_verbs_io.read, rdma_conn_read);
	cr_assert_eq(rdma_verbs_io.repost, rdma_conn_repost);
	cr_assert_eq(rdma_verbs_io.disconnect, rdma_conn_disconnect);
	cr_assert_eq(rdma_verbs_io.release, rdma_conn_release);
	cr_assert_eq(rdma_verbs_io.pool, rdma_conn_pool);
	cr_assert_eq(rdma_verbs_io.call, rdma_conn_call);
	cr_assert_eq(rdma_verbs_io.send_buf, rdma_conn_send_buf);
	cr_assert_eq(rdma_verbs_io.put_send_buf, rdma_conn_put_send_buf);
	cr_assert_eq(rdma_verbs_io.priv, rdma_conn_priv);
	cr_assert_eq(rdma_verbs_io.set_priv, rdma_conn_set_priv);
	cr_assert_eq(rdma_verbs_io.name, rdma_conn_name);
	cr_assert_not_null(rdma_verbs_io.ctx);
}
