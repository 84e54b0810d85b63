/* matrix.c - parses ci/matrix and expands a profile into run specs. */
#include "core/conf_lex.h"
#include "core/util.h"
#include "harness/cli.h"
#include "harness/matrix.h"
#include "sampler/plugin.h"
#include "workloads/workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MX_MAX_HZ 20000.0
#define MX_MAX_TEXT (1 << 20)

static const struct mx_block block_defaults = {
	.threads = { 2 }, .nthreads = 1, .hz = { 100 }, .nhz = 1,
	.reps = 5, .duration_s = 2, .param = 0, .seed = 1,
};

/* Splits a value on spaces and commas into at most MX_MAX_LIST tokens. */
static int split_values(struct conf_lex *p, const char *key, char *v, char **out)
{
	int n = conf_words(v, " \t,", out, MX_MAX_LIST);
	if (n > MX_MAX_LIST)
		return conf_err(p, "too many values for '%s' (at most %d)", key, MX_MAX_LIST);
	if (n == 0)
		return conf_err(p, "'%s' has no value", key);
	return n;
}

static int parse_num(struct conf_lex *p, const char *key, const char *s, double lo_excl,
		     double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return conf_err(p, "invalid number '%s' for '%s'", s, key);
	if (!(v > lo_excl) || v > hi)
		return conf_err(p, "'%s' must be in (%g, %g], got %s", key, lo_excl, hi, s);
	*out = v;
	return 0;
}

static int parse_int(struct conf_lex *p, const char *key, const char *s, long lo, long hi,
		     long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return conf_err(p, "invalid integer '%s' for '%s'", s, key);
	if (v < lo || v > hi)
		return conf_err(p, "'%s' must be between %ld and %ld, got %s", key, lo, hi, s);
	*out = v;
	return 0;
}

static int single(struct conf_lex *p, const char *key, int n)
{
	return n == 1 ? 0 : conf_err(p, "'%s' takes one value, got %d", key, n);
}

/* `reps = R` (a fixed count) or `reps = MIN..MAX` (adaptive, 1 <= MIN < MAX <= 1000) into
 * b->reps (R or MAX) and b->reps_min (0 or MIN). Returns 0, or -1 (conf_err). */
static int parse_reps(struct conf_lex *p, char *v, struct mx_block *b)
{
	char *dots = strstr(v, "..");
	long lo, hi;

	if (!dots) {
		if (parse_int(p, "reps", v, 1, 1000, &hi))
			return -1;
		b->reps = (int)hi;
		b->reps_min = 0;
		return 0;
	}
	*dots = 0;
	if (parse_int(p, "reps", v, 1, 1000, &lo) || parse_int(p, "reps", dots + 2, 1, 1000, &hi))
		return -1;
	if (lo >= hi)
		return conf_err(p, "'reps' range %ld..%ld must have MIN < MAX (a fixed count: "
			       "reps = %ld)", lo, hi, hi);
	b->reps = (int)hi;
	b->reps_min = (int)lo;
	return 0;
}

