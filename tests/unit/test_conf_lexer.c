/* scst.conf lexer: words, quotes and escapes, comments, braces, CRLF, lines, lexical errors. */
#include <criterion/criterion.h>
#include <string.h>

#include "target/conf_lexer.h"
#include "tests/unit/conf_test_util.h"

/* Tokens as text: W(word) with its line, {, }, ; for end of line, $ for EOF. */
static const char *lex_all(const char *text, size_t len, struct captured *c)
{
	static char out[8192];
	struct diag d = cap_diag(c);
	struct conf_lexer lx;
	struct conf_token t;
	size_t off = 0;

	conf_lexer_init(&lx, text, len, &d);
	out[0] = '\0';
	do {
		conf_lex(&lx, &t);
		switch (t.kind) {
		case CONF_T_WORD:
			off += (size_t)snprintf(out + off, sizeof(out) - off, "W%d(%s)", t.line,
						t.text);
			break;
		case CONF_T_LBRACE:
			off += (size_t)snprintf(out + off, sizeof(out) - off, "{");
			break;
		case CONF_T_RBRACE:
			off += (size_t)snprintf(out + off, sizeof(out) - off, "}");
			break;
		case CONF_T_EOL:
			off += (size_t)snprintf(out + off, sizeof(out) - off, ";");
			break;
		case CONF_T_EOF:
			off += (size_t)snprintf(out + off, sizeof(out) - off, "$");
			break;
		}
	} while (t.kind != CONF_T_EOF && off < sizeof(out) - 64);
	return out;
}

static const char *lex(const char *text, struct captured *c)
{
	return lex_all(text, strlen(text), c);
}

Test(conf_lexer, words_braces_lines)
{
	struct captured c;
	cr_assert_str_eq(lex("HANDLER vdisk_fileio {\n\tDEVICE d0\n}\n", &c),
			 "W1(HANDLER)W1(vdisk_fileio){;W2(DEVICE)W2(d0);};$");
	cr_assert_eq(c.n, 0);
}

Test(conf_lexer, braces_split_words_and_need_no_blanks)
{
	struct captured c;
	cr_assert_str_eq(lex("LUN 0 d{read_only 1}x", &c),
			 "W1(LUN)W1(0)W1(d){W1(read_only)W1(1)}W1(x)$");
}

Test(conf_lexer, comments_whole_line_and_trailing)
{
	struct captured c;
	cr_assert_str_eq(lex("# header\nenabled 1 # trailing { not a brace\n  # indented\nx\n", &c),
			 ";W2(enabled)W2(1);;W4(x);$");
	cr_assert_eq(c.n, 0);
}

Test(conf_lexer, hash_inside_word_starts_a_comment)
{
	struct captured c;
	cr_assert_str_eq(lex("comment ab#cd\n", &c), "W1(comment)W1(ab);$");
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert_not(c.m[0].error);
	cr_assert_eq(c.m[0].line, 1);
	cr_assert_str_eq(c.m[0].msg, "'#' inside the word 'ab#cd' starts a comment: 'ab' is read and "
				     "'#cd' ignored; write \\# or quote the word if the '#' belongs "
				     "to it");
}

/* iSCSI-SCST per-portal names written without the escape scstadmin uses: the portal part
 * would silently vanish, so the loader says so (CRLF line ends are not part of the text). */
Test(conf_lexer, hash_inside_word_per_portal_name_warns)
{
	struct captured c;
	cr_assert_str_eq(lex("INITIATOR iqn.1993-08.org.debian:01:h#10.0.0.1\r\nx\n", &c),
			 "W1(INITIATOR)W1(iqn.1993-08.org.debian:01:h);W2(x);$");
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert_str_eq(c.m[0].msg,
			 "'#' inside the word 'iqn.1993-08.org.debian:01:h#10.0.0.1' starts a comment: "
			 "'iqn.1993-08.org.debian:01:h' is read and '#10.0.0.1' ignored; write \\# "
			 "or quote the word if the '#' belongs to it");
}

Test(conf_lexer, hash_after_blank_or_quoted_hash_is_quiet)
{
	struct captured c;
	cr_assert_str_eq(lex("a 1 #c\nb \"x#y\" z\\#w\n", &c), "W1(a)W1(1);W2(b)W2(x#y)W2(z#w);$");
	cr_assert_eq(c.n, 0, "%s", cap_dump(&c));
}

Test(conf_lexer, escaped_hash_and_backslash)
{
	struct captured c;
	cr_assert_str_eq(lex("comment a\\#b c\\\\d \\ e\n", &c),
			 "W1(comment)W1(a#b)W1(c\\d)W1( e);$");
	cr_assert_eq(c.n, 0);
}

Test(conf_lexer, quoted_string_keeps_blanks_braces_and_hash)
{
	struct captured c;
	cr_assert_str_eq(lex("IncomingUser \"joe 12charsecret\" \"{x}#y\"\n", &c),
			 "W1(IncomingUser)W1(joe 12charsecret)W1({x}#y);$");
	cr_assert_eq(c.n, 0);
}

