/* gate_parse.c - the budgets language of the gate (ci/budgets; docs/gate.md): directives,
 * values with units, conditions, class selectors, host facts, expect lines; and its
 * vocabulary, which the rest of the gate uses (operators, metric names, pooled quantiles,
 * how a value is printed). */
#include "analysis/gate_int.h"
#include "core/conf_lex.h"
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"
#include "workloads/workload.h"

#define GATE_MAX_TEXT (1 << 20)

const char *const gate_var_names[V_NVARS] = { "threads", "hz", "cores", "tick", "workload",
					       "sampler", "build", "clock", "scope", "has",
					       "variant" };

const struct gate_cap_name gate_cap_names[GATE_NCAPS] = {
	{ "process_wide", SB_CAP_PROCESS_WIDE }, { "thread_ids", SB_CAP_THREAD_IDS },
	{ "weights", SB_CAP_WEIGHTS },           { "stacks", SB_CAP_STACKS },
	{ "stop_latency", SB_CAP_STOP_LATENCY }, { "suspend_window", SB_CAP_SUSPEND_WINDOW },
	{ "inline_frames", SB_CAP_INLINE_FRAMES }, { "cfi_stacks", SB_CAP_CFI_STACKS },
};

int gate_cap_find(const char *name, unsigned *cap)
{
	for (size_t i = 0; i < GATE_NCAPS; i++)
		if (!strcmp(name, gate_cap_names[i].name)) {
			*cap = gate_cap_names[i].cap;
			return 0;
		}
	return -1;
}

/* Cell-level counts that budgets can name like metrics. */
static const char *const pseudo_metrics[] = { "failed_runs", "skipped_runs", "lossy_runs" };
#define NPSEUDO ARRAY_SIZE(pseudo_metrics)

const char *const gate_op_names[6] = { "<=", ">=", "<", ">", "==", "!=" };

int gate_metric_index(const char *name)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		if (!strcmp(sb_metric_infos[i].name, name))
			return (int)i;
	return -1;
}

int gate_pseudo_index(const char *name)
{
	for (size_t i = 0; i < NPSEUDO; i++)
		if (!strcmp(pseudo_metrics[i], name))
			return (int)i;
	return -1;
}

int gate_is_ns_metric(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && !strcmp(name + n - 3, "_ns");
}

int gate_op_holds(enum gate_op op, double a, double b)
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

void gate_fmt_value(char *buf, size_t len, const char *metric, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (gate_is_ns_metric(metric))
		snprintf(buf, len, "%.1fµs", v / 1e3);
	else if (v == floor(v) && fabs(v) < 1e9)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* Quantile metrics judged on every sample of a cell pooled over its repetitions. */
const struct gate_pooled_metric gate_pooled_metrics[GATE_NPOOLED] = {
	{ "stop_latency_p50_ns", offsetof(struct sb_sample, stop_latency_ns), 0.5 },
	{ "stop_latency_p99_ns", offsetof(struct sb_sample, stop_latency_ns), 0.99 },
	{ "suspend_window_p50_ns", offsetof(struct sb_sample, suspend_window_ns), 0.5 },
	{ "suspend_window_p99_ns", offsetof(struct sb_sample, suspend_window_ns), 0.99 },
	{ "window_observed_p50_ns", GATE_OBSERVED_WINDOW, 0.5 },
	{ "window_observed_p99_ns", GATE_OBSERVED_WINDOW, 0.99 },
};

const struct gate_pooled_metric *gate_pooled_find(const char *m)
{
	for (size_t i = 0; i < GATE_NPOOLED; i++)
		if (!strcmp(gate_pooled_metrics[i].metric, m))
			return &gate_pooled_metrics[i];
	return NULL;
}

int is_pooled_metric(const char *m)
{
	return gate_pooled_find(m) != NULL;
}

/* --- config parsing --- */

/* Parses a number with an optional unit: ns, us, µs, ms, s (to ns) or % (to a fraction). */
static int parse_value(struct conf_lex *p, const char *s, double *out)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "%", 0.01 },
	};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return conf_err(p, "invalid number '%s'", s);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].suffix)) {
			*out = v * units[i].scale;
			return 0;
		}
	return conf_err(p, "unknown unit in '%s' (expected ns, us, ms, s or %%)", s);
}

static int check_metric(struct conf_lex *p, const char *m, int allow_pseudo)
{
	if (gate_metric_index(m) >= 0 || (allow_pseudo && gate_pseudo_index(m) >= 0))
		return 0;
	return conf_err(p, "unknown metric '%s' (see 'sampbench show --help')", m);
}

static int check_sampler(struct conf_lex *p, const char *s)
{
	if (strlen(s) >= GATE_NAME_LEN || !sampler_find(s))
		return conf_err(p, "unknown sampler '%s' (see 'sampbench list')", s);
	return 0;
}

