/* conf_lex.c - the tokenizer of the config files (conf_lex.h). */
#include "core/conf_lex.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int conf_lex_open(struct conf_lex *lx, const char *text, const char *file, char *err,
		  size_t errlen)
{
	memset(lx, 0, sizeof(*lx));
	lx->file = file;
	lx->err = err;
	lx->errlen = errlen;
	lx->copy = lx->rest = strdup(text);
	if (!lx->copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

char *conf_lex_next(struct conf_lex *lx)
{
	/* strsep keeps empty lines, so line numbers stay right */
	char *line = strsep(&lx->rest, "\n");
	if (line)
		lx->line++;
	return line;
}

void conf_lex_close(struct conf_lex *lx)
{
	free(lx->copy);
	lx->copy = lx->rest = NULL;
}

void conf_cut_comment(char *s)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = 0;
}

char *conf_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

char *conf_word(char **s, const char *seps)
{
	char *w = *s + strspn(*s, seps);
	if (!*w) {
		*s = w;
		return NULL;
	}
	char *end = w + strcspn(w, seps);
	*s = *end ? end + 1 : end;
	*end = 0;
	return w;
}

int conf_words(char *s, const char *seps, char **out, int max)
{
	int n = 0;
	for (char *w; (w = conf_word(&s, seps)) != NULL;) {
		if (n == max)
			return max + 1;
		out[n++] = w;
	}
	return n;
}

int conf_err(struct conf_lex *lx, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(lx->err, lx->errlen, "%s:%d: %s", lx->file, lx->line, msg);
	return -1;
}
