/* tool_recipe.c - tool recipes (tool.h, docs/tools.md): the built-in ones, the parser of
 * the recipe format, `--tool NAME|FILE` resolution and the availability checks. */
#include "harness/tool.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gate.h"
#include "core/command_path.h"
#include "core/conf_lex.h"
#include "core/util.h"
#include "harness/cli.h"

#define RECIPE_MAX_TEXT (1 << 20)
#define RECIPE_MAX_RATE 20000.0 /* as `run --hz` */

/* What the perf record recipes share: how perf script's output is read, what perf
 * measures, what it needs here (they differ in the call-graph method and what it gives). */
#define PERF_RECORD_COMMON                                                                    \
	"format perf-script\n"                                                                \
	"clock cpu\n"                                                                         \
	"needs binary perf\n"                                                                 \
	"needs perf-events\n"

/* Each recipe is what a user would write in a file of their own (docs/tools.md). */
const char tool_builtin_recipes[] =
	"tool perf-record\n"
	"describe perf record, cpu-clock, frame-pointer call graphs, read through perf script\n"
	"command perf record -q -e cpu-clock -F {hz} --call-graph fp -o {out}.data -- {cmd} && "
	"perf script -i {out}.data -F comm,pid,tid,time,period,event,ip,sym,dso > {out}\n"
	"has thread_ids weights stacks\n"
	PERF_RECORD_COMMON
	"\n"
	/* perf script names the inlined functions of a PC it unwound by DWARF (--inline, the
	 * default of perf 6.1, said here for perf versions without that default); perf 6.1
	 * does so for no frame of a frame-pointer callchain, with --inline or not */
	"tool perf-record-dwarf\n"
	"describe perf record, cpu-clock, DWARF call graphs (16 KiB of stack a sample, unwound "
	"by perf script, inlined functions named)\n"
	"command perf record -q -e cpu-clock -F {hz} --call-graph dwarf,16384 -o {out}.data -- {cmd} "
	"&& perf script -i {out}.data --inline -F comm,pid,tid,time,period,event,ip,sym,dso > "
	"{out}\n"
	"has thread_ids weights stacks cfi_stacks inline_frames\n"
	PERF_RECORD_COMMON
	"\n"
	"tool gperftools-cpuprofile\n"
	"describe gperftools' libprofiler preloaded into the target, started by CPUPROFILE\n"
	"command env CPUPROFILE={out} CPUPROFILE_FREQUENCY={hz} "
	"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libprofiler.so.0 {cmd}\n"
	"format gperftools\n"
	"clock cpu\n"
	"has process_wide weights stacks tick\n"
	"needs file /usr/lib/x86_64-linux-gnu/libprofiler.so.0\n"
	"\n"
	"tool bpftrace\n"
	"describe bpftrace profile:hz, the thread id and user stack of each sample\n"
	"command bpftrace -q -o {out} -e 'profile:hz:{hz} /pid == cpid/ { "
	"printf(\"%s %d/%d %llu.%09llu: 1 profile:%s\\n\", comm, pid, tid, "
	"nsecs / 1000000000, nsecs % 1000000000, ustack(perf)); }' -c '{cmd}'\n"
	"format perf-script\n"
	"clock cpu\n"
	"has thread_ids stacks\n"
	"needs binary bpftrace\n"
	"needs root\n"
	"\n"
	/* sysprof-cli records the whole system through sysprofd, a D-Bus system service;
	 * the script brings a private system bus where the machine has none. sysprof 3.46
	 * samples each CPU every 1 ms of its cpu-clock (sysprof-perf-source.c; the script
	 * refuses where it would use the cycle counter instead), whatever --hz asks. */
	"tool sysprof\n"
	"describe sysprof-cli (sysprof 3.46, whole system, cpu-clock 1 ms a CPU), its capture "
	"read for the target's process\n"
	"command sh {tools}/sysprof-record.sh {out} {cmd}\n"
	"format sysprof\n"
	"clock cpu\n"
	"rate 1000\n"
	"has thread_ids stacks\n"
	"needs binary sysprof-cli\n"
	"needs root\n";

