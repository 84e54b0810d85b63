/* calibrate_darwin.c - the floors only Linux has, on Darwin (calibrate_int.h). macOS has
 * no futex(2), no tgkill(2) to a chosen thread's handler timing we rely on, and no
 * PTRACE_INTERRUPT: those rows say so (n = 0). The suspend floor itself (thread_suspend /
 * thread_get_state / thread_resume) is timed by the portable part as `rendezvous_*`.
 * Compiled and linked by `make darwin-check`; run only on a Mac. */
#include <stdio.h>

#include "harness/calibrate_int.h"

void calibrate_platform(struct cal_series *futex_cross, struct cal_series *futex_same,
			struct cal_series *signal_cross, struct cal_series *ptrace_interrupt)
{
	snprintf(futex_cross->reason, sizeof(futex_cross->reason), "no futex on Darwin");
	snprintf(futex_same->reason, sizeof(futex_same->reason), "no futex on Darwin");
	snprintf(signal_cross->reason, sizeof(signal_cross->reason), "not timed on Darwin");
	snprintf(ptrace_interrupt->reason, sizeof(ptrace_interrupt->reason),
		 "no PTRACE_INTERRUPT on Darwin");
}
