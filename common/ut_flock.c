#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/ut_flock.h"

/* The process holding a lock on fd's file, from /proc/locks; 0 when unknown. */
static long lock_holder(int fd)
{
	char line[256];
	struct stat st;
	long pid = 0;
	FILE *f;

	if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		long p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters have "->" */
		if (strstr(line, "->"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %ld %x:%x:%llu", &p, &maj, &min, &ino) == 4 &&
		    ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
		    min == minor(st.st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

int ut_flock_try(int fd, int op, long *holder)
{
	*holder = 0;
	if (flock(fd, op | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK) {
		*holder = lock_holder(fd);
		errno = EWOULDBLOCK;
	}
	return -1;
}
