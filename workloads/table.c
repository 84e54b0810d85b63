/* table.c - the workloads. A new workload is one file plus one line here; a workload built
 * in the variants (Makefile WL_VARIANTS, workload.h "build variants") adds a line for each. */
#include <string.h>

#include "core/util.h"
#include "workloads/workload.h"

extern const struct workload workload_balanced;
extern const struct workload workload_skewed;
extern const struct workload workload_mixed;
extern const struct workload workload_churn;
extern const struct workload workload_deep, workload_deep_nofp;
extern const struct workload workload_hotspot, workload_hotspot_nofp, workload_hotspot_inline;
extern const struct workload workload_syscall;
extern const struct workload workload_server;
extern const struct workload workload_malloclock;
extern const struct workload workload_alias, workload_alias_nofp, workload_alias_inline;
extern const struct workload workload_burst, workload_burst_nofp, workload_burst_inline;
extern const struct workload workload_kernel, workload_kernel_nofp, workload_kernel_inline;

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
	&workload_server,
	&workload_deep_nofp,
	&workload_hotspot_nofp,
	&workload_hotspot_inline,
	&workload_alias_nofp,
	&workload_alias_inline,
	&workload_burst_nofp,
	&workload_burst_inline,
	&workload_kernel_nofp,
	&workload_kernel_inline,
	NULL,
};

/* The build variants, fp (the plain build) first. */
static const char *const variants[] = { WL_VARIANT_FP, "nofp", "inline" };

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

int workload_variant_known(const char *variant)
{
	for (size_t i = 0; i < ARRAY_SIZE(variants); i++)
		if (!strcmp(variants[i], variant))
			return 1;
	return 0;
}

const struct workload *workload_variant(const struct workload *w, const char *variant)
{
	size_t plain = strcspn(w->name, "@");
	int fp = !variant || !strcmp(variant, WL_VARIANT_FP);

	for (size_t i = 0; workloads[i]; i++) {
		const struct workload *v = workloads[i];
		if (strncmp(v->name, w->name, plain) || (v->name[plain] && v->name[plain] != '@'))
			continue;
		if (fp ? !v->variant : v->variant && !strcmp(v->variant, variant))
			return v;
	}
	return NULL;
}
