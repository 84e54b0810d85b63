/* expect.c - expectation files (expect.h, docs/expect.md): reading them, judging each entry
 * on each run, and margins harvested from repetitions. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/expect.h"
#include "analysis/export.h"

#define EXPECT_MAX_BYTES (4u << 20) /* an expectation file larger than this is not one */

static const char *const entry_keys[] = {
	"name", "stack", "leaf", "thread_index", "thread_name", "sampler", "within", "share",
	"samples_per_s", "cpu_per_s", "absent", "margin", "comment",
};
static const char *const measure_keys[] = { "share", "samples_per_s", "cpu_per_s", "absent" };

/* Reads the whole file at path, NUL-terminated, malloc'd. Returns NULL with err set. */
static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(EXPECT_MAX_BYTES + 1);
	if (buf)
		n = fread(buf, 1, EXPECT_MAX_BYTES + 1, f);
	if (!buf || ferror(f) || n > EXPECT_MAX_BYTES) {
		snprintf(err, errlen, "cannot read '%s': %s", path,
			 !buf ? "out of memory" : n > EXPECT_MAX_BYTES ? "larger than 4 MiB" : strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* The 1-based line of position p in text. */
static int line_of(const char *text, const char *p)
{
	int line = 1;
	for (const char *c = text; c < p && *c; c++)
		line += *c == '\n';
	return line;
}

static int known_key(const char *k, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k, keys[i]))
			return 1;
	return 0;
}

/* Compiles the pattern(s) of item (a string or an array of strings) into e. Returns 0, or
 * -1 with a message in msg. */
static int read_patterns(struct expect_entry *e, const cJSON *item, char *msg, size_t len)
{
	const cJSON *p;
	size_t n = cJSON_IsArray(item) ? (size_t)cJSON_GetArraySize(item) : 1;

	if (n == 0 || n > EXPECT_MAX_PATTERNS) {
		snprintf(msg, len, "'%s' needs 1 to %d patterns", item->string, EXPECT_MAX_PATTERNS);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		p = cJSON_IsArray(item) ? cJSON_GetArrayItem(item, (int)i) : item;
		if (!cJSON_IsString(p)) {
			snprintf(msg, len, "'%s' must be a string or an array of strings", item->string);
			return -1;
		}
		int rc = regcomp(&e->pattern[i], p->valuestring, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char why[128];
			regerror(rc, &e->pattern[i], why, sizeof(why));
			snprintf(msg, len, "bad pattern '%.80s': %s", p->valuestring, why);
			return -1;
		}
		e->npatterns++;
	}
	return 0;
}

/* Compiles the pattern of o's key into *re when o has the key (*has = 1). Returns 0, or -1
 * with a message in msg. */
static int read_option(const cJSON *o, const char *key, regex_t *re, int *has, char *msg,
		       size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return 0;
	if (!cJSON_IsString(v)) {
		snprintf(msg, len, "'%s' must be a string", key);
		return -1;
	}
	int rc = regcomp(re, v->valuestring, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char why[128];
		regerror(rc, re, why, sizeof(why));
		snprintf(msg, len, "bad '%s' pattern '%.80s': %s", key, v->valuestring, why);
		return -1;
	}
	*has = 1;
	return 0;
}

/* Reads the measure (exactly one of measure_keys) and the margin of entry o into e. */
static int read_measure(struct expect_entry *e, const cJSON *o, char *msg, size_t len)
{
	const cJSON *m = NULL, *margin = cJSON_GetObjectItemCaseSensitive(o, "margin");
	int found = 0;

	for (size_t i = 0; i < sizeof(measure_keys) / sizeof(measure_keys[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, measure_keys[i]);
		if (!v)
			continue;
		found++;
		m = v;
		e->measure = (enum expect_measure)i;
	}
	if (found != 1) {
		snprintf(msg, len, "needs exactly one of share, samples_per_s, cpu_per_s, absent");
		return -1;
	}
	if (e->measure == EXPECT_ABSENT) {
		if (!cJSON_IsTrue(m)) {
			snprintf(msg, len, "'absent' must be true");
			return -1;
		}
		e->value = 0;
	} else if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) || m->valuedouble < 0 ||
		   (e->measure == EXPECT_SHARE && m->valuedouble > 1)) {
		snprintf(msg, len, "'%s' must be a number%s", m->string,
			 e->measure == EXPECT_SHARE ? " in [0, 1]" : " >= 0");
		return -1;
	} else {
		e->value = m->valuedouble;
	}
	if (!margin && e->measure != EXPECT_ABSENT) {
		snprintf(msg, len, "needs a margin ('sampbench margins' suggests one)");
		return -1;
	}
	if (margin && (!cJSON_IsNumber(margin) || !(margin->valuedouble >= 0))) {
		snprintf(msg, len, "'margin' must be a number >= 0");
		return -1;
	}
	e->margin = margin ? margin->valuedouble : 0;
	return 0;
}

