/* ctimer.h - the per-thread CPU timer sampler (ctimer.c), for the samplers built on it. */
#ifndef SB_CTIMER_H
#define SB_CTIMER_H

#include "sampler/sampler.h"
#include "sampler/sigsample.h"

/* ctimer's start hook with its stacks walked by walk (NULL: by frame records, as `ctimer`
 * does). The other hooks are sampler_ctimer's. Returns 0 or -1 (errno set). */
int ctimer_start_walk(const struct sb_config *cfg, struct sb_sink *sink, sigsample_walk_fn walk);

#endif
