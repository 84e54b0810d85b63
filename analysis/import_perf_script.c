/* import_perf_script.c - the text of `perf script` on a `perf record -g` file: a header line
 * per sample ("comm pid/tid [cpu] secs.frac: period event:", fields as perf prints them
 * by default or with -F comm,pid,tid,cpu,time,period,event), then its callchain, one
 * indented "address symbol+0xoff (dso)" line per frame, leaf first, and a blank line
 * (bpftrace's ustack(perf) prints the same lines with the offset in decimal). With
 * --inline, perf script prints the functions inlined at a PC first, each on a line of
 * its own with the same address, "address function (inlined)", innermost first: each is
 * a frame of its own, named by that function.
 * The comm may hold spaces: the header is read from its time field ("digits.digits:")
 * outwards. A frame perf could not name ("[unknown]") is named by its address; a frame
 * whose dso is [kernel.kallsyms] gets "_[k]". cpu-clock and task-clock periods are ns of
 * CPU and become the weight. */
#include "analysis/import.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct span {
	const char *p;
	size_t len;
};

/* Splits line[0..len) at blanks into at most max tokens. */
static size_t tokens(const char *line, size_t len, struct span *t, size_t max)
{
	size_t n = 0, i = 0;

	while (n < max) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		size_t j = i;
		while (j < len && line[j] != ' ' && line[j] != '\t')
			j++;
		t[n++] = (struct span){ line + i, j - i };
		i = j;
	}
	return n;
}

static int all_digits(const char *p, size_t n)
{
	if (n == 0 || n > 18)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

static uint64_t digits(const char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	return v;
}

/* "secs.frac:" -> ns; 0 when t is not a time. */
static int parse_time(const struct span *t, uint64_t *ns)
{
	const char *dot = memchr(t->p, '.', t->len);

	if (!dot || t->len < 4 || t->p[t->len - 1] != ':')
		return 0;
	size_t il = (size_t)(dot - t->p), fl = t->len - il - 2;
	if (!all_digits(t->p, il) || il > 10 || !all_digits(dot + 1, fl) || fl > 9)
		return 0;
	uint64_t frac = digits(dot + 1, fl);
	for (size_t i = fl; i < 9; i++)
		frac *= 10;
	*ns = digits(t->p, il) * 1000000000ull + frac;
	return 1;
}

/* A sample's header. Returns 0, or -1 when the line has no time field. */
static int parse_header(const char *line, size_t len, int32_t *tid, uint64_t *time_ns,
			double *weight)
{
	struct span t[64];
	size_t n = tokens(line, len, t, 64), k;

	for (k = 0; k < n && !parse_time(&t[k], time_ns); k++)
		;
	if (k == n)
		return -1;
	*tid = -1;
	*weight = NAN;
	size_t j = k;
	if (j > 0 && t[j - 1].len > 2 && t[j - 1].p[0] == '[')
		j--; /* [cpu] */
	if (j > 1) { /* pid/tid or tid, after at least the comm */
		const struct span *w = &t[j - 1];
		const char *slash = memchr(w->p, '/', w->len);
		const char *d = slash ? slash + 1 : w->p;
		size_t dl = w->len - (size_t)(d - w->p);
		if (all_digits(d, dl) && digits(d, dl) <= INT32_MAX)
			*tid = (int32_t)digits(d, dl);
	}
	/* "period event:" after the time */
	if (k + 2 < n && all_digits(t[k + 1].p, t[k + 1].len)) {
		const struct span *ev = &t[k + 2];
		if ((ev->len >= 9 && memcmp(ev->p, "cpu-clock", 9) == 0) ||
		    (ev->len >= 10 && memcmp(ev->p, "task-clock", 10) == 0))
			*weight = (double)digits(t[k + 1].p, t[k + 1].len);
	}
	return 0;
}

/* A thread's first function, where a whole user stack ends: glibc's thread start and
 * clone, the program's entry. */
static int thread_root(const char *name, size_t len)
{
	static const char *const roots[] = { "clone",	     "clone3",	      "__clone",
					     "__clone3",     "__GI___clone3", "start_thread",
					     "_start",	     "__libc_start_main",
					     "__libc_start_call_main" };
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strlen(roots[i]) == len && !memcmp(roots[i], name, len))
			return 1;
	return 0;
}

/* One callchain line: "addr sym+0xoff (dso)" -> a frame; *root: it names a thread's first
 * function (thread_root). */
