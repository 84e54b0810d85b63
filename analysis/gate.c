/* gate.c - the regression gate: budgets config, per-cell checks, verdict outputs.
 *
 * A cell is (sampler, workload, threads, hz); its repetitions are the samples the tests
 * see. Only ok runs give metric values; failed and skipped runs are counted in the pseudo
 * metrics failed_runs and skipped_runs. */
#include "../harness/cli.h"
#include "gate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sampler/sampler.h"
#include "mwu.h"

#define GATE_MAX_TEXT (1 << 20)

enum gate_var { V_THREADS, V_HZ, V_CORES, V_TICK, V_WORKLOAD, V_SAMPLER, V_BUILD, V_NVARS };
static const char *const var_names[V_NVARS] = { "threads", "hz", "cores", "tick", "workload",
						"sampler", "build" };

/* Cell-level counts that budgets can name like metrics. */
static const char *const pseudo_metrics[] = { "failed_runs", "skipped_runs" };
#define NPSEUDO (sizeof(pseudo_metrics) / sizeof(pseudo_metrics[0]))

static const char *const op_names[] = { "<=", ">=", "<", ">", "==", "!=" };

int gate_metric_index(const char *name)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		if (!strcmp(sb_metric_infos[i].name, name))
			return (int)i;
	return -1;
}

static int pseudo_index(const char *name)
{
	for (size_t i = 0; i < NPSEUDO; i++)
		if (!strcmp(pseudo_metrics[i], name))
			return (int)i;
	return -1;
}

static int is_ns_metric(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && !strcmp(name + n - 3, "_ns");
}

/* --- config parsing --- */

struct cparser {
	const char *name;
	int line;
	char *err;
	size_t errlen;
};

static int cerr(struct cparser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "name:line: message" into p->err. Always returns -1. */
static int cerr(struct cparser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_config_verr(p->err, p->errlen, p->name, p->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* Parses a number with an optional unit: ns, us, µs, ms, s (to ns) or % (to a fraction). */
static int parse_value(struct cparser *p, const char *s, double *out)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "%", 0.01 },
	};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return cerr(p, "invalid number '%s'", s);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].suffix)) {
			*out = v * units[i].scale;
			return 0;
		}
	return cerr(p, "unknown unit in '%s' (expected ns, us, ms, s or %%)", s);
}

static int check_metric(struct cparser *p, const char *m, int allow_pseudo)
{
	if (gate_metric_index(m) >= 0 || (allow_pseudo && pseudo_index(m) >= 0))
		return 0;
	return cerr(p, "unknown metric '%s' (see 'sampbench show --help')", m);
}

static int check_sampler(struct cparser *p, const char *s)
{
	if (strlen(s) >= GATE_NAME_LEN || !sampler_find(s))
		return cerr(p, "unknown sampler '%s' (see 'sampbench list')", s);
	return 0;
}

static int parse_op(const char *s, enum gate_op *op)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (!strcmp(s, op_names[i])) {
			*op = (enum gate_op)i;
			return 0;
		}
	if (!strcmp(s, "=")) {
		*op = GATE_EQ;
		return 0;
	}
	return -1;
}

static int var_index(const char *s)
{
	for (int i = 0; i < V_NVARS; i++)
		if (!strcmp(s, var_names[i]))
			return i;
	return -1;
}

/* `threads<=cores`, `hz<=tick`, `hz>250`, `workload=skewed`, `sampler!=none`, `build=plain`. */
static int parse_cond(struct cparser *p, const char *s, struct gate_cond *c)
{
	size_t k = strcspn(s, "<>=!");
	char lhs[GATE_NAME_LEN], opbuf[3] = "", *rhs;

	if (k == 0 || k >= sizeof(lhs) || !s[k])
		return cerr(p, "malformed condition '%s' (expected e.g. threads<=cores)", s);
	memcpy(lhs, s, k);
	lhs[k] = 0;
	size_t o = strspn(s + k, "<>=!");
	if (o > 2)
		return cerr(p, "malformed condition '%s'", s);
	memcpy(opbuf, s + k, o);
	opbuf[o] = 0;
	rhs = (char *)s + k + o;
	memset(c, 0, sizeof(*c));
	if (parse_op(opbuf, &c->op))
		return cerr(p, "unknown operator '%s' in condition '%s'", opbuf, s);
	c->lhs = var_index(lhs);
	if (c->lhs < 0)
		return cerr(p, "unknown variable '%s' in condition '%s' (expected threads, hz, "
			       "cores, tick, workload, sampler or build)", lhs, s);
	if (!*rhs)
		return cerr(p, "condition '%s' has no right side", s);
	if (c->lhs == V_WORKLOAD || c->lhs == V_SAMPLER || c->lhs == V_BUILD) {
		if (c->op != GATE_EQ && c->op != GATE_NE)
			return cerr(p, "'%s' compares names: use = or !=", lhs);
		if (strlen(rhs) >= sizeof(c->name))
			return cerr(p, "name too long in condition '%s'", s);
		snprintf(c->name, sizeof(c->name), "%s", rhs);
		c->rhs = -1;
		return 0;
	}
	c->rhs = var_index(rhs);
	if (c->rhs == V_WORKLOAD || c->rhs == V_SAMPLER || c->rhs == V_BUILD)
		return cerr(p, "cannot compare '%s' with a name", lhs);
	if (c->rhs < 0)
		return parse_value(p, rhs, &c->value);
	return 0;
}