Test(conf_lexer, quoted_escapes)
{
	struct captured c;
	cr_assert_str_eq(lex("v \"a\\\"b\\\\c\\n\"\n", &c), "W1(v)W1(a\"b\\cn);$");
	cr_assert_eq(c.n, 0);
}

Test(conf_lexer, empty_quoted_word_is_a_word)
{
	struct captured c;
	struct diag d = cap_diag(&c);
	struct conf_lexer lx;
	struct conf_token t;

	conf_lexer_init(&lx, "redirect \"\"\n", 12, &d);
	conf_lex(&lx, &t);
	cr_assert_str_eq(t.text, "redirect");
	cr_assert_not(t.quoted);
	conf_lex(&lx, &t);
	cr_assert_eq(t.kind, CONF_T_WORD);
	cr_assert(t.quoted);
	cr_assert_eq(t.len, 0);
	cr_assert_str_eq(t.text, "");
}

Test(conf_lexer, word_mixes_bare_and_quoted_parts)
{
	struct captured c;
	cr_assert_str_eq(lex("a\"b c\"d e\n", &c), "W1(ab cd)W1(e);$");
}

Test(conf_lexer, crlf_reads_like_lf)
{
	struct captured c1, c2;
	const char *lf = "HANDLER ramdisk {\n\tDEVICE d0 {\n\t\tsize_mb 1\n\t}\n}\n";
	const char *crlf = "HANDLER ramdisk {\r\n\tDEVICE d0 {\r\n\t\tsize_mb 1\r\n\t}\r\n}\r\n";
	char a[512];
	snprintf(a, sizeof(a), "%s", lex(lf, &c1));
	cr_assert_str_eq(lex(crlf, &c2), a);
	cr_assert_eq(c2.n, 0);
}

Test(conf_lexer, crlf_inside_quotes_is_unterminated_once)
{
	struct captured c;
	lex("x \"abc\r\ny 1\r\n", &c);
	cr_assert_eq(c.n, 1, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, true, 1, "unterminated quoted string"));
}

Test(conf_lexer, utf8_bom_is_skipped)
{
	struct captured c;
	cr_assert_str_eq(lex("\xef\xbb\xbfsetup_id 1\n", &c), "W1(setup_id)W1(1);$");
}

Test(conf_lexer, unterminated_quote_reports_opening_line)
{
	struct captured c;
	cr_assert_str_eq(lex("a 1\nb \"open\nc 2\n", &c), "W1(a)W1(1);W2(b)W2(open);W3(c)W3(2);$");
	cr_assert_eq(c.n, 1);
	cr_assert(cap_has(&c, true, 2, "unterminated quoted string"), "%s", cap_dump(&c));
}

Test(conf_lexer, unterminated_quote_at_eof)
{
	struct captured c;
	lex("x \"abc", &c);
	cr_assert(cap_has(&c, true, 1, "unterminated quoted string"), "%s", cap_dump(&c));
}

Test(conf_lexer, escaped_newline_in_quotes_does_not_hide_the_end)
{
	struct captured c;
	lex("x \"abc\\\ny\n", &c);
	cr_assert(cap_has(&c, true, 1, "unterminated quoted string"), "%s", cap_dump(&c));
}

Test(conf_lexer, dangling_backslash)
{
	struct captured c;
	cr_assert_str_eq(lex("a b\\\nc\n", &c), "W1(a)W1(b);W2(c);$");
	cr_assert(cap_has(&c, true, 1,
			  "backslash at end of line (line continuation is not "
			  "supported)"),
		  "%s", cap_dump(&c));
}

Test(conf_lexer, control_characters_and_nul)
{
	struct captured c;
	const char text[] = "a\x01 b\0c\n";
	cr_assert_str_eq(lex_all(text, sizeof(text) - 1, &c), "W1(a)W1(bc);$");
	cr_assert(cap_has(&c, true, 1, "invalid control character 0x01"), "%s", cap_dump(&c));
	cr_assert(cap_has(&c, true, 1, "invalid control character 0x00"), "%s", cap_dump(&c));
}

Test(conf_lexer, overlong_word_is_reported_once_and_truncated)
{
	struct captured c;
	size_t n = CONF_TOKEN_MAX + 100;
	char *text = malloc(n + 2);
	struct diag d = cap_diag(&c);
	struct conf_lexer lx;
	struct conf_token t;

	memset(text, 'x', n);
	text[n] = '\n';
	text[n + 1] = '\0';
	conf_lexer_init(&lx, text, n + 1, &d);
	conf_lex(&lx, &t);
	cr_assert_eq(t.kind, CONF_T_WORD);
	cr_assert_eq(t.len, CONF_TOKEN_MAX);
	conf_lex(&lx, &t);
	cr_assert_eq(t.kind, CONF_T_EOL);
	cr_assert_eq(c.n, 1);
	cr_assert(cap_has(&c, true, 1, "word longer than 4096 bytes"), "%s", cap_dump(&c));
	free(text);
}

Test(conf_lexer, line_numbers_survive_comments_and_blank_lines)
{
	struct captured c;
	cr_assert_str_eq(lex("\n\n# c\n\n  x\n\ny", &c), ";;;;W5(x);;W7(y)$");
}
