/* TCM-USER generic netlink without libnl (see tcmu_nl.h).  Every length read from a message
 * is checked against what was received before anything behind it is read. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/tcmu/tcmu_nl.h"
#include "transports/tcmu/tcmu_uapi.h"

#define NL_ALIGNED(n) (((n) + 3u) & ~3u)

/* Calls fn for each attribute in [p, p + len); stops at the first malformed one (-1). */
static int each_attr(const uint8_t *p, size_t len,
		     int (*fn)(uint16_t type, const uint8_t *v, size_t vlen, void *arg), void *arg)
{
	while (len >= sizeof(struct nlattr)) {
		struct nlattr a;
		size_t step;

		memcpy(&a, p, sizeof(a));
		if (a.nla_len < sizeof(a) || a.nla_len > len)
			return -1;
		if (fn(a.nla_type & NLA_TYPE_MASK, p + sizeof(a), a.nla_len - sizeof(a), arg) < 0)
			return -1;
		step = NL_ALIGNED(a.nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

static int get_str(char *dst, size_t cap, const uint8_t *v, size_t vlen)
{
	size_t n = strnlen((const char *)v, vlen);

	if (n == vlen || n >= cap) /* not terminated inside the attribute, or too long */
		return -1;
	memcpy(dst, v, n + 1);
	return 0;
}

static int event_attr(uint16_t type, const uint8_t *v, size_t vlen, void *arg)
{
	struct tcmu_nl_event *ev = arg;

	switch (type) {
	case TCMU_ATTR_DEVICE:
		return get_str(ev->device, sizeof(ev->device), v, vlen);
	case TCMU_ATTR_DEV_CFG:
		ev->has_cfg = true;
		return get_str(ev->cfg, sizeof(ev->cfg), v, vlen);
	case TCMU_ATTR_MINOR:
	case TCMU_ATTR_DEVICE_ID:
		if (vlen != 4)
			return -1;
		memcpy(type == TCMU_ATTR_MINOR ? &ev->minor : &ev->dev_id, v, 4);
		*(type == TCMU_ATTR_MINOR ? &ev->has_minor : &ev->has_dev_id) = true;
		return 0;
	case TCMU_ATTR_DEV_SIZE:
		if (vlen != 8)
			return -1;
		memcpy(&ev->size, v, 8);
		ev->has_size = true;
		return 0;
	case TCMU_ATTR_WRITECACHE:
		if (vlen != 1)
			return -1;
		ev->wce = v[0];
		ev->has_wce = true;
		return 0;
	default:
		return 0; /* newer kernels may add some */
	}
}

long tcmu_nl_parse(const void *buf, size_t len, uint16_t family, struct tcmu_nl_event *ev,
		   bool *is_event)
{
	struct nlmsghdr h;
	struct genlmsghdr g;
	const uint8_t *p = buf;
	size_t step;

	*is_event = false;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
		return -1;
	step = NL_ALIGNED(h.nlmsg_len);
	if (step > len)
		step = len;
	if (h.nlmsg_type != family || h.nlmsg_len < sizeof(h) + sizeof(g))
		return (long)step;
	memcpy(&g, p + sizeof(h), sizeof(g));
	if (g.cmd != TCMU_CMD_ADDED_DEVICE && g.cmd != TCMU_CMD_REMOVED_DEVICE &&
	    g.cmd != TCMU_CMD_RECONFIG_DEVICE)
		return (long)step;
	memset(ev, 0, sizeof(*ev));
	ev->cmd = g.cmd;
	ev->version = g.version;
	if (each_attr(p + sizeof(h) + sizeof(g), h.nlmsg_len - sizeof(h) - sizeof(g), event_attr,
		      ev) < 0 ||
	    !ev->has_minor || !ev->device[0])
		return (long)step;
	*is_event = true;
	return (long)step;
}

static uint8_t *put_attr(uint8_t *p, uint16_t type, const void *v, size_t vlen)
{
	struct nlattr a = {.nla_len = (uint16_t)(sizeof(a) + vlen), .nla_type = type};

	memcpy(p, &a, sizeof(a));
	memcpy(p + sizeof(a), v, vlen);
	memset(p + sizeof(a) + vlen, 0, NL_ALIGNED(a.nla_len) - a.nla_len);
	return p + NL_ALIGNED(a.nla_len);
}

/* Header + genl header; the caller adds the attributes and sets nlmsg_len. */
static uint8_t *put_head(uint8_t *buf, uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd,
			 uint8_t version)
{
	struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq};
	struct genlmsghdr g = {.cmd = cmd, .version = version};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &g, sizeof(g));
	return buf + sizeof(h) + sizeof(g);
}

static size_t finish(uint8_t *buf, const uint8_t *end)
{
	uint32_t n = (uint32_t)(end - buf);

	memcpy(buf + offsetof(struct nlmsghdr, nlmsg_len), &n, sizeof(n));
	return n;
}

size_t tcmu_nl_build_reply(void *buf, size_t cap, uint16_t family, uint32_t seq,
			   const struct tcmu_nl_event *ev, int32_t status)
{
	uint8_t *b = buf, *p;

	if (cap < NLMSG_HDRLEN + GENL_HDRLEN + 2 * NL_ALIGNED(sizeof(struct nlattr) + 4))
		return 0;
	/* the kernel answers an error (its own -ENODEV when nobody waits) even without ACK */
	p = put_head(b, family, NLM_F_REQUEST, seq, (uint8_t)(ev->cmd + 3), 2);
	p = put_attr(p, TCMU_ATTR_CMD_STATUS, &status, 4);
	p = put_attr(p, TCMU_ATTR_DEVICE_ID, &ev->dev_id, 4);
	return finish(b, p);
}

size_t tcmu_nl_build_getfamily(void *buf, size_t cap, const char *name, uint32_t seq)
{
	size_t n = strlen(name) + 1;
	uint8_t *b = buf, *p;

	if (cap < NLMSG_HDRLEN + GENL_HDRLEN + NL_ALIGNED(sizeof(struct nlattr) + n))
		return 0;
	p = put_head(b, GENL_ID_CTRL, NLM_F_REQUEST, seq, CTRL_CMD_GETFAMILY, 1);
	p = put_attr(p, CTRL_ATTR_FAMILY_NAME, name, n);
	return finish(b, p);
}

struct fam_walk {
	const char *grp;
	bool have_id, have_grp;
	uint16_t id;
	uint32_t grp_id;
	/* one group entry while it is read */
	char name[64];
	bool have_name, have_gid;
	uint32_t gid;
};

static int grp_attr(uint16_t type, const uint8_t *v, size_t vlen, void *arg)
{
	struct fam_walk *w = arg;

	if (type == CTRL_ATTR_MCAST_GRP_NAME) {
		if (get_str(w->name, sizeof(w->name), v, vlen) < 0)
			return -1;
		w->have_name = true;
	} else if (type == CTRL_ATTR_MCAST_GRP_ID) {
		if (vlen != 4)
			return -1;
		memcpy(&w->gid, v, 4);
		w->have_gid = true;
	}
	return 0;
}

static int grp_entry(uint16_t type, const uint8_t *v, size_t vlen, void *arg)
{
	struct fam_walk *w = arg;

	(void)type;
	w->have_name = w->have_gid = false;
	if (each_attr(v, vlen, grp_attr, w) < 0)
		return -1;
	if (w->have_name && w->have_gid && !strcmp(w->name, w->grp)) {
		w->grp_id = w->gid;
		w->have_grp = true;
	}
	return 0;
}

static int fam_attr(uint16_t type, const uint8_t *v, size_t vlen, void *arg)
{
	struct fam_walk *w = arg;

	if (type == CTRL_ATTR_FAMILY_ID) {
		if (vlen != 2)
			return -1;
		memcpy(&w->id, v, 2);
		w->have_id = true;
	} else if (type == CTRL_ATTR_MCAST_GROUPS) {
		return each_attr(v, vlen, grp_entry, w);
	}
	return 0;
}

int tcmu_nl_parse_family(const void *buf, size_t len, const char *grp, uint16_t *family,
			 uint32_t *group)
{
	struct fam_walk w = {.grp = grp};
	struct nlmsghdr h;
	const uint8_t *p = buf;

	if (len < sizeof(h) + GENL_HDRLEN)
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.nlmsg_type != GENL_ID_CTRL || h.nlmsg_len > len ||
	    h.nlmsg_len < sizeof(h) + GENL_HDRLEN)
		return -1;
	if (each_attr(p + sizeof(h) + GENL_HDRLEN, h.nlmsg_len - sizeof(h) - GENL_HDRLEN, fam_attr,
		      &w) < 0 ||
	    !w.have_id || !w.have_grp)
		return -1;
	*family = w.id;
	*group = w.grp_id;
	return 0;
}

