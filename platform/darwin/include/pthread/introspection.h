/* pthread/introspection.h - minimal declarations for the cross build only.
 *
 * The macOS SDK bundled with zig 0.11 lacks this header; a real macOS SDK has it and this
 * directory is never on the include path there (only `make darwin-check` adds it).
 * Written from Apple's public documentation of pthread_introspection_hook_install
 * (macOS 10.9+, libpthread's <pthread/introspection.h>): declarations only, nothing else. */
#ifndef SB_DARWIN_PTHREAD_INTROSPECTION_H
#define SB_DARWIN_PTHREAD_INTROSPECTION_H

#include <pthread.h>
#include <stddef.h>

/* Called with event, the thread, and (for START/TERMINATE) its stack address and size. */
typedef void (*pthread_introspection_hook_t)(unsigned int event, pthread_t thread, void *addr,
					     size_t size);

enum {
	PTHREAD_INTROSPECTION_THREAD_CREATE = 1, /* in the creating thread */
	PTHREAD_INTROSPECTION_THREAD_START,      /* in the new thread, before its start routine */
	PTHREAD_INTROSPECTION_THREAD_TERMINATE,  /* in the exiting thread */
	PTHREAD_INTROSPECTION_THREAD_DESTROY,    /* after it is gone, in another thread */
};

/* Installs hook and returns the previously installed one (to be chained). */
pthread_introspection_hook_t pthread_introspection_hook_install(pthread_introspection_hook_t hook);

#endif