static int parse_op(const char *s, enum gate_op *op)
{
	for (size_t i = 0; i < ARRAY_SIZE(gate_op_names); i++)
		if (!strcmp(s, gate_op_names[i])) {
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
		if (!strcmp(s, gate_var_names[i]))
			return i;
	return -1;
}

/* `threads<=cores`, `hz<=tick`, `hz>250`, `workload=skewed`, `sampler!=none`, `build=plain`. */
static int parse_cond(struct conf_lex *p, const char *s, struct gate_cond *c)
{
	size_t k = strcspn(s, "<>=!");
	char lhs[GATE_NAME_LEN], opbuf[3] = "", *rhs;

	if (k == 0 || k >= sizeof(lhs) || !s[k])
		return conf_err(p, "malformed condition '%s' (expected e.g. threads<=cores)", s);
	memcpy(lhs, s, k);
	lhs[k] = 0;
	size_t o = strspn(s + k, "<>=!");
	if (o > 2)
		return conf_err(p, "malformed condition '%s'", s);
	memcpy(opbuf, s + k, o);
	opbuf[o] = 0;
	rhs = (char *)s + k + o;
	memset(c, 0, sizeof(*c));
	if (parse_op(opbuf, &c->op))
		return conf_err(p, "unknown operator '%s' in condition '%s'", opbuf, s);
	c->lhs = var_index(lhs);
	if (c->lhs < 0)
		return conf_err(p, "unknown variable '%s' in condition '%s' (expected threads, hz, "
			       "cores, tick, workload, variant, sampler, build, clock, scope or has)",
			       lhs, s);
	if (!*rhs)
		return conf_err(p, "condition '%s' has no right side", s);
	if (IS_NAME_VAR(c->lhs)) {
		if (c->op != GATE_EQ && c->op != GATE_NE)
			return conf_err(p, "'%s' compares names: use = or !=", lhs);
		if (strlen(rhs) >= sizeof(c->name))
			return conf_err(p, "name too long in condition '%s'", s);
		snprintf(c->name, sizeof(c->name), "%s", rhs);
		c->rhs = -1;
		if (c->lhs == V_CLOCK && strcmp(rhs, "cpu") && strcmp(rhs, "wall"))
			return conf_err(p, "unknown clock '%s' (expected cpu or wall)", rhs);
		if (c->lhs == V_SCOPE && strcmp(rhs, "process") && strcmp(rhs, "thread"))
			return conf_err(p, "unknown scope '%s' (expected process or thread)", rhs);
		if (c->lhs == V_VARIANT && !workload_variant_known(rhs))
			return conf_err(p, "unknown variant '%s' (expected fp, nofp or inline)", rhs);
		if (c->lhs == V_HAS) {
			unsigned cap;
			if (strcmp(rhs, "tick") && gate_cap_find(rhs, &cap) != 0)
				return conf_err(p, "unknown capability '%s' (expected thread_ids, weights, "
					       "stacks, stop_latency, suspend_window or tick)", rhs);
		}
		return 0;
	}
	c->rhs = var_index(rhs);
	if (c->rhs >= 0 && IS_NAME_VAR(c->rhs))
		return conf_err(p, "cannot compare '%s' with a name", lhs);
	if (c->rhs < 0)
		return parse_value(p, rhs, &c->value);
	return 0;
}

#define MAX_TOKENS 48

static int parse_rule(struct conf_lex *p, struct gate_config *cfg, char **tok, int n)
{
	if (n < 4 || n > 5)
		return conf_err(p, "expected 'regress METRIC up|down|off-one MIN_EFFECT [MIN_REL%%]'");
	if (cfg->nrules == GATE_MAX_RULES)
		return conf_err(p, "too many regress rules (at most %d)", GATE_MAX_RULES);
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
		return conf_err(p, "unknown direction '%s' (expected up, down or off-one)", tok[2]);
	if (parse_value(p, tok[3], &r->min_abs))
		return -1;
	if (r->min_abs < 0)
		return conf_err(p, "minimum effect must be >= 0, got %s", tok[3]);
	if (n == 5) {
		size_t l = strlen(tok[4]);
		if (l < 2 || tok[4][l - 1] != '%')
			return conf_err(p, "relative minimum effect must be a percentage, got '%s'", tok[4]);
		if (parse_value(p, tok[4], &r->min_rel) || r->min_rel < 0)
			return r->min_rel < 0 ? conf_err(p, "relative minimum must be >= 0") : -1;
	}
	for (int i = 0; i < cfg->nrules; i++)
		if (!strcmp(cfg->rules[i].metric, r->metric))
			return conf_err(p, "second regress rule for '%s' (first on line %d)", r->metric,
				    cfg->rules[i].line);
	cfg->nrules++;
	return 0;
}

/* The modifiers after a budget's value and floor, from tok[i]: calm, sign-test [far V],
 * worst, per-run, in that order. Returns the index of the first token after them, or -1
 * after one error line. */
static int parse_modifiers(struct conf_lex *p, struct gate_budget *b, char **tok, int n, int i)
{
	b->far = NAN;
	if (i < n && !strcmp(tok[i], "calm")) {
		b->calm = 1;
		i++;
	}
	if (i < n && !strcmp(tok[i], "sign-test")) {
		b->sign_test = 1;
		i++;
	}
	if (i < n && !strcmp(tok[i], "far")) {
		/* every run beyond V fails on its size, however few the runs: a limit the
		 * test alone cannot reach with 3 runs */
		if (!b->sign_test)
			return conf_err(p, "'far' needs 'sign-test' before it");
		if (i + 1 >= n)
			return conf_err(p, "'far' needs a value after it");
		if (parse_value(p, tok[i + 1], &b->far))
			return -1;
		if (b->op == GATE_EQ || b->op == GATE_NE)
			return conf_err(p, "'far' needs an ordering operator (<=, >=, <, >)");
		if (!b->host_fact[0] && !b->ref_sampler[0] && gate_op_holds(b->op, b->far, b->value))
			return conf_err(p, "'far' value %s is not beyond the limit %s", tok[i + 1],
				    tok[4]);
		i += 2;
	}
	if (i < n && !strcmp(tok[i], "worst")) {
		if (b->sign_test)
			return conf_err(p, "'worst' and 'sign-test' exclude each other");
		b->worst = 1;
		i++;
	}
	if (i < n && !strcmp(tok[i], "per-run")) {
		if (b->sign_test || b->worst)
			return conf_err(p, "'per-run' excludes 'sign-test' and 'worst'");
		if (!is_pooled_metric(b->metric))
			return conf_err(p, "'per-run' needs a quantile metric pooled over samples, got "
				       "'%s'", b->metric);
		b->per_run = 1;
		i++;
	}
	return i;
}

static int parse_budget(struct conf_lex *p, struct gate_config *cfg, char **tok, int n,
			const char *text)
{
	if (n < 5)
		return conf_err(p, "expected 'budget SAMPLERS METRIC OP VALUE [floor host.F] [calm] "
			       "[sign-test [far V]|worst|per-run] [if COND...]'");
	if (cfg->nbudgets == GATE_MAX_BUDGETS)
		return conf_err(p, "too many budgets (at most %d)", GATE_MAX_BUDGETS);
	struct gate_budget *b = &cfg->budgets[cfg->nbudgets];
	memset(b, 0, sizeof(*b));
	b->line = p->line;
	snprintf(b->text, sizeof(b->text), "%.159s", text);

	if (strcmp(tok[1], "*")) {
		char list[512], *rest = list;
		snprintf(list, sizeof(list), "%s", tok[1]);
		for (char *s; (s = conf_word(&rest, ",")) != NULL;) {
			if (b->nsamplers == GATE_MAX_LIST)
				return conf_err(p, "too many samplers (at most %d)", GATE_MAX_LIST);
			if (check_sampler(p, s))
				return -1;
			snprintf(b->samplers[b->nsamplers++], GATE_NAME_LEN, "%s", s);
		}
		if (b->nsamplers == 0)
			return conf_err(p, "empty sampler list");
	}
	if (check_metric(p, tok[2], 1))
		return -1;
	snprintf(b->metric, sizeof(b->metric), "%s", tok[2]);
	if (parse_op(tok[3], &b->op))
		return conf_err(p, "unknown operator '%s' (expected <=, >=, <, >, == or !=)", tok[3]);

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
				return conf_err(p, "'%s' needs a number after it", tok[i]);
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
		if (i < n && !strcmp(tok[i], "*")) { /* 2.0 * host.rendezvous_p99_ns */
			if (i + 1 >= n || strncmp(tok[i + 1], "host.", 5) || !tok[i + 1][5])
				return conf_err(p, "'*' needs a host fact after it (e.g. 2.0 * "
					       "host.rendezvous_p99_ns)");
			snprintf(b->host_fact, sizeof(b->host_fact), "%.47s", tok[i + 1] + 5);
			i += 2;
		}
	}
	if (i < n && !strcmp(tok[i], "floor")) { /* floor [N *] host.rendezvous_p99_ns */
		char *end = NULL;
		b->floor_factor = 1.0;
		if (i + 3 < n && !strcmp(tok[i + 2], "*")) {
			b->floor_factor = strtod(tok[i + 1], &end);
			if (end == tok[i + 1] || *end || !(b->floor_factor > 0))
				return conf_err(p, "'floor' factor must be a positive number, got '%s'",
					    tok[i + 1]);
			i += 2;
		}
		if (i + 1 >= n || strncmp(tok[i + 1], "host.", 5) || !tok[i + 1][5])
			return conf_err(p, "'floor' needs a host fact after it (e.g. floor "
				       "host.rendezvous_p99_ns)");
		snprintf(b->floor_fact, sizeof(b->floor_fact), "%.47s", tok[i + 1] + 5);
		i += 2;
	}
	i = parse_modifiers(p, b, tok, n, i);
	if (i < 0)
		return -1;
	if (i < n) {
		if (strcmp(tok[i], "if"))
			return conf_err(p, "expected 'if', 'floor', 'calm', 'sign-test', 'far', "
				       "'worst', 'per-run' or the end of the line, got '%s'", tok[i]);
		if (++i == n)
			return conf_err(p, "'if' needs a condition");
		for (; i < n; i++) {
			if (b->nconds == GATE_MAX_CONDS)
				return conf_err(p, "too many conditions (at most %d)", GATE_MAX_CONDS);
			if (parse_cond(p, tok[i], &b->conds[b->nconds++]))
				return -1;
		}
	}
	cfg->nbudgets++;
	return 0;
}

