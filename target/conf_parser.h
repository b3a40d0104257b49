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

#endif
