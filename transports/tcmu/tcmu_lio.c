/* LIO configfs attributes of a user backstore (see tcmu_lio.h). */
#include <stdio.h>
#include <stdlib.h>

#include "transports/tcmu/tcmu_lio.h"

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	unsigned long long x;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*v = x;
	return 0;
}

uint32_t tcmu_lio_max_xfer(const char *root, unsigned hba, const char *dev)
{
	char p[1024];
	uint64_t sectors, bsz;

	snprintf(p, sizeof(p), "%s/core/user_%u/%s/attrib/hw_max_sectors", root, hba, dev);
	if (read_u64(p, &sectors) < 0)
		return 0;
	snprintf(p, sizeof(p), "%s/core/user_%u/%s/attrib/hw_block_size", root, hba, dev);
	if (read_u64(p, &bsz) < 0)
		return 0;
	if (!sectors || !bsz || sectors > UINT32_MAX / bsz)
		return 0;
	return (uint32_t)(sectors * bsz);
}
