/* scst.conf syntax tree: every statement is a list of words, optionally followed by a
 * { block } of further statements.  No meaning is attached here (see conf_model.c). */
#ifndef UTGT_CONF_PARSER_H
#define UTGT_CONF_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "scsi/attr.h"

#define CONF_MAX_DEPTH 8 /* SCST needs 4 (TARGET_DRIVER > TARGET > GROUP > LUN) */

struct conf_node {
	char **w; /* words; w[0] is the keyword or attribute name */
	unsigned nw;
	int line;	/* line of the first word */
	bool has_block; /* followed by { ... } */
	int block_line; /* line of the opening '{' */
	int end_line;	/* line of the closing '}' */
	struct conf_node *kids;
	unsigned nkids, cap;
};

/* Parse text into a tree rooted at an unnamed node.  Syntax errors are reported on d (parsing
 * goes on where it can, so one run reports several); returns NULL only when out of memory. */
struct conf_node *conf_parse(const char *text, size_t len, struct diag *d);
void conf_tree_free(struct conf_node *root);

/* ---- editing a parsed tree (target/conf_tree.c), for live administration ----
 * Adding or removing a child moves its siblings: no pointer to a child of `parent` survives
 * either call. */
/* The child whose first word is kw (exactly) and, when name is not NULL, whose second word is
 * name; NULL when none. */
struct conf_node *conf_tree_find(struct conf_node *parent, const char *kw, const char *name);
/* Append a statement of nw words (copied), with an empty { block } when block; NULL when out
 * of memory. */
struct conf_node *conf_tree_add(struct conf_node *parent, const char *const *w, unsigned nw,
				bool block);
/* Remove (and free) parent->kids[i]. */
void conf_tree_remove(struct conf_node *parent, unsigned i);
/* Remove every attribute statement named key (case-insensitive; statements without a block);
 * returns how many. */
unsigned conf_tree_unset(struct conf_node *parent, const char *key);
/* key value, replacing every earlier value; false when out of memory. */
bool conf_tree_set(struct conf_node *parent, const char *key, const char *value);

#endif
