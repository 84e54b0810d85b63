/* plugin.c - drives a sampler from a shared object through the ABI of
 * sampler/sampbench_sampler.h.
 *
 * struct sampler has no context argument, so each loaded plugin gets a slot with its own
 * set of small forwarding functions (generated below); the harness sees an ordinary
 * struct sampler. The sink handed to the plugin wraps the harness's sink: push() converts
 * the plugin's sample to struct sb_sample and calls sink_push(), both async-signal-safe.
 * This file is also linked into the LD_PRELOAD agent, so it writes errors to stderr itself
 * instead of using the CLI helpers. */
#include "sampler/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/fpwalk.h"
#include "sampler/sampbench_sampler.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"

struct plugin_slot {
	char path[PATH_MAX];
	void *handle;
	const struct sampbench_sampler *p;
	struct sampler s;             /* what the harness calls */
	struct sb_sink *sink;         /* the harness's sink, set by start() */
	struct sampbench_sink psink;  /* what the plugin pushes into */
	unsigned abi;                 /* the plugin's ABI version (1 or 2) */
};

/* The ABI's class bits are sampbench's own, so a plugin's caps need no translation. */
_Static_assert((unsigned)SAMPBENCH_CAP_PROCESS_WIDE == (unsigned)SB_CAP_PROCESS_WIDE &&
		       (unsigned)SAMPBENCH_CAP_THREAD_IDS == (unsigned)SB_CAP_THREAD_IDS &&
		       (unsigned)SAMPBENCH_CAP_WEIGHTS == (unsigned)SB_CAP_WEIGHTS && (unsigned)SAMPBENCH_CAP_STACKS == (unsigned)SB_CAP_STACKS &&
		       (unsigned)SAMPBENCH_CAP_STOP_LATENCY == (unsigned)SB_CAP_STOP_LATENCY &&
		       (unsigned)SAMPBENCH_CAP_SUSPEND_WINDOW == (unsigned)SB_CAP_SUSPEND_WINDOW &&
		       (unsigned)SAMPBENCH_CAP_CFI_STACKS == (unsigned)SB_CAP_CFI_STACKS,
	       "class bits of sampbench_sampler.h and sampler.h differ");

/* sizeof(struct sampbench_sampler) in ABI version 1: everything before `caps`. */
#define PLUGIN_V1_SIZE offsetof(struct sampbench_sampler, caps)

static struct plugin_slot slots[SB_MAX_PLUGINS];
static int nslots;

/* ---- the sink as the plugin sees it ---- */

static int psink_push(void *ctx, const struct sampbench_sample *ps)
{
	struct sb_sink *sink = ctx;
	struct sb_sample s = sample_unknown();
	uint32_t depth = ps->depth;

	s.time_ns = ps->time_ns;
	s.tid = ps->tid;
	s.thread_index = ps->thread_index;
	s.weight_ns = ps->weight_ns;
	s.stop_latency_ns = ps->stop_latency_ns;
	s.suspend_window_ns = ps->suspend_window_ns;
	s.flags = ps->flags & (SB_SAMPLE_TRUNCATED | SB_SAMPLE_RAN | SB_SAMPLE_WALK_ERROR |
			       SB_SAMPLE_REUSED);
	if (depth > SB_MAX_FRAMES) {
		depth = SB_MAX_FRAMES;
		s.flags |= SB_SAMPLE_TRUNCATED;
	}
	if (!ps->frames)
		depth = 0;
	return sink_push(sink, &s, ps->frames, depth);
}

static void psink_self(int32_t *tid, int32_t *index, uint64_t *lo, uint64_t *hi)
{
	if (tid)
		*tid = sb_gettid();
	if (index)
		*index = sb_self_index;
	if (lo)
		*lo = sb_self_bounds.lo;
	if (hi)
		*hi = sb_self_bounds.hi;
}

static uint32_t psink_walk(const void *uc, uint64_t *pcs, uint32_t max, uint32_t *flags)
{
	struct sb_regs regs;
	uint32_t depth = 0;

	if (flags)
		*flags = 0;
	if (!uc || !pcs || max == 0)
		return 0;
	regs_from_ucontext(uc, &regs);
	enum sb_walk_end end = fp_walk(&regs, &sb_self_bounds, pcs, max, &depth, NULL, NULL);
	if (flags && end == SB_WALK_TRUNCATED)
		*flags = SAMPBENCH_SAMPLE_TRUNCATED;
	else if (flags && end != SB_WALK_OK)
		*flags = SAMPBENCH_SAMPLE_WALK_ERROR;
	return depth;
}

/* ---- forwarding from struct sampler to the plugin ---- */

static int slot_available(struct plugin_slot *sl, char *why, size_t len)
{
	return sl->p->available ? sl->p->available(why, len) : 0;
}

