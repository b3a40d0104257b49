/* sd_notify by hand (see tgt_notify.h). */
#include "target/tgt_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int tgt_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	ssize_t n;
	int fd;

	if (!path || !path[0])
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* abstract names are exactly len bytes long; paths include their NUL */
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/')));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(state) ? 1 : -1;
}
