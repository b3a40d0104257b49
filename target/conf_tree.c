/* Editing a parsed scst.conf tree: what live administration does to the running
 * configuration's tree (printed, parsed, edited here, then loaded with the loader's rules). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target/conf_parser.h"

struct conf_node *conf_tree_find(struct conf_node *parent, const char *kw, const char *name)
{
	for (unsigned i = 0; i < parent->nkids; i++) {
		struct conf_node *n = &parent->kids[i];

		if (!n->nw || strcmp(n->w[0], kw))
			continue;
		if (!name || (n->nw >= 2 && !strcmp(n->w[1], name)))
			return n;
	}
	return NULL;
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

struct conf_node *conf_tree_add(struct conf_node *parent, const char *const *w, unsigned nw,
				bool block)
{
	struct conf_node *n;

	if (parent->nkids == parent->cap) {
		unsigned cap = parent->cap ? parent->cap * 2 : 8;
		struct conf_node *nk = realloc(parent->kids, cap * sizeof(*nk));

		if (!nk)
			return NULL;
		parent->kids = nk;
		parent->cap = cap;
	}
	n = &parent->kids[parent->nkids];
	memset(n, 0, sizeof(*n));
	n->w = calloc(nw ? nw : 1, sizeof(*n->w));
	if (!n->w)
		return NULL;
	for (unsigned i = 0; i < nw; i++) {
		n->w[i] = strdup(w[i]);
		if (!n->w[i]) {
			n->nw = i;
			node_free(n);
			return NULL;
		}
	}
	n->nw = nw;
	n->has_block = block;
	parent->nkids++;
	return n;
}

void conf_tree_remove(struct conf_node *parent, unsigned i)
{
	if (i >= parent->nkids)
		return;
	node_free(&parent->kids[i]);
	memmove(&parent->kids[i], &parent->kids[i + 1],
		(parent->nkids - i - 1) * sizeof(parent->kids[0]));
	parent->nkids--;
}

unsigned conf_tree_unset(struct conf_node *parent, const char *key)
{
	unsigned n = 0;

	for (unsigned i = parent->nkids; i-- > 0;) {
		struct conf_node *k = &parent->kids[i];

		if (k->nw && !k->has_block && !strcasecmp(k->w[0], key)) {
			conf_tree_remove(parent, i);
			n++;
		}
	}
	return n;
}

bool conf_tree_set(struct conf_node *parent, const char *key, const char *value)
{
	const char *w[2] = {key, value};

	conf_tree_unset(parent, key);
	return conf_tree_add(parent, w, 2, false) != NULL;
}
