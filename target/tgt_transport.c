/* Registry of the front ends utgtd can start, by SCST target driver name.
 *
 * Each transport lives in transports/<x>/ and exports a `const struct tgt_transport`.  They are
 * referenced weakly so a build without one (SRP needs RDMA, TCMU needs the kernel's
 * ring) still links: the driver stays known (its blocks load) and utgtd logs that this build
 * does not serve it. */
#include <string.h>

#include "target/tgt_config.h"

extern const struct tgt_transport iscsi_transport __attribute__((weak));
extern const struct tgt_transport srpt_transport __attribute__((weak));
extern const struct tgt_transport tcmu_transport __attribute__((weak));

/* SCST's copy_manager target lists the devices EXTENDED COPY may use.  utgt's core decides
 * that per command (only LUs the requesting I_T nexus can already address), so there is no
 * front end to run; the block is kept in the model and start() has nothing to do. */
static int copy_manager_start(const struct tgt_config *cfg, const struct tgt_driver *drv, char *err,
			      size_t errlen)
{
	(void)cfg;
	(void)drv;
	(void)err;
	(void)errlen;
	return 0;
}

static void copy_manager_stop(void)
{
}

/* Nothing of the configuration is kept: a new one changes nothing here. */
static int copy_manager_update(const struct tgt_config *cfg, const struct tgt_driver *drv,
			       char *err, size_t errlen)
{
	(void)cfg;
	(void)drv;
	(void)err;
	(void)errlen;
	return 0;
}

static const char *const no_attrs[] = {NULL};

static const struct tgt_transport copy_manager_transport = {
    .driver = "copy_manager",
    .driver_attrs = no_attrs,
    .target_attrs = no_attrs,
    .start = copy_manager_start,
    .stop = copy_manager_stop,
    .update = copy_manager_update,
};

static const struct {
	const char *driver;
	const struct tgt_transport *t;
} registry[] = {
    {"iscsi", &iscsi_transport},
    {"ib_srpt", &srpt_transport},
    {"copy_manager", &copy_manager_transport},
    {"tcmu", &tcmu_transport},
};

#define NREG (sizeof(registry) / sizeof(registry[0]))

bool tgt_driver_is_known(const char *driver)
{
	for (size_t i = 0; driver && i < NREG; i++)
		if (!strcmp(registry[i].driver, driver))
			return true;
	return false;
}

const struct tgt_transport *tgt_transport_find(const char *driver)
{
	for (size_t i = 0; driver && i < NREG; i++)
		if (!strcmp(registry[i].driver, driver))
			return registry[i].t;
	return NULL;
}
