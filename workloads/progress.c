/* progress.c - the progress clock (progress.h). */
#include "workloads/progress.h"

#include <stddef.h>

#include "workloads/workload.h"

struct wl_progress {
	struct wl_pauses *slot; /* NULL: no clock */
	uint64_t last_ns;       /* previous tick; 0 at the start of a compute phase */
	uint64_t step_ns;       /* shortest step so far */
	uint64_t active_ns, steps;
};

static __thread struct wl_progress wl_prog;

void wl_progress_begin(struct wl_ctx *ctx, int index)
{
	wl_prog = (struct wl_progress){
		.slot = ctx->pauses && index >= 0 && index < WL_PAUSE_SLOTS ? &ctx->pauses[index] : NULL,
		.step_ns = UINT64_MAX,
	};
}

void wl_progress_end(void)
{
	struct wl_pauses *p = wl_prog.slot;

	if (!p)
		return;
	atomic_fetch_add_explicit(&p->active_ns, wl_prog.active_ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->steps, wl_prog.steps, memory_order_relaxed);
	uint64_t old = atomic_load_explicit(&p->step_ns, memory_order_relaxed);
	if (wl_prog.steps && (old == 0 || wl_prog.step_ns < old))
		atomic_store_explicit(&p->step_ns, wl_prog.step_ns, memory_order_relaxed);
	wl_prog.slot = NULL;
}

/* The slow path: one pause of the slot. */
static __attribute__((noinline)) void wl_progress_record(struct wl_pauses *p, uint64_t start,
							 uint64_t gap, uint64_t pause)
{
	atomic_fetch_add_explicit(&p->pauses, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->pause_ns, pause, memory_order_relaxed);
	atomic_fetch_add_explicit(&p->hist[sb_pause_bucket(pause)], 1, memory_order_relaxed);
	uint64_t i = atomic_fetch_add_explicit(&p->logged, 1, memory_order_relaxed);
	if (i < WL_PAUSE_LOG)
		p->log[i] = (struct wl_gap){ start, gap, pause };
}

void wl_progress_tick(void)
{
	struct wl_progress *w = &wl_prog;

	if (!w->slot)
		return;
	uint64_t now = sb_now_ns();
	if (w->last_ns) {
		uint64_t d = now - w->last_ns;
		if (d < w->step_ns)
			w->step_ns = d;
		else if (d - w->step_ns >= SB_PAUSE_MIN_NS)
			wl_progress_record(w->slot, w->last_ns, d, d - w->step_ns);
		w->active_ns += d;
		w->steps++;
	}
	w->last_ns = now;
}

void wl_progress_idle(void)
{
	wl_prog.last_ns = 0;
}