static const char *const placeholders[] = { "{hz}", "{out}", "{cmd}", "{pid}", "{duration}",
					     "{tools}" };

/* Every {...} of the template is a known placeholder, and {cmd} and {out} are there. */
static int check_template(struct conf_lex *p, const char *cmd)
{
	for (const char *b = strchr(cmd, '{'); b; b = strchr(b + 1, '{')) {
		const char *e = strchr(b, '}');
		int known = 0;
		for (size_t i = 0; e && i < ARRAY_SIZE(placeholders) && !known; i++)
			known = strncmp(b, placeholders[i], strlen(placeholders[i])) == 0;
		if (known)
			continue;
		/* a brace of the tool's own syntax (bpftrace's probe body) is no placeholder */
		if (!e || e - b > 12 || !isalpha((unsigned char)b[1]))
			continue;
		return conf_err(p, "unknown placeholder '%.*s' (expected {hz}, {out}, {cmd}, {pid}, "
			       "{duration} or {tools})", (int)(e - b + 1), b);
	}
	if (!!strstr(cmd, "{cmd}") == !!strstr(cmd, "{pid}") || !strstr(cmd, "{out}"))
		return conf_err(p, "the command needs {out} (the profile) and one of {cmd} (launch "
			       "the target) or {pid} (attach to it)");
	return 0;
}

static int parse_needs(struct conf_lex *p, struct tool *t, char *arg)
{
	char *what = conf_word(&arg, " \t"), *rest = conf_word(&arg, " \t");

	if (t->nneeds == TOOL_MAX_NEEDS)
		return conf_err(p, "more than %d needs", TOOL_MAX_NEEDS);
	struct tool_need *n = &t->needs[t->nneeds];
	if (what && (!strcmp(what, "binary") || !strcmp(what, "file"))) {
		if (!rest || conf_word(&arg, " \t") || strlen(rest) >= sizeof(n->arg))
			return conf_err(p, "'needs %s' takes one name", what);
		n->kind = !strcmp(what, "binary") ? NEED_BINARY : NEED_FILE;
		snprintf(n->arg, sizeof(n->arg), "%s", rest);
	} else if (what && !rest && (!strcmp(what, "root") || !strcmp(what, "perf-events"))) {
		n->kind = !strcmp(what, "root") ? NEED_ROOT : NEED_PERF_EVENTS;
	} else {
		return conf_err(p, "unknown need '%s' (expected binary NAME, file PATH, root or "
			       "perf-events)", what ? what : "");
	}
	t->nneeds++;
	return 0;
}

static int parse_has(struct conf_lex *p, struct tool *t, char *arg)
{
	for (char *w; (w = conf_word(&arg, " \t")) != NULL;) {
		unsigned cap;
		if (!strcmp(w, "tick"))
			t->as_sampler.flags |= SB_SAMPLER_TICK_DRIVEN;
		else if (gate_cap_find(w, &cap) == 0)
			t->as_sampler.caps |= cap;
		else
			return conf_err(p, "unknown capability '%s' (expected thread_ids, weights, "
				       "stacks, stop_latency, suspend_window, process_wide, "
				       "inline_frames, cfi_stacks or tick)", w);
	}
	return 0;
}

