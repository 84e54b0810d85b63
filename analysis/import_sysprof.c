/* import_sysprof.c - sysprof's capture file (.syscap, libsysprof-capture 3.x,
 * sysprof-capture-types.h): a 256-byte header (magic 0xFDCA975E, version 1, little-endian
 * flag), then frames, each a 24-byte header (len u16, cpu i16, pid i32, time i64, type u8
 * and padding) and its body. Read are:
 *   SAMPLE (2)      tid i32 and n_addrs u16 addresses, leaf first, with perf's context
 *                   markers (PERF_CONTEXT_KERNEL, _USER, ...) between the kernel and user parts;
 *   PROCESS (4)     a pid's command line;
 *   METADATA (11)   "local-profiler": the profiler's key file, whose spawn-argv is the
 *                   command sysprof-cli launched;
 *   FILE_CHUNK (13) "__symbols__": the names sysprof-cli decoded at the end of the recording,
 *                   32-byte entries (first and last address, pid, name and tag offsets) up to
 *                   an all-zero one, then their strings.
 *   MAP (3)         a mapping: start, end, file offset, inode, file name (import_sysprof_maps).
 * sysprof records the whole system: when the capture names a spawned command, only the
 * samples of the process running that command line are kept. Frames are named by the
 * capture's own names (kernel frames, after a PERF_CONTEXT_KERNEL marker, get "_[k]"); an
 * address it did not name ("In file PATH", or no entry) keeps its address. The format has
 * no sample weights. */
#include "analysis/import.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYSPROF_MAGIC 0xFDCA975Eu
#define SYSPROF_HEADER 256
#define SYSPROF_FRAME 24
#define SYSPROF_SAMPLE 2
#define SYSPROF_PROCESS 4
#define SYSPROF_METADATA 11
#define SYSPROF_FILE_CHUNK 13
#define SYSPROF_SYMBOL 32                     /* one decoded entry */
#define PERF_CONTEXT_MAX ((uint64_t)-4095)    /* addresses from here up are markers */
#define PERF_CONTEXT_KERNEL ((uint64_t)-128)
#define PERF_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define SYSPROF_MAP 3
#define SYSPROF_MAX_PIDS 64

struct frame {
	const unsigned char *body; /* after the 24-byte header */
	size_t len;                /* of the body */
	int32_t pid;
	int64_t time;
	unsigned type;
};

struct symbol {
	uint64_t begin, end; /* inclusive */
	uint32_t pid;
	const char *name;
};

struct capture {
	const unsigned char *buf;
	size_t len;
	char argv[4096];   /* the spawned command, its words joined by spaces; "" none */
	int32_t pids[SYSPROF_MAX_PIDS];
	size_t npids;
	unsigned char *chunk; /* the __symbols__ file, concatenated */
	size_t chunk_len;
	struct symbol *syms; /* sorted by pid, then address */
	size_t nsyms;
	uint64_t pcs[1 << 16]; /* one sample's frames: n_addrs is 16 bits */
};

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The frame at *off into f, advancing *off. Returns 1, 0 at the end, -1 on a bad frame. */
static int next_frame(struct import_run *b, const struct capture *c, size_t *off,
		      struct frame *f)
{
	if (*off == c->len)
		return 0;
	if (c->len - *off < SYSPROF_FRAME)
		return import_fail(b, "truncated frame header at byte %zu", *off);
	const unsigned char *p = c->buf + *off;
	size_t len = (size_t)le(p, 2);
	if (len < SYSPROF_FRAME || len > c->len - *off)
		return import_fail(b, "frame of %zu bytes at byte %zu (%zu left)", len, *off,
				   c->len - *off);
	*f = (struct frame){ .body = p + SYSPROF_FRAME, .len = len - SYSPROF_FRAME,
			     .pid = (int32_t)le(p + 4, 4), .time = (int64_t)le(p + 8, 8),
			     .type = p[16] };
	*off += len;
	return 1;
}

