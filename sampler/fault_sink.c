/* fault_sink.c - post-stop edits of a sink for the fault samplers. */
#include "sampler/fault_sink.h"

#include <math.h>
#include <stdatomic.h>

uint64_t fault_hash(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t x = seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Uniform in [0, 1) from a hash. */
static double unit(uint64_t h)
{
	return (double)(h >> 11) / 9007199254740992.0;
}

size_t fault_sink_drop(struct sb_sink *sink, size_t from, double fraction, uint64_t seed)
{
	size_t n = sink_count(sink), kept = from, dropped = 0;

	for (size_t i = from; i < n; i++) {
		if (unit(fault_hash(seed, i, 0)) < fraction) {
			dropped++;
			continue;
		}
		/* frames stay where they are: frame_offset still points at them */
		sink->samples[kept++] = sink->samples[i];
	}
	atomic_store(&sink->nsamples, kept);
	return dropped;
}

size_t fault_sink_corrupt(struct sb_sink *sink, size_t from, unsigned one_in, uint64_t seed)
{
	size_t n = sink_count(sink), nf = atomic_load(&sink->nframes), changed = 0;

	if (one_in == 0)
		return 0;
	if (nf > sink->frame_cap)
		nf = sink->frame_cap;
	for (size_t i = from; i < n; i++) {
		const struct sb_sample *s = &sink->samples[i];
		if (s->frame_offset + s->depth > nf)
			continue;
		for (uint32_t d = 0; d < s->depth; d++) {
			if (fault_hash(seed, i, d + 1) % one_in)
				continue;
			/* The leaf comes from the other thread's leaf (the sample is charged to
			 * the wrong function); a caller from one frame further up the other stack
			 * (the walk skipped a frame, so the expected chain breaks). Threads of one
			 * workload share their callers: same-depth frames would often be equal. */
			uint32_t src = d == 0 ? 0 : d + 1;
			for (size_t k = i; k-- > from;) {
				const struct sb_sample *o = &sink->samples[k];
				if (o->tid == s->tid || o->depth <= src || o->frame_offset + o->depth > nf)
					continue;
				uint64_t pc = sink->frames[o->frame_offset + src];
				if (pc != sink->frames[s->frame_offset + d]) {
					sink->frames[s->frame_offset + d] = pc;
					changed++;
				}
				break;
			}
		}
	}
	return changed;
}

size_t fault_sink_add_window(struct sb_sink *sink, size_t from, double ns)
{
	size_t n = sink_count(sink), k = 0;

	for (size_t i = from; i < n; i++) {
		struct sb_sample *s = &sink->samples[i];
		if (s->flags & SB_SAMPLE_REUSED)
			continue;
		s->suspend_window_ns = (isnan(s->suspend_window_ns) ? 0 : s->suspend_window_ns) + ns;
		k++;
	}
	return k;
}
