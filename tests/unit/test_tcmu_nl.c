/* TCM-USER generic netlink without libnl (tcmu_nl.c): events built the way target_core_user.c
 * builds them (tcmu_netlink_event_init: DEVICE, MINOR, DEVICE_ID, then the reconfigured
 * attribute) parse into what they say; malformed ones (lengths past the message, strings not
 * terminated, attributes of the wrong size) never read past the buffer and are not events;
 * replies and the controller's family lookup carry the exact bytes the kernel expects. */
#include <criterion/criterion.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>

#include "transports/tcmu/tcmu_nl.h"
#include "transports/tcmu/tcmu_uapi.h"

#define FAM 0x1b

struct msg {
	uint8_t b[1024];
	size_t n;
};

static void head(struct msg *m, uint16_t type, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr h = {.nlmsg_type = type};
	struct genlmsghdr g = {.cmd = cmd, .version = version};

	memset(m, 0, sizeof(*m));
	memcpy(m->b, &h, sizeof(h));
	memcpy(m->b + sizeof(h), &g, sizeof(g));
	m->n = sizeof(h) + sizeof(g);
}

static void attr(struct msg *m, uint16_t type, const void *v, size_t len)
{
	struct nlattr a = {.nla_len = (uint16_t)(sizeof(a) + len), .nla_type = type};

	memcpy(m->b + m->n, &a, sizeof(a));
	memcpy(m->b + m->n + sizeof(a), v, len);
	m->n += (sizeof(a) + len + 3) & ~3u;
}

static void done(struct msg *m)
{
	uint32_t n = (uint32_t)m->n;
	memcpy(m->b, &n, 4);
}

/* What the kernel sends for a user backstore at uio minor 3, device index 7. */
static void event(struct msg *m, uint8_t cmd)
{
	uint32_t minor = 3, id = 7;
	const char *dev = "tcm-user/0/lio0/utgt/ram0";

	head(m, FAM, cmd, 2);
	attr(m, TCMU_ATTR_DEVICE, dev, strlen(dev) + 1);
	attr(m, TCMU_ATTR_MINOR, &minor, 4);
	attr(m, TCMU_ATTR_DEVICE_ID, &id, 4);
}

Test(tcmu_nl, reconfig_events)
{
	struct tcmu_nl_event ev;
	struct msg m;
	uint64_t size = 256ull << 20;
	uint8_t wce = 0;
	bool is;

	event(&m, TCMU_CMD_RECONFIG_DEVICE);
	attr(&m, TCMU_ATTR_DEV_SIZE, &size, 8);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), (long)m.n);
	cr_assert(is);
	cr_assert_eq(ev.cmd, TCMU_CMD_RECONFIG_DEVICE);
	cr_assert_eq(ev.version, 2);
	cr_assert_eq(ev.minor, 3);
	cr_assert_eq(ev.dev_id, 7);
	cr_assert_str_eq(ev.device, "tcm-user/0/lio0/utgt/ram0");
	cr_assert(ev.has_size && !ev.has_wce && !ev.has_cfg);
	cr_assert_eq(ev.size, 256ull << 20);

	event(&m, TCMU_CMD_RECONFIG_DEVICE);
	attr(&m, TCMU_ATTR_WRITECACHE, &wce, 1);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), (long)m.n);
	cr_assert(is && ev.has_wce && ev.wce == 0 && !ev.has_size);

	event(&m, TCMU_CMD_RECONFIG_DEVICE);
	attr(&m, TCMU_ATTR_DEV_CFG, "utgt/ram1\n", 11);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), (long)m.n);
	cr_assert(is && ev.has_cfg);
	cr_assert_str_eq(ev.cfg, "utgt/ram1\n");
}

