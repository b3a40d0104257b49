/* scst.conf lexer.
 *
 * SCST's own reader (scstadmin) strips comments and backslashes with regular expressions
 * before it looks at quotes, which mangles quoted '#' and '\"'.  We keep its visible rules and
 * make them composable: an unquoted, unescaped '#' starts a comment; a backslash makes the next
 * character literal (inside quotes too); "..." quotes blanks, braces and '#'; a word may mix
 * bare and quoted parts the way a shell word does.  CR is blank space, so CRLF files read the
 * same as LF files, and a UTF-8 byte order mark is skipped. */
#include "target/conf_lexer.h"

#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Bytes that have no business in a text file; a NUL would also cut a C string short. */
static bool is_bad_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

void conf_lexer_init(struct conf_lexer *lx, const char *text, size_t len, struct diag *d)
{
	lx->p = text;
	lx->end = text + len;
	lx->line = 1;
	lx->d = d;
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		lx->p += 3;
}

struct word {
	struct conf_lexer *lx;
	size_t n;
	bool overflow;
	int line;
};

static void put(struct word *w, char c)
{
	if (w->n < CONF_TOKEN_MAX) {
		w->lx->buf[w->n++] = c;
		return;
	}
	if (!w->overflow)
		diag_error(w->lx->d, w->line, "word longer than %d bytes", CONF_TOKEN_MAX);
	w->overflow = true;
}

/* The quoted part of a word, p at the opening quote.  Stops before a newline so the line
 * count stays right even when the closing quote is missing. */
static void lex_quoted(struct conf_lexer *lx, struct word *w)
{
	int qline = lx->line;

	lx->p++;
	for (;;) {
		const char *q = lx->p;
		bool escaped = false;

		if (q < lx->end && *q == '\\') {
			escaped = true;
			q++;
		}
		/* end of line (CRLF included) before the closing quote; an escape cannot hide it */
		if (q == lx->end || *q == '\n' ||
		    (*q == '\r' && (q + 1 == lx->end || q[1] == '\n'))) {
			diag_error(lx->d, qline, "unterminated quoted string");
			lx->p = q;
			return;
		}
		char c = *q;
		lx->p = q + 1;
		if (c == '"' && !escaped)
			return;
		if (is_bad_control((unsigned char)c)) {
			diag_error(lx->d, lx->line, "invalid control character 0x%02x",
				   (unsigned char)c);
			continue;
		}
		put(w, c);
	}
}

/* SCST's rule, kept: a bare '#' starts a comment even inside a word.  Someone writing an
 * iSCSI-SCST per-portal name (iqn...#10.0.0.1) or a secret with '#' then silently loses the
 * rest of the word, so say so: the word is cut here, and \\# (what scstadmin writes) or
 * quotes keep it. */
static void warn_hash_in_word(struct conf_lexer *lx, const struct word *w)
{
	const char *eol = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
	size_t rest = (size_t)((eol ? eol : lx->end) - lx->p);
	int shown = w->n > 128 ? 128 : (int)w->n;

	if (rest && lx->p[rest - 1] == '\r')
		rest--;
	diag_warn(lx->d, lx->line,
		  "'#' inside the word '%.*s%.*s' starts a comment: '%.*s' is read and '%.*s' "
		  "ignored; write \\# or quote the word if the '#' belongs to it",
		  shown, lx->buf, (int)(rest > 64 ? 64 : rest), lx->p, shown, lx->buf,
		  (int)(rest > 64 ? 64 : rest), lx->p);
}

static void lex_word(struct conf_lexer *lx, struct conf_token *t)
{
	struct word w = {.lx = lx, .line = lx->line};

	t->kind = CONF_T_WORD;
	t->line = lx->line;
	t->quoted = false;
	while (lx->p < lx->end) {
		char c = *lx->p;
		if (c == '#') {
			warn_hash_in_word(lx, &w);
			break;
		}
		if (is_blank(c) || c == '\n' || c == '{' || c == '}')
			break;
		if (c == '"') {
			t->quoted = true;
			lex_quoted(lx, &w);
			continue;
		}
		if (c == '\\') {
			const char *nx = lx->p + 1;
			if (nx == lx->end || *nx == '\n' ||
			    (*nx == '\r' && (nx + 1 == lx->end || nx[1] == '\n'))) {
				diag_error(lx->d, lx->line,
					   "backslash at end of line (line continuation is not "
					   "supported)");
				lx->p++;
				continue;
			}
			c = *nx;
			lx->p = nx;
		}
		if (is_bad_control((unsigned char)c)) {
			diag_error(lx->d, lx->line, "invalid control character 0x%02x",
				   (unsigned char)c);
			lx->p++;
			continue;
		}
		put(&w, c);
		lx->p++;
	}
	lx->buf[w.n] = '\0';
	t->text = lx->buf;
	t->len = w.n;
}

void conf_lex(struct conf_lexer *lx, struct conf_token *t)
{
	t->text = NULL;
	t->len = 0;
	t->quoted = false;
	for (;;) {
		while (lx->p < lx->end && is_blank(*lx->p))
			lx->p++;
		t->line = lx->line;
		if (lx->p == lx->end) {
			t->kind = CONF_T_EOF;
			return;
		}
		char c = *lx->p;
		if (c == '#') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
			continue;
		}
		if (c == '\n') {
			lx->p++;
			lx->line++;
			t->kind = CONF_T_EOL;
			return;
		}
		if (c == '{' || c == '}') {
			lx->p++;
			t->kind = c == '{' ? CONF_T_LBRACE : CONF_T_RBRACE;
			return;
		}
		if (is_bad_control((unsigned char)c)) {
			diag_error(lx->d, lx->line, "invalid control character 0x%02x",
				   (unsigned char)c);
			lx->p++;
			continue;
		}
		lex_word(lx, t);
		return;
	}
}
