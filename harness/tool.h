/* tool.h - profilers that are programs (perf record, gperftools through CPUPROFILE,
 * bpftrace), scored from the profile they write. Each is described by a recipe, text in
 * the format of docs/tools.md: the command that runs `sampbench target` under the tool, the
 * importer that reads its output, its class for the gate, and what it needs to run here.
 * `sampbench run --tool NAME` runs it beside the samplers, into the same file (issue 24). */
#ifndef SB_TOOL_H
#define SB_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/import.h"
#include "core/run.h"
#include "harness/runner.h"
#include "sampler/sampler.h"

#define TOOL_MAX 16        /* tools one `run` takes, built-in and from files together */
#define TOOL_POOL_MAX 32   /* tools one process resolves (tool_intern): a run or a matrix */
#define TOOL_MAX_NEEDS 8
#define TOOL_CMD_LEN 1024

enum tool_need_kind { NEED_BINARY, NEED_FILE, NEED_ROOT, NEED_PERF_EVENTS };

struct tool_need {
	enum tool_need_kind kind;
	char arg[256]; /* the binary or the file */
};

struct tool {
	/* What `run`, the session and the gate see: name, clock, flags (external, tick
	 * driven), caps. No start or stop: tool_run runs it. */
	struct sampler as_sampler;
	char name[SB_NAME_LEN];
	char description[128];
	char command[TOOL_CMD_LEN]; /* the template, {hz} {out} {cmd} {pid} {duration} {tools} */
	double attach_s;            /* {pid}: the target starts this long after the command */
	double rate_hz;             /* `rate`: the tool's own fixed rate ({hz} unused); 0 none */
	const struct import_format *format;
	struct tool_need needs[TOOL_MAX_NEEDS];
	int nneeds;
};

/* The built-in recipes (perf-record, perf-record-dwarf, gperftools-cpuprofile, bpftrace,
 * sysprof) as recipe text: the one list of built-in tools. */
extern const char tool_builtin_recipes[];

/* Parses recipe text (named file in errors) into out[*n ..max), advancing *n. Returns 0,
 * or -1 with one line "file:line: message" in err. */
int tool_recipes_parse(const char *text, const char *file, struct tool *out, size_t max,
		       size_t *n, char *err, size_t errlen);

/* Adds the tools `spec` names to out[*n ..max): a built-in name, or a recipe file (a name
 * with a '/' or ending in ".recipe": every tool in it). Returns 0, or -1 with one line in
 * err (unknown name, unreadable file, syntax error, too many tools). */
int tool_resolve(const char *spec, struct tool *out, size_t max, size_t *n, char *err,
		 size_t errlen);

/* Resolves spec as tool_resolve does into the process's tool pool, where tool_of finds a
 * tool by its sampler, and appends a pointer to each tool it names to out[*n ..max). The
 * pool owns the tools until the process ends; a name already pooled from the same spec is
 * that tool again (matrix blocks may name a tool each), from another spec an error.
 * Returns 0, or -1 with one line in err. */
int tool_intern(const char *spec, const struct tool **out, size_t max, size_t *n, char *err,
		size_t errlen);

/* The pooled tool (tool_intern) whose sampler s is, or NULL for a sampler. */
const struct tool *tool_of(const struct sampler *s);

/* Runs spec under its tool when its sampler is a pooled tool's (tool_run), else in the
 * runner's child (runner_run); the same contract as both. */
int tool_or_runner_run(const struct run_spec *spec, int64_t run_id, struct sb_run *r);

/* Why a tool's run cannot give metric, from its recipe's class: caps (the `has` bits, as
 * the run's class_caps stat) and wall (clock wall). Returns one line, or NULL when the
 * class does not rule the metric out (a NaN then has a reason of the workload or data). */
const char *tool_metric_nan_reason(const char *metric, unsigned caps, int wall);

/* 0 when everything t needs is here; else -1 with why (one line). */
int tool_available(const struct tool *t, char *why, size_t len);

/* Runs spec's workload as `sampbench target` under t's command and scores the profile it
 * wrote against the target's truth into r (as runner_run: r owns its arrays; an
 * unavailable tool is a skipped run, a failing one a failed run with the reason). Returns
 * 0 when r holds a record, -1 when the harness itself failed. */
int tool_run(const struct tool *t, const struct run_spec *spec, int64_t run_id,
	     struct sb_run *r);

#endif