/* One "key value" line of the tool t. */
static int parse_line(struct conf_lex *p, struct tool *t, const char *key, char *arg)
{
	if (!strcmp(key, "describe")) {
		snprintf(t->description, sizeof(t->description), "%s", arg);
	} else if (!strcmp(key, "command")) {
		if (strlen(arg) >= sizeof(t->command))
			return conf_err(p, "command longer than %zu bytes", sizeof(t->command) - 1);
		snprintf(t->command, sizeof(t->command), "%s", arg);
		return check_template(p, arg);
	} else if (!strcmp(key, "format")) {
		if (!(t->format = import_format_find(arg)))
			return conf_err(p, "unknown format '%s' (pprof, perf-script, folded, speedscope, "
				       "firefox, gperftools or sysprof)", arg);
	} else if (!strcmp(key, "clock")) {
		if (strcmp(arg, "cpu") && strcmp(arg, "wall"))
			return conf_err(p, "unknown clock '%s' (expected cpu or wall)", arg);
		t->as_sampler.clock = !strcmp(arg, "wall") ? SB_CLOCK_WALL : SB_CLOCK_CPU;
	} else if (!strcmp(key, "attach")) {
		char *end;
		double v = strtod(arg, &end);
		if (end == arg || *end || !(v >= 0 && v <= 60))
			return conf_err(p, "attach takes seconds, 0..60 (not '%s')", arg);
		t->attach_s = v;
	} else if (!strcmp(key, "rate")) {
		char *end;
		double v = strtod(arg, &end);
		if (end == arg || *end || !(v > 0 && v <= RECIPE_MAX_RATE))
			return conf_err(p, "rate takes samples per second, above 0 and at most %g (not "
				       "'%s')", RECIPE_MAX_RATE, arg);
		t->rate_hz = v;
	} else if (!strcmp(key, "has")) {
		return parse_has(p, t, arg);
	} else if (!strcmp(key, "needs")) {
		return parse_needs(p, t, arg);
	} else {
		return conf_err(p, "unknown key '%s' (expected tool, describe, command, format, clock, "
			       "rate, attach, has or needs)", key);
	}
	return 0;
}

