/* live_run.c - the run a test holds (live_run.h). */
#include "tests/support/live_run.h"

#include <stddef.h>

struct sb_run *live_run;

int free_live_run(void **state)
{
	(void)state;
	if (live_run)
		run_free(live_run);
	live_run = NULL;
	return 0;
}