/* Applies `key = value` to block b. */
static int set_key(struct conf_lex *p, struct mx_block *b, const char *key, char *value)
{
	char *vals[MX_MAX_LIST];
	int n = split_values(p, key, value, vals);
	long l;
	double d;

	if (n < 0)
		return -1;
	if (!strcmp(key, "samplers")) {
		for (int i = 0; i < n; i++) {
			char err[512];
			if (plugin_is_path(vals[i])) { /* ./my_sampler.so: a plugin, as in `run` */
				b->samplers[i] = plugin_load(vals[i], err, sizeof(err));
				if (!b->samplers[i])
					return conf_err(p, "%s", err);
				continue;
			}
			b->samplers[i] = sampler_find(vals[i]);
			if (!b->samplers[i])
				return conf_err(p, "unknown sampler '%s' (see 'sampbench list')", vals[i]);
		}
		b->nsamplers = n;
	} else if (!strcmp(key, "tools")) {
		size_t nt = 0;
		for (int i = 0; i < n; i++) {
			char err[512];
			if (tool_intern(vals[i], b->tools, MX_MAX_LIST, &nt, err, sizeof(err)) != 0)
				return conf_err(p, "%s", err);
		}
		b->ntools = (int)nt;
	} else if (!strcmp(key, "workloads")) {
		for (int i = 0; i < n; i++) {
			b->workloads[i] = workload_find(vals[i]);
			if (!b->workloads[i])
				return conf_err(p, "unknown workload '%s' (see 'sampbench list')", vals[i]);
		}
		b->nworkloads = n;
	} else if (!strcmp(key, "variants")) {
		for (int i = 0; i < n; i++) {
			if (!workload_variant_known(vals[i]))
				return conf_err(p, "unknown variant '%s' (expected fp, nofp or inline)",
						vals[i]);
			b->variants[i] = !strcmp(vals[i], "nofp") ? "nofp"
					 : !strcmp(vals[i], "inline") ? "inline" : WL_VARIANT_FP;
		}
		b->nvariants = n;
	} else if (!strcmp(key, "threads")) {
		for (int i = 0; i < n; i++) {
			if (parse_int(p, key, vals[i], 1, SB_MAX_THREADS, &l))
				return -1;
			b->threads[i] = (int)l;
		}
		b->nthreads = n;
	} else if (!strcmp(key, "hz")) {
		for (int i = 0; i < n; i++)
			if (parse_num(p, key, vals[i], 0, MX_MAX_HZ, &b->hz[i]))
				return -1;
		b->nhz = n;
	} else if (!strcmp(key, "reps")) {
		if (single(p, key, n) || parse_reps(p, vals[0], b))
			return -1;
	} else if (!strcmp(key, "duration")) {
		if (single(p, key, n) || parse_num(p, key, vals[0], 0, 3600, &d))
			return -1;
		b->duration_s = d;
	} else if (!strcmp(key, "watchdog")) {
		if (single(p, key, n) || parse_num(p, key, vals[0], 0, 3600, &d))
			return -1;
		b->watchdog_s = d;
	} else if (!strcmp(key, "stack_kb")) {
		if (single(p, key, n) || parse_int(p, key, vals[0], 16, 1L << 20, &l))
			return -1;
		b->stack_kb = (unsigned)l;
	} else if (!strcmp(key, "param")) {
		if (single(p, key, n) || parse_int(p, key, vals[0], 0, 1000000, &l))
			return -1;
		b->param = (unsigned)l;
	} else if (!strcmp(key, "seed")) {
		if (single(p, key, n) || parse_int(p, key, vals[0], 0, 1L << 62, &l))
			return -1;
		b->seed = (unsigned long)l;
	} else {
		return conf_err(p, "unknown key '%s' (expected samplers, tools, workloads, variants, "
			       "threads, hz, reps, duration, watchdog, stack_kb, param or seed)", key);
	}
	return 0;
}

/* Replaces b's workloads with each one's builds in b's variants, workload-major. A
 * workload without a build of a variant (deep has no inline build) runs in those it has;
 * one with none of them is an error. Returns 0 or -1 (conf_err). */
static int expand_variants(struct conf_lex *p, struct mx_block *b)
{
	const struct workload *out[MX_MAX_LIST];
	int n = 0;

	for (int i = 0; i < b->nworkloads; i++) {
		int found = 0;
		for (int j = 0; j < b->nvariants; j++) {
			const struct workload *v = workload_variant(b->workloads[i], b->variants[j]);
			if (!v)
				continue;
			if (n == MX_MAX_LIST)
				return conf_err(p, "block [%s] has more than %d workloads with their "
						"variants", b->profile, MX_MAX_LIST);
			out[n++] = v;
			found = 1;
		}
		if (!found)
			return conf_err(p, "block [%s]: workload '%s' has none of its variants "
					"(see 'sampbench list')", b->profile, b->workloads[i]->name);
	}
	memcpy(b->workloads, out, sizeof(out[0]) * (size_t)n);
	b->nworkloads = n;
	return 0;
}

/* A block needs samplers or tools, and workloads, then gets its variants; reported at its
 * header line. */
static int check_block(struct conf_lex *p, struct mx_block *b)
{
	int line = p->line;
	int rc = 0;

	p->line = b->line;
	if (b->nsamplers == 0 && b->ntools == 0)
		rc = conf_err(p, "block [%s] has no 'samplers' or 'tools'", b->profile);
	else if (b->nworkloads == 0)
		rc = conf_err(p, "block [%s] has no 'workloads'", b->profile);
	else if (b->nvariants > 0)
		rc = expand_variants(p, b);
	p->line = line;
	return rc;
}