/* Reads entry o into e. Returns 0, or -1 with a message in msg. */
static int read_entry(struct expect_entry *e, const cJSON *o, char *msg, size_t len)
{
	const cJSON *k, *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	const cJSON *stack = cJSON_GetObjectItemCaseSensitive(o, "stack");
	const cJSON *leaf = cJSON_GetObjectItemCaseSensitive(o, "leaf");
	const cJSON *slot = cJSON_GetObjectItemCaseSensitive(o, "thread_index");
	const cJSON *thread = cJSON_GetObjectItemCaseSensitive(o, "thread_name");

	e->thread_index = -1;
	if (!cJSON_IsObject(o)) {
		snprintf(msg, len, "must be an object");
		return -1;
	}
	if (cJSON_IsString(name)) /* first, so that every later message names the entry */
		snprintf(e->name, sizeof(e->name), "%s", name->valuestring);
	cJSON_ArrayForEach(k, o)
		if (!known_key(k->string, entry_keys, sizeof(entry_keys) / sizeof(entry_keys[0]))) {
			snprintf(msg, len, "unknown key '%.60s'", k->string);
			return -1;
		}
	if (!cJSON_IsString(name) || !*name->valuestring) {
		snprintf(msg, len, "needs a name");
		return -1;
	}
	if (stack && leaf) {
		snprintf(msg, len, "takes one of 'stack' or 'leaf', not both");
		return -1;
	}
	if (!stack && !leaf && !slot && !thread) { /* a thread selector alone: every stack */
		snprintf(msg, len, "needs 'stack', 'leaf', 'thread_name' or 'thread_index'");
		return -1;
	}
	e->leaf_only = !!leaf;
	if ((stack || leaf) && read_patterns(e, stack ? stack : leaf, msg, len) < 0)
		return -1;
	if (slot) {
		if (!cJSON_IsNumber(slot) || slot->valuedouble < 0 || slot->valuedouble > 65535 ||
		    slot->valuedouble != floor(slot->valuedouble)) {
			snprintf(msg, len, "'thread_index' must be a whole number >= 0");
			return -1;
		}
		e->thread_index = (int)slot->valuedouble;
	}
	if (read_option(o, "thread_name", &e->thread_name, &e->has_thread_name, msg, len) < 0 ||
	    read_option(o, "sampler", &e->sampler, &e->has_sampler, msg, len) < 0 ||
	    read_option(o, "within", &e->within, &e->has_within, msg, len) < 0 ||
	    read_measure(e, o, msg, len) < 0)
		return -1;
	if (e->has_within && e->measure != EXPECT_SHARE && e->measure != EXPECT_ABSENT) {
		snprintf(msg, len, "'within' applies to share and absent only");
		return -1;
	}
	return 0;
}

/* Loads an expectation file (see expect.h). */
int expect_load(const char *path, struct expect_set *set, char *err, size_t errlen)
{
	char msg[256];
	cJSON *root = NULL;
	const cJSON *list, *k;
	int rc = -1;
	char *text;

	memset(set, 0, sizeof(*set));
	if (!(text = slurp(path, err, errlen)))
		return -1;
	root = cJSON_Parse(text);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		snprintf(err, errlen, "%s:%d: not valid JSON", path, at ? line_of(text, at) : 1);
		goto cleanup;
	}
	list = cJSON_GetObjectItemCaseSensitive(root, "expectations");
	if (!cJSON_IsObject(root) || !cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
		snprintf(err, errlen, "%s: needs an object with a non-empty array 'expectations'", path);
		goto cleanup;
	}
	cJSON_ArrayForEach(k, root)
		if (strcmp(k->string, "expectations") && strcmp(k->string, "comment")) {
			snprintf(err, errlen, "%s: unknown key '%.60s'", path, k->string);
			goto cleanup;
		}
	set->entries = calloc((size_t)cJSON_GetArraySize(list), sizeof(*set->entries));
	if (!set->entries) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	cJSON_ArrayForEach(k, list) {
		struct expect_entry *e = &set->entries[set->n++];
		if (read_entry(e, k, msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "%s: expectation %zu%s%s%s: %s", path, set->n,
				 *e->name ? " ('" : "", e->name, *e->name ? "')" : "", msg);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	if (rc < 0)
		expect_free(set);
	cJSON_Delete(root);
	free(text);
	return rc;
}

void expect_free(struct expect_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		for (size_t j = 0; j < set->entries[i].npatterns; j++)
			regfree(&set->entries[i].pattern[j]);
		if (set->entries[i].has_sampler)
			regfree(&set->entries[i].sampler);
		if (set->entries[i].has_within)
			regfree(&set->entries[i].within);
		if (set->entries[i].has_thread_name)
			regfree(&set->entries[i].thread_name);
	}
	free(set->entries);
	memset(set, 0, sizeof(*set));
}

