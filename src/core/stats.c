/*
 * stats.c - Student's t distribution and the t-interval on a mean
 * (topocc/stats.h). No table: the quantile is computed from the CDF, and
 * the CDF from the regularized incomplete beta function, so any number of
 * degrees of freedom gets the same precision.
 */
#include <float.h>
#include <math.h>
#include "topocc/stats.h"

#define CF_MAX_ITER 10000
#define CF_EPS 1e-16
#define CF_TINY 1e-300

/* Coefficient d_k (k >= 1) of the continued fraction
 * I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / (1 + d_1 / (1 + d_2 / (1 + ...)))
 * (NIST DLMF, https://dlmf.nist.gov/8.17, its continued fraction): d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)),
 * d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)). */
static double cf_coef(double a, double b, double x, int k)
{
    double m = k / 2;
    if (k % 2 == 0)
        return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
}

static double away_from_zero(double v)
{
    return fabs(v) < CF_TINY ? CF_TINY : v;
}

/* 1 / (1 + d_1 / (1 + d_2 / ...)), the fraction evaluated forward by the
 * modified Lentz method (checked against closed forms, tests/test_stats.c):
 * converges fast for
 * x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    double f = 1.0, C = 1.0, D = 0.0;
    for (int k = 1; k <= 2 * CF_MAX_ITER; k++) {
        double dk = cf_coef(a, b, x, k);
        D = 1.0 / away_from_zero(1.0 + dk * D);
        C = away_from_zero(1.0 + dk / C);
        double step = C * D;
        f *= step;
        if (fabs(step - 1.0) < CF_EPS)
            break;
    }
    return 1.0 / f;
}

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1. */
static double beta_inc(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double bt = exp(lbt);
    if (x < (a + 1.0) / (a + b + 2.0))
        return bt * beta_cf(a, b, x) / a;
    return 1.0 - bt * beta_cf(b, a, 1.0 - x) / b;
}

/* P(|T| > t) for t >= 0. */
static double t_two_tail(double t, double df)
{
    if (isinf(t))
        return 0.0;
    double t2 = t * t;
    /* x = df / (df + t^2), 1 - x = t^2 / (df + t^2): the smaller one is
     * computed directly so that neither loses digits. */
    double x = df / (df + t2);
    if (x < (df / 2 + 1.0) / (df / 2 + 0.5 + 2.0))
        return beta_inc(df / 2, 0.5, x);
    return 1.0 - beta_inc(0.5, df / 2, t2 / (df + t2));
}

double tc_stat_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    double tail = 0.5 * t_two_tail(fabs(t), df);
    return t >= 0 ? 1.0 - tail : tail;
}

double tc_stat_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p == 0.5)
        return 0.0;
    /* Solve P(T > t) = min(p, 1 - p) for t > 0 on the tail itself, so that
     * p near 1 does not cancel. */
    double want = p < 0.5 ? p : 1.0 - p;
    double lo = 0.0, hi = 1.0;
    while (0.5 * t_two_tail(hi, df) > want && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 2000 && hi - lo > 4 * DBL_EPSILON * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * t_two_tail(mid, df) > want)
            lo = mid;
        else
            hi = mid;
    }
    double t = 0.5 * (lo + hi);
    return p < 0.5 ? -t : t;
}

void tc_stat_mean_ci(const double *x, size_t n, double level, tc_stat_ci *out)
{
    out->n = n;
    out->level = level;
    out->mean = NAN;
    out->sd = NAN;
    out->q = NAN;
    out->lo = -INFINITY;
    out->hi = INFINITY;
    if (n == 0)
        return;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    out->mean = s / (double)n;
    if (n < 2)
        return;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - out->mean) * (x[i] - out->mean);
    out->sd = sqrt(ss / (double)(n - 1));
    out->q = tc_stat_t_quantile(0.5 + level / 2, (double)(n - 1));
    double half = out->q * out->sd / sqrt((double)n);
    out->lo = out->mean - half;
    out->hi = out->mean + half;
}
