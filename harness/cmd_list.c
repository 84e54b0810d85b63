/* cmd_list.c - `sampbench list`: the samplers and workloads. */
#include <stdio.h>
#include <string.h>

#include "harness/cli.h"
#include "sampler/sampler.h"
#include "workloads/workload.h"

static const char *clock_name(enum sb_clock c)
{
	return c == SB_CLOCK_WALL ? "wall" : "cpu";
}

static const char list_usage[] =
	"usage: sampbench list\n"
	"\n"
	"Lists samplers (name, clock, notes) and workloads.\n"
	"\n";

const struct opt cmd_list_options[] = {
	OPT_HELP(),
	OPT_END(),
};

/* Prints the samplers (name, clock, description, notes) and the workloads. */
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
	return SB_EXIT_OK;
}
