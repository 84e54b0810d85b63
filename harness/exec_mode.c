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

/* In-process samplers the agent carries (plugins too). */
static const char *const in_agent[] = { "mach", "itimer", "ctimer", "gperftools",
					"gperftools-pt" };

const struct exec_mode *exec_mode_of(const struct sampler *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(outside); i++)
		if (!strcmp(outside[i].name, s->name))
			return outside[i].mode;
	if (plugin_path(s))
		return &exec_agent_mode;
	for (size_t i = 0; i < ARRAY_SIZE(in_agent); i++)
		if (!strcmp(in_agent[i], s->name))
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
