/* chisq.h - the chi-square distribution's upper tail, for goodness-of-fit tests. */
#ifndef SB_CHISQ_H
#define SB_CHISQ_H

/* P(X >= x) for X chi-square with df degrees of freedom (the p-value of a G or Pearson
 * statistic x): the regularized upper incomplete gamma Q(df/2, x/2). Accurate to ~1e-12
 * relative. Returns NaN when df < 1 or x is NaN; 1 when x <= 0. */
double chisq_sf(double x, int df);

#endif
