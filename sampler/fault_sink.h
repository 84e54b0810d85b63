/* fault_sink.h - edits a healthy sampler's samples after it stopped, for the fault samplers
 * (sampler/fault_*.c). Each fault wraps a healthy sampler's struct sampler: it remembers
 * where the sink stood at start and, once the wrapped stop() has returned (no sample can
 * be written any more), breaks what the healthy code recorded. Nothing here runs in a
 * signal handler. */
#ifndef SB_FAULT_SINK_H
#define SB_FAULT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"

/* Deterministic pseudo-random value from (seed, a, b). */
uint64_t fault_hash(uint64_t seed, uint64_t a, uint64_t b);

/* Removes each sample at index >= from with probability fraction; returns how many. */
size_t fault_sink_drop(struct sb_sink *sink, size_t from, double fraction, uint64_t seed);

/* Replaces each frame of the samples at index >= from, with probability 1/one_in, by a
 * frame of an earlier sample of another thread (a walk that strayed onto a foreign
 * stack): a leaf by that thread's leaf, a caller by the frame one above it. Returns the
 * number of frames changed. */
size_t fault_sink_corrupt(struct sb_sink *sink, size_t from, unsigned one_in, uint64_t seed);

/* Adds ns to the suspend window of every sample at index >= from that stopped its
 * thread (not SB_SAMPLE_REUSED). Returns how many. */
size_t fault_sink_add_window(struct sb_sink *sink, size_t from, double ns);

#endif
