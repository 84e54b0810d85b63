/* live_run.h - a run a test holds, freed by the group teardown even when an assert
 * longjmps out of the test, so a sanitizer build reports the failure and not a leak. */
#ifndef SB_TEST_LIVE_RUN_H
#define SB_TEST_LIVE_RUN_H

#include "core/run.h"

/* Set it to the run the test fills; free_live_run() frees it (run_free) and clears it. */
extern struct sb_run *live_run;

/* A cmocka teardown: frees live_run. Returns 0. */
int free_live_run(void **state);

#endif
