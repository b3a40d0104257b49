/* The SRP target reaches the verbs layer through srpt_io: by default, the real one. */
#include <criterion/criterion.h>

#include "transports/srp/srp_int.h"

Test(srp_io, defaults_to_the_verbs_layer)
{
	cr_assert_eq(srpt_io, &rdma_verbs_io);
}