#define MAX_TOKENS 48

static int tokenize(char *s, char **tok)
{
	int n = 0;
	for (char *t = strtok(s, " \t"); t && n < MAX_TOKENS; t = strtok(NULL, " \t"))
		tok[n++] = t;
	return n;
}

static int parse_rule(struct cparser *p, struct gate_config *cfg, char **tok, int n)
{
	if (n < 4 || n > 5)
		return cerr(p, "expected 'regress METRIC up|down|off-one MIN_EFFECT [MIN_REL%%]'");
	if (cfg->nrules == GATE_MAX_RULES)
		return cerr(p, "too many regress rules (at most %d)", GATE_MAX_RULES);
	struct gate_rule *r = &cfg->rules[cfg->nrules];
	memset(r, 0, sizeof(*r));
	r->line = p->line;
	if (check_metric(p, tok[1], 0))
		return -1;
	snprintf(r->metric, sizeof(r->metric), "%s", tok[1]);
	if (!strcmp(tok[2], "up"))
		r->dir = GATE_UP;
	else if (!strcmp(tok[2], "down"))
		r->dir = GATE_DOWN;
	else if (!strcmp(tok[2], "off-one"))
		r->dir = GATE_OFF_ONE;
	else
		return cerr(p, "unknown direction '%s' (expected up, down or off-one)", tok[2]);
	if (parse_value(p, tok[3], &r->min_abs))
		return -1;
	if (r->min_abs < 0)
		return cerr(p, "minimum effect must be >= 0, got %s", tok[3]);
	if (n == 5) {
		size_t l = strlen(tok[4]);
		if (l < 2 || tok[4][l - 1] != '%')
			return cerr(p, "relative minimum effect must be a percentage, got '%s'", tok[4]);
		if (parse_value(p, tok[4], &r->min_rel) || r->min_rel < 0)
			return r->min_rel < 0 ? cerr(p, "relative minimum must be >= 0") : -1;
	}
	for (int i = 0; i < cfg->nrules; i++)
		if (!strcmp(cfg->rules[i].metric, r->metric))
			return cerr(p, "second regress rule for '%s' (first on line %d)", r->metric,
				    cfg->rules[i].line);
	cfg->nrules++;
	return 0;
}

static int parse_budget(struct cparser *p, struct gate_config *cfg, char **tok, int n,
			const char *text)
{
	if (n < 5)
		return cerr(p, "expected 'budget SAMPLERS METRIC OP VALUE [sign-test] [if COND...]'");
	if (cfg->nbudgets == GATE_MAX_BUDGETS)
		return cerr(p, "too many budgets (at most %d)", GATE_MAX_BUDGETS);
	struct gate_budget *b = &cfg->budgets[cfg->nbudgets];
	memset(b, 0, sizeof(*b));
	b->line = p->line;
	snprintf(b->text, sizeof(b->text), "%.159s", text);

	if (strcmp(tok[1], "*")) {
		char list[512];
		snprintf(list, sizeof(list), "%s", tok[1]);
		for (char *save, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			if (b->nsamplers == GATE_MAX_LIST)
				return cerr(p, "too many samplers (at most %d)", GATE_MAX_LIST);
			if (check_sampler(p, s))
				return -1;
			snprintf(b->samplers[b->nsamplers++], GATE_NAME_LEN, "%s", s);
		}
		if (b->nsamplers == 0)
			return cerr(p, "empty sampler list");
	}
	if (check_metric(p, tok[2], 1))
		return -1;
	snprintf(b->metric, sizeof(b->metric), "%s", tok[2]);
	if (parse_op(tok[3], &b->op))
		return cerr(p, "unknown operator '%s' (expected <=, >=, <, >, == or !=)", tok[3]);

	int i = 4;
	char *dot = strchr(tok[i], '.');
	if (dot && !isdigit((unsigned char)tok[i][0]) && tok[i][0] != '-' && tok[i][0] != '.') {
		*dot = 0;
		if (check_sampler(p, tok[i]) || check_metric(p, dot + 1, 0))
			return -1;
		snprintf(b->ref_sampler, sizeof(b->ref_sampler), "%s", tok[i]);
		snprintf(b->ref_metric, sizeof(b->ref_metric), "%s", dot + 1);
		i++;
		if (i < n && (!strcmp(tok[i], "+") || !strcmp(tok[i], "-"))) {
			if (i + 1 >= n)
				return cerr(p, "'%s' needs a number after it", tok[i]);
			if (parse_value(p, tok[i + 1], &b->value))
				return -1;
			if (tok[i][0] == '-')
				b->value = -b->value;
			i += 2;
		}
	} else {
		if (parse_value(p, tok[i], &b->value))
			return -1;
		i++;
	}
	if (i < n && !strcmp(tok[i], "sign-test")) {
		b->sign_test = 1;
		i++;
	}
	if (i < n) {
		if (strcmp(tok[i], "if"))
			return cerr(p, "expected 'if', 'sign-test' or the end of the line, got '%s'",
				    tok[i]);
		if (++i == n)
			return cerr(p, "'if' needs a condition");
		for (; i < n; i++) {
			if (b->nconds == GATE_MAX_CONDS)
				return cerr(p, "too many conditions (at most %d)", GATE_MAX_CONDS);
			if (parse_cond(p, tok[i], &b->conds[b->nconds++]))
				return -1;
		}
	}
	cfg->nbudgets++;
	return 0;
}

