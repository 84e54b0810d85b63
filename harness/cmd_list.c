/* cmd_list.c - `sampbench list`: the samplers, workloads and built-in tools. */
#include <stdio.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/tool.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

static const char *clock_name(enum sb_clock c)
{
	return c == SB_CLOCK_WALL ? "wall" : "cpu";
}

static const char list_usage[] =
	"usage: sampbench list [--json]\n"
	"\n"
	"Lists samplers (name, clock, notes), workloads and the built-in tools (run --tool;\n"
	"docs/tools.md), each tool with why it cannot run here when it cannot. --json prints\n"
	"the sampler and workload tables instead, with each sampler's class (clock, flags,\n"
	"caps), in table order: what Python reads instead of lists of its own.\n"
	"\n";

static int list_json;

const struct opt cmd_list_options[] = {
	OPT_BOOLEAN(0, "json", &list_json, "the sampler and workload tables as one JSON object"),
	OPT_HELP(),
	OPT_END(),
};

/* Bit names of struct sampler's flags and caps, as --json prints them. */
static const struct {
	unsigned bit;
	const char *name;
} flag_names[] = {
	{ SB_SAMPLER_FAULT, "fault" },       { SB_SAMPLER_EXTERNAL, "external" },
	{ SB_SAMPLER_TICK_DRIVEN, "tick" },  { SB_SAMPLER_BASELINE, "baseline" },
	{ SB_SAMPLER_TEST, "test" },         { SB_SAMPLER_IN_PROCESS, "in-process" },
}, cap_names[] = {
	{ SB_CAP_PROCESS_WIDE, "process-wide" },   { SB_CAP_THREAD_IDS, "thread-ids" },
	{ SB_CAP_WEIGHTS, "weights" },             { SB_CAP_STACKS, "stacks" },
	{ SB_CAP_STOP_LATENCY, "stop-latency" },   { SB_CAP_SUSPEND_WINDOW, "suspend-window" },
	{ SB_CAP_INLINE_FRAMES, "inline-frames" }, { SB_CAP_CFI_STACKS, "cfi-stacks" },
};

/* Prints the names of the bits set in v as a JSON array. */
#define PRINT_BITS(v, names)                                                                \
	do {                                                                                \
		const char *sep_ = "";                                                      \
		putchar('[');                                                               \
		for (size_t k_ = 0; k_ < sizeof(names) / sizeof(names[0]); k_++)            \
			if ((v) & names[k_].bit) {                                          \
				printf("%s\"%s\"", sep_, names[k_].name);                   \
				sep_ = ", ";                                                \
			}                                                                   \
		putchar(']');                                                               \
	} while (0)

/* `list --json`: every table entry (test samplers too, flagged), names being plain
 * identifiers that need no escaping. Returns SB_EXIT_OK. */
static int list_tables_json(void)
{
	printf("{\"samplers\": [");
	for (size_t i = 0; sampler_at(i); i++) {
		const struct sampler *s = sampler_at(i);
		printf("%s\n  {\"name\": \"%s\", \"clock\": \"%s\", \"flags\": ", i ? "," : "",
		       s->name, clock_name(s->clock));
		PRINT_BITS(s->flags, flag_names);
		printf(", \"caps\": ");
		PRINT_BITS(s->caps, cap_names);
		putchar('}');
	}
	printf("],\n \"workloads\": [");
	for (size_t i = 0; workload_at(i); i++)
		printf("%s\"%s\"", i ? ", " : "", workload_at(i)->name);
	printf("]}\n");
	return SB_EXIT_OK;
}

/* Prints the samplers (name, clock, description, notes), the workloads and the tools. */
int cmd_list(int argc, char **argv)
{
	int first = opt_parse("list", cmd_list_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(list_usage, stdout);
		opt_help(stdout, cmd_list_options);
		return SB_EXIT_OK;
	}
	if (first < 0)
		return SB_EXIT_USAGE;
	if (opt_operands("list", argv, first, argc, 0, 0, "") != 0)
		return SB_EXIT_USAGE;
	if (list_json)
		return list_tables_json();
	printf("samplers:\n");
	for (size_t i = 0; sampler_at(i); i++) {
		const struct sampler *s = sampler_at(i);
		if (s->flags & SB_SAMPLER_TEST)
			continue;
		char notes[64] = "";
		if (s->flags & SB_SAMPLER_FAULT)
			strcat(notes, " [fault]");
		if (s->flags & SB_SAMPLER_TICK_DRIVEN)
			strcat(notes, " [tick]");
		if (s->flags & SB_SAMPLER_EXTERNAL)
			strcat(notes, " [external]");
		if (s->flags & SB_SAMPLER_IN_PROCESS)
			strcat(notes, " [in-process]");
		printf("  %-16s %-4s %s%s\n", s->name, clock_name(s->clock), s->description, notes);
	}
	printf("workloads:\n");
	for (size_t i = 0; workload_at(i); i++) {
		const struct workload *w = workload_at(i);
		printf("  %-16s %s%s%s%s\n", w->name, w->description, w->variant ? " [" : "",
		       w->variant ? w->variant : "", w->variant ? " build]" : "");
	}
	struct tool tools[TOOL_MAX];
	size_t n = 0;
	char err[256];
	if (tool_recipes_parse(tool_builtin_recipes, "built-in recipes", tools, TOOL_MAX, &n, err,
			       sizeof(err)) != 0) {
		sb_err("%s", err);
		return SB_EXIT_FAIL;
	}
	printf("tools:\n");
	for (size_t i = 0; i < n; i++) {
		char why[SB_REASON_LEN] = "", notes[SB_REASON_LEN + 16] = "";
		if (tools[i].as_sampler.flags & SB_SAMPLER_TICK_DRIVEN)
			strcat(notes, " [tick]");
		if (tool_available(&tools[i], why, sizeof(why)) != 0)
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes),
				 " [not here: %s]", why);
		printf("  %-22s %-4s %s%s\n", tools[i].name, clock_name(tools[i].as_sampler.clock),
		       tools[i].description, notes);
	}
	return SB_EXIT_OK;
}
