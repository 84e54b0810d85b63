/* plugin_setup.h - what the test plugins' skeletons (defect_base.h, wall_hold_base.h)
 * share: the sink, tick period and stack depth start() takes from the config, the running
 * flag the handler checks, and the installation of the SIGPROF handler. The includer
 * defines handler(). (examples/ctimer_plugin.c stays self-contained: it is the example.) */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "sampbench_sampler.h"

#define MAX_FRAMES 256

static const struct sampbench_sink *sink;
static uint64_t period_ns;
static uint32_t max_depth;
static _Atomic int running;

static void handler(int sig, siginfo_t *si, void *uc);

/* start()'s first step: keeps s, takes the period and the depth from cfg and installs
 * handler() for SIGPROF (SA_SIGINFO | SA_RESTART). Leaves running alone. Returns 0, or -1
 * with errno set (EINVAL: hz not above 0). */
static int plugin_setup(const struct sampbench_config *cfg, const struct sampbench_sink *s)
{
	struct sigaction sa;

	if (!(cfg->hz > 0)) {
		errno = EINVAL;
		return -1;
	}
	sink = s;
	period_ns = (uint64_t)(1e9 / cfg->hz);
	max_depth = cfg->max_depth == 0 || cfg->max_depth > MAX_FRAMES ? MAX_FRAMES : cfg->max_depth;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGPROF, &sa, NULL);
}