Test(tcmu_nl, two_messages_in_one_buffer)
{
	uint8_t buf[2048];
	struct tcmu_nl_event ev;
	struct msg a, b;
	bool is;
	long n;

	event(&a, TCMU_CMD_ADDED_DEVICE);
	done(&a);
	event(&b, TCMU_CMD_REMOVED_DEVICE);
	done(&b);
	memcpy(buf, a.b, a.n);
	memcpy(buf + a.n, b.b, b.n);
	n = tcmu_nl_parse(buf, a.n + b.n, FAM, &ev, &is);
	cr_assert(is && ev.cmd == TCMU_CMD_ADDED_DEVICE);
	cr_assert_eq(n, (long)a.n);
	cr_assert_eq(tcmu_nl_parse(buf + n, a.n + b.n - (size_t)n, FAM, &ev, &is), (long)b.n);
	cr_assert(is && ev.cmd == TCMU_CMD_REMOVED_DEVICE);
	cr_assert_eq(tcmu_nl_parse(buf, 10, FAM, &ev, &is), 0, "no whole header");
}

Test(tcmu_nl, not_events)
{
	struct tcmu_nl_event ev;
	struct msg m;
	bool is = true;
	uint32_t minor = 3;

	event(&m, TCMU_CMD_ADDED_DEVICE);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM + 1, &ev, &is), (long)m.n, "another family");
	cr_assert_not(is);
	event(&m, TCMU_CMD_SET_FEATURES);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), (long)m.n);
	cr_assert_not(is, "a command no kernel sends");
	/* the kernel's answer to a reply nobody waited for */
	head(&m, NLMSG_ERROR, 0, 0);
	m.n += 20;
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), (long)m.n);
	cr_assert_not(is);
	/* no DEVICE attribute */
	head(&m, FAM, TCMU_CMD_ADDED_DEVICE, 2);
	attr(&m, TCMU_ATTR_MINOR, &minor, 4);
	done(&m);
	tcmu_nl_parse(m.b, m.n, FAM, &ev, &is);
	cr_assert_not(is);
}

Test(tcmu_nl, malformed)
{
	struct tcmu_nl_event ev;
	struct msg m;
	bool is;
	uint16_t bad;
	uint32_t len;

	/* a MINOR of 2 bytes */
	event(&m, TCMU_CMD_ADDED_DEVICE);
	attr(&m, TCMU_ATTR_MINOR, "ab", 2);
	done(&m);
	tcmu_nl_parse(m.b, m.n, FAM, &ev, &is);
	cr_assert_not(is);
	/* a string with no NUL inside its attribute */
	head(&m, FAM, TCMU_CMD_ADDED_DEVICE, 2);
	attr(&m, TCMU_ATTR_DEVICE, "tcm-user/0/x/utgt/y", 19);
	done(&m);
	tcmu_nl_parse(m.b, m.n, FAM, &ev, &is);
	cr_assert_not(is);
	/* an attribute claiming more than the message holds */
	event(&m, TCMU_CMD_RECONFIG_DEVICE);
	attr(&m, TCMU_ATTR_DEV_SIZE, "12345678", 8);
	done(&m);
	bad = 200;
	memcpy(m.b + m.n - 12, &bad, 2);
	tcmu_nl_parse(m.b, m.n, FAM, &ev, &is);
	cr_assert_not(is);
	/* an attribute shorter than its own header */
	bad = 2;
	memcpy(m.b + m.n - 12, &bad, 2);
	tcmu_nl_parse(m.b, m.n, FAM, &ev, &is);
	cr_assert_not(is);
	/* a message longer than what was received: stop reading the buffer */
	event(&m, TCMU_CMD_ADDED_DEVICE);
	done(&m);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n - 4, FAM, &ev, &is), -1);
	len = 3;
	memcpy(m.b, &len, 4);
	cr_assert_eq(tcmu_nl_parse(m.b, m.n, FAM, &ev, &is), -1, "shorter than a header");
}

