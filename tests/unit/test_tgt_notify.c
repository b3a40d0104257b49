/* sd_notify by hand (tgt_notify.c): the datagram systemd would read, on a path socket and on an
 * abstract one, and silence when not started by systemd. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "target/tgt_notify.h"

/* Bind a datagram socket at NAME (a path, or '@' + abstract name); return its fd. */
static int listener(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] != '@'))),
		     0);
	return fd;
}

static void expect(int fd, const char *want)
{
	char buf[128];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	cr_assert_eq(n, (ssize_t)strlen(want));
	buf[n] = '\0';
	cr_assert_str_eq(buf, want);
}

Test(tgt_notify, path_socket)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/utgt-notify-test.%ld", (long)getpid());
	unlink(path);
	int fd = listener(path);
	setenv("NOTIFY_SOCKET", path, 1);
	cr_assert_eq(tgt_notify("READY=1\nSTATUS=serving"), 1);
	expect(fd, "READY=1\nSTATUS=serving");
	cr_assert_eq(tgt_notify("STOPPING=1"), 1);
	expect(fd, "STOPPING=1");
	close(fd);
	unlink(path);
}

Test(tgt_notify, abstract_socket)
{
	char name[64];
	snprintf(name, sizeof(name), "@utgt-notify-test.%ld", (long)getpid());
	int fd = listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	cr_assert_eq(tgt_notify("READY=1"), 1);
	expect(fd, "READY=1");
	close(fd);
}

Test(tgt_notify, not_under_systemd)
{
	unsetenv("NOTIFY_SOCKET");
	cr_assert_eq(tgt_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	cr_assert_eq(tgt_notify("READY=1"), -1);
	setenv("NOTIFY_SOCKET", "/nonexistent/utgt/notify", 1);
	cr_assert_eq(tgt_notify("READY=1"), -1);
}
