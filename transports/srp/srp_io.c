/* The verbs layer as the SRP target uses it: the real one (rdma_verbs_io) unless a test puts a
 * fake in its place to run channels, commands and task management against the real SCSI core
 * without an RDMA device. */
#include "transports/srp/srp_int.h"

const struct rdma_io *srpt_io = &rdma_verbs_io;