/* `expect SAMPLER METRIC REASON...`: the sampler may be a plugin, so any name is taken. */
static int parse_expect(struct conf_lex *p, struct gate_config *cfg, char **tok, int n)
{
	if (n < 4)
		return conf_err(p, "expected 'expect SAMPLER METRIC REASON...' (the reason is required)");
	if (cfg->nexpects == GATE_MAX_EXPECTS)
		return conf_err(p, "too many expect lines (at most %d)", GATE_MAX_EXPECTS);
	if (strlen(tok[1]) >= GATE_NAME_LEN)
		return conf_err(p, "sampler name too long '%s'", tok[1]);
	if (check_metric(p, tok[2], 1))
		return -1;
	struct gate_expect *e = &cfg->expects[cfg->nexpects++];
	memset(e, 0, sizeof(*e));
	e->line = p->line;
	snprintf(e->sampler, sizeof(e->sampler), "%s", tok[1]);
	snprintf(e->metric, sizeof(e->metric), "%s", tok[2]);
	for (int i = 3, used = 0; i < n && used < (int)sizeof(e->reason); i++)
		used += snprintf(e->reason + used, sizeof(e->reason) - (size_t)used, "%s%s",
				 i > 3 ? " " : "", tok[i]);
	return 0;
}

int gate_config_parse(const char *text, const char *name, struct gate_config *cfg, char *err,
		      size_t errlen)
{
	struct conf_lex p;
	char *line;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->name = name;
	cfg->alpha = 0.05;
	if (conf_lex_open(&p, text, name, err, errlen) != 0)
		return -1;
	while ((line = conf_lex_next(&p)) != NULL) {
		char *tok[MAX_TOKENS], clean[512];
		conf_cut_comment(line);
		int n = conf_words(line, " \t", tok, MAX_TOKENS);
		if (n == 0)
			continue;
		if (n >= MAX_TOKENS) {
			conf_err(&p, "line too long");
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
		} else if (!strcmp(tok[0], "expect")) {
			if (parse_expect(&p, cfg, tok, n))
				goto cleanup;
		} else if (!strcmp(tok[0], "alpha")) {
			if (n != 2 || parse_value(&p, tok[1], &cfg->alpha) || !(cfg->alpha > 0) ||
			    cfg->alpha >= 1) {
				if (n != 2 || !(cfg->alpha > 0) || cfg->alpha >= 1)
					conf_err(&p, "expected 'alpha P' with 0 < P < 1");
				goto cleanup;
			}
		} else if (!strcmp(tok[0], "reference")) {
			if (n != 2) {
				conf_err(&p, "expected 'reference SAMPLER'");
				goto cleanup;
			}
			if (check_sampler(&p, tok[1]))
				goto cleanup;
			snprintf(cfg->reference, sizeof(cfg->reference), "%s", tok[1]);
		} else if (!strcmp(tok[0], "compare")) {
			if (n < 2 || n - 1 > GATE_MAX_LIST) {
				conf_err(&p, "expected 'compare METRIC...' (1 to %d metrics)", GATE_MAX_LIST);
				goto cleanup;
			}
			cfg->ncompare = 0;
			for (int i = 1; i < n; i++) {
				if (check_metric(&p, tok[i], 0))
					goto cleanup;
				snprintf(cfg->compare[cfg->ncompare++], GATE_NAME_LEN, "%s", tok[i]);
			}
		} else {
			conf_err(&p, "unknown directive '%s' (expected regress, budget, expect, alpha, "
				 "reference or compare)", tok[0]);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	conf_lex_close(&p);
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