/* A GKeyFile list item's escapes (\s \t \n \r \\ \;) undone: s[0..n) into out (len). */
static void unescape_item(const char *s, size_t n, char *out, size_t len)
{
	size_t u = 0;

	for (size_t i = 0; i < n && u + 1 < len; i++) {
		char ch = s[i];
		if (ch == '\\' && i + 1 < n) {
			char e = s[++i];
			ch = e == 's' ? ' ' : e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
		}
		out[u++] = ch;
	}
	out[u] = 0;
}

/* Appends word to out (len) as sysprofd writes a command line's word (helpers.c,
 * postprocess_cmdline): after a space; in single quotes, each ' as '\'', when it holds
 * white space or a quote (g_shell_quote); an empty word not at all. */
static void append_word(char *out, size_t len, const char *word)
{
	size_t u = strlen(out);
	int quote = strpbrk(word, " \t\n\v\f\r'\"") != NULL;

	if (!*word)
		return;
	if (u && u + 1 < len)
		out[u++] = ' ';
	if (quote && u + 1 < len)
		out[u++] = '\'';
	for (const char *c = word; *c && u + 4 < len; c++) {
		if (*c == '\'' && quote) {
			memcpy(out + u, "'\\''", 4);
			u += 4;
		} else {
			out[u++] = *c;
		}
	}
	if (quote && u + 1 < len)
		out[u++] = '\'';
	out[u < len ? u : len - 1] = 0;
}

/* The spawn-argv line of the local profiler's key file body[0..len), as sysprofd writes
 * the command line of the process it became in PROCESS frames, into c->argv. */
static void read_spawn_argv(struct capture *c, const unsigned char *body, size_t len)
{
	static const char key[] = "\nspawn-argv=";
	const char *s = memmem(body, len, key, sizeof(key) - 1);
	char word[1024];

	if (!s)
		return;
	s += sizeof(key) - 1;
	const char *end = memchr(s, '\n', len - (size_t)(s - (const char *)body));
	if (!end)
		end = memchr(s, 0, len - (size_t)(s - (const char *)body));
	if (!end)
		end = (const char *)body + len;
	c->argv[0] = 0;
	while (s < end) {
		const char *w = s;
		while (s < end && *s != ';')
			s += *s == '\\' && s + 1 < end ? 2 : 1;
		unescape_item(w, (size_t)(s - w), word, sizeof(word));
		append_word(c->argv, sizeof(c->argv), word);
		s++; /* past the ';' */
	}
}

/* Pass 1: the spawned command and the length of the __symbols__ file. */
static int scan_metadata(struct import_run *b, struct capture *c, size_t *chunk_total)
{
	struct frame f;
	size_t off = SYSPROF_HEADER;
	int rc;

	*chunk_total = 0;
	while ((rc = next_frame(b, c, &off, &f)) > 0) {
		if (f.type == SYSPROF_METADATA && f.len >= 40 &&
		    strncmp((const char *)f.body, "local-profiler", 40) == 0)
			read_spawn_argv(c, f.body + 40, f.len - 40);
		if (f.type == SYSPROF_FILE_CHUNK && f.len >= 260 &&
		    strncmp((const char *)f.body + 4, "__symbols__", 256) == 0) {
			size_t n = (size_t)(le(f.body, 4) >> 16);
			if (n > f.len - 260)
				return import_fail(b, "__symbols__ chunk of %zu bytes in a %zu-byte "
						   "frame", n, f.len + SYSPROF_FRAME);
			*chunk_total += n;
		}
	}
	return rc;
}

/* 1 when the PROCESS frame f's command line is argv[0..n) (then a NUL, spaces or its end). */
static int same_command(const struct frame *f, const char *argv, size_t n)
{
	if (!n || f->len < n || memcmp(f->body, argv, n) != 0)
		return 0;
	for (size_t i = n; i < f->len && f->body[i]; i++)
		if (f->body[i] != ' ')
			return 0;
	return 1;
}

