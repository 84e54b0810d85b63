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
	"usage: sampbench list\n"
	"\n"
	"Lists samplers (name, clock, notes), workloads and the built-in tools (run --tool;\n"
	"docs/tools.md), each tool with why it cannot run here when it cannot.\n"
	"\n";

const struct opt cmd_list_options[] = {
	OPT_HELP(),
	OPT_END(),
};

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
		printf("  %-16s %-4s %s%s\n", s->name, clock_name(s->clock), s->description, notes);
	}
	printf("workloads:\n");
	for (size_t i = 0; workload_at(i); i++)
		printf("  %-16s %s\n", workload_at(i)->name, workload_at(i)->description);
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