Test(tcmu_nl, reply_bytes)
{
	struct tcmu_nl_event ev = {.cmd = TCMU_CMD_RECONFIG_DEVICE, .dev_id = 7};
	uint8_t b[128];
	struct nlmsghdr h;
	struct genlmsghdr g;
	struct nlattr a;
	int32_t st;
	uint32_t id;
	size_t n = tcmu_nl_build_reply(b, sizeof(b), FAM, 9, &ev, -95);

	cr_assert_eq(n, sizeof(h) + sizeof(g) + 2 * 8);
	memcpy(&h, b, sizeof(h));
	cr_assert_eq(h.nlmsg_len, n);
	cr_assert_eq(h.nlmsg_type, FAM);
	cr_assert_eq(h.nlmsg_flags, NLM_F_REQUEST);
	cr_assert_eq(h.nlmsg_seq, 9);
	memcpy(&g, b + sizeof(h), sizeof(g));
	cr_assert_eq(g.cmd, TCMU_CMD_RECONFIG_DEVICE_DONE);
	cr_assert_eq(g.version, 2);
	memcpy(&a, b + 20, 4);
	memcpy(&st, b + 24, 4);
	cr_assert(a.nla_type == TCMU_ATTR_CMD_STATUS && a.nla_len == 8 && st == -95);
	memcpy(&a, b + 28, 4);
	memcpy(&id, b + 32, 4);
	cr_assert(a.nla_type == TCMU_ATTR_DEVICE_ID && a.nla_len == 8 && id == 7);
	ev.cmd = TCMU_CMD_ADDED_DEVICE;
	tcmu_nl_build_reply(b, sizeof(b), FAM, 10, &ev, 0);
	cr_assert_eq(((struct genlmsghdr *)(b + sizeof(h)))->cmd, TCMU_CMD_ADDED_DEVICE_DONE);
	cr_assert_eq(tcmu_nl_build_reply(b, 20, FAM, 1, &ev, 0), 0, "no room");
}

/* The controller's answer to CTRL_CMD_GETFAMILY: the id, and groups as nested entries. */
static void family_answer(struct msg *m, const char *grp_name, uint32_t grp_id)
{
	uint16_t id = FAM;
	uint8_t grp[64], groups[96];
	size_t gn = 0, n;
	struct nlattr a;

	head(m, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, 2);
	attr(m, CTRL_ATTR_FAMILY_NAME, "TCM-USER", 9);
	attr(m, CTRL_ATTR_FAMILY_ID, &id, 2);
	/* one group entry: NAME, ID */
	n = strlen(grp_name) + 1;
	a = (struct nlattr){.nla_len = (uint16_t)(4 + n), .nla_type = CTRL_ATTR_MCAST_GRP_NAME};
	memset(grp, 0, sizeof(grp));
	memcpy(grp, &a, 4);
	memcpy(grp + 4, grp_name, n);
	gn = (4 + n + 3) & ~3u;
	a = (struct nlattr){.nla_len = 8, .nla_type = CTRL_ATTR_MCAST_GRP_ID};
	memcpy(grp + gn, &a, 4);
	memcpy(grp + gn + 4, &grp_id, 4);
	gn += 8;
	a = (struct nlattr){.nla_len = (uint16_t)(4 + gn), .nla_type = 1 | NLA_F_NESTED};
	memcpy(groups, &a, 4);
	memcpy(groups + 4, grp, gn);
	attr(m, CTRL_ATTR_MCAST_GROUPS | NLA_F_NESTED, groups, 4 + gn);
	done(m);
}

Test(tcmu_nl, family_lookup)
{
	uint8_t b[128];
	struct msg m;
	uint16_t fam = 0;
	uint32_t grp = 0;
	struct nlattr a;
	size_t n = tcmu_nl_build_getfamily(b, sizeof(b), "TCM-USER", 1);

	cr_assert_eq(n, 20 + 4 + 12);
	cr_assert_eq(((struct nlmsghdr *)b)->nlmsg_type, GENL_ID_CTRL);
	cr_assert_eq(((struct genlmsghdr *)(b + 16))->cmd, CTRL_CMD_GETFAMILY);
	memcpy(&a, b + 20, 4);
	cr_assert(a.nla_type == CTRL_ATTR_FAMILY_NAME && a.nla_len == 13);
	cr_assert_str_eq((char *)b + 24, "TCM-USER");

	family_answer(&m, "config", 11);
	cr_assert_eq(tcmu_nl_parse_family(m.b, m.n, "config", &fam, &grp), 0);
	cr_assert_eq(fam, FAM);
	cr_assert_eq(grp, 11);
	family_answer(&m, "other", 12);
	cr_assert_eq(tcmu_nl_parse_family(m.b, m.n, "config", &fam, &grp), -1, "no such group");
	cr_assert_eq(tcmu_nl_parse_family(m.b, m.n - 8, "config", &fam, &grp), -1, "cut short");
}
