/* mwu.h - the two-sided Mann-Whitney U test the regression gate uses. */
#ifndef SB_MWU_H
#define SB_MWU_H

#include <stddef.h>

struct mwu_result {
	double u1;  /* U of sample x: pairs (x_i, y_j) with x_i > y_j, ties count 1/2 */
	double p;   /* two-sided p-value; NaN when either sample is empty */
	int exact;  /* 1: exact distribution, 0: normal approximation */
};

/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny). NaN values are left out.
 * Like scipy.stats.mannwhitneyu(method="auto") since 1.7: exact when there are no ties
 * and one sample has at most 8 values, otherwise the normal approximation with tie
 * correction and continuity correction. Returns 0, or -1 when out of memory. */
int mwu_test(const double *x, size_t nx, const double *y, size_t ny, struct mwu_result *out);

/* Median of v[0..n) (NaN values left out; NaN when none). Does not modify v. */
double median_of(const double *v, size_t n);

#endif
