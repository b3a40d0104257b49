/* One process per resource: a non-blocking flock(2) that names the process holding it.  The
 * backing-file lock (scsi/backstore/bs_fileio.c) and the state-dir lock (target/utgtd_main.c)
 * both use it, so a second daemon says which PID is in its way. */
#ifndef UTGT_COMMON_UT_FLOCK_H
#define UTGT_COMMON_UT_FLOCK_H

/* flock(fd, op | LOCK_NB) with op LOCK_EX or LOCK_SH.  0; or -1 with errno, and when errno is
 * EWOULDBLOCK *holder is the process holding a conflicting lock (from /proc/locks), 0 when
 * unknown. */
int ut_flock_try(int fd, int op, long *holder);

#endif