int matrix_parse(const char *text, const char *name, struct mx_matrix *m, char *err,
		 size_t errlen)
{
	struct conf_lex p;
	char *line;
	struct mx_block *b = NULL;
	unsigned seen = 0; /* keys set in the current block, one bit per key */
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (conf_lex_open(&p, text, name, err, errlen) != 0)
		return -1;
	while ((line = conf_lex_next(&p)) != NULL) {
		conf_cut_comment(line);
		char *s = conf_trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			size_t n = strlen(s);
			char *pname = s + 1;
			if (s[n - 1] != ']') {
				conf_err(&p, "malformed block header '%s' (expected [profile])", s);
				goto cleanup;
			}
			s[n - 1] = 0;
			pname = conf_trim(pname);
			if (!*pname || strlen(pname) >= MX_NAME_LEN || strpbrk(pname, " \t,[]=")) {
				conf_err(&p, "invalid profile name '%s'", pname);
				goto cleanup;
			}
			if (b && check_block(&p, b))
				goto cleanup;
			if (m->nblocks == MX_MAX_BLOCKS) {
				conf_err(&p, "too many blocks (at most %d)", MX_MAX_BLOCKS);
				goto cleanup;
			}
			b = &m->blocks[m->nblocks++];
			*b = block_defaults;
			snprintf(b->profile, sizeof(b->profile), "%s", pname);
			b->line = p.line;
			seen = 0;
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			conf_err(&p, "expected 'key = value' or '[profile]', got '%s'", s);
			goto cleanup;
		}
		*eq = 0;
		char *key = conf_trim(s), *value = conf_trim(eq + 1);
		if (!b) {
			conf_err(&p, "'%s' before the first [profile] header", key);
			goto cleanup;
		}
		static const char *const keys[] = { "samplers", "workloads", "threads", "hz",
						    "reps", "duration", "param", "seed", "tools",
						    "watchdog", "stack_kb", "variants" };
		for (unsigned k = 0; k < ARRAY_SIZE(keys); k++) {
			if (strcmp(key, keys[k]))
				continue;
			if (seen & (1u << k)) {
				conf_err(&p, "'%s' set twice in block [%s]", key, b->profile);
				goto cleanup;
			}
			seen |= 1u << k;
		}
		if (set_key(&p, b, key, value))
			goto cleanup;
	}
	if (b && check_block(&p, b))
		goto cleanup;
	if (m->nblocks == 0) {
		snprintf(err, errlen, "%s: no [profile] blocks", name);
		goto cleanup;
	}
	rc = 0;
cleanup:
	conf_lex_close(&p);
	return rc;
}

int matrix_load(const char *path, struct mx_matrix *m, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n;
	int rc = -1;

	if (!f) {
		snprintf(err, errlen, "cannot read matrix '%s': %s", path, strerror(errno));
		return -1;
	}
	text = malloc(MX_MAX_TEXT + 1);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	n = fread(text, 1, MX_MAX_TEXT + 1, f);
	if (ferror(f) || n > MX_MAX_TEXT) {
		snprintf(err, errlen, "cannot read matrix '%s': %s", path,
			 ferror(f) ? strerror(errno) : "larger than 1 MiB");
		goto cleanup;
	}
	text[n] = 0;
	if (memchr(text, 0, n)) {
		snprintf(err, errlen, "matrix '%s' is not a text file", path);
		goto cleanup;
	}
	rc = matrix_parse(text, path, m, err, errlen);
cleanup:
	free(text);
	fclose(f);
	return rc;
}

void matrix_profile_names(const struct mx_matrix *m, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < m->nblocks; i++) {
		int dup = 0;
		for (int j = 0; j < i; j++)
			dup |= !strcmp(m->blocks[j].profile, m->blocks[i].profile);
		if (dup || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 m->blocks[i].profile);
	}
}

/* The runs of one repetition of block b's cell (workload w, threads t, hz h) into out:
 * `none` first, then the other samplers, then the tools. Returns how many. */
static size_t cell_specs(const struct mx_block *b, int w, int t, int h, int rep,
			 struct run_spec *out)
{
	size_t j = 0;

	for (int pass = 0; pass < 3; pass++) {
		int count = pass < 2 ? b->nsamplers : b->ntools;
		for (int s = 0; s < count; s++) {
			const struct sampler *sp = pass < 2 ? b->samplers[s] : &b->tools[s]->as_sampler;
			int base = (sp->flags & SB_SAMPLER_BASELINE) != 0;
			if (pass < 2 && base != (pass == 0))
				continue;
			out[j++] = (struct run_spec){
				.sampler = sp,
				.workload = b->workloads[w],
				.threads = b->threads[t],
				.hz = b->hz[h],
				.duration_s = b->duration_s,
				.watchdog_s = b->watchdog_s,
				.stack_kb = b->stack_kb,
				.repetition = rep,
				.param = b->param,
				.seed = b->seed + (uint64_t)rep,
				.rt_priority = true,
				.reps_min = b->reps_min,
				.reps_max = b->reps_min ? b->reps : 0,
			};
		}
	}
	return j;
}

