/* scst.conf parser: statements and blocks.
 *
 * Like scstadmin, a statement ends at a newline, at '{' (which opens its block) or at '}'
 * (which also closes the enclosing block), so "LUN 0 disk { read_only 1 }" fits on one line.
 * Unlike scstadmin, which silently drops a block whose '{' sits alone on the next line, such a
 * block is attached to the statement just before it.  Files in the SCST 1.x format
 * ("[HANDLER vdisk]" sections) are recognised and refused with a pointer to the conversion. */
#include "target/conf_parser.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target/conf_lexer.h"

struct parser {
	struct conf_lexer lx;
	struct diag *d;
	bool oom;
	bool stop; /* legacy format: nothing after makes sense */
};

struct words {
	char **w;
	unsigned n, cap;
	int line;
};

static void words_free(struct words *ws)
{
	for (unsigned i = 0; i < ws->n; i++)
		free(ws->w[i]);
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

static void words_add(struct parser *ps, struct words *ws, const struct conf_token *t)
{
	if (ws->n == ws->cap) {
		unsigned cap = ws->cap ? ws->cap * 2 : 4;
		char **nw = realloc(ws->w, cap * sizeof(*nw));
		if (!nw) {
			ps->oom = true;
			return;
		}
		ws->w = nw;
		ws->cap = cap;
	}
	char *s = strndup(t->text, t->len);
	if (!s) {
		ps->oom = true;
		return;
	}
	if (!ws->n)
		ws->line = t->line;
	ws->w[ws->n++] = s;
}

static void node_free(struct conf_node *n)
{
	for (unsigned i = 0; i < n->nw; i++)
		free(n->w[i]);
	free(n->w);
	for (unsigned i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
}

void conf_tree_free(struct conf_node *root)
{
	if (!root)
		return;
	node_free(root);
	free(root);
}

/* Move the collected words into a new child of parent; NULL when there were none. */
static struct conf_node *add_statement(struct parser *ps, struct conf_node *parent,
				       struct words *ws)
{
	if (!ws->n)
		return NULL;
	if (parent->nkids == parent->cap) {
		unsigned cap = parent->cap ? parent->cap * 2 : 8;
		struct conf_node *nk = realloc(parent->kids, cap * sizeof(*nk));
		if (!nk) {
			ps->oom = true;
			words_free(ws);
			return NULL;
		}
		parent->kids = nk;
		parent->cap = cap;
	}
	struct conf_node *n = &parent->kids[parent->nkids++];
	memset(n, 0, sizeof(*n));
	n->w = ws->w;
	n->nw = ws->n;
	n->line = ws->line;
	memset(ws, 0, sizeof(*ws));
	return n;
}

static const char *const legacy_sections[] = {"HANDLER", "GROUP", "ASSIGNMENT", "TARGETS",
					      "OPTIONS"};

/* "[HANDLER vdisk]", "[GROUP Default]", "[OPTIONS]": SCST 1.x (procfs era) sections. */
static bool is_legacy_section(const struct conf_node *n)
{
	const char *w0 = n->w[0];
	const char *last = n->w[n->nw - 1];
	size_t ll = strlen(last);

	if (w0[0] != '[' || !ll || last[ll - 1] != ']')
		return false;
	for (size_t i = 0; i < sizeof(legacy_sections) / sizeof(legacy_sections[0]); i++) {
		size_t kl = strlen(legacy_sections[i]);
		if (!strncasecmp(w0 + 1, legacy_sections[i], kl) &&
		    (w0[1 + kl] == '\0' || w0[1 + kl] == ']'))
			return true;
	}
	return false;
}

static void finish_statement(struct parser *ps, struct conf_node *parent, struct words *ws,
			     int depth)
{
	struct conf_node *n = add_statement(ps, parent, ws);

	if (n && depth == 0 && is_legacy_section(n)) {
		diag_error(ps->d, n->line,
			   "this is the old SCST 1.x configuration format ('[%s' sections); "
			   "convert it to the SCST 2.x+ format, e.g. with 'scstadmin -config' then "
			   "'scstadmin -write_config'",
			   n->w[0] + 1);
		ps->stop = true;
	}
}

static void describe(const struct conf_node *n, char *out, size_t len)
{
	if (!n->nw)
		snprintf(out, len, "%s", ""); /* a block opened with no keyword */
	else if (n->nw >= 2)
		snprintf(out, len, "%s %s", n->w[0], n->w[1]);
	else
		snprintf(out, len, "%s", n->w[0]);
}

/* Statements up to the '}' closing this block (depth > 0) or the end of the file. */
static void parse_block(struct parser *ps, struct conf_node *blk, int depth)
{
	struct words ws = {0};
	struct conf_token t;

	for (;;) {
		if (ps->oom || ps->stop)
			break;
		conf_lex(&ps->lx, &t);
		switch (t.kind) {
		case CONF_T_WORD:
			words_add(ps, &ws, &t);
			continue;
		case CONF_T_EOL:
			finish_statement(ps, blk, &ws, depth);
			continue;
		case CONF_T_LBRACE: {
			struct conf_node *owner = NULL;
			if (ws.n) {
				owner = add_statement(ps, blk, &ws);
			} else if (blk->nkids && !blk->kids[blk->nkids - 1].has_block) {
				owner = &blk->kids[blk->nkids - 1]; /* '{' on its own line */
			} else {
				diag_error(ps->d, t.line, "'{' without a keyword before it");
			}
			if (ps->oom)
				break;
			if (depth + 1 >= CONF_MAX_DEPTH) {
				diag_error(ps->d, t.line, "blocks nested deeper than %d levels",
					   CONF_MAX_DEPTH - 1);
				ps->stop = true;
				break;
			}
			struct conf_node scratch = {0};
			struct conf_node *target = owner ? owner : &scratch;
			target->has_block = true;
			target->block_line = t.line;
			parse_block(ps, target, depth + 1);
			/* parse_block may have grown blk->kids; owner is not used after this */
			if (!owner)
				node_free(&scratch);
			continue;
		}
		case CONF_T_RBRACE:
			finish_statement(ps, blk, &ws, depth);
			if (depth == 0) {
				diag_error(ps->d, t.line, "unexpected '}' (no block is open)");
				continue;
			}
			blk->end_line = t.line;
			return;
		case CONF_T_EOF:
			finish_statement(ps, blk, &ws, depth);
			if (depth > 0 && !ps->stop) {
				char what[96];
				describe(blk, what, sizeof(what));
				diag_error(ps->d, blk->block_line,
					   "unterminated block: '%s%s{' is never closed", what,
					   what[0] ? " " : "");
			}
			goto out;
		}
	}
out:
	words_free(&ws);
}

struct conf_node *conf_parse(const char *text, size_t len, struct diag *d)
{
	struct parser ps = {.d = d};
	struct conf_node *root = calloc(1, sizeof(*root));

	if (!root)
		return NULL;
	conf_lexer_init(&ps.lx, text, len, d);
	parse_block(&ps, root, 0);
	if (ps.oom) {
		conf_tree_free(root);
		return NULL;
	}
	return root;
}
