/* The SRP target reaches the verbs layer through srpt_io: by default, the real one. */
#include <criterion/criterion.h>

#include "transports/srp/srp_int.h"

Test(srp_io, defaults_to_the_verbs_layer)
{
	cr_assert_eq(srpt_io->accept, rdma_conn_accept);
	cr_assert_eq(srpt_io->reject, rdma_conn_reject);
	cr_assert_eq(srpt_io->send, rdma_conn_send);
	cr_assert_eq(srpt_io->write_send, rdma_conn_write_send);
	cr_assert_eq(srpt_io->read, rdma_conn_read);
	cr_assert_eq(srpt_io->repost, rdma_conn_repost);
	cr_assert_eq(srpt_io->disconnect, rdma_conn_disconnect);
	cr_assert_eq(srpt_io->release, rdma_conn_release);
	cr_assert_eq(srpt_io->pool, rdma_conn_pool);
	cr_assert_eq(srpt_io->call, rdma_conn_call);
	cr_assert_eq(srpt_io->send_buf, rdma_conn_send_buf);
	cr_assert_eq(srpt_io->put_send_buf, rdma_conn_put_send_buf);
	cr_assert_eq(srpt_io->priv, rdma_conn_priv);
	cr_assert_eq(srpt_io->set_priv, rdma_conn_set_priv);
	cr_assert_eq(srpt_io->name, rdma_conn_name);
	cr_assert_not_null(srpt_io->ctx);
}
