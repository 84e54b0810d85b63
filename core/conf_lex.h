/* conf_lex.h - the one tokenizer of the line-based config files (ci/budgets, ci/matrix,
 * tool recipes): lines with their numbers, `#` comments, words, and errors in the one
 * format "file:line: message". Each parser decides what a comment is (anywhere on a line,
 * or a whole line) and which characters separate its words. */
#ifndef SB_CONF_LEX_H
#define SB_CONF_LEX_H

#include <stddef.h>

/* A text being read line by line: a copy of it, cut in place. */
struct conf_lex {
	const char *file; /* the name errors give */
	int line;         /* number of the line conf_lex_next returned last, from 1 */
	char *err;        /* the caller's buffer for one error line */
	size_t errlen;
	char *copy, *rest; /* the copy, and where its next line starts (NULL after the last) */
};

/* Starts reading text (copied: conf_lex_close frees the copy); errors go to err. Returns
 * 0, or -1 with "out of memory" in err. */
int conf_lex_open(struct conf_lex *lx, const char *text, const char *file, char *err,
		  size_t errlen);
/* The next line without its newline, or NULL after the last. Empty lines are returned
 * too, so lx->line numbers every line. The line is the caller's to cut until
 * conf_lex_close. */
char *conf_lex_next(struct conf_lex *lx);
/* Frees the copy; the lines returned are gone. */
void conf_lex_close(struct conf_lex *lx);

/* Cuts s at its first '#': a comment runs to the end of its line. */
void conf_cut_comment(char *s);
/* s without its leading and trailing white space (isspace), cut in place. */
char *conf_trim(char *s);
/* The next word of *s (skipping any of the characters in seps before it), cut in place;
 * *s moves past the one separator after it (to the end when none). NULL when no word is
 * left. As strtok_r, without its hidden state. */
char *conf_word(char **s, const char *seps);
/* Splits s in place into its words (conf_word): the first max into out. Returns how many
 * words it found, max + 1 when there are more than max. */
int conf_words(char *s, const char *seps, char **out, int max);

/* Formats "file:line: message" (the line of lx->line) into lx->err. Always returns -1, so
 * that a parser can `return conf_err(...)`. */
int conf_err(struct conf_lex *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
