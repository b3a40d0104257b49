/* LIO configfs attributes and fabric links of a user backstore (see tcmu_lio.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool tcmu_lio_wants_reply(const char *root, unsigned hba, const char *dev)
{
	char p[1024];
	FILE *f;
	int v, ok;

	snprintf(p, sizeof(p), "%s/core/user_%u/%s/attrib/nl_reply_supported", root, hba, dev);
	if (!(f = fopen(p, "re")))
		return true;
	ok = fscanf(f, "%d", &v) == 1;
	fclose(f);
	return !ok || v > 0;
}

static const struct {
	const char *fabric;
	enum scsi_proto_id proto;
} fabric_protos[] = {
    {"srpt", SCSI_PROTO_SRP},	 {"ibmvscsis", SCSI_PROTO_SRP}, {"iscsi", SCSI_PROTO_ISCSI},
    {"qla2xxx", SCSI_PROTO_FCP}, {"tcm_fc", SCSI_PROTO_FCP},	{"efct", SCSI_PROTO_FCP},
};

static enum scsi_proto_id proto_of(const char *fabric)
{
	for (size_t i = 0; i < sizeof(fabric_protos) / sizeof(fabric_protos[0]); i++)
		if (!strcmp(fabric, fabric_protos[i].fabric))
			return fabric_protos[i].proto;
	return SCSI_PROTO_SAS;
}

const char *tcmu_lio_proto_name(enum scsi_proto_id p)
{
	switch (p) {
	case SCSI_PROTO_SRP:
		return "srp";
	case SCSI_PROTO_ISCSI:
		return "iscsi";
	case SCSI_PROTO_FCP:
		return "fcp";
	default:
		return "sas";
	}
}

/* Calls fn(dir/name) for each subdirectory of dir (no dot entries); stops when fn returns
 * true. */
static bool each_dir(const char *dir, bool (*fn)(const char *path, void *arg), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool stop = false;

	if (!d)
		return false;
	while (!stop && (de = readdir(d))) {
		char p[1024];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			stop = fn(p, arg);
	}
	closedir(d);
	return stop;
}

struct fabric_walk {
	char target[96]; /* "core/user_<hba>/<dev>": what a LUN's link ends with */
	const char *fabric;
	bool linked; /* the current fabric has a LUN on the device */
};

static bool lun_links(const char *lun, void *arg)
{
	struct fabric_walk *w = arg;
	DIR *d = opendir(lun);
	struct dirent *de;
	size_t tl = strlen(w->target);

	if (!d)
		return false;
	while (!w->linked && (de = readdir(d))) {
		char p[1024], t[1024];
		ssize_t n;

		snprintf(p, sizeof(p), "%s/%s", lun, de->d_name);
		n = readlink(p, t, sizeof(t) - 1);
		if (n <= 0)
			continue;
		t[n] = '\0';
		while (n > 0 && t[n - 1] == '/')
			t[--n] = '\0';
		if ((size_t)n >= tl && !strcmp(t + n - tl, w->target) &&
		    ((size_t)n == tl || t[n - tl - 1] == '/'))
			w->linked = true;
	}
	closedir(d);
	return w->linked;
}

static bool tpg_luns(const char *tpg, void *arg)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/lun", tpg);
	return each_dir(p, lun_links, arg);
}

static bool wwn_tpgs(const char *wwn, void *arg)
{
	return each_dir(wwn, tpg_luns, arg);
}

enum scsi_proto_id tcmu_lio_fabric(const char *root, unsigned hba, const char *dev, char *fabrics,
				   size_t len)
{
	struct fabric_walk w;
	DIR *d = opendir(root);
	struct dirent *de;
	enum scsi_proto_id proto = SCSI_PROTO_SAS;
	unsigned n = 0;
	size_t off = 0;

	fabrics[0] = '\0';
	if (!d)
		return proto;
	snprintf(w.target, sizeof(w.target), "core/user_%u/%s", hba, dev);
	while ((de = readdir(d))) {
		char p[1024];

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "core"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", root, de->d_name);
		w.fabric = de->d_name;
		w.linked = false;
		each_dir(p, wwn_tpgs, &w);
		if (!w.linked)
			continue;
		if (off < len)
			off += (size_t)snprintf(fabrics + off, len - off, "%s%s", n ? " " : "",
						de->d_name);
		proto = n++ ? SCSI_PROTO_SAS : proto_of(de->d_name);
	}
	closedir(d);
	return proto;
}
