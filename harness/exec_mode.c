/* exec_mode.c - which exec mode samples a program with which sampler (exec_mode.h). */
#include "harness/exec_mode.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "sampler/plugin.h"

/* Samplers that sample from outside; every other one goes through the agent. */
static const struct {
	const char *name;
	const struct exec_mode *mode;
} outside[] = {
	{ "perf", &exec_perf_mode },
};

/* The agent carries plugins and the in-process built-ins (SB_SAMPLER_IN_PROCESS). */
const struct exec_mode *exec_mode_of(const struct sampler *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(outside); i++)
		if (!strcmp(outside[i].name, s->name))
			return outside[i].mode;
	if (plugin_path(s) || sampler_in_process(s))
		return &exec_agent_mode;
	return NULL;
}

void exec_fail(struct exec_ctx *c, const char *why)
{
	if (c->failed)
		return;
	c->failed = 1;
	snprintf(c->r->reason, sizeof(c->r->reason), "%s", why);
}
