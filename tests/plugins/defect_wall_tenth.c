/* defect_wall_tenth.c - test plugin: defect_wall_hold.c's holds (1.2 ms per thread per
 * tick), reported as a tenth of what they were: the threads' progress clocks see the
 * whole hold, so under-reporting must not turn its twin's failure into a pass.
 * gate-expects: window_ */
#define DEFECT_NAME "defect-wall-tenth"
#define DEFECT_DESC "DEFECT: wall sampler holding each thread 1.2 ms per tick, reports a tenth"
#define WALL_HOLD_US 1200
#define WALL_REPORT(held_ns) ((held_ns) / 10)
#include "tests/plugins/wall_hold_base.h"