/* Pass 2: the pids whose command line is the spawned command's; the symbol file's bytes. */
static int scan_processes(struct import_run *b, struct capture *c)
{
	struct frame f;
	size_t off = SYSPROF_HEADER, argv_len = strlen(c->argv);
	int rc;

	while ((rc = next_frame(b, c, &off, &f)) > 0) {
		if (f.type == SYSPROF_PROCESS && same_command(&f, c->argv, argv_len)) {
			size_t k = 0;
			while (k < c->npids && c->pids[k] != f.pid)
				k++;
			if (k == c->npids && c->npids < SYSPROF_MAX_PIDS)
				c->pids[c->npids++] = f.pid;
		}
		if (f.type == SYSPROF_FILE_CHUNK && f.len >= 260 &&
		    strncmp((const char *)f.body + 4, "__symbols__", 256) == 0) {
			size_t n = (size_t)(le(f.body, 4) >> 16);
			memcpy(c->chunk + c->chunk_len, f.body + 260, n);
			c->chunk_len += n;
		}
	}
	return rc;
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The decoded entries of c->chunk, each with its name (an offset inside the chunk, to a
 * string ending inside it; entries without one are left out), sorted for lookup. */
static int read_symbols(struct import_run *b, struct capture *c)
{
	size_t n = 0, max = c->chunk_len / SYSPROF_SYMBOL;

	if (!c->chunk_len)
		return 0;
	/* the strings follow the table: the last byte ends the last of them */
	c->chunk[c->chunk_len - 1] = 0;
	c->syms = malloc((max ? max : 1) * sizeof(*c->syms));
	if (!c->syms)
		return import_fail(b, "out of memory");
	for (size_t i = 0; i < max; i++) {
		const unsigned char *e = c->chunk + i * SYSPROF_SYMBOL;
		struct symbol s = { le(e, 8), le(e + 8, 8), (uint32_t)le(e + 16, 4), NULL };
		size_t name = (size_t)le(e + 20, 4);
		if (!s.begin && !s.end && !s.pid && !name)
			break;
		if (name == 0 || name >= c->chunk_len || s.end < s.begin)
			continue;
		s.name = (const char *)c->chunk + name;
		c->syms[n++] = s;
	}
	qsort(c->syms, n, sizeof(*c->syms), cmp_symbol);
	c->nsyms = n;
	return 0;
}

/* The capture's name of addr in pid, or NULL. */
static const char *symbol_of(const struct capture *c, int32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = c->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct symbol *s = &c->syms[mid];
		if (s->pid < (uint32_t)pid || (s->pid == (uint32_t)pid && s->end < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nsyms && c->syms[lo].pid == (uint32_t)pid && c->syms[lo].begin <= addr &&
	    addr <= c->syms[lo].end)
		return c->syms[lo].name;
	return NULL;
}

static int kept(const struct capture *c, int32_t pid)
{
	if (!c->argv[0])
		return 1; /* no spawned command: the whole system */
	for (size_t k = 0; k < c->npids; k++)
		if (c->pids[k] == pid)
			return 1;
	return 0;
}

/* One SAMPLE frame's stack, named, appended to b. */
static int add_sample(struct import_run *b, struct capture *c, const struct frame *f)
{
	uint64_t *pcs = c->pcs;
	char name[600];
	uint32_t depth = 0;
	int kernel = 0;

	if (f->len < 8)
		return import_fail(b, "sample frame of %zu bytes", f->len + SYSPROF_FRAME);
	size_t n = (size_t)(le(f->body, 4) & 0xffff);
	int32_t tid = (int32_t)le(f->body + 4, 4);
	if (n > (f->len - 8) / 8)
		return import_fail(b, "sample of %zu addresses in a %zu-byte frame", n,
				   f->len + SYSPROF_FRAME);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = le(f->body + 8 + 8 * i, 8);
		if (a >= PERF_CONTEXT_MAX) {
			kernel = a == PERF_CONTEXT_KERNEL || a == PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		const char *sym = symbol_of(c, f->pid, a);
		if (sym && strncmp(sym, "In file ", 8) == 0)
			sym = NULL; /* sysprof's name for an address it found no symbol for */
		int len = sym ? snprintf(name, sizeof(name), "%.500s%s", sym, kernel ? "_[k]" : "")
			      : snprintf(name, sizeof(name), "0x%" PRIx64 "%s", a,
					 kernel ? "_[k]" : "");
		if (import_frame(b, name, (size_t)len, &pcs[depth]) < 0)
			return -1;
		depth++;
	}
	return import_sample(b, pcs, depth, tid < 0 ? -1 : tid,
			     f->time >= 0 ? (uint64_t)f->time : IMPORT_TIME_UNKNOWN, NAN, 1);
}

/* Pass 3: the kept processes' samples. */
static int read_samples(struct import_run *b, struct capture *c)
{
	struct frame f;
	size_t off = SYSPROF_HEADER;
	int rc;

	while ((rc = next_frame(b, c, &off, &f)) > 0)
		if (f.type == SYSPROF_SAMPLE && kept(c, f.pid) && add_sample(b, c, &f) < 0)
			return -1;
	return rc;
}

static int check_header(struct import_run *b, const unsigned char *buf, size_t len)
{
	if (len < SYSPROF_HEADER)
		return import_fail(b, "truncated header: %zu bytes, a capture has at least %d", len,
				   SYSPROF_HEADER);
	if (le(buf, 4) != SYSPROF_MAGIC)
		return import_fail(b, "no sysprof capture magic (0x%08" PRIx64 ")", le(buf, 4));
	if (buf[4] != 1)
		return import_fail(b, "capture version %u (this reader knows 1)", buf[4]);
	if (!(buf[5] & 1))
		return import_fail(b, "a big-endian capture (this reader takes little-endian)");
	return 0;
}

/* Reads c's header, its spawned command and pids, and its symbols (c->buf, c->len set).
 * Returns 0, or -1 with b's err set; c's arrays are freed by close_capture either way. */
static int open_capture(struct import_run *b, struct capture *c)
{
	size_t total = 0;

	if (check_header(b, c->buf, c->len) < 0 || scan_metadata(b, c, &total) < 0)
		return -1;
	if (!(c->chunk = malloc(total ? total : 1)))
		return import_fail(b, "out of memory");
	if (scan_processes(b, c) < 0 || read_symbols(b, c) < 0)
		return -1;
	if (c->argv[0] && c->npids == 0)
		return import_fail(b, "no process of the spawned command '%.200s' in the capture",
				   c->argv);
	return 0;
}

static void close_capture(struct capture *c)
{
	free(c->chunk);
	free(c->syms);
	free(c);
}

int import_sysprof(struct import_run *b, const unsigned char *buf, size_t len)
{
	struct capture *c = calloc(1, sizeof(*c));
	int rc = -1;

	if (!c)
		return import_fail(b, "out of memory");
	c->buf = buf;
	c->len = len;
	if (open_capture(b, c) == 0)
		rc = read_samples(b, c);
	close_capture(c);
	return rc < 0 ? -1 : 0;
}

char *import_sysprof_maps(const unsigned char *buf, size_t len, size_t *tlen)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct import_run b = { 0 };
	struct frame f;
	char *text = NULL;
	size_t off = SYSPROF_HEADER;
	FILE *m = NULL;

	if (!c)
		return NULL;
	c->buf = buf;
	c->len = len;
	if (open_capture(&b, c) != 0 || !(m = open_memstream(&text, tlen)))
		goto out;
	while (next_frame(&b, c, &off, &f) > 0) {
		if (f.type != SYSPROF_MAP || f.len < 33 || !kept(c, f.pid) ||
		    !memchr(f.body + 32, 0, f.len - 32))
			continue;
		fprintf(m, "%" PRIx64 "-%" PRIx64 " r-xp %" PRIx64 " 00:00 %" PRIu64 " %s\n",
			le(f.body, 8), le(f.body + 8, 8), le(f.body + 16, 8), le(f.body + 24, 8),
			(const char *)f.body + 32);
	}
	if (fclose(m) != 0) {
		free(text);
		text = NULL;
	}
out:
	close_capture(c);
	return text;
}
