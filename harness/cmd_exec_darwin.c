/* cmd_exec_darwin.c - `sampbench exec` on Darwin: refused. exec scores a foreign program
 * against per-thread CPU truth from /proc, samples it through an LD_PRELOAD agent and
 * perf_event_open; Darwin has none of the three (docs/darwin.md). */
#include <stdio.h>

#include "harness/cli.h"

/* Prints why and returns 2 (usage: the command does not exist on this platform). */
int cmd_exec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "sampbench: exec is not supported on darwin (it needs /proc, "
			"LD_PRELOAD and perf_event_open)\n");
	return 2;
}
