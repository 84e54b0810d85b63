/* metrics.c - the table of metrics (name, unit, description, place in struct sb_metrics)
 * generated from SB_METRICS. */
#include "core/metrics.h"
#include "core/util.h"

#include <math.h>
#include <string.h>

const struct sb_metric_info sb_metric_infos[] = {
#define X(n, u, d) { #n, u, d, offsetof(struct sb_metrics, n) },
	SB_METRICS(X)
#undef X
};
const size_t sb_metric_count = ARRAY_SIZE(sb_metric_infos);

void metrics_clear(struct sb_metrics *m)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		*(double *)((char *)m + sb_metric_infos[i].offset) = NAN;
}

int metrics_index(const char *name)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		if (strcmp(sb_metric_infos[i].name, name) == 0)
			return (int)i;
	return -1;
}
