/* The RDMA service without an RDMA device (this machine has none): it starts, says so, serves
 * nothing, and every shutdown step (close listeners, visit connections, wait, stop) returns
 * promptly and frees everything (ASan checks the last part). */
#include <criterion/criterion.h>
#include <time.h>

#include "transports/rdma/rdma_int.h"

static void req(struct rdma_conn *c, const struct rdma_conn_req *r)
{
	(void)r;
	rdma_conn_reject(c, NULL, 0);
}

static void recv_cb(struct rdma_conn *c, struct rdma_buf *b, uint32_t len)
{
	(void)len;
	rdma_conn_repost(c, b);
}

static const struct rdma_conn_ops OPS = {.request = req, .recv = recv_cb};

static int visited;
static void visit(struct rdma_conn *c, void *arg)
{
	(void)c;
	(void)arg;
	visited++;
}

Test(rdma_srv, starts_and_stops_without_a_device)
{
	struct rdma_srv_cfg cfg = {
	    .name = "test", .threads = 2, .pool_chunk = 65536, .pool_max = 1 << 20, .nlisten = 1};
	char err[128] = "";
	struct rdma_srv *s;
	struct timespec t0, t1;

	cr_assert_eq(rdma_parse_addr("127.0.0.1:45999", &cfg.listen[0]), 0);
	s = rdma_srv_start(&cfg, &OPS, &cfg, err, sizeof(err));
	cr_assert_not_null(s, "start: %s", err);
	cr_assert_eq(rdma_srv_ctx(s), &cfg);
	cr_assert_eq(rdma_srv_nconns(s), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rdma_srv_close_listeners(s);
	visited = 0;
	rdma_srv_each_conn(s, visit, NULL);
	cr_assert_eq(visited, 0);
	cr_assert(rdma_srv_wait_idle(s, 2000));
	rdma_srv_stop(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 5, "shutdown does not hang");
}

Test(rdma_srv, one_thread_default)
{
	struct rdma_srv_cfg cfg = {.name = "test", .pool_chunk = 65536, .pool_max = 1 << 20};
	char err[128];
	struct rdma_srv *s = rdma_srv_start(&cfg, &OPS, NULL, err, sizeof(err));

	cr_assert_not_null(s);
	cr_assert_eq(s->nthreads, 1);
	rdma_srv_stop(s);
}
