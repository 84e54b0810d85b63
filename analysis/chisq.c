/* chisq.c - the chi-square upper tail through the regularized incomplete gamma function:
 * its series below a + 1, Lentz's continued fraction above (Numerical Recipes, 6.2). */
#include "analysis/chisq.h"

#include <math.h>

#define CHISQ_ITER 500
#define CHISQ_EPS 1e-15
#define CHISQ_TINY 1e-300

/* P(a, x) by its series, for x < a + 1. */
static double gamma_p_series(double a, double x)
{
	double ap = a, sum = 1.0 / a, del = sum;
	for (int i = 0; i < CHISQ_ITER; i++) {
		ap += 1;
		del *= x / ap;
		sum += del;
		if (fabs(del) < fabs(sum) * CHISQ_EPS)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) by its continued fraction, for x >= a + 1. */
static double gamma_q_fraction(double a, double x)
{
	double b = x + 1 - a, c = 1 / CHISQ_TINY, d = 1 / b, h = d;
	for (int i = 1; i <= CHISQ_ITER; i++) {
		double an = -i * (i - a);
		b += 2;
		d = an * d + b;
		if (fabs(d) < CHISQ_TINY)
			d = CHISQ_TINY;
		c = b + an / c;
		if (fabs(c) < CHISQ_TINY)
			c = CHISQ_TINY;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < CHISQ_EPS)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

double chisq_sf(double x, int df)
{
	if (df < 1 || isnan(x))
		return NAN;
	if (x <= 0)
		return 1;
	double a = df / 2.0, h = x / 2;
	return h < a + 1 ? 1 - gamma_p_series(a, h) : gamma_q_fraction(a, h);
}