int gate_config_parse(const char *text, const char *name, struct gate_config *cfg, char *err,
		      size_t errlen)
{
	struct cparser p = { .name = name, .err = err, .errlen = errlen };
	char *copy = strdup(text), *save, *line;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->name = name;
	cfg->alpha = 0.05;
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (save = copy; (line = strsep(&save, "\n")) != NULL;) {
		char *tok[MAX_TOKENS], clean[512];
		p.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		int n = tokenize(line, tok);
		if (n == 0)
			continue;
		if (n == MAX_TOKENS) {
			cerr(&p, "line too long");
			goto cleanup;
		}
		clean[0] = 0;
		for (int i = 0, used = 0; i < n && used < (int)sizeof(clean); i++)
			used += snprintf(clean + used, sizeof(clean) - (size_t)used, "%s%s",
					 i ? " " : "", tok[i]);
		if (!strcmp(tok[0], "regress")) {
			if (parse_rule(&p, cfg, tok, n))
				goto cleanup;
		} else if (!strcmp(tok[0], "budget")) {
			if (parse_budget(&p, cfg, tok, n, clean + 7))
				goto cleanup;
		} else if (!strcmp(tok[0], "alpha")) {
			if (n != 2 || parse_value(&p, tok[1], &cfg->alpha) || !(cfg->alpha > 0) ||
			    cfg->alpha >= 1) {
				if (n != 2 || !(cfg->alpha > 0) || cfg->alpha >= 1)
					cerr(&p, "expected 'alpha P' with 0 < P < 1");
				goto cleanup;
			}
		} else if (!strcmp(tok[0], "reference")) {
			if (n != 2) {
				cerr(&p, "expected 'reference SAMPLER'");
				goto cleanup;
			}
			if (check_sampler(&p, tok[1]))
				goto cleanup;
			snprintf(cfg->reference, sizeof(cfg->reference), "%s", tok[1]);
		} else if (!strcmp(tok[0], "compare")) {
			if (n < 2 || n - 1 > GATE_MAX_LIST) {
				cerr(&p, "expected 'compare METRIC...' (1 to %d metrics)", GATE_MAX_LIST);
				goto cleanup;
			}
			cfg->ncompare = 0;
			for (int i = 1; i < n; i++) {
				if (check_metric(&p, tok[i], 0))
					goto cleanup;
				snprintf(cfg->compare[cfg->ncompare++], GATE_NAME_LEN, "%s", tok[i]);
			}
		} else {
			cerr(&p, "unknown directive '%s' (expected regress, budget, alpha, reference "
				 "or compare)", tok[0]);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	free(copy);
	return rc;
}

int gate_config_load(const char *path, struct gate_config *cfg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	int rc = -1;

	if (!f) {
		snprintf(err, errlen, "cannot read budgets '%s': %s", path, strerror(errno));
		return -1;
	}
	text = malloc(GATE_MAX_TEXT + 1);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	size_t n = fread(text, 1, GATE_MAX_TEXT + 1, f);
	if (ferror(f) || n > GATE_MAX_TEXT || memchr(text, 0, n)) {
		snprintf(err, errlen, "budgets '%s' is not a readable text file under 1 MiB", path);
		goto cleanup;
	}
	text[n] = 0;
	rc = gate_config_parse(text, path, cfg, err, errlen);
cleanup:
	free(text);
	fclose(f);
	return rc;
}

/* --- cells --- */

struct cell {
	const char *sampler, *workload;
	int threads;
	double hz;
	size_t *runs; /* indices of the cell's runs */
	size_t n;
	int failed, skipped;
};

struct cells {
	struct cell *v;
	size_t n;
	size_t *idx; /* storage for every cell's run indices */
};

static int same_cell(const struct cell *c, const struct sb_run *r)
{
	return !strcmp(c->sampler, r->sampler) && !strcmp(c->workload, r->workload) &&
	       c->threads == r->threads && c->hz == r->hz;
}

static void cells_free(struct cells *cs)
{
	free(cs->v);
	free(cs->idx);
	memset(cs, 0, sizeof(*cs));
}

/* Groups runs into cells, in order of first appearance. */
static int cells_build(const struct gate_side *side, struct cells *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->v = calloc(side->nruns + 1, sizeof(*cs->v));
	cs->idx = calloc(side->nruns + 1, sizeof(*cs->idx));
	if (!cs->v || !cs->idx) {
		cells_free(cs);
		return -1;
	}
	/* two passes: count per cell, then place the indices contiguously */
	size_t *cell_of = calloc(side->nruns + 1, sizeof(*cell_of));
	if (!cell_of) {
		cells_free(cs);
		return -1;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_run *r = &side->runs[i];
		size_t c = 0;
		while (c < cs->n && !same_cell(&cs->v[c], r))
			c++;
		if (c == cs->n)
			cs->v[cs->n++] = (struct cell){ .sampler = r->sampler, .workload = r->workload,
							 .threads = r->threads, .hz = r->hz };
		cell_of[i] = c;
		cs->v[c].n++;
		cs->v[c].failed += r->status == SB_RUN_FAILED;
		cs->v[c].skipped += r->status == SB_RUN_SKIPPED;
	}
	size_t off = 0;
	for (size_t c = 0; c < cs->n; c++) {
		cs->v[c].runs = cs->idx + off;
		off += cs->v[c].n;
		cs->v[c].n = 0;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		struct cell *c = &cs->v[cell_of[i]];
		c->runs[c->n++] = i;
	}
	free(cell_of);
	return 0;
}

static const struct cell *cells_find(const struct cells *cs, const char *sampler,
				     const char *workload, int threads, double hz)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *c = &cs->v[i];
		if (!strcmp(c->sampler, sampler) && !strcmp(c->workload, workload) &&
		    c->threads == threads && c->hz == hz)
			return c;
	}
	return NULL;
}

