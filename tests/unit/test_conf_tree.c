/* Editing a parsed tree (conf_tree.c): find, add (with and without a block), remove, set and
 * unset attributes; the edited tree loads as the edit says. */
#include <criterion/criterion.h>

#include "target/conf_load.h"
#include "target/conf_parser.h"
#include "tests/unit/conf_test_util.h"

static struct conf_node *parse(const char *text)
{
	struct captured c;
	struct diag d = cap_diag(&c);
	struct conf_node *root = conf_parse(text, strlen(text), &d);

	cr_assert_not_null(root);
	cr_assert_eq(d.errors, 0, "%s", cap_dump(&c));
	return root;
}

Test(conf_tree, find_add_remove_set)
{
	struct conf_node *root = parse("HANDLER ramdisk {\n DEVICE a { size_mb 1 }\n"
				       " DEVICE b { size_mb 2\n  read_only 1 }\n}\n");
	struct conf_node *h = conf_tree_find(root, "HANDLER", "ramdisk"), *b;
	const char *w[3] = {"DEVICE", "c"};

	cr_assert_not_null(h);
	cr_assert_null(conf_tree_find(root, "HANDLER", "vdisk_fileio"));
	cr_assert_null(conf_tree_find(root, "handler", NULL), "keywords compare exactly");
	cr_assert_not_null(conf_tree_find(h, "DEVICE", NULL), "any name");
	b = conf_tree_find(h, "DEVICE", "b");
	cr_assert_not_null(b);
	cr_assert_eq(conf_tree_unset(b, "READ_ONLY"), 1, "attribute names ignore case");
	cr_assert(conf_tree_set(b, "size_mb", "4"));
	cr_assert(conf_tree_set(b, "t10_vend_id", "ACME CO"));
	cr_assert_eq(b->nkids, 2, "size_mb replaced, not repeated");
	cr_assert_not_null(conf_tree_add(h, w, 2, true));
	cr_assert_eq(h->nkids, 3);
	cr_assert_eq(conf_tree_unset(h, "DEVICE"), 0, "blocks are not attributes");
	conf_tree_remove(h, 0);
	cr_assert_eq(h->nkids, 2);
	cr_assert_str_eq(h->kids[0].w[1], "b");
	conf_tree_remove(h, 9); /* out of range: nothing */
	cr_assert_eq(h->nkids, 2);

	struct captured c;
	struct diag d = cap_diag(&c);
	struct tgt_config *cfg;
	b = conf_tree_find(h, "DEVICE", "c");
	cr_assert(conf_tree_set(b, "size", "1M"));
	cfg = tgt_config_from_tree(root, "edited", &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(cfg->ndevices, 2);
	cr_assert_str_eq(cfg->devices[0].name, "b");
	cr_assert_eq(cfg->devices[0].dev->bs->size, 4 << 20);
	cr_assert_not(cfg->devices[0].dev->bs->read_only);
	cr_assert_str_eq(cfg->devices[0].dev->p.vendor, "ACME CO");
	cr_assert_str_eq(cfg->devices[1].name, "c");
	tgt_config_free(cfg);
	conf_tree_free(root);
}
