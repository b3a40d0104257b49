/* The verbs layer as the iSER target uses it: the real one (rdma_verbs_io) unless a unit test
 * puts a fake in its place. */
#include "transports/iser/iser_int.h"

const struct rdma_io *iser_io = &rdma_verbs_io;