/* The metric's values over the cell's ok runs (NaN ones left out) into out; returns how
 * many. Pseudo metrics give one value: the count. */
static size_t cell_values(const struct gate_side *side, const struct cell *c, const char *metric,
			  double *out)
{
	int pi = pseudo_index(metric), mi;
	size_t k = 0;

	if (pi >= 0) {
		out[0] = pi == 0 ? c->failed : c->skipped;
		return 1;
	}
	mi = gate_metric_index(metric);
	if (mi < 0)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status != SB_RUN_OK)
			continue;
		double v = *(const double *)((const char *)&r->metrics + sb_metric_infos[mi].offset);
		if (!isnan(v))
			out[k++] = v;
	}
	return k;
}

/* --- evaluation --- */

static struct gate_check *add_check(struct gate_result *res, size_t *cap, const struct cell *c,
				    enum gate_kind kind, const char *metric)
{
	if (res->nchecks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct gate_check *v = realloc(res->checks, ncap * sizeof(*v));
		if (!v)
			return NULL;
		res->checks = v;
		*cap = ncap;
	}
	struct gate_check *k = &res->checks[res->nchecks++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->state = GATE_PASS;
	snprintf(k->sampler, sizeof(k->sampler), "%s", c->sampler);
	snprintf(k->workload, sizeof(k->workload), "%s", c->workload);
	k->threads = c->threads;
	k->hz = c->hz;
	snprintf(k->metric, sizeof(k->metric), "%s", metric);
	k->baseline = k->current = k->p = k->effect = NAN;
	return k;
}

static int op_holds(enum gate_op op, double a, double b)
{
	switch (op) {
	case GATE_LE: return a <= b;
	case GATE_GE: return a >= b;
	case GATE_LT: return a < b;
	case GATE_GT: return a > b;
	case GATE_EQ: return a == b;
	case GATE_NE: return a != b;
	}
	return 0;
}

/* Value of a numeric condition variable for cell c on host h; NaN when unknown. */
static double var_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_THREADS: return c->threads;
	case V_HZ: return c->hz;
	case V_CORES: return h->nproc > 0 ? h->nproc : NAN;
	case V_TICK: return h->tick_hz > 0 ? h->tick_hz : NAN;
	}
	return NAN;
}

