/* plugin.h - samplers loaded from a shared object (the ABI in sampler/sampbench_sampler.h)
 * and the one lookup every command uses for --sampler names. */
#ifndef SB_PLUGIN_H
#define SB_PLUGIN_H

#include <stddef.h>

#include "sampler/sampler.h"

#define SB_MAX_PLUGINS 32 /* distinct plugin files per process (tests/gate_defects.sh loads 20) */

/* Loads the plugin at path (dlopen, RTLD_NOW | RTLD_LOCAL) and returns a sampler that
 * drives it. The plugin stays loaded for the life of the process; loading the same path
 * again returns the same sampler. On failure returns NULL and writes one line to err:
 * missing file, not a sampbench sampler (no `sampbench_sampler` symbol), ABI version
 * mismatch, missing start/stop. */
const struct sampler *plugin_load(const char *path, char *err, size_t errlen);

/* Whether a --sampler name names a plugin file (it contains a '/' or ends in ".so"). */
int plugin_is_path(const char *name);

/* The sampler for a --sampler name: a plugin file, or a built-in by name. Returns NULL
 * after printing one line on stderr ("unknown sampler ..." or the plugin's load error). */
const struct sampler *sampler_resolve(const char *name);

/* The absolute path a plugin sampler was loaded from, or NULL for a built-in. */
const char *plugin_path(const struct sampler *s);

#endif
