/* exec_perf.c - exec's outside mode: perf_event_open on the program's pid before it
 * execs (exec_ext.c), the rings drained into a sink here at every poll. */
#include <stdio.h>

#include "core/util.h"
#include "harness/exec_mode.h"

static int perf_prepare(struct exec_ctx *c)
{
	c->sink = sink_create(EXEC_SAMPLE_CAP, EXEC_FRAME_CAP / 4);
	if (!c->sink) {
		snprintf(c->err, sizeof(c->err), "cannot allocate the sink");
		return -1;
	}
	return 0;
}

static int perf_child(struct exec_ctx *c)
{
	(void)c;
	return 0;
}

static int perf_attach(struct exec_ctx *c)
{
	c->perf = exec_perf_open(c->pid, c->t->hz, c->err, sizeof(c->err));
	return c->perf ? 0 : -1;
}

static void perf_poll(struct exec_ctx *c)
{
	if (c->perf)
		exec_perf_drain(c->perf, c->sink);
}

static void perf_finish(struct exec_ctx *c)
{
	const char *names[16];
	double values[16];
	if (!c->perf)
		return;
	exec_perf_drain(c->perf, c->sink);
	int n = exec_perf_stats(c->perf, names, values, (int)ARRAY_SIZE(names));
	for (int i = 0; i < n; i++)
		run_add_stat(c->r, names[i], values[i]);
}

static void perf_cleanup(struct exec_ctx *c)
{
	exec_perf_close(c->perf);
	c->perf = NULL;
	sink_destroy(c->sink);
	c->sink = NULL;
}

const struct exec_mode exec_perf_mode = {
	"perf", perf_prepare, perf_child, perf_attach, perf_poll, perf_finish, perf_cleanup,
};