static int parse_frame(struct import_run *b, const char *line, size_t len, uint64_t *pc,
		       int *root)
{
	struct span t[2];
	char name[512];
	size_t n = tokens(line, len, t, 2);

	if (n == 0)
		return import_fail(b, "empty callchain line");
	const char *rest = n > 1 ? t[1].p : line + len, *end = line + len;
	const char *paren = NULL;
	for (const char *c = end; c > rest; c--)
		if (c[-1] == '(') {
			paren = c - 1;
			break;
		}
	const char *sym_end = paren ? paren : end;
	while (sym_end > rest && sym_end[-1] == ' ')
		sym_end--;
	/* drop "+0xoff" (perf) or "+off" in decimal (bpftrace's ustack(perf)); a '+' of the
	 * name itself (operator+) has no digits after it */
	const char *plus = NULL;
	for (const char *c = sym_end; c > rest; c--)
		if (c[-1] == '+') {
			plus = c - 1;
			break;
		}
	if (plus && ((sym_end - plus > 3 && plus[1] == '0' && plus[2] == 'x') ||
		     all_digits(plus + 1, (size_t)(sym_end - plus - 1))))
		sym_end = plus;
	int kernel = paren && (size_t)(end - paren) >= 18 &&
		     memmem(paren, (size_t)(end - paren), "[kernel.kallsyms]", 17);
	size_t sl = (size_t)(sym_end - rest);
	int len_name;
	*root = thread_root(rest, sl);
	if (sl == 0 || (sl == 9 && memcmp(rest, "[unknown]", 9) == 0)) {
		uint64_t addr = 0;
		for (size_t i = 0; i < t[0].len && i < 16; i++) {
			char c = t[0].p[i];
			int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (v < 0)
				return import_fail(b, "callchain address '%.*s' is not hex",
						   (int)(t[0].len > 20 ? 20 : t[0].len), t[0].p);
			addr = addr << 4 | (uint64_t)v;
		}
		if (addr == 0)
			len_name = snprintf(name, sizeof(name), "[unknown]");
		else
			len_name = snprintf(name, sizeof(name), "0x%" PRIx64, addr);
	} else {
		len_name = snprintf(name, sizeof(name), "%.*s%s", (int)(sl > 400 ? 400 : sl), rest,
				    kernel ? "_[k]" : "");
	}
	return import_frame(b, name, (size_t)len_name, pc);
}

/* A callchain this deep that does not end at a thread's start was cut by the tool: perf
 * keeps kernel.perf_event_max_stack (127) frames, perf script unwinds --max-stack, a DWARF
 * unwind ends with the copied stack. It is flagged truncated, as a sampler flags a stack
 * cut at its frame limit (deep's 200 frames), so it is judged on the frames it has. */
#define CUT_MIN_FRAMES 64

/* Appends the sample of the callchain pcs[0..depth), outermost frame last (*root: that
 * frame is a thread's start). Returns 0 or -1 (import_sample). */
static int end_sample(struct import_run *b, const uint64_t *pcs, uint32_t depth, int root,
		      int32_t tid, uint64_t time_ns, double weight)
{
	if (import_sample(b, pcs, depth, tid, time_ns, weight, 1) < 0)
		return -1;
	if (depth >= CUT_MIN_FRAMES && !root)
		b->run->samples[b->run->nsamples - 1].flags |= SB_SAMPLE_TRUNCATED;
	return 0;
}

int import_perf_script(struct import_run *b, const unsigned char *buf, size_t len)
{
	const char *p = (const char *)buf, *end = p + len;
	uint64_t pcs[IMPORT_MAX_DEPTH];
	uint32_t depth = 0;
	int in_sample = 0, root = 0;
	int32_t tid = -1;
	uint64_t time_ns = 0;
	double weight = NAN;
	size_t lineno = 0, headers = 0;

	if (memchr(buf, 0, len))
		return import_fail(b, "NUL byte in the text: not perf script output");
	while (p <= end) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const char *e = nl ? nl : end;
		size_t n = (size_t)(e - p);
		lineno++;
		if (n && p[n - 1] == '\r')
			n--;
		struct span first;
		int blank = tokens(p, n, &first, 1) == 0;
		if (blank || (p[0] != ' ' && p[0] != '\t')) {
			/* a blank line or the next header ends the sample */
			if (in_sample && end_sample(b, pcs, depth, root, tid, time_ns, weight) < 0)
				return -1;
			in_sample = 0;
			depth = 0;
			if (!blank) {
				if (parse_header(p, n, &tid, &time_ns, &weight) < 0)
					return import_fail(b, "line %zu: a sample header without a "
							   "time field ('secs.frac:')", lineno);
				in_sample = 1;
				headers++;
			}
		} else {
			if (!in_sample)
				return import_fail(b, "line %zu: a callchain line outside a sample",
						   lineno);
			uint64_t pc;
			if (parse_frame(b, p, n, &pc, &root) < 0)
				return -1;
			if (depth < IMPORT_MAX_DEPTH)
				pcs[depth++] = pc;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (in_sample && end_sample(b, pcs, depth, root, tid, time_ns, weight) < 0)
		return -1;
	if (headers == 0)
		return import_fail(b, "no samples: not perf script output");
	return 0;
}
