/* mwu.c - two-sided Mann-Whitney U test, exact for small samples without ties, normal
 * approximation with tie correction otherwise (as scipy.stats.mannwhitneyu). */
#include "analysis/mwu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MWU_EXACT_MAX_SMALL 8 /* scipy's limit for the exact method */

struct obs {
	double v;
	int from_x;
};

static int cmp_obs(const void *a, const void *b)
{
	const struct obs *p = a, *q = b;
	return (p->v > q->v) - (p->v < q->v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median_of(const double *v, size_t n)
{
	double *c = malloc((n + 1) * sizeof(*c));
	size_t k = 0;
	double m = NAN;

	if (!c)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[k++] = v[i];
	if (k > 0) {
		qsort(c, k, sizeof(*c), cmp_double);
		m = k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
	}
	free(c);
	return m;
}

/* P(U >= u) under H0 for sample sizes m, n, from the coefficients of the Gaussian
 * binomial [m+n choose m]_q, whose q^k coefficient counts the arrangements with U = k.
 * Built as prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); every partial product is itself a
 * Gaussian binomial, so each division is exact. */
static double exact_sf(size_t m, size_t n, double u)
{
	size_t deg = m * n;
	double *c = calloc(deg + 1, sizeof(*c));
	double total = 0, tail = 0;

	if (!c)
		return NAN;
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		size_t sh = n + i;
		for (size_t k = deg; k >= sh; k--) /* multiply by (1 - q^sh), in place */
			c[k] -= c[k - sh];
		for (size_t k = i; k <= deg; k++)  /* divide by (1 - q^i) */
			c[k] += c[k - i];
	}
	for (size_t k = 0; k <= deg; k++) {
		total += c[k];
		if ((double)k >= u - 1e-9)
			tail += c[k];
	}
	free(c);
	return tail / total;
}

int mwu_test(const double *x, size_t nx, const double *y, size_t ny, struct mwu_result *out)
{
	struct obs *o = malloc((nx + ny + 1) * sizeof(*o));
	size_t n1 = 0, n2 = 0, n;
	double r1 = 0, tie_sum = 0;

	out->u1 = NAN;
	out->p = NAN;
	out->exact = 0;
	if (!o)
		return -1;
	for (size_t i = 0; i < nx; i++)
		if (!isnan(x[i]))
			o[n1++] = (struct obs){ x[i], 1 };
	for (size_t i = 0; i < ny; i++)
		if (!isnan(y[i])) {
			o[n1 + n2] = (struct obs){ y[i], 0 };
			n2++;
		}
	n = n1 + n2;
	if (n1 == 0 || n2 == 0) {
		free(o);
		return 0;
	}
	qsort(o, n, sizeof(*o), cmp_obs);
	/* midranks: a run of t equal values [i, j) all get the mean of ranks i+1..j */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && o[j].v == o[i].v)
			j++;
		double t = (double)(j - i), rank = ((double)i + 1 + (double)j) / 2;
		for (size_t k = i; k < j; k++)
			if (o[k].from_x)
				r1 += rank;
		tie_sum += t * t * t - t;
		i = j;
	}
	free(o);

	double u1 = r1 - (double)n1 * ((double)n1 + 1) / 2;
	double u2 = (double)n1 * (double)n2 - u1;
	double u = u1 > u2 ? u1 : u2; /* the two-sided test looks at the larger tail */
	out->u1 = u1;
	if (tie_sum == 0 && (n1 <= MWU_EXACT_MAX_SMALL || n2 <= MWU_EXACT_MAX_SMALL)) {
		size_t small = n1 < n2 ? n1 : n2, large = n1 < n2 ? n2 : n1;
		out->exact = 1;
		out->p = 2 * exact_sf(small, large, u);
	} else {
		double mu = (double)n1 * (double)n2 / 2;
		double var = (double)n1 * (double)n2 / 12 *
			     (((double)n + 1) - tie_sum / ((double)n * ((double)n - 1)));
		if (var <= 0) {
			out->p = 1; /* every value equal: no evidence of a difference */
		} else {
			double z = (u - mu - 0.5) / sqrt(var); /* continuity correction */
			out->p = erfc(z / sqrt(2.0));
		}
	}
	if (out->p > 1)
		out->p = 1;
	return 0;
}
