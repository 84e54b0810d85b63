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

int cmd_list(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: sampbench list\n\nLists samplers (name, clock, notes) and workloads.\n");
		return SB_EXIT_OK;
	}
	if (argc > 1) {
		sb_err("unexpected argument '%s' (see 'sampbench list --help')", argv[1]);
		return SB_EXIT_USAGE;
	}
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
