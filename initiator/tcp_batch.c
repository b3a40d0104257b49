/* libiscsi writes every PDU with its own send() on a TCP_NODELAY socket, so the commands a
 * round queues on one connection leave one segment each.  The target then wakes for, reads
 * and answers them one at a time, a segment per answer; every segment costs both sides a
 * trip through the TCP stack (on loopback, the sender also runs the receiver's softirq).
 * With one path the kernel's autocorking hides part of this; spread over N paths (rr
 * iops=1) each connection carries 1/N of a round and nothing merges.  Corking the burst
 * sends it as one segment and lets the target batch its answers. */
#include "initiator/tcp_batch.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

bool ub_tcp_batch_begin(int fd, unsigned queued)
{
	const int on = 1;

	if (fd < 0 || queued < 2)
		return false; /* one send is one segment anyway: spare the two system calls */
	return setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on)) == 0;
}

void ub_tcp_batch_end(int fd, bool corked)
{
	const int off = 0;

	if (corked && fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_CORK, &off, sizeof(off));
}
