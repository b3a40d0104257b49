/* Listen addresses: "ADDR:PORT", "[IPv6]:PORT", ":PORT" or "PORT" (IPv4 wildcard). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdma.h"

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int rdma_parse_addr(const char *s, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port_s;
	uint16_t port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (!s)
		return -1;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -1;
		hl = (size_t)(rb - s - 1);
		port_s = rb + 2;
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		if (parse_port(port_s, &port) || inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -1;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return 0;
	}
	colon = strrchr(s, ':');
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	a4->sin_family = AF_INET;
	if (!colon) /* bare port */
		return parse_port(s, &port) ? -1 : (a4->sin_port = htons(port), 0);
	if (strchr(s, ':') != colon)
		return -1; /* IPv6 without brackets */
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host) || parse_port(colon + 1, &port))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (hl && inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -1;
	a4->sin_port = htons(port);
	return 0;
}

void rdma_format_addr(const struct sockaddr_storage *ss, char *out, size_t room)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
		snprintf(out, room, "[%s]:%u", host, ntohs(a6->sin6_port));
	} else if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
		snprintf(out, room, "%s:%u", host, ntohs(a4->sin_port));
	} else {
		snprintf(out, room, "?");
	}
}