/* Does budget b apply to cell c? A condition on an unknown host fact (tick) is false. */
static int budget_applies(const struct gate_budget *b, const struct cell *c,
			  const struct sb_host *h)
{
	if (b->nsamplers) {
		int hit = 0;
		for (int i = 0; i < b->nsamplers && !hit; i++)
			hit = !strcmp(b->samplers[i], c->sampler);
		if (!hit)
			return 0;
	}
	for (int i = 0; i < b->nconds; i++) {
		const struct gate_cond *k = &b->conds[i];
		if (k->lhs == V_WORKLOAD || k->lhs == V_SAMPLER || k->lhs == V_BUILD) {
			const char *have = k->lhs == V_WORKLOAD ? c->workload
					   : k->lhs == V_SAMPLER ? c->sampler
								 : h->build;
			if ((strcmp(have, k->name) == 0) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		double a = var_value(k->lhs, c, h);
		double r = k->rhs >= 0 ? var_value(k->rhs, c, h) : k->value;
		if (isnan(a) || isnan(r) || !op_holds(k->op, a, r))
			return 0;
	}
	return 1;
}

static void fmt_value(char *buf, size_t len, const char *metric, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (is_ns_metric(metric))
		snprintf(buf, len, "%.1fµs", v / 1e3);
	else if (v == floor(v) && fabs(v) < 1e9)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static double bad_change(enum gate_dir dir, double base, double cur)
{
	switch (dir) {
	case GATE_UP: return cur - base;
	case GATE_DOWN: return base - cur;
	case GATE_OFF_ONE: return fabs(cur - 1) - fabs(base - 1);
	}
	return NAN;
}

static void regression_checks(const struct gate_config *cfg, const struct gate_side *base,
			      const struct cell *bc, const struct gate_side *cur,
			      const struct cell *cc, struct gate_result *res, size_t *cap,
			      double *bv, double *cv)
{
	for (int i = 0; i < cfg->nrules; i++) {
		const struct gate_rule *rule = &cfg->rules[i];
		size_t nb = cell_values(base, bc, rule->metric, bv);
		size_t nc = cell_values(cur, cc, rule->metric, cv);
		if (nb == 0 && nc == 0)
			continue; /* the mechanism cannot measure it: nothing to compare */
		struct gate_check *k = add_check(res, cap, cc, GATE_REGRESSION, rule->metric);
		if (!k)
			return;
		k->nbase = (int)nb;
		k->ncur = (int)nc;
		k->baseline = median_of(bv, nb);
		k->current = median_of(cv, nc);
		if (nb == 0 || nc == 0) {
			k->state = GATE_WARN;
			snprintf(k->reason, sizeof(k->reason), "no values in the %s",
				 nb == 0 ? "baseline" : "current run");
			continue;
		}
		struct mwu_result u;
		if (mwu_test(cv, nc, bv, nb, &u) == 0)
			k->p = u.p;
		k->effect = bad_change(rule->dir, k->baseline, k->current);
		double need = rule->min_abs;
		if (rule->min_rel > 0 && rule->min_rel * fabs(k->baseline) > need)
			need = rule->min_rel * fabs(k->baseline);
		char lim[32];
		fmt_value(lim, sizeof(lim), rule->metric, need);
		int significant = !isnan(k->p) && k->p < cfg->alpha;
		if (significant && k->effect > need) {
			k->state = GATE_FAIL;
			snprintf(k->reason, sizeof(k->reason),
				 "regressed: worse by more than %s and p < %g (%s:%d)", lim, cfg->alpha,
				 cfg->name, rule->line);
		} else if (significant && k->effect < 0) {
			snprintf(k->reason, sizeof(k->reason), "improved (p < %g)", cfg->alpha);
		} else if (significant) {
			snprintf(k->reason, sizeof(k->reason), "changed, within %s (%s:%d)", lim,
				 cfg->name, rule->line);
		} else {
			snprintf(k->reason, sizeof(k->reason), "no significant change%s",
				 nb < 4 || nc < 4 ? " (< 4 reps a side can never reach p < 0.05)" : "");
		}
	}
}

/* P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test of "k of n runs over". */
static double sign_test_p(int k, int n)
{
	double p = 0, c = 1; /* c = C(n, j) */
	for (int j = 0; j <= n; j++) {
		if (j >= k)
			p += c;
		c = c * (n - j) / (j + 1);
	}
	return p / pow(2.0, n);
}

static void budget_checks(const struct gate_config *cfg, const struct gate_side *cur,
			  const struct cells *cs, const struct cell *c, struct gate_result *res,
			  size_t *cap, double *buf)
{
	for (int i = 0; i < cfg->nbudgets; i++) {
		const struct gate_budget *b = &cfg->budgets[i];
		if (!budget_applies(b, c, cur->host))
			continue;
		size_t n = cell_values(cur, c, b->metric, buf);
		if (n == 0 && b->nsamplers == 0)
			continue; /* `*` budget on a metric this sampler cannot measure */
		struct gate_check *k = add_check(res, cap, c, GATE_BUDGET, b->metric);
		if (!k)
			return;
		k->ncur = (int)n;
		k->current = median_of(buf, n);
		double limit = b->value;
		char lim[64], rvs[32];
		fmt_value(lim, sizeof(lim), b->metric, limit);
		if (b->ref_sampler[0]) {
			const struct cell *rc = cells_find(cs, b->ref_sampler, c->workload, c->threads,
							   c->hz);
			size_t rn = rc ? cell_values(cur, rc, b->ref_metric, buf) : 0;
			double rv = median_of(buf, rn);
			if (isnan(rv)) {
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "no %s %s in this cell to compare "
					 "with (%s:%d)", b->ref_sampler, b->ref_metric, cfg->name, b->line);
				continue;
			}
			limit = rv + b->value;
			fmt_value(rvs, sizeof(rvs), b->ref_metric, rv);
			snprintf(lim, sizeof(lim), "%s %s%+g = ", b->ref_sampler, rvs, b->value);
			size_t u = strlen(lim);
			fmt_value(lim + u, sizeof(lim) - u, b->metric, limit);
		}
		k->baseline = limit;
		if (n == 0) {
			k->state = GATE_WARN;
			snprintf(k->reason, sizeof(k->reason), "no values (%d failed, %d skipped runs) "
				 "for budget %s %s (%s:%d)", c->failed, c->skipped, op_names[b->op], lim,
				 cfg->name, b->line);
			continue;
		}
		int ok = op_holds(b->op, k->current, limit);
		char why[96] = "";
		if (b->sign_test) {
			/* A noisy timing metric (host stalls land in its tail): the budget fails
			 * only when the runs are over it more often than chance would make them. */
			int over = 0;
			n = cell_values(cur, c, b->metric, buf); /* buf held the reference */
			for (size_t j = 0; j < n; j++)
				over += !op_holds(b->op, buf[j], limit);
			double p = sign_test_p(over, (int)n);
			ok = !(2 * over > (int)n && p < cfg->alpha);
			k->p = p;
			snprintf(why, sizeof(why), ", %d of %zu runs over, sign test p=%.3f", over, n, p);
		}
		k->state = ok ? GATE_PASS : GATE_FAIL;
		snprintf(k->reason, sizeof(k->reason), "%s %s %s%s (%s:%d)",
			 ok ? "budget" : "OVER BUDGET", op_names[b->op], lim, why, cfg->name, b->line);
	}
}

static void host_warnings(const struct gate_side *base, const struct gate_side *cur,
			  struct gate_result *res)
{
	const struct sb_host *a = base->host, *b = cur->host;
	char diff[200] = "";
	size_t u = 0;

#define HOST_DIFF(cond, ...)                                                               \
	do {                                                                               \
		if ((cond) && u < sizeof(diff))                                            \
			u += (size_t)snprintf(diff + u, sizeof(diff) - u, __VA_ARGS__);    \
	} while (0)
	HOST_DIFF(strcmp(a->host, b->host), " host %s vs %s;", a->host, b->host);
	HOST_DIFF(strcmp(a->kernel, b->kernel), " kernel %s vs %s;", a->kernel, b->kernel);
	HOST_DIFF(a->nproc != b->nproc, " nproc %d vs %d;", a->nproc, b->nproc);
	HOST_DIFF(a->tick_hz != b->tick_hz, " tick %d Hz vs %d Hz;", a->tick_hz, b->tick_hz);
#undef HOST_DIFF
	if (u == 0 || res->nwarnings == (int)(sizeof(res->warnings) / sizeof(res->warnings[0])))
		return;
	if (diff[strlen(diff) - 1] == ';')
		diff[strlen(diff) - 1] = 0;
	snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
		 "baseline comes from another machine, comparisons may be meaningless:%.170s", diff);
}

int gate_eval(const struct gate_config *cfg, const struct gate_side *base,
	      const struct gate_side *cur, struct gate_result *res)
{
	struct cells cc = { 0 }, bc = { 0 };
	size_t cap = 0, maxruns;
	double *b1 = NULL, *b2 = NULL;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	maxruns = cur->nruns + (base ? base->nruns : 0) + 1;
	b1 = malloc(maxruns * sizeof(*b1));
	b2 = malloc(maxruns * sizeof(*b2));
	if (!b1 || !b2 || cells_build(cur, &cc) || (base && cells_build(base, &bc)))
		goto cleanup;
	if (base)
		host_warnings(base, cur, res);
	if (cur->host->tick_hz <= 0)
		snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			 "the current file has no kernel tick rate: budgets conditioned on hz<=tick "
			 "are not applied");

	for (size_t i = 0; i < cc.n; i++) {
		const struct cell *c = &cc.v[i];
		if (base) {
			const struct cell *b = cells_find(&bc, c->sampler, c->workload, c->threads, c->hz);
			if (b) {
				regression_checks(cfg, base, b, cur, c, res, &cap, b1, b2);
			} else {
				struct gate_check *k = add_check(res, &cap, c, GATE_MISSING, "-");
				if (!k)
					goto cleanup;
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "cell missing in the baseline");
			}
		}
		budget_checks(cfg, cur, &cc, c, res, &cap, b1);
	}
	for (size_t i = 0; base && i < bc.n; i++) {
		const struct cell *b = &bc.v[i];
		if (cells_find(&cc, b->sampler, b->workload, b->threads, b->hz))
			continue;
		struct gate_check *k = add_check(res, &cap, b, GATE_MISSING, "-");
		if (!k)
			goto cleanup;
		k->state = GATE_WARN;
		snprintf(k->reason, sizeof(k->reason), "cell missing in the current run");
	}
	for (size_t i = 0; i < res->nchecks; i++) {
		res->failed += res->checks[i].state == GATE_FAIL;
		res->warned += res->checks[i].state == GATE_WARN;
	}
	rc = 0;
