/* The kernel's target_core_user UAPI header, next to glibc's struct iovec: <linux/uio.h>
 * defines struct iovec again without a guard, so it is kept out (glibc's is the same). */
#ifndef UTGT_TCMU_UAPI_H
#define UTGT_TCMU_UAPI_H

#include <sys/uio.h>
#ifndef __LINUX_UIO_H
#define __LINUX_UIO_H
#endif
#include <linux/target_core_user.h>

#endif
