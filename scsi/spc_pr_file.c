/* APTPL: the persistent reservation state of an LU kept in <pr_file_dir>/<device>.pr so that a
 * restart keeps registrations and the reservation (SPC-4 5.13.5).
 *
 * The file is a small line-oriented text, readable by an operator:
 *     utgt-pr-state 1
 *     device <name>
 *     generation <n>
 *     aptpl 1
 *     reg <key hex> <protocol id> <rel tgt port> <all_tg_pt 0|1> <name_only 0|1> <port>
 *     reservation <type> <holder registration index, -1 for all-registrants types>
 *     spc2 <protocol id> <rel tgt port> <port>       (a shared store's SPC-2 RESERVE holder)
 *     end
 * Names are %XX-escaped outside printable ASCII.  "end" lets the loader tell a complete file
 * from a cut one.  Every field is validated; anything odd rejects the whole file (the caller
 * reports it and starts empty) rather than half-loading it.
 *
 * Writes are atomic: temp file in the same directory, fsync, rename over, fsync directory.
 * The same text is what a shared store (bs_rbd_pr.c) keeps in the cluster; the file is one
 * implementation of scsi/pr_store.h, at the end. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scsi/pr_store.h"
#include "scsi/spc_pr.h"

#define PR_FILE_MAGIC "utgt-pr-state 1"
#define PR_FILE_MAX   PR_TEXT_MAX

static size_t escape(const char *s, char *out, size_t room)
{
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c > ' ' && c <= '~' && c != '%') {
			if (o + 1 >= room)
				return 0;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= room)
				return 0;
			o += (size_t)snprintf(out + o, room - o, "%%%02X", c);
		}
	}
	out[o] = '\0';
	return o;
}

static bool unescape(const char *s, char *out, size_t room)
{
	size_t o = 0;

	for (; *s; s++) {
		char c = *s;
		if (c == '%') {
			unsigned v;
			if (sscanf(s + 1, "%2x", &v) != 1 || !s[1] || !s[2] || v == 0)
				return false;
			c = (char)v;
			s += 2;
		} else if ((unsigned char)c <= ' ' || (unsigned char)c > '~') {
			return false;
		}
		if (o + 1 >= room)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return o > 0;
}

struct sink {
	char *buf;
	size_t len, room;
	bool overflow;
};

static void put(struct sink *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct sink *k, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (k->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(k->buf + k->len, k->room - k->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= k->room - k->len)
		k->overflow = true;
	else
		k->len += (size_t)n;
}

int pr_state_format(const struct pr_state *st, const char *devname, char *buf, size_t len)
{
	struct sink k = {buf, 0, len, len == 0};
	char esc[3 * PR_PORT_MAX + 1];

	put(&k, "%s\n", PR_FILE_MAGIC);
	if (!escape(devname, esc, sizeof(esc)))
		return -1;
	put(&k, "device %s\n", esc);
	put(&k, "generation %" PRIu32 "\n", st->generation);
	put(&k, "aptpl %d\n", st->aptpl ? 1 : 0);
	for (unsigned i = 0; i < st->nregs; i++) {
		const struct pr_reg *r = &st->regs[i];
		if (!escape(r->port.id, esc, sizeof(esc)))
			return -1;
		put(&k, "reg %016" PRIx64 " %d %u %d %d %s\n", r->key, (int)r->port.proto, r->rtpi,
		    r->all_tg_pt ? 1 : 0, r->port.name_only ? 1 : 0, esc);
	}
	if (st->type != PR_TYPE_NONE)
		put(&k, "reservation %u %d\n", st->type, st->holder);
	if (st->spc2) {
		if (!escape(st->spc2_port.id, esc, sizeof(esc)))
			return -1;
		put(&k, "spc2 %d %u %s\n", (int)st->spc2_port.proto, st->spc2_rtpi, esc);
	}
	put(&k, "end\n");
	return k.overflow ? -1 : (int)k.len;
}

static bool parse_u(const char *s, uint64_t max, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		int _o = snprintf(err, errlen, "line %u: ", lineno);                               \
		if (_o >= 0 && (size_t)_o < errlen)                                                \
			snprintf(err + _o, errlen - (size_t)_o, __VA_ARGS__);                      \
		goto fail;                                                                         \
	} while (0)

/* Split a line into at most max whitespace-separated words; returns the count, max+1 if more. */
static unsigned split(char *line, char **w, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = tok;
	}
	return n;
}

