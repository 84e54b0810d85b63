/* quantile.c - the quantile of a sample, as every part of the analysis computes it
 * (quantile.h). */
#include "analysis/quantile.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double quantile(double *v, size_t n, double q)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	if (k == 0 || isnan(q))
		return NAN;
	qsort(v, k, sizeof(*v), cmp_double);
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[k - 1];
	double h = (double)(k - 1) * q;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < k ? lo + 1 : lo;
	return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}
