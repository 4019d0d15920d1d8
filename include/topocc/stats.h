/*
 * topocc/stats.h - the small statistics topocc reports with measured
 * results: Student's t distribution (its CDF and quantile, computed
 * numerically) and the t-interval on the mean of a few paired
 * differences (docs/MODEL.md, "Seeds and intervals").
 */
#ifndef TOPOCC_STATS_H
#define TOPOCC_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* P(T <= t) for Student's t with df > 0 degrees of freedom: through the
 * regularized incomplete beta function, P(|T| > t) = I_x(df/2, 1/2) with
 * x = df / (df + t^2), evaluated by its continued fraction (NIST DLMF,
 * https://dlmf.nist.gov/8.17, by the modified Lentz method). Relative
 * error near 1e-14 for df up to 1e6. NAN for df <= 0 or t NAN. */
double tc_stat_t_cdf(double t, double df);

/* The p-quantile of Student's t (0 < p < 1, df > 0): the t with
 * tc_stat_t_cdf(t, df) = p, by bisection on the tail probability to the
 * last bits of a double. NAN outside the domain. */
double tc_stat_t_quantile(double p, double df);

/* The t-interval on the mean of x[0..n): mean +- q * sd / sqrt(n), q the
 * (1 + level) / 2 quantile of t with n - 1 degrees of freedom, sd the
 * sample standard deviation (divisor n - 1). Valid when the x are
 * independent draws of one distribution that is near normal (or symmetric:
 * then the interval tends to be conservative). With n < 2 there is no
 * interval: lo = -INFINITY, hi = +INFINITY, sd NAN. */
typedef struct tc_stat_ci {
    size_t n;
    double mean, sd;
    double lo, hi;
    double level;   /* e.g. 0.95 */
    double q;       /* the t quantile used (NAN when n < 2) */
} tc_stat_ci;

void tc_stat_mean_ci(const double *x, size_t n, double level, tc_stat_ci *out);

#ifdef __cplusplus
}
#endif

#endif
