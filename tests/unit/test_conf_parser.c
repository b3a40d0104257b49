/* scst.conf parser: statements, blocks, one-line blocks, brace on its own line, and the
 * structural errors (unterminated block, stray '}', '{' with no keyword, nesting, SCST 1.x). */
#include <criterion/criterion.h>
#include <string.h>

#include "target/conf_parser.h"
#include "tests/unit/conf_test_util.h"

static struct conf_node *parse(const char *text, struct captured *c)
{
	struct diag d = cap_diag(c);
	struct conf_node *root = conf_parse(text, strlen(text), &d);
	cr_assert_not_null(root);
	return root;
}

/* The tree in a compact form: words joined by ' ', blocks as [ ... ], statements by ';'. */
static void dump(const struct conf_node *n, char *out, size_t len, size_t *off)
{
	for (unsigned i = 0; i < n->nkids; i++) {
		const struct conf_node *k = &n->kids[i];
		for (unsigned w = 0; w < k->nw; w++)
			*off +=
			    (size_t)snprintf(out + *off, len - *off, "%s%s", w ? " " : "", k->w[w]);
		if (k->has_block) {
			*off += (size_t)snprintf(out + *off, len - *off, "[");
			dump(k, out, len, off);
			*off += (size_t)snprintf(out + *off, len - *off, "]");
		}
		*off += (size_t)snprintf(out + *off, len - *off, ";");
	}
}

static const char *tree(const struct conf_node *root)
{
	static char out[4096];
	size_t off = 0;
	out[0] = '\0';
	dump(root, out, sizeof(out), &off);
	return out;
}

Test(conf_parser, nested_blocks_and_attributes)
{
	struct captured c;
	struct conf_node *r = parse("setup_id 0x1234\n"
				    "HANDLER vdisk_fileio {\n"
				    "\tDEVICE disk1 {\n"
				    "\t\tfilename /disk1\n"
				    "\t\tnv_cache 1\n"
				    "\t}\n"
				    "}\n",
				    &c);
	cr_assert_eq(c.n, 0, "%s", cap_dump(&c));
	cr_assert_str_eq(tree(r), "setup_id 0x1234;HANDLER vdisk_fileio[DEVICE disk1[filename "
				  "/disk1;nv_cache 1;];];");
	cr_assert_eq(r->kids[1].line, 2);
	cr_assert_eq(r->kids[1].block_line, 2);
	cr_assert_eq(r->kids[1].end_line, 7);
	cr_assert_eq(r->kids[1].kids[0].kids[1].line, 5);
	conf_tree_free(r);
}

Test(conf_parser, one_line_blocks)
{
	struct captured c;
	struct conf_node *r = parse("LUN 2 blockio1 { read_only 1 }\nLUN 3 x {}\n", &c);
	cr_assert_eq(c.n, 0);
	cr_assert_str_eq(tree(r), "LUN 2 blockio1[read_only 1;];LUN 3 x[];");
	conf_tree_free(r);
}

Test(conf_parser, closing_brace_ends_a_statement)
{
	struct captured c;
	struct conf_node *r = parse("A a {\nenabled 1}\nB b\n", &c);
	cr_assert_eq(c.n, 0);
	cr_assert_str_eq(tree(r), "A a[enabled 1;];B b;");
	conf_tree_free(r);
}

Test(conf_parser, text_after_a_block_on_the_same_line_is_a_new_statement)
{
	struct captured c;
	struct conf_node *r = parse("A a { x 1 } B b\n", &c);
	cr_assert_eq(c.n, 0);
	cr_assert_str_eq(tree(r), "A a[x 1;];B b;");
	conf_tree_free(r);
}

Test(conf_parser, brace_on_its_own_line_attaches_to_the_statement_before)
{
	struct captured c;
	struct conf_node *r =
	    parse("HANDLER ramdisk\n{\n\tDEVICE d0\n\t{\n\t\tsize_mb 1\n\t}\n}\n", &c);
	cr_assert_eq(c.n, 0, "%s", cap_dump(&c));
	cr_assert_str_eq(tree(r), "HANDLER ramdisk[DEVICE d0[size_mb 1;];];");
	conf_tree_free(r);
}

Test(conf_parser, quoted_words_are_single_words)
{
	struct captured c;
	struct conf_node *r = parse("IncomingUser \"joe 12charsecret\"\n", &c);
	cr_assert_eq(r->kids[0].nw, 2);
	cr_assert_str_eq(r->kids[0].w[1], "joe 12charsecret");
	conf_tree_free(r);
}

Test(conf_parser, unterminated_block)
{
	struct captured c;
	struct conf_node *r = parse("HANDLER ramdisk {\n\tDEVICE d0 {\n\t\tsize_mb 1\n\t}\n", &c);
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, true, 1, "unterminated block: 'HANDLER ramdisk {' is never closed"),
		  "%s", cap_dump(&c));
	conf_tree_free(r);
}