static int slot_start(struct plugin_slot *sl, const struct sb_config *cfg, struct sb_sink *sink)
{
	struct sampbench_config pc = {
		.struct_size = sizeof(pc),
		.hz = cfg->hz,
		.threads = cfg->threads,
		.duration_s = cfg->duration_s,
		.seed = cfg->seed,
		.max_depth = cfg->max_depth,
	};
	sl->sink = sink;
	sl->psink = (struct sampbench_sink){
		.abi_version = SAMPBENCH_SAMPLER_ABI,
		.struct_size = sizeof(sl->psink),
		.ctx = sink,
		.push = psink_push,
		.now_ns = sb_now_ns,
		.self = psink_self,
		.walk_ucontext = psink_walk,
	};
	return sl->p->start(&pc, &sl->psink);
}

static int slot_stop(struct plugin_slot *sl)
{
	return sl->p->stop();
}

/* struct sb_stat and struct sampbench_stat have the same members; copy one by one anyway
 * so the ABI never depends on an internal layout. Two stats are appended: the plugin's
 * class (`class_caps`, sb_sampler_caps bits plus SB_CLASS_TICK_DRIVEN) and its ABI
 * version (`class_abi`), so the gate, which sees only the run file, judges a plugin by
 * what it declared (or by the v1 defaults, which it then names). */
static int slot_stats(struct plugin_slot *sl, struct sb_stat *out, int max)
{
	struct sampbench_stat st[SB_MAX_STATS];
	int n = 0;

	if (max > SB_MAX_STATS)
		max = SB_MAX_STATS;
	if (max < 2)
		return 0;
	if (sl->p->stats) {
		n = sl->p->stats(st, max - 2);
		if (n < 0)
			n = 0;
		if (n > max - 2)
			n = max - 2;
	}
	for (int i = 0; i < n; i++) {
		out[i].name = st[i].name ? st[i].name : "unnamed";
		out[i].value = st[i].value;
	}
	out[n++] = (struct sb_stat){ "class_caps",
				     (double)(sl->s.caps | ((sl->s.flags & SB_SAMPLER_TICK_DRIVEN)
								    ? SAMPBENCH_CAP_TICK_DRIVEN : 0)) };
	out[n++] = (struct sb_stat){ "class_abi", (double)sl->abi };
	return n;
}

static void slot_thread_start(struct plugin_slot *sl, int index)
{
	if (sl->p->thread_start)
		sl->p->thread_start(index);
}

static void slot_thread_stop(struct plugin_slot *sl, int index)
{
	if (sl->p->thread_stop)
		sl->p->thread_stop(index);
}

#define SLOT_FNS(k)                                                                        \
	static int avail_##k(char *w, size_t l) { return slot_available(&slots[k], w, l); } \
	static int start_##k(const struct sb_config *c, struct sb_sink *s)                 \
	{                                                                                  \
		return slot_start(&slots[k], c, s);                                        \
	}                                                                                  \
	static int stop_##k(void) { return slot_stop(&slots[k]); }                        \
	static int stats_##k(struct sb_stat *o, int m) { return slot_stats(&slots[k], o, m); } \
	static void tstart_##k(int i) { slot_thread_start(&slots[k], i); }                 \
	static void tstop_##k(int i) { slot_thread_stop(&slots[k], i); }

SLOT_FNS(0)
SLOT_FNS(1)
SLOT_FNS(2)
SLOT_FNS(3)
SLOT_FNS(4)
SLOT_FNS(5)
SLOT_FNS(6)
SLOT_FNS(7)
SLOT_FNS(8)
SLOT_FNS(9)
SLOT_FNS(10)
SLOT_FNS(11)
SLOT_FNS(12)
SLOT_FNS(13)
SLOT_FNS(14)
SLOT_FNS(15)
SLOT_FNS(16)
SLOT_FNS(17)
SLOT_FNS(18)
SLOT_FNS(19)
SLOT_FNS(20)
SLOT_FNS(21)
SLOT_FNS(22)
SLOT_FNS(23)
SLOT_FNS(24)
SLOT_FNS(25)
SLOT_FNS(26)
SLOT_FNS(27)
SLOT_FNS(28)
SLOT_FNS(29)
SLOT_FNS(30)
SLOT_FNS(31)

#define SLOT_SAMPLER(k)                                                                    \
	{ .available = avail_##k, .start = start_##k, .stop = stop_##k, .stats = stats_##k, \
	  .thread_start = tstart_##k, .thread_stop = tstop_##k }

static const struct sampler slot_templates[SB_MAX_PLUGINS] = {
	SLOT_SAMPLER(0), SLOT_SAMPLER(1), SLOT_SAMPLER(2), SLOT_SAMPLER(3),
	SLOT_SAMPLER(4), SLOT_SAMPLER(5), SLOT_SAMPLER(6), SLOT_SAMPLER(7),
	SLOT_SAMPLER(8), SLOT_SAMPLER(9), SLOT_SAMPLER(10), SLOT_SAMPLER(11),
	SLOT_SAMPLER(12), SLOT_SAMPLER(13), SLOT_SAMPLER(14), SLOT_SAMPLER(15),
	SLOT_SAMPLER(16), SLOT_SAMPLER(17), SLOT_SAMPLER(18), SLOT_SAMPLER(19),
	SLOT_SAMPLER(20), SLOT_SAMPLER(21), SLOT_SAMPLER(22), SLOT_SAMPLER(23),
	SLOT_SAMPLER(24), SLOT_SAMPLER(25), SLOT_SAMPLER(26), SLOT_SAMPLER(27),
	SLOT_SAMPLER(28), SLOT_SAMPLER(29), SLOT_SAMPLER(30), SLOT_SAMPLER(31),
};

/* ---- loading ---- */

int plugin_is_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') != NULL || (n > 3 && strcmp(name + n - 3, ".so") == 0);
}