cleanup:
	/* the checks copied every name they need: the cells can go */
	cells_free(&cc);
	cells_free(&bc);
	free(b1);
	free(b2);
	return rc;
}

void gate_result_free(struct gate_result *res)
{
	free(res->checks);
	memset(res, 0, sizeof(*res));
}

/* --- outputs --- */

static void fmt_cell(char *buf, size_t len, const struct gate_check *k)
{
	snprintf(buf, len, "%s/%s/%dt/%gHz", k->sampler, k->workload, k->threads, k->hz);
}

static const char *state_mark(enum gate_state s)
{
	return s == GATE_PASS ? "✓" : s == GATE_FAIL ? "✗" : "!";
}

/* The reference table: every sampler's medians next to the reference sampler's in the same
 * (workload, threads, hz). */
static void print_reference(FILE *out, const struct gate_config *cfg, const struct gate_side *cur)
{
	struct cells cs;
	double *buf;

	if (!cfg->reference[0] || cfg->ncompare == 0)
		return;
	buf = malloc((cur->nruns + 1) * sizeof(*buf));
	if (!buf || cells_build(cur, &cs)) {
		free(buf);
		return;
	}
	int header = 0;
	for (size_t i = 0; i < cs.n; i++) {
		const struct cell *r = &cs.v[i];
		if (strcmp(r->sampler, cfg->reference))
			continue;
		if (!header) {
			fprintf(out, "\nversus %s in the same run (medians; Δ = sampler - %s):\n",
				cfg->reference, cfg->reference);
			fprintf(out, "  %-28s", "cell");
			for (int m = 0; m < cfg->ncompare; m++)
				fprintf(out, " %24s", cfg->compare[m]);
			fputc('\n', out);
			header = 1;
		}
		for (size_t j = 0; j < cs.n; j++) {
			const struct cell *c = &cs.v[j];
			if (strcmp(c->workload, r->workload) || c->threads != r->threads || c->hz != r->hz)
				continue;
			char name[96];
			snprintf(name, sizeof(name), "%s/%s/%dt/%gHz", c->sampler, c->workload,
				 c->threads, c->hz);
			fprintf(out, "  %-28s", name);
			for (int m = 0; m < cfg->ncompare; m++) {
				const char *mn = cfg->compare[m];
				double v = median_of(buf, cell_values(cur, c, mn, buf));
				double rv = median_of(buf, cell_values(cur, r, mn, buf));
				char vs[32], ds[40], col[80];
				fmt_value(vs, sizeof(vs), mn, v);
				if (c == r || isnan(v) || isnan(rv))
					snprintf(ds, sizeof(ds), "%s", c == r ? "(ref)" : "");
				else if (is_ns_metric(mn))
					snprintf(ds, sizeof(ds), "Δ%+.1fµs", (v - rv) / 1e3);
				else
					snprintf(ds, sizeof(ds), "Δ%+.3f", v - rv);
				snprintf(col, sizeof(col), "%s %s", vs, ds);
				fprintf(out, " %24s", col);
			}
			fputc('\n', out);
		}
	}
	cells_free(&cs);
	free(buf);
}

