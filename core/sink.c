/* sink.c - the preallocated, lock-free sample store. */
#include "core/sample.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

struct sb_sink *sink_create(size_t sample_cap, size_t frame_cap)
{
	size_t hdr = (sizeof(struct sb_sink) + 63) & ~(size_t)63;
	size_t len = hdr + sample_cap * sizeof(struct sb_sample) + frame_cap * sizeof(uint64_t);
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	struct sb_sink *s = mem;
	s->sample_cap = sample_cap;
	s->frame_cap = frame_cap;
	s->samples = (struct sb_sample *)((char *)mem + hdr);
	s->frames = (uint64_t *)(s->samples + sample_cap);
	atomic_init(&s->nsamples, 0);
	atomic_init(&s->nframes, 0);
	atomic_init(&s->dropped, 0);
	return s;
}

void sink_destroy(struct sb_sink *s)
{
	if (!s)
		return;
	size_t hdr = (sizeof(struct sb_sink) + 63) & ~(size_t)63;
	munmap(s, hdr + s->sample_cap * sizeof(struct sb_sample) + s->frame_cap * sizeof(uint64_t));
}

/* Reserves the frame range first: a sample slot is only published with valid frames. A
 * frame range reserved for a sample that then finds no slot is wasted, which is fine. */
int sink_push(struct sb_sink *sink, const struct sb_sample *s, const uint64_t *frames,
	      uint32_t depth)
{
	size_t f = atomic_fetch_add_explicit(&sink->nframes, depth, memory_order_relaxed);
	if (f + depth > sink->frame_cap) {
		atomic_fetch_add_explicit(&sink->dropped, 1, memory_order_relaxed);
		return -1;
	}
	size_t i = atomic_fetch_add_explicit(&sink->nsamples, 1, memory_order_relaxed);
	if (i >= sink->sample_cap) {
		atomic_fetch_add_explicit(&sink->dropped, 1, memory_order_relaxed);
		return -1;
	}
	for (uint32_t k = 0; k < depth; k++)
		sink->frames[f + k] = frames[k];
	struct sb_sample *dst = &sink->samples[i];
	*dst = *s;
	dst->depth = depth;
	dst->frame_offset = f;
	return 0;
}

size_t sink_count(const struct sb_sink *sink)
{
	size_t n = atomic_load(&sink->nsamples);
	return n < sink->sample_cap ? n : sink->sample_cap;
}

struct sb_sample sample_unknown(void)
{
	struct sb_sample s;
	memset(&s, 0, sizeof(s));
	s.tid = -1;
	s.thread_index = -1;
	s.weight_ns = NAN;
	s.stop_latency_ns = NAN;
	s.suspend_window_ns = NAN;
	return s;
}

uint64_t sb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sb_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sb_process_cpu_ns(uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}
