/* common/ut_flock.c: a non-blocking flock that names the process in the way. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ut_flock.h"

Test(ut_flock, names_the_process_holding_the_lock)
{
	char dir[] = "/tmp/utgt-flock.XXXXXX";
	int ready[2], fd, fd2;
	long holder = -1;
	pid_t child;
	char c;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(pipe(ready), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		int cfd = open(dir, O_RDONLY | O_DIRECTORY);
		long h;

		if (cfd < 0 || ut_flock_try(cfd, LOCK_EX, &h) != 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1, "the child took the lock");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ut_flock_try(fd, LOCK_EX, &holder), -1);
	cr_assert_eq(errno, EWOULDBLOCK);
	cr_assert_eq(holder, (long)child, "holder %ld, child %d", holder, (int)child);
	cr_assert_eq(ut_flock_try(fd, LOCK_SH, &holder), -1, "shared conflicts with exclusive");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the lock went with its process */
	cr_assert_eq(ut_flock_try(fd, LOCK_SH, &holder), 0);
	cr_assert_eq(holder, 0);
	fd2 = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(ut_flock_try(fd2, LOCK_SH, &holder), 0, "shared locks share");
	close(fd2);
	close(fd);
	rmdir(dir);
}