const struct sampler *plugin_load(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	const struct sampbench_sampler *p;
	void *h;

	if (!realpath(path, real)) {
		snprintf(err, errlen, "cannot load sampler plugin '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (int i = 0; i < nslots; i++)
		if (strcmp(slots[i].path, real) == 0)
			return &slots[i].s;
	if (nslots == SB_MAX_PLUGINS) {
		snprintf(err, errlen, "too many sampler plugins (at most %d)", SB_MAX_PLUGINS);
		return NULL;
	}
	h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "cannot load sampler plugin '%s': %s", path, dlerror());
		return NULL;
	}
	p = dlsym(h, SAMPBENCH_SAMPLER_SYMBOL);
	if (!p) {
		snprintf(err, errlen, "'%s' is not a sampbench sampler: no symbol '%s'", path,
			 SAMPBENCH_SAMPLER_SYMBOL);
		goto fail;
	}
	if (p->abi_version != 1 && p->abi_version != SAMPBENCH_SAMPLER_ABI) {
		snprintf(err, errlen,
			 "sampler plugin '%s' was built for ABI version %u, this sampbench speaks "
			 "versions 1 and %d (rebuild it against sampler/sampbench_sampler.h)",
			 path, p->abi_version, SAMPBENCH_SAMPLER_ABI);
		goto fail;
	}
	size_t need = p->abi_version == 1 ? PLUGIN_V1_SIZE : sizeof(*p);
	if (p->struct_size < need) {
		snprintf(err, errlen, "sampler plugin '%s' has struct_size %u, expected at least %zu",
			 path, p->struct_size, need);
		goto fail;
	}
	if (!p->name || !*p->name || !p->start || !p->stop) {
		snprintf(err, errlen, "sampler plugin '%s' lacks %s", path,
			 !p->name || !*p->name ? "a name" : !p->start ? "start()" : "stop()");
		goto fail;
	}
	if (p->clock != SAMPBENCH_CLOCK_CPU && p->clock != SAMPBENCH_CLOCK_WALL) {
		snprintf(err, errlen, "sampler plugin '%s' has unknown clock %d", path, p->clock);
		goto fail;
	}

	struct plugin_slot *sl = &slots[nslots];
	snprintf(sl->path, sizeof(sl->path), "%s", real);
	sl->handle = h;
	sl->p = p;
	sl->s = slot_templates[nslots];
	sl->s.name = p->name;
	sl->s.description = p->description ? p->description : "plugin";
	sl->s.clock = p->clock == SAMPBENCH_CLOCK_WALL ? SB_CLOCK_WALL : SB_CLOCK_CPU;
	sl->abi = p->abi_version;
	/* v1 has no class: the documented defaults (sampbench_sampler.h), never read past
	 * the v1 struct */
	unsigned caps = p->abi_version == 1 ? SAMPBENCH_CAPS_V1_DEFAULT |
						      (p->clock == SAMPBENCH_CLOCK_CPU
							       ? SAMPBENCH_CAP_TICK_DRIVEN : 0)
					    : p->caps;
	sl->s.flags = (caps & SAMPBENCH_CAP_TICK_DRIVEN) ? SB_SAMPLER_TICK_DRIVEN : 0;
	sl->s.caps = caps & 0xffffu;
	if (!p->available)
		sl->s.available = NULL;
	if (!p->thread_start)
		sl->s.thread_start = NULL;
	if (!p->thread_stop)
		sl->s.thread_stop = NULL;
	nslots++;
	return &sl->s;
fail:
	dlclose(h);
	return NULL;
}

const char *plugin_path(const struct sampler *s)
{
	for (int i = 0; i < nslots; i++)
		if (s == &slots[i].s)
			return slots[i].path;
	return NULL;
}

const struct sampler *sampler_resolve(const char *name)
{
	char err[PATH_MAX + 256];
	const struct sampler *s;

	if (!plugin_is_path(name)) {
		s = sampler_find(name);
		if (!s)
			fprintf(stderr, "sampbench: unknown sampler '%s' (see 'sampbench list')\n",
				name);
		return s;
	}
	s = plugin_load(name, err, sizeof(err));
	if (!s)
		fprintf(stderr, "sampbench: %s\n", err);
	return s;
}