/* Display width of UTF-8 s: continuation bytes take no column. */
static int display_width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Prints s padded with spaces to width columns, left or right aligned. */
static void pad(FILE *out, const char *s, int width, int left)
{
	int fill = width - display_width(s);
	if (left)
		fputs(s, out);
	for (; fill > 0; fill--)
		fputc(' ', out);
	if (!left)
		fputs(s, out);
}

/* The row's columns: baseline -> current, p, effect. */
static void fmt_row(const struct gate_check *k, char *bc, size_t bclen, char *pv, size_t pvlen,
		    char *ev, size_t evlen)
{
	char bv[32], cv[32];
	fmt_value(bv, sizeof(bv), k->metric, k->kind == GATE_BUDGET ? NAN : k->baseline);
	fmt_value(cv, sizeof(cv), k->metric, k->current);
	snprintf(bc, bclen, "%s → %s", bv, cv);
	if (isnan(k->p))
		snprintf(pv, pvlen, "-");
	else
		snprintf(pv, pvlen, "%.3f", k->p);
	if (isnan(k->effect))
		snprintf(ev, evlen, "-");
	else if (is_ns_metric(k->metric))
		snprintf(ev, evlen, "%+.1fµs", k->effect / 1e3);
	else
		snprintf(ev, evlen, "%+.3f", k->effect);
}

void gate_print(FILE *out, const struct gate_config *cfg, const struct gate_side *cur,
		const struct gate_result *res, int failures_only)
{
	size_t nreg = 0, nbud = 0, fail_reg = 0, fail_bud = 0, missing = 0, shown = 0;
	int wcell = 4, wmetric = 6, wbc = 18;

	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], bc[80], pv[16], ev[32];
		nreg += k->kind == GATE_REGRESSION;
		nbud += k->kind == GATE_BUDGET;
		fail_reg += k->kind == GATE_REGRESSION && k->state == GATE_FAIL;
		fail_bud += k->kind == GATE_BUDGET && k->state == GATE_FAIL;
		missing += k->kind == GATE_MISSING;
		if (failures_only && k->state == GATE_PASS)
			continue;
		fmt_cell(cell, sizeof(cell), k);
		fmt_row(k, bc, sizeof(bc), pv, sizeof(pv), ev, sizeof(ev));
		if (display_width(cell) > wcell)
			wcell = display_width(cell);
		if (display_width(k->metric) > wmetric)
			wmetric = display_width(k->metric);
		if (display_width(bc) > wbc)
			wbc = display_width(bc);
	}
	fputs("  ", out);
	pad(out, "cell", wcell, 1);
	fputs("  ", out);
	pad(out, "metric", wmetric, 1);
	fputs("  ", out);
	pad(out, "baseline → current", wbc, 0);
	fprintf(out, "  %6s  %9s  %s\n", "p", "effect", "reason");
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], bc[80], pv[16], ev[32];
		if (failures_only && k->state == GATE_PASS)
			continue;
		shown++;
		fmt_cell(cell, sizeof(cell), k);
		fmt_row(k, bc, sizeof(bc), pv, sizeof(pv), ev, sizeof(ev));
		fprintf(out, "%s ", state_mark(k->state));
		pad(out, cell, wcell, 1);
		fputs("  ", out);
		pad(out, k->metric, wmetric, 1);
		fputs("  ", out);
		pad(out, bc, wbc, 0);
		fprintf(out, "  %6s  ", pv);
		pad(out, ev, 9, 0);
		fprintf(out, "  %s\n", k->reason);
	}
	if (failures_only)
		fprintf(out, "(%zu passing checks not shown)\n", res->nchecks - shown);
	print_reference(out, cfg, cur);
	for (int i = 0; i < res->nwarnings; i++)
		fprintf(out, "\n!!! WARNING: %s\n", res->warnings[i]);
	fprintf(out, "\ngate: %s: %zu checks, %zu failed (%zu of %zu regression tests, %zu of %zu "
		"budgets), %zu warnings, %zu cells missing on one side\n",
		res->failed ? "FAIL" : "PASS", res->nchecks, res->failed, fail_reg, nreg, fail_bud,
		nbud, res->warned, missing);
}

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.17g", v);
}