static int sampler_matches(const struct expect_entry *e, const struct sb_run *r)
{
	return !e->has_sampler || regexec(&e->sampler, r->sampler, 0, NULL, 0) == 0;
}

int expect_applies(const struct expect_entry *e, const struct sb_run *r)
{
	return sampler_matches(e, r) && strcmp(r->sampler, "none") != 0 && run_scored(r->status);
}

/* Whether sample i of r matches e's patterns (folded is its folded stack). */
static int sample_matches(const struct expect_entry *e, const struct sb_run *r, size_t i,
			  const char *folded)
{
	const char *text = folded;
	char name[SB_THREAD_NAME_LEN];

	if (e->thread_index >= 0 && r->samples[i].thread_index != e->thread_index)
		return 0;
	/* an unknown name is no name: "" must not match a pattern that accepts anything */
	if (e->has_thread_name && (!*export_thread_name(r, i, name) ||
				   regexec(&e->thread_name, name, 0, NULL, 0) != 0))
		return 0;
	if (e->npatterns == 0)
		return 1;
	if (e->leaf_only) {
		const char *semi = strrchr(folded, ';');
		text = semi ? semi + 1 : folded;
	}
	for (size_t p = 0; p < e->npatterns; p++)
		if (regexec(&e->pattern[p], text, 0, NULL, 0) == 0)
			return 1;
	return 0;
}

/* Measures entry e on run r (see expect.h). */
int expect_judge(const struct expect_entry *e, const struct sb_run *r, struct expect_result *out)
{
	double w_all = 0, w_match = 0, wall = r->wall_s > 0 ? r->wall_s : r->duration_s;
	int weighted = r->nsamples > 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < r->nsamples; i++)
		weighted &= isfinite(r->samples[i].weight_ns) && r->samples[i].weight_ns > 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		char *folded = export_folded_line(r, i, 0);
		if (!folded)
			return -1;
		double w = weighted ? r->samples[i].weight_ns : 1.0;
		if (e->has_within && regexec(&e->within, folded, 0, NULL, 0) != 0) {
			free(folded);
			continue; /* outside the share's whole */
		}
		w_all += w;
		if (sample_matches(e, r, i, folded)) {
			w_match += w;
			out->matched++;
		}
		free(folded);
	}
	switch (e->measure) {
	case EXPECT_SHARE:
	case EXPECT_ABSENT:
		out->measured = w_all > 0 ? w_match / w_all : NAN;
		break;
	case EXPECT_SAMPLES_PER_S:
		out->measured = wall > 0 ? (double)out->matched / wall : NAN;
		break;
	case EXPECT_CPU_PER_S: /* without weights each sample stands for one period */
		out->measured = !(wall > 0) ? NAN
			      : weighted ? w_match / 1e9 / wall
			      : r->hz > 0 ? (double)out->matched / r->hz / wall : NAN;
		break;
	}
	out->pass = isfinite(out->measured) && fabs(out->measured - e->value) <= e->margin;
	return 0;
}

static const char *measure_name(enum expect_measure m)
{
	return measure_keys[m];
}

/* Prints one check row: run, sampler, entry, measured, expected, margin, verdict. */
static void print_row(FILE *out, const struct sb_run *r, const struct expect_entry *e,
		      const struct expect_result *res, const char *why)
{
	fprintf(out, "%c %4lld  %-16.16s  %-32.32s  %-13s %10.4g %10.4g %9.4g  %s\n",
		res->pass ? ' ' : 'x', (long long)r->run_id, r->sampler, e->name,
		measure_name(e->measure), res->measured, e->value, e->margin,
		why                        ? why
		: res->pass                ? "ok"
		: !isfinite(res->measured) ? "FAIL: nothing to measure (no sample, or none within)"
					   : "FAIL");
}

