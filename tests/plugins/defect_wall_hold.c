/* defect_wall_hold.c - test plugin: a wall sampler that keeps every thread 1.2 ms at every
 * tick (its handler spins) and reports that honestly; its under-reporting twin is
 * defect_wall_tenth.c. Same holds, both must fail (docs/gate.md "Observed pauses").
 * gate-expects: suspend_window */
#define DEFECT_NAME "defect-wall-hold"
#define DEFECT_DESC "DEFECT: wall sampler holding each thread 1.2 ms per tick, reported"
#define WALL_HOLD_US 1200
#define WALL_REPORT(held_ns) (held_ns)
#include "tests/plugins/wall_hold_base.h"