bool pr_state_parse(const char *text, const char *devname, struct pr_state *out, char *err,
		    size_t errlen)
{
	struct pr_state *st = calloc(1, sizeof(*st));
	char *copy = strdup(text), *line;
	unsigned lineno = 0;
	bool seen_magic = false, seen_dev = false, seen_gen = false, seen_aptpl = false;
	bool seen_res = false, seen_end = false;
	uint64_t res_type = 0;
	int64_t res_holder = -1;

	if (!st || !copy) {
		snprintf(err, errlen, "out of memory");
		free(st);
		free(copy);
		return false;
	}
	st->holder = -1;
	for (char *p = copy; *p;) {
		char *nl = strchr(p, '\n');
		char *w[8];
		unsigned n;
		uint64_t v;

		line = p;
		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : p + strlen(p);
		lineno++;
		if (seen_end)
			FAIL("data after \"end\"");
		if (!seen_magic) {
			if (strcmp(line, PR_FILE_MAGIC))
				FAIL("not a utgt persistent reservation file (expected \"%s\")",
				     PR_FILE_MAGIC);
			seen_magic = true;
			continue;
		}
		n = split(line, w, 7);
		if (n == 0)
			FAIL("empty line");
		if (!strcmp(w[0], "device")) {
			char name[sizeof(((struct scsi_dev_params *)0)->name)];
			if (n != 2 || seen_dev || !unescape(w[1], name, sizeof(name)))
				FAIL("bad device line");
			if (strcmp(name, devname))
				FAIL("state belongs to device \"%s\", not \"%s\"", name, devname);
			seen_dev = true;
		} else if (!strcmp(w[0], "generation")) {
			if (n != 2 || seen_gen || !parse_u(w[1], UINT32_MAX, 10, &v))
				FAIL("bad generation line");
			st->generation = (uint32_t)v;
			seen_gen = true;
		} else if (!strcmp(w[0], "aptpl")) {
			if (n != 2 || seen_aptpl || !parse_u(w[1], 1, 10, &v))
				FAIL("bad aptpl line");
			st->aptpl = v;
			seen_aptpl = true;
		} else if (!strcmp(w[0], "reg")) {
			struct pr_reg r;
			uint64_t proto, rtpi, atp, nonly;
			memset(&r, 0, sizeof(r));
			if (n != 7 || seen_res)
				FAIL("bad reg line");
			if (strlen(w[1]) != 16 || !parse_u(w[1], UINT64_MAX, 16, &r.key) || !r.key)
				FAIL("bad reservation key \"%s\"", w[1]);
			if (!parse_u(w[2], 15, 10, &proto) ||
			    (proto != SCSI_PROTO_ISCSI && proto != SCSI_PROTO_SRP))
				FAIL("bad protocol identifier \"%s\"", w[2]);
			if (!parse_u(w[3], UINT16_MAX, 10, &rtpi) || !parse_u(w[4], 1, 10, &atp) ||
			    !parse_u(w[5], 1, 10, &nonly))
				FAIL("bad port fields");
			if (nonly && proto != SCSI_PROTO_ISCSI)
				FAIL("name-only registration for a non-iSCSI port");
			if (!unescape(w[6], r.port.id, sizeof(r.port.id)))
				FAIL("bad initiator port name");
			r.port.proto = (enum scsi_proto_id)proto;
			r.port.name_only = nonly;
			r.rtpi = (uint16_t)rtpi;
			r.all_tg_pt = atp;
			for (unsigned i = 0; i < st->nregs; i++)
				if (pr_reg_overlaps(&st->regs[i], &r))
					FAIL("registration overlaps registration %u", i);
			if (pr_add(st, &r) < 0)
				FAIL("more than %d registrations", PR_MAX_REGS);
		} else if (!strcmp(w[0], "reservation")) {
			uint64_t h;
			if (n != 3 || seen_res || !parse_u(w[1], 15, 10, &res_type) ||
			    !pr_type_valid((uint8_t)res_type))
				FAIL("bad reservation line");
			if (!strcmp(w[2], "-1"))
				res_holder = -1;
			else if (parse_u(w[2], PR_MAX_REGS - 1, 10, &h))
				res_holder = (int64_t)h;
			else
				FAIL("bad reservation holder \"%s\"", w[2]);
			seen_res = true;
		} else if (!strcmp(w[0], "spc2")) {
			uint64_t proto, rtpi;
			if (n != 4 || st->spc2 || !parse_u(w[1], 15, 10, &proto) ||
			    (proto != SCSI_PROTO_ISCSI && proto != SCSI_PROTO_SRP) ||
			    !parse_u(w[2], UINT16_MAX, 10, &rtpi) ||
			    !unescape(w[3], st->spc2_port.id, sizeof(st->spc2_port.id)))
				FAIL("bad spc2 line");
			st->spc2 = true;
			st->spc2_port.proto = (enum scsi_proto_id)proto;
			st->spc2_rtpi = (uint16_t)rtpi;
		} else if (!strcmp(w[0], "end")) {
			if (n != 1)
				FAIL("bad end line");
			seen_end = true;
		} else {
			FAIL("unknown keyword \"%s\"", w[0]);
		}
	}
	if (!seen_magic) {
		snprintf(err, errlen, "empty file");
		goto fail;
	}
	if (!seen_end) {
		snprintf(err, errlen, "truncated (no \"end\" line)");
		goto fail;
	}
	if (!seen_dev || !seen_gen || !seen_aptpl) {
		snprintf(err, errlen, "missing device, generation or aptpl line");
		goto fail;
	}
	if (seen_res) {
		if (st->nregs == 0) {
			snprintf(err, errlen, "a reservation without registrations");
			goto fail;
		}
		if (pr_type_all_reg((uint8_t)res_type)
			? res_holder != -1
			: (res_holder < 0 || res_holder >= st->nregs)) {
			snprintf(err, errlen, "reservation holder %lld does not fit type %u",
				 (long long)res_holder, (unsigned)res_type);
			goto fail;
		}
		st->type = (uint8_t)res_type;
		st->holder = (int)res_holder;
	}
	memcpy(out, st, sizeof(*st));
	free(st);
	free(copy);
	return true;
fail:
	free(st);
	free(copy);
	return false;
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Replace the file with text atomically; NULL removes it.  0 or -errno. */
static int write_text(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	int fd, rc;

	if (!text) {
		if (unlink(path) != 0 && errno != ENOENT)
			return -errno;
		return fsync_dir_of(path);
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, text, strlen(text));
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_dir_of(path);
}

int pr_state_save(const char *path, const char *devname, const struct pr_state *st)
{
	char *buf;
	int len, rc;

	if (!st->aptpl)
		return write_text(path, NULL);
	buf = malloc(PR_FILE_MAX);
	if (!buf)
		return -ENOMEM;
	len = pr_state_format(st, devname, buf, PR_FILE_MAX);
	rc = len < 0 ? -EOVERFLOW : write_text(path, buf);
	free(buf);
	return rc;
}

/* The file's text (malloc'd) into *out.  0, or -errno with a reason in err. */
static int read_text(const char *path, char **out, char *err, size_t errlen)
{
	struct stat sb;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > PR_FILE_MAX) {
		close(fd);
		snprintf(err, errlen, "not a regular file of at most %d bytes", PR_FILE_MAX);
		return -EINVAL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		n = read(fd, buf + got, (size_t)sb.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (strlen(buf) != got) {
		free(buf);
		snprintf(err, errlen, "binary data (NUL byte) in the file");
		return -EINVAL;
	}
	*out = buf;
	return 0;
}

int pr_state_load(const char *path, const char *devname, struct pr_state *st, char *err,
		  size_t errlen)
{
	char *buf = NULL;
	int rc = read_text(path, &buf, err, errlen);

	if (rc != 0)
		return rc;
	rc = pr_state_parse(buf, devname, st, err, errlen) ? 0 : -EINVAL;
	free(buf);
	return rc;
}

/* ---- the state directory as a PR store (scsi/pr_store.h) ---- */

struct file_store {
	struct pr_store s;
	char path[PATH_MAX];
	uint64_t ver; /* counts this process's writes: one writer, so it never conflicts */
};

static int file_load(struct pr_store *s, char **text, uint64_t *ver, char *err, size_t errlen)
{
	struct file_store *f = (struct file_store *)s;
	int rc = read_text(f->path, text, err, errlen);

	*ver = f->ver;
	if (rc == -ENOENT) {
		*text = NULL;
		return 0;
	}
	return rc;
}

static int file_store(struct pr_store *s, const char *text, uint64_t *ver)
{
	struct file_store *f = (struct file_store *)s;
	int rc;

	if (*ver != f->ver)
		return -ESTALE;
	if ((rc = write_text(f->path, text)) != 0)
		return rc;
	*ver = ++f->ver;
	return 0;
}

static void file_close(struct pr_store *s)
{
	free(s);
}

static const struct pr_store_ops file_store_ops = {
    .name = "file",
    .load = file_load,
    .store = file_store,
    .close = file_close,
};

struct pr_store *pr_file_store_open(const char *path, const char *name)
{
	struct file_store *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if ((size_t)snprintf(f->path, sizeof(f->path), "%s", path) >= sizeof(f->path) ||
	    (size_t)snprintf(f->s.name, sizeof(f->s.name), "%s", name) >= sizeof(f->s.name)) {
		free(f);
		return NULL;
	}
	snprintf(f->s.where, sizeof(f->s.where), "%s", path);
	f->s.ops = &file_store_ops;
	f->ver = 1;
	return &f->s;
}

/* ---- a change's side effects, as a shared store carries them to other gateways ----
 *     ua <ascq> <protocol id> <rel tgt port> <all_tg_pt> <name_only> <port>
 *     abort <key hex> <protocol id> <rel tgt port> <all_tg_pt> <name_only> <port>
 *     reset <asc hex> <ascq hex>       (a LOGICAL UNIT RESET: its UNIT ATTENTION everywhere) */

int pr_fx_format(const struct pr_effects *fx, char *buf, size_t len)
{
	struct sink k = {buf, 0, len, len == 0};
	char esc[3 * PR_PORT_MAX + 1];

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < fx->nua; i++) {
		const struct pr_ua *u = &fx->ua[i];
		if (!escape(u->port.id, esc, sizeof(esc)))
			return -1;
		put(&k, "ua %u %d %u %d %d %s\n", u->ascq, (int)u->port.proto, u->rtpi,
		    u->all_tg_pt ? 1 : 0, u->port.name_only ? 1 : 0, esc);
	}
	for (unsigned i = 0; i < fx->nabort; i++) {
		const struct pr_reg *r = &fx->abort[i];
		if (!escape(r->port.id, esc, sizeof(esc)))
			return -1;
		put(&k, "abort %016" PRIx64 " %d %u %d %d %s\n", r->key, (int)r->port.proto,
		    r->rtpi, r->all_tg_pt ? 1 : 0, r->port.name_only ? 1 : 0, esc);
	}
	if (fx->reset_asc)
		put(&k, "reset %02x %02x\n", fx->reset_asc, fx->reset_ascq);
	return k.overflow ? -1 : (int)k.len;
}

/* "<protocol id> <rel tgt port> <all_tg_pt> <name_only> <port>" from w[0..4] */
static bool parse_port_fields(char **w, struct pr_port *p, uint16_t *rtpi, bool *atp)
{
	uint64_t proto, r, a, n;

	if (!parse_u(w[0], 15, 10, &proto) ||
	    (proto != SCSI_PROTO_ISCSI && proto != SCSI_PROTO_SRP) ||
	    !parse_u(w[1], UINT16_MAX, 10, &r) || !parse_u(w[2], 1, 10, &a) ||
	    !parse_u(w[3], 1, 10, &n) || !unescape(w[4], p->id, sizeof(p->id)))
		return false;
	p->proto = (enum scsi_proto_id)proto;
	p->name_only = n;
	*rtpi = (uint16_t)r;
	*atp = a;
	return true;
}

bool pr_fx_parse(const char *text, size_t len, struct pr_effects *fx)
{
	char *copy = strndup(text, len), *save = NULL;
	bool ok = copy != NULL;

	memset(fx, 0, sizeof(*fx));
	for (char *line = ok ? strtok_r(copy, "\n", &save) : NULL; line && ok;
	     line = strtok_r(NULL, "\n", &save)) {
		char *w[8];
		unsigned n = split(line, w, 7);
		uint64_t v = 0;

		if (n == 7 && !strcmp(w[0], "ua") &&
		    fx->nua < sizeof(fx->ua) / sizeof(fx->ua[0])) {
			struct pr_ua *u = &fx->ua[fx->nua];
			ok = parse_u(w[1], 0xff, 10, &v) &&
			     parse_port_fields(w + 2, &u->port, &u->rtpi, &u->all_tg_pt);
			u->ascq = (uint8_t)v;
			fx->nua += ok;
		} else if (n == 7 && !strcmp(w[0], "abort") && fx->nabort < PR_MAX_REGS) {
			struct pr_reg *r = &fx->abort[fx->nabort];
			ok = parse_u(w[1], UINT64_MAX, 16, &r->key) &&
			     parse_port_fields(w + 2, &r->port, &r->rtpi, &r->all_tg_pt);
			fx->nabort += ok;
		} else if (n == 3 && !strcmp(w[0], "reset")) {
			uint64_t q = 0;
			ok = parse_u(w[1], 0xff, 16, &v) && v && parse_u(w[2], 0xff, 16, &q);
			fx->reset_asc = (uint8_t)v;
			fx->reset_ascq = (uint8_t)q;
		} else {
			ok = false;
		}
	}
	free(copy);
	return ok;
}
