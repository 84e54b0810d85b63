/* quantile.h - the quantile of a sample (type 7), shared by the metrics of a run, its
 * pauses, the gate and the reports. */
#ifndef SB_QUANTILE_H
#define SB_QUANTILE_H

#include <stddef.h>

/* Value of quantile q in [0,1] of v[0..n) by linear interpolation between order statistics
 * (type 7, as numpy's default). Sorts v in place. NaN values are ignored; NaN if none left. */
double quantile(double *v, size_t n, double q);

#endif