/* Judges every entry on every run (see expect.h). */
int expect_report(FILE *out, const struct expect_set *set, const struct sb_run *runs, size_t n,
		  char *err, size_t errlen)
{
	size_t checks = 0, failed = 0;

	fprintf(out, "  %4s  %-16s  %-32s  %-13s %10s %10s %9s  %s\n", "run", "sampler", "expectation",
		"measure", "measured", "expected", "margin", "verdict");
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];
		for (size_t j = 0; j < set->n; j++) {
			const struct expect_entry *e = &set->entries[j];
			struct expect_result res = { .measured = NAN };
			if (!sampler_matches(e, r) || !strcmp(r->sampler, "none") ||
			    r->status == SB_RUN_SKIPPED)
				continue;
			checks++;
			if (!run_scored(r->status)) { /* a sampler that broke its run fails */
				failed++;
				print_row(out, r, e, &res, "FAIL: the run is not scored (failed or incomplete)");
				continue;
			}
			if (expect_judge(e, r, &res) < 0) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			failed += !res.pass;
			print_row(out, r, e, &res, NULL);
		}
	}
	if (checks == 0) {
		snprintf(err, errlen, "no run to judge: every run is none's, skipped, or of another sampler");
		return -1;
	}
	fprintf(out, "expect: %s: %zu checks, %zu failed\n", failed ? "FAIL" : "PASS", checks, failed);
	return (int)failed;
}

/* The smallest margin a re-run of a measure with mean m over runs of mean samples c
 * (all samples: c_all) and mean wall w should stay within by counting noise alone: 4
 * binomial or Poisson standard deviations of one run. */
static double noise_floor(const struct expect_entry *e, double m, double c, double c_all,
			  double w, double hz)
{
	double p = m < 0 ? 0 : m > 1 ? 1 : m;

	switch (e->measure) {
	case EXPECT_SHARE:
	case EXPECT_ABSENT:
		return c_all > 0 ? 4 * sqrt(fmax(p * (1 - p), 1.0 / c_all) / c_all) : NAN;
	case EXPECT_SAMPLES_PER_S:
		return w > 0 ? 4 * sqrt(fmax(c, 1)) / w : NAN;
	case EXPECT_CPU_PER_S:
		return w > 0 && hz > 0 ? 4 * sqrt(fmax(c, 1)) / hz / w : NAN;
	}
	return NAN;
}

/* Margins of entry e for sampler name over the runs (see expect.h). */
static int margin_row(FILE *out, const struct expect_entry *e, const char *name,
		      const struct sb_run *runs, size_t n)
{
	double sum = 0, sq = 0, c = 0, c_all = 0, w = 0, hz = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct expect_result res;
		if (strcmp(runs[i].sampler, name) || !expect_applies(e, &runs[i]))
			continue;
		if (expect_judge(e, &runs[i], &res) < 0)
			return -1;
		if (!isfinite(res.measured))
			continue;
		k++;
		sum += res.measured;
		sq += res.measured * res.measured;
		c += (double)res.matched;
		c_all += (double)runs[i].nsamples;
		w += runs[i].wall_s > 0 ? runs[i].wall_s : runs[i].duration_s;
		hz = runs[i].hz;
	}
	if (k == 0)
		return 0;
	double mean = sum / (double)k;
	double sd = k > 1 ? sqrt(fmax(0, (sq - (double)k * mean * mean) / (double)(k - 1))) : NAN;
	double floor_ = noise_floor(e, mean, c / (double)k, c_all / (double)k, w / (double)k, hz);
	double spread = isfinite(sd) ? 4 * sd : 0;
	double margin = fmax(spread, isfinite(floor_) ? floor_ : 0) + fabs(mean - e->value);
	fprintf(out, "  %-16.16s  %-32.32s  %-13s %4zu %10.4g %10.4g %10.4g %10.4g\n", name, e->name,
		measure_name(e->measure), k, mean, sd, e->value, margin);
	return 0;
}

/* Margins per sampler and entry (see expect.h): the suggested margin is the larger of 4
 * standard deviations over the runs and the counting noise of one run, plus the distance
 * of the mean from the expected value. */
int expect_margins(FILE *out, const struct expect_set *set, const struct sb_run *runs, size_t n)
{
	fprintf(out, "  %-16s  %-32s  %-13s %4s %10s %10s %10s %10s\n", "sampler", "expectation",
		"measure", "runs", "mean", "sd", "expected", "margin");
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(runs[j].sampler, runs[i].sampler);
		if (seen)
			continue;
		for (size_t j = 0; j < set->n; j++)
			if (margin_row(out, &set->entries[j], runs[i].sampler, runs, n) < 0)
				return -1;
	}
	return 0;
}
