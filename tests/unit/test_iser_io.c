/* The iSER target reaches the verbs layer through iser_io: by default, the real one. */
#include <criterion/criterion.h>

#include "transports/iser/iser_int.h"

Test(iser_io, defaults_to_the_verbs_layer)
{
	cr_assert_eq(iser_io, &rdma_verbs_io);
}