long matrix_specs(const struct mx_matrix *m, const char *profile, struct run_spec **specs,
		  char *err, size_t errlen)
{
	size_t n = 0, j = 0;

	*specs = NULL;
	for (int i = 0; i < m->nblocks; i++) {
		const struct mx_block *b = &m->blocks[i];
		if (!strcmp(b->profile, profile))
			n += (size_t)(b->nsamplers + b->ntools) * b->nworkloads * b->nthreads *
			     b->nhz * b->reps;
	}
	if (n == 0) {
		char names[256];
		matrix_profile_names(m, names, sizeof(names));
		snprintf(err, errlen, "unknown profile '%s' (profiles: %s)", profile, names);
		return 0;
	}
	*specs = calloc(n, sizeof(**specs));
	if (!*specs)
		return -1;
	for (int i = 0; i < m->nblocks; i++) {
		const struct mx_block *b = &m->blocks[i];
		if (strcmp(b->profile, profile))
			continue;
		for (int w = 0; w < b->nworkloads; w++)
			for (int t = 0; t < b->nthreads; t++)
				for (int h = 0; h < b->nhz; h++)
					for (int rep = 0; rep < b->reps; rep++)
						j += cell_specs(b, w, t, h, rep, *specs + j);
	}
	return (long)j;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < len; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void matrix_digest(const struct run_spec *specs, size_t n, char buf[17])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char line[256];

	for (size_t i = 0; i < n; i++) {
		const struct run_spec *s = &specs[i];
		int len = snprintf(line, sizeof(line), "%s|%s|%d|%.17g|%.17g|%d|%u|%llu\n",
				   s->sampler->name, s->workload->name, s->threads, s->hz,
				   s->duration_s, s->repetition, (unsigned)s->param,
				   (unsigned long long)s->seed);
		h = fnv1a(h, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
		if (s->reps_max) { /* fixed profiles keep the digests they always had */
			len = snprintf(line, sizeof(line), "reps %d..%d\n", s->reps_min, s->reps_max);
			h = fnv1a(h, line, (size_t)len);
		}
	}
	snprintf(buf, 17, "%016llx", (unsigned long long)h);
}

/* Same (workload, threads, hz, duration, param) group: cells of one block share it. */
static int same_cell_group(const struct run_spec *a, const struct run_spec *b)
{
	return a->workload == b->workload && a->threads == b->threads && a->hz == b->hz &&
	       a->duration_s == b->duration_s && a->param == b->param;
}

size_t matrix_shard(const struct run_spec *specs, size_t n, int k, int nshards, char *keep)
{
	double load[1000] = { 0 };
	size_t kept = 0;

	memset(keep, 0, n);
	if (nshards < 1 || nshards > 1000 || k < 1 || k > nshards)
		return 0;
	/* Groups are contiguous in spec order (matrix_specs); walk them one by one. */
	for (size_t g = 0; g < n;) {
		size_t end = g;
		while (end < n && same_cell_group(&specs[end], &specs[g]))
			end++;
		int mine = 0;
		/* each sampler of the group is one cell: assign it on its first spec */
		for (size_t i = g; i < end; i++) {
			int first = 1;
			for (size_t j = g; j < i && first; j++)
				first = specs[j].sampler != specs[i].sampler;
			if (!first || (specs[i].sampler->flags & SB_SAMPLER_BASELINE))
				continue;
			double cost = 0;
			for (size_t j = i; j < end; j++)
				if (specs[j].sampler == specs[i].sampler)
					cost += specs[j].duration_s + 0.3;
			int best = 0;
			for (int s = 1; s < nshards; s++)
				if (load[s] < load[best])
					best = s;
			load[best] += cost;
			if (best != k - 1)
				continue;
			mine = 1;
			for (size_t j = i; j < end; j++)
				if (specs[j].sampler == specs[i].sampler)
					keep[j] = 1;
		}
		/* a group of `none` only goes to shard 1; otherwise `none` follows its cells */
		int only_none = 1;
		for (size_t i = g; i < end; i++)
			only_none &= (specs[i].sampler->flags & SB_SAMPLER_BASELINE) != 0;
		if (mine || (only_none && k == 1))
			for (size_t i = g; i < end; i++)
				if (specs[i].sampler->flags & SB_SAMPLER_BASELINE)
					keep[i] = 1;
		g = end;
	}
	for (size_t i = 0; i < n; i++)
		kept += keep[i] != 0;
	return kept;
}

int matrix_parse_shard(const char *s, int *k, int *nshards)
{
	char *end;
	long a, b;

	errno = 0;
	a = strtol(s, &end, 10);
	if (end == s || *end != '/' || errno)
		return -1;
	const char *t = end + 1;
	b = strtol(t, &end, 10);
	if (end == t || *end || errno || b < 1 || b > 1000 || a < 1 || a > b)
		return -1;
	*k = (int)a;
	*nshards = (int)b;
	return 0;
}
