/* table.c - the workloads. A new workload is one file plus one line here. */
#include <string.h>

#include "core/util.h"
#include "workloads/workload.h"

extern const struct workload workload_balanced;
extern const struct workload workload_skewed;
extern const struct workload workload_mixed;
extern const struct workload workload_churn;
extern const struct workload workload_deep;
extern const struct workload workload_hotspot;
extern const struct workload workload_syscall;
extern const struct workload workload_malloclock;
extern const struct workload workload_alias;
extern const struct workload workload_burst;
extern const struct workload workload_kernel;

static const struct workload *const workloads[] = {
	&workload_balanced,
	&workload_skewed,
	&workload_mixed,
	&workload_churn,
	&workload_deep,
	&workload_hotspot,
	&workload_syscall,
	&workload_malloclock,
	&workload_alias,
	&workload_burst,
	&workload_kernel,
	NULL,
};

const struct workload *workload_at(size_t i)
{
	return i < ARRAY_SIZE(workloads) ? workloads[i] : NULL;
}

const struct workload *workload_find(const char *name)
{
	for (size_t i = 0; workloads[i]; i++)
		if (strcmp(workloads[i]->name, name) == 0)
			return workloads[i];
	return NULL;
}
