/* import_folded.c - collapsed stacks ("root;...;leaf count" per line, flamegraph.pl's
 * stackcollapse output and `sampbench export -F folded`). A root frame of the form
 * `comm-pid/tid` (stackcollapse-perf.pl --pid --tid) gives the thread and is dropped; other
 * root frames stay frames. Blank lines are skipped; any other line without a count after
 * its last space is an error. */
#include "analysis/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tid of a `comm-pid/tid` frame, or -1 when f[0..len) is not one. */
static int32_t thread_frame(const char *f, size_t len)
{
	size_t i = len, slash;
	long tid = 0;

	while (i > 0 && f[i - 1] >= '0' && f[i - 1] <= '9')
		i--;
	if (i == len || len - i > 9 || i == 0 || f[i - 1] != '/')
		return -1;
	slash = --i;
	while (i > 0 && f[i - 1] >= '0' && f[i - 1] <= '9')
		i--;
	if (i == slash || slash - i > 9 || i < 2 || f[i - 1] != '-')
		return -1;
	for (i = slash + 1; i < len; i++)
		tid = tid * 10 + (f[i] - '0');
	return tid <= INT32_MAX ? (int32_t)tid : -1;
}

int import_folded(struct import_run *b, const unsigned char *buf, size_t len)
{
	const char *p = (const char *)buf, *end = p + len;
	uint64_t *pcs = NULL;
	size_t cap = 0, lineno = 0;
	int ret = -1;

	if (memchr(buf, 0, len))
		return import_fail(b, "NUL byte at offset %zu: not a folded stacks text",
				   (size_t)((const unsigned char *)memchr(buf, 0, len) - buf));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *sp;
		lineno++;
		if (e > p && e[-1] == '\r')
			e--;
		if (e == p)
			goto next;
		for (sp = e; sp > p && sp[-1] != ' '; sp--)
			;
		if (sp == p || sp == e) {
			import_fail(b, "line %zu: no sample count after the last space", lineno);
			goto cleanup;
		}
		uint64_t count = 0;
		for (const char *c = sp; c < e; c++) {
			if (*c < '0' || *c > '9' || count > (UINT64_MAX - 9) / 10) {
				import_fail(b, "line %zu: sample count '%.*s' is not a number",
					    lineno, (int)(e - sp > 32 ? 32 : e - sp), sp);
				goto cleanup;
			}
			count = count * 10 + (uint64_t)(*c - '0');
		}
		const char *stack_end = sp - 1;
		/* frames root first; the stack is stored leaf first, so fill from the back */
		size_t nframes = 1;
		for (const char *c = p; c < stack_end; c++)
			nframes += *c == ';';
		if (nframes > cap) {
			uint64_t *q = realloc(pcs, nframes * sizeof(*pcs));
			if (!q) {
				import_fail(b, "out of memory");
				goto cleanup;
			}
			pcs = q;
			cap = nframes;
		}
		int32_t tid = -1;
		size_t k = nframes, first = 1;
		for (const char *f = p; f <= stack_end;) {
			const char *semi = memchr(f, ';', (size_t)(stack_end - f));
			const char *fe = semi ? semi : stack_end;
			if (first && semi && (tid = thread_frame(f, (size_t)(fe - f))) >= 0) {
				nframes--;
				k--;
			} else if (import_frame(b, f, (size_t)(fe - f), &pcs[--k]) < 0) {
				goto cleanup;
			}
			first = 0;
			f = fe + 1;
		}
		if (import_sample(b, pcs, (uint32_t)nframes, tid,
				  IMPORT_TIME_UNKNOWN, NAN, count) < 0)
			goto cleanup;
next:
		p = nl ? nl + 1 : end;
	}
	ret = 0;
cleanup:
	free(pcs);
	return ret;
}