int tcmu_nl_open(uint16_t *family, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	uint8_t buf[8192];
	uint32_t group = 0;
	size_t n;
	ssize_t r;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "netlink socket: %s", strerror(errno));
		goto fail;
	}
	n = tcmu_nl_build_getfamily(buf, sizeof(buf), "TCM-USER", 1);
	if (tcmu_nl_send(fd, buf, n) < 0) {
		snprintf(err, errlen, "netlink: %s", strerror(errno));
		goto fail;
	}
	/* the controller answers at once; bounded, so a start never hangs on it */
	if (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 2000) <= 0 ||
	    (r = recv(fd, buf, sizeof(buf), 0)) <= 0) {
		snprintf(err, errlen, "netlink: no answer about family TCM-USER");
		goto fail;
	}
	if (tcmu_nl_parse_family(buf, (size_t)r, "config", family, &group) < 0) {
		snprintf(err, errlen,
			 "no generic netlink family TCM-USER with group 'config' "
			 "(target_core_user not loaded)");
		goto fail;
	}
	/* room for a burst of events (a script creating many devices): best effort */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &(int){1 << 20}, sizeof(int));
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		snprintf(err, errlen, "netlink: joining TCM-USER/config: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int tcmu_nl_send(int fd, const void *msg, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK}; /* pid 0: the kernel */

	return sendto(fd, msg, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len ? 0 : -1;
}