Test(conf_parser, every_open_block_is_reported)
{
	struct captured c;
	struct conf_node *r = parse("TARGET_DRIVER iscsi {\nTARGET t {\nGROUP g {\n", &c);
	cr_assert_eq(c.n, 3, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, true, 3, "unterminated block: 'GROUP g {' is never closed"));
	cr_assert(cap_has(&c, true, 2, "unterminated block: 'TARGET t {' is never closed"));
	cr_assert(cap_has(&c, true, 1,
			  "unterminated block: 'TARGET_DRIVER iscsi {' is never "
			  "closed"));
	conf_tree_free(r);
}

Test(conf_parser, unexpected_closing_brace)
{
	struct captured c;
	struct conf_node *r = parse("HANDLER ramdisk {\n}\n}\nsetup_id 1\n", &c);
	cr_assert_eq(c.n, 1);
	cr_assert(cap_has(&c, true, 3, "unexpected '}' (no block is open)"), "%s", cap_dump(&c));
	cr_assert_str_eq(tree(r), "HANDLER ramdisk[];setup_id 1;"); /* parsing went on */
	conf_tree_free(r);
}

Test(conf_parser, open_brace_without_keyword)
{
	struct captured c;
	struct conf_node *r = parse("{\n x 1\n}\n", &c);
	cr_assert(cap_has(&c, true, 1, "'{' without a keyword before it"), "%s", cap_dump(&c));
	cr_assert_eq(r->nkids, 0);
	conf_tree_free(r);
}

Test(conf_parser, second_block_for_one_statement)
{
	struct captured c;
	struct conf_node *r = parse("A a {\n}\n{\n}\n", &c);
	cr_assert(cap_has(&c, true, 3, "'{' without a keyword before it"), "%s", cap_dump(&c));
	conf_tree_free(r);
}

Test(conf_parser, nesting_is_bounded)
{
	struct captured c;
	char text[256] = "";
	for (int i = 0; i < 10; i++)
		strcat(text, "a b {\n");
	struct conf_node *r = parse(text, &c);
	cr_assert(cap_has(&c, true, 8, "blocks nested deeper than 7 levels"), "%s", cap_dump(&c));
	cr_assert_eq(cap_count(&c, true), 1, "%s", cap_dump(&c));
	conf_tree_free(r);
}

Test(conf_parser, legacy_scst_1x_format)
{
	struct captured c;
	struct conf_node *r =
	    parse("# Automatically generated by SCST Configurator v1.0.6.\n"
		  "\n[HANDLER vdisk]\n#DEVICE <vdisk name>,<device path>,<options>\n"
		  "DEVICE disk01,/vdisks/disk01.dsk,,512\n\n[GROUP Default]\n",
		  &c);
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, true, 3,
			  "this is the old SCST 1.x configuration format ('[HANDLER' sections); "
			  "convert it to the SCST 2.x+ format, e.g. with 'scstadmin -config' then "
			  "'scstadmin -write_config'"),
		  "%s", cap_dump(&c));
	conf_tree_free(r);
}

Test(conf_parser, legacy_options_section)
{
	struct captured c;
	struct conf_node *r = parse("[OPTIONS]\nWRITE_THROUGH 1\n", &c);
	cr_assert(cap_has(&c, true, 1,
			  "this is the old SCST 1.x configuration format ('[OPTIONS]' sections); "
			  "convert it to the SCST 2.x+ format, e.g. with 'scstadmin -config' then "
			  "'scstadmin -write_config'"),
		  "%s", cap_dump(&c));
	conf_tree_free(r);
}

Test(conf_parser, bracket_word_that_is_not_a_legacy_section)
{
	struct captured c;
	struct conf_node *r = parse("[foo] bar\n", &c);
	cr_assert_eq(c.n, 0);
	cr_assert_str_eq(tree(r), "[foo] bar;");
	conf_tree_free(r);
}

Test(conf_parser, empty_and_comment_only_files)
{
	struct captured c;
	struct conf_node *r = parse("", &c);
	cr_assert_eq(r->nkids, 0);
	conf_tree_free(r);
	r = parse("# nothing\n\n   \n", &c);
	cr_assert_eq(r->nkids, 0);
	cr_assert_eq(c.n, 0);
	conf_tree_free(r);
}

Test(conf_parser, lexical_errors_come_with_their_line)
{
	struct captured c;
	struct conf_node *r = parse("A a {\n  x \"1\n}\n", &c);
	cr_assert(cap_has(&c, true, 2, "unterminated quoted string"), "%s", cap_dump(&c));
	conf_tree_free(r);
}
