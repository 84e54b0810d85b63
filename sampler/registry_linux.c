/* registry_linux.c - how threads join the registry on Linux: interpose pthread_create.
 *
 * Defined in the executable, this pthread_create is what every caller (libraries too)
 * binds to; the real one (or a sanitizer's interceptor) is the next definition. */
#include "sampler/registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic(create_fn) real_create;
static pthread_key_t exit_key;
static int exit_key_ok;

struct reg_start {
	void *(*fn)(void *);
	void *arg;
};

static create_fn resolve_create(void)
{
	create_fn f = atomic_load_explicit(&real_create, memory_order_acquire);
	if (!f) {
		void *sym = dlsym(RTLD_NEXT, "pthread_create");
		__builtin_memcpy(&f, &sym, sizeof(f));
		atomic_store_explicit(&real_create, f, memory_order_release);
	}
	return f;
}

/* pthread_exit() and cancellation skip the trampoline's return: the key's destructor
 * catches them. */
static void exit_dtor(void *v)
{
	(void)v;
	registry_remove_self();
}

static void *trampoline(void *p)
{
	struct reg_start s = *(struct reg_start *)p;

	free(p);
	registry_add_self();
	if (exit_key_ok)
		pthread_setspecific(exit_key, (void *)1);
	void *ret = s.fn(s.arg);
	if (exit_key_ok)
		pthread_setspecific(exit_key, NULL);
	registry_remove_self();
	return ret;
}

int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr,
		   void *(*fn)(void *), void *restrict arg)
{
	create_fn real = resolve_create();
	struct reg_start *s;
	int rc;

	if (!real)
		return EAGAIN;
	s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	rc = real(t, attr, trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

int registry_pthread_create_raw(pthread_t *t, const pthread_attr_t *attr,
				void *(*fn)(void *), void *arg)
{
	create_fn real = resolve_create();
	return real ? real(t, attr, fn, arg) : EAGAIN;
}

__attribute__((constructor)) static void reg_linux_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, exit_dtor) == 0;
	resolve_create();
}