static const char *kind_name(enum gate_kind k)
{
	return k == GATE_REGRESSION ? "regression" : k == GATE_BUDGET ? "budget" : "missing";
}

static const char *state_name(enum gate_state s)
{
	return s == GATE_PASS ? "pass" : s == GATE_FAIL ? "fail" : "warn";
}

/* Opens path.tmp; the caller writes and calls finish_tmp(). */
static FILE *open_tmp(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	snprintf(tmp, tmplen, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
	return f;
}

static int finish_tmp(FILE *f, const char *tmp, const char *path, char *err, size_t errlen)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		snprintf(err, errlen, "cannot write '%s'", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int gate_write_junit(const char *path, const struct gate_result *res, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f = open_tmp(path, tmp, sizeof(tmp), err, errlen);

	if (!f)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"sampbench gate\" tests=\"%zu\" failures=\"%zu\">\n",
		res->nchecks, res->failed);
	fprintf(f, "  <testsuite name=\"gate\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
		res->nchecks, res->failed, res->warned);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], name[256], bv[32], cv[32];
		fmt_cell(cell, sizeof(cell), k);
		snprintf(name, sizeof(name), "%s %s %s", kind_name(k->kind), k->metric, cell);
		fmt_value(bv, sizeof(bv), k->metric, k->baseline);
		fmt_value(cv, sizeof(cv), k->metric, k->current);
		fputs("    <testcase classname=\"", f);
		xml_escape(f, cell);
		fputs("\" name=\"", f);
		xml_escape(f, name);
		fputs("\"", f);
		if (k->state == GATE_PASS) {
			fputs("/>\n", f);
			continue;
		}
		fputs(">\n      <", f);
		fputs(k->state == GATE_FAIL ? "failure" : "skipped", f);
		fputs(" message=\"", f);
		xml_escape(f, k->reason);
		fprintf(f, "\">baseline %s, current %s</%s>\n    </testcase>\n", bv, cv,
			k->state == GATE_FAIL ? "failure" : "skipped");
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish_tmp(f, tmp, path, err, errlen);
}

int gate_write_json(const char *path, const struct gate_side *base, const struct gate_side *cur,
		    const struct gate_result *res, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f = open_tmp(path, tmp, sizeof(tmp), err, errlen);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"verdict\": \"%s\",\n  \"exit_code\": %d,\n", res->failed ? "fail" : "pass",
		res->failed ? 1 : 0);
	fputs("  \"current\": ", f);
	json_string(f, cur->path ? cur->path : "");
	fputs(",\n  \"baseline\": ", f);
	if (base)
		json_string(f, base->path ? base->path : "");
	else
		fputs("null", f);
	fprintf(f, ",\n  \"checks\": %zu,\n  \"failed\": %zu,\n  \"warned\": %zu,\n  \"warnings\": [",
		res->nchecks, res->failed, res->warned);
	for (int i = 0; i < res->nwarnings; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, res->warnings[i]);
	}
	fputs("],\n  \"results\": [\n", f);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		fputs("    {\"kind\": ", f);
		json_string(f, kind_name(k->kind));
		fputs(", \"state\": ", f);
		json_string(f, state_name(k->state));
		fputs(", \"sampler\": ", f);
		json_string(f, k->sampler);
		fputs(", \"workload\": ", f);
		json_string(f, k->workload);
		fprintf(f, ", \"threads\": %d, \"hz\": ", k->threads);
		json_num(f, k->hz);
		fputs(", \"metric\": ", f);
		json_string(f, k->metric);
		fputs(", \"baseline\": ", f);
		json_num(f, k->baseline);
		fputs(", \"current\": ", f);
		json_num(f, k->current);
		fputs(", \"p\": ", f);
		json_num(f, k->p);
		fputs(", \"effect\": ", f);
		json_num(f, k->effect);
		fprintf(f, ", \"n_baseline\": %d, \"n_current\": %d, \"reason\": ", k->nbase, k->ncur);
		json_string(f, k->reason);
		fprintf(f, "}%s\n", i + 1 < res->nchecks ? "," : "");
	}
	fputs("  ]\n}\n", f);
	return finish_tmp(f, tmp, path, err, errlen);
}