static int start_tool(struct conf_lex *p, struct tool *t, const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= sizeof(t->name) || strspn(name, "abcdefghijklmnopqrstuvwxyz"
					"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
		return conf_err(p, "bad tool name '%s' (letters, digits, '_', '.', '-')", name);
	if (sampler_find(name))
		return conf_err(p, "tool name '%s' is a sampler's", name);
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->as_sampler.name = t->name;
	t->as_sampler.description = t->description;
	t->as_sampler.clock = SB_CLOCK_CPU;
	t->as_sampler.flags = SB_SAMPLER_EXTERNAL;
	t->attach_s = 1;
	return 0;
}

static int end_tool(struct conf_lex *p, const struct tool *t, int line)
{
	p->line = line;
	if (!t->command[0] || !t->format)
		return conf_err(p, "tool '%s' has no %s", t->name, !t->command[0] ? "command" : "format");
	return 0;
}

int tool_recipes_parse(const char *text, const char *file, struct tool *out, size_t max,
		       size_t *n, char *err, size_t errlen)
{
	struct conf_lex p;
	char *s;
	struct tool *t = NULL;
	int tool_line = 0, rc = -1;

	if (conf_lex_open(&p, text, file, err, errlen) != 0)
		return -1;
	/* a comment is a whole line: '#' may be in a command */
	while ((s = conf_lex_next(&p)) != NULL) {
		s = conf_trim(s);
		if (!*s || *s == '#')
			continue;
		char *key = conf_word(&s, " \t"), *arg = s;
		while (isspace((unsigned char)*arg))
			arg++;
		if (!*arg) {
			conf_err(&p, "'%s' without a value", key);
			goto cleanup;
		}
		if (!strcmp(key, "tool")) {
			int here = p.line;
			if (t && end_tool(&p, t, tool_line) != 0)
				goto cleanup;
			p.line = here;
			for (size_t i = 0; i < *n; i++)
				if (!strcmp(out[i].name, arg)) {
					conf_err(&p, "tool '%s' given twice", arg);
					goto cleanup;
				}
			if (*n == max) {
				conf_err(&p, "more than %zu tools", max);
				goto cleanup;
			}
			t = &out[(*n)++];
			tool_line = p.line;
			if (start_tool(&p, t, arg) != 0)
				goto cleanup;
		} else if (!t) {
			conf_err(&p, "'%s' before the first 'tool NAME' line", key);
			goto cleanup;
		} else if (parse_line(&p, t, key, arg) != 0) {
			goto cleanup;
		}
	}
	if (!t) {
		p.line = 1;
		conf_err(&p, "no 'tool NAME' line");
		goto cleanup;
	}
	rc = end_tool(&p, t, tool_line);
cleanup:
	conf_lex_close(&p);
	return rc;
}

static char *read_text(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;

	if (!f) {
		snprintf(err, errlen, "cannot read recipe '%s': %s", path, strerror(errno));
		return NULL;
	}
	text = malloc(RECIPE_MAX_TEXT + 1);
	size_t len = text ? fread(text, 1, RECIPE_MAX_TEXT + 1, f) : 0;
	if (!text || ferror(f) || len > RECIPE_MAX_TEXT || memchr(text, 0, len)) {
		snprintf(err, errlen, "recipe '%s' is not a readable text file under 1 MiB", path);
		free(text);
		text = NULL;
	} else {
		text[len] = 0;
	}
	fclose(f);
	return text;
}

int tool_resolve(const char *spec, struct tool *out, size_t max, size_t *n, char *err,
		 size_t errlen)
{
	size_t len = strlen(spec);

	if (strchr(spec, '/') || (len > 7 && !strcmp(spec + len - 7, ".recipe"))) {
		char *text = read_text(spec, err, errlen);
		if (!text)
			return -1;
		int rc = tool_recipes_parse(text, spec, out, max, n, err, errlen);
		free(text);
		return rc;
	}
	struct tool builtin[TOOL_MAX];
	size_t nb = 0;
	if (tool_recipes_parse(tool_builtin_recipes, "built-in recipes", builtin, TOOL_MAX, &nb,
			       err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < nb; i++) {
		if (strcmp(builtin[i].name, spec))
			continue;
		for (size_t k = 0; k < *n; k++)
			if (!strcmp(out[k].name, spec)) {
				snprintf(err, errlen, "tool '%s' given twice", spec);
				return -1;
			}
		if (*n == max) {
			snprintf(err, errlen, "more than %zu tools", max);
			return -1;
		}
		out[*n] = builtin[i];
		/* the copy's own strings, not the stack's */
		out[*n].as_sampler.name = out[*n].name;
		out[*n].as_sampler.description = out[*n].description;
		(*n)++;
		return 0;
	}
	/* the names come from the recipes themselves */
	int off = snprintf(err, errlen, "unknown tool '%s' (", spec);
	for (size_t i = 0; i < nb && off > 0 && (size_t)off < errlen; i++)
		off += snprintf(err + off, errlen - (size_t)off, "%s, ", builtin[i].name);
	if (off > 0 && (size_t)off < errlen)
		snprintf(err + off, errlen - (size_t)off, "or a recipe file: ./NAME.recipe)");
	return -1;
}

/* The process's tools (tool_intern), each with the spec it came from. */
static struct tool pool[TOOL_POOL_MAX];
static char pool_spec[TOOL_POOL_MAX][512];
static size_t npool;

int tool_intern(const char *spec, const struct tool **out, size_t max, size_t *n, char *err,
		size_t errlen)
{
	static struct tool got[TOOL_MAX]; /* ~60 KiB: not on the stack */
	size_t ngot = 0;

	if (tool_resolve(spec, got, TOOL_MAX, &ngot, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < ngot; i++) {
		const struct tool *t = NULL;
		for (size_t k = 0; k < npool && !t; k++) {
			if (strcmp(pool[k].name, got[i].name))
				continue;
			if (strcmp(pool_spec[k], spec)) {
				snprintf(err, errlen, "tool '%s' comes from both '%s' and '%s'",
					 got[i].name, pool_spec[k], spec);
				return -1;
			}
			t = &pool[k];
		}
		if (!t) {
			if (npool == TOOL_POOL_MAX || strlen(spec) >= sizeof(pool_spec[0])) {
				snprintf(err, errlen, "more than %d tools, or a recipe path longer "
					 "than %zu bytes", TOOL_POOL_MAX, sizeof(pool_spec[0]) - 1);
				return -1;
			}
			pool[npool] = got[i];
			/* the pool's own strings, not the scratch copy's */
			pool[npool].as_sampler.name = pool[npool].name;
			pool[npool].as_sampler.description = pool[npool].description;
			snprintf(pool_spec[npool], sizeof(pool_spec[0]), "%s", spec);
			t = &pool[npool++];
		}
		for (size_t k = 0; k < *n; k++)
			if (out[k] == t) {
				snprintf(err, errlen, "tool '%s' given twice", t->name);
				return -1;
			}
		if (*n == max) {
			snprintf(err, errlen, "more than %zu tools", max);
			return -1;
		}
		out[(*n)++] = t;
	}
	return 0;
}

const struct tool *tool_of(const struct sampler *s)
{
	for (size_t k = 0; k < npool; k++)
		if (s == &pool[k].as_sampler)
			return &pool[k];
	return NULL;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *tool_metric_nan_reason(const char *metric, unsigned caps, int wall)
{
	if (!wall && (starts(metric, "wall_") || starts(metric, "offcpu_")))
		return "cpu clock in the recipe: no wall-clock shares";
	if (!(caps & SB_CAP_THREAD_IDS) &&
	    (!strcmp(metric, "thread_tvd") || !strcmp(metric, "wall_thread_tvd") ||
	     !strcmp(metric, "misattributed_fraction") ||
	     !strcmp(metric, "stack_correct_fraction") ||
	     !strcmp(metric, "stack_unwalkable_fraction")))
		return "no thread ids: the recipe has no thread_ids";
	if (!(caps & SB_CAP_WEIGHTS) && !strcmp(metric, "magnitude_error"))
		return "no sample weights: the recipe has no weights";
	if (!(caps & SB_CAP_STOP_LATENCY) && starts(metric, "stop_latency"))
		return "no stop latencies: the recipe has no stop_latency";
	if (!(caps & SB_CAP_SUSPEND_WINDOW) &&
	    (starts(metric, "suspend_window") || starts(metric, "window_")))
		return "no suspend windows: the recipe has no suspend_window";
	if (starts(metric, "sampler_cpu"))
		return "a tool's own CPU is tool_cpu_per_sample_ns";
	if (starts(metric, "pause_"))
		return "the target's truth has no thread pauses";
	return NULL;
}

/* kernel.perf_event_paranoid, or 99 when unreadable */
static int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

int tool_available(const struct tool *t, char *why, size_t len)
{
	for (int i = 0; i < t->nneeds; i++) {
		const struct tool_need *n = &t->needs[i];
		switch (n->kind) {
		case NEED_BINARY:
			if (!command_runnable(n->arg)) {
				snprintf(why, len, "%s not found on PATH", n->arg);
				return -1;
			}
			break;
		case NEED_FILE:
			if (access(n->arg, R_OK) != 0) {
				snprintf(why, len, "cannot read %s: %s", n->arg, strerror(errno));
				return -1;
			}
			break;
		case NEED_ROOT:
			if (geteuid() != 0) {
				snprintf(why, len, "needs root");
				return -1;
			}
			break;
		case NEED_PERF_EVENTS: {
			/* a process's own children, user and kernel: <= 1, or root */
			int v = perf_paranoid();
			if (geteuid() != 0 && v > 1) {
				snprintf(why, len, "perf_event_paranoid is %d (needs <= 1, or root)", v);
				return -1;
			}
			break;
		}
		}
	}
	return 0;
}
