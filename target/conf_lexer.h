/* scst.conf tokens: words (bare or quoted, with backslash escapes), '{', '}', end of line.
 * Comments, blank space and CR are dropped here so the parser only sees structure. */
#ifndef UTGT_CONF_LEXER_H
#define UTGT_CONF_LEXER_H

#include <stdbool.h>
#include <stddef.h>

#include "scsi/attr.h"

#define CONF_TOKEN_MAX 4096 /* longest word; longer ones are an error (and truncated) */

enum conf_tok {
	CONF_T_WORD,
	CONF_T_LBRACE,
	CONF_T_RBRACE,
	CONF_T_EOL,
	CONF_T_EOF,
};

struct conf_token {
	enum conf_tok kind;
	int line;    /* line the token starts on, from 1 */
	bool quoted; /* the word had a quoted part: "" is an empty word, not nothing */
	const char
	    *text; /* WORD only: unescaped, NUL-terminated; valid until the next conf_lex() */
	size_t len;
};

struct conf_lexer {
	const char *p, *end;
	int line;
	struct diag *d;
	char buf[CONF_TOKEN_MAX + 1];
};

void conf_lexer_init(struct conf_lexer *lx, const char *text, size_t len, struct diag *d);
/* Next token.  Lexical errors (unterminated quote, stray control byte, dangling backslash,
 * overlong word) are reported on lx->d with their line; lexing continues after them. */
void conf_lex(struct conf_lexer *lx, struct conf_token *t);

#endif
