/*
 * test_stats.c - Student's t distribution and the t-interval (topocc/stats.h)
 * against what can be derived without a table: the closed forms for one
 * and two degrees of freedom, the density integrated numerically, the
 * normal limit, and an interval worked by hand from its definition.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <cmocka.h>
#include "topocc/stats.h"

/* pi, without relying on PI (not in strict C) */
#define PI acos(-1.0)

static void near(double a, double b, double rel, const char *what)
{
    if (!(fabs(a - b) <= rel * fmax(1.0, fabs(b))))
        fail_msg("%s: %.17g, expected %.17g", what, a, b);
}

/* df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t) / pi, so the
 * quantile is tan(pi (p - 1/2)). df = 2: F(t) = 1/2 + t / (2 sqrt(2 + t^2)),
 * whose inverse is (2p - 1) / sqrt(2 p (1 - p)). */
static void t_quantile_matches_the_closed_forms_of_one_and_two_degrees(void **state)
{
    (void)state;
    const double ps[] = {0.6, 0.9, 0.975, 0.995, 0.025, 0.3};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        double p = ps[i];
        near(tc_stat_t_quantile(p, 1), tan(PI * (p - 0.5)), 1e-12, "df 1");
        near(tc_stat_t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-12, "df 2");
        near(tc_stat_t_cdf(tan(PI * (p - 0.5)), 1), p, 1e-13, "cdf df 1");
    }
    assert_true(tc_stat_t_quantile(0.5, 7) == 0);
    assert_true(isnan(tc_stat_t_quantile(1, 4)) && isnan(tc_stat_t_quantile(0.9, 0)));
    assert_true(tc_stat_t_cdf(-INFINITY, 3) == 0 && tc_stat_t_cdf(0, 3) == 0.5);
}

/* The density (Gamma((v+1)/2) / (sqrt(v pi) Gamma(v/2)) (1 + t^2/v)^(-(v+1)/2))
 * integrated by Simpson's rule from 0 to the 0.975 quantile gives 0.475. */
static double t_density(double t, double v)
{
    return exp(lgamma((v + 1) / 2) - lgamma(v / 2)) / sqrt(v * PI) * pow(1 + t * t / v, -(v + 1) / 2);
}

static void t_quantile_agrees_with_the_integrated_density(void **state)
{
    (void)state;
    const double dfs[] = {3, 4, 9, 30};
    for (size_t d = 0; d < sizeof dfs / sizeof dfs[0]; d++) {
        double v = dfs[d], q = tc_stat_t_quantile(0.975, v);
        const int n = 20000;
        double h = q / n, s = t_density(0, v) + t_density(q, v);
        for (int i = 1; i < n; i++)
            s += (i % 2 ? 4 : 2) * t_density(i * h, v);
        near(s * h / 3, 0.475, 1e-10, "integral of the density to the quantile");
    }
}

/* Many degrees of freedom: towards the standard normal, Phi(q) =
 * erfc(-q / sqrt 2) / 2 (at 10^6 degrees the t quantile is still above
 * the normal one by O(1/df)). */
static void t_quantile_tends_to_the_normal(void **state)
{
    (void)state;
    double q = tc_stat_t_quantile(0.975, 1e6);
    double phi = 0.5 * erfc(-q / sqrt(2.0));
    assert_true(phi > 0.975 && phi < 0.975 + 1e-6);
    /* and decreases with the degrees of freedom towards it */
    double prev = INFINITY;
    for (double v = 1; v <= 64; v *= 2) {
        double x = tc_stat_t_quantile(0.975, v);
        assert_true(x < prev && x > q);
        prev = x;
    }
}

static void mean_interval_is_mean_plus_minus_t_times_standard_error(void **state)
{
    (void)state;
    const double x[5] = {0.1, -0.2, 0.05, 0.3, 0.0};
    tc_stat_ci ci;
    tc_stat_mean_ci(x, 5, 0.95, &ci);
    double m = 0.25 / 5, ss = 0;
    for (int i = 0; i < 5; i++)
        ss += (x[i] - m) * (x[i] - m);
    double sd = sqrt(ss / 4), q = tc_stat_t_quantile(0.975, 4);
    near(ci.mean, m, 1e-15, "mean");
    near(ci.sd, sd, 1e-15, "sd");
    near(ci.q, q, 0, "quantile");
    near(ci.lo, m - q * sd / sqrt(5), 1e-15, "lo");
    near(ci.hi, m + q * sd / sqrt(5), 1e-15, "hi");
    /* identical values: a zero-width interval at the value */
    const double same[3] = {0.7, 0.7, 0.7};
    tc_stat_mean_ci(same, 3, 0.95, &ci);
    assert_true(ci.hi - ci.lo < 1e-14 && fabs(ci.mean - 0.7) < 1e-15);
    /* one value: no interval */
    tc_stat_mean_ci(x, 1, 0.95, &ci);
    assert_true(ci.mean == 0.1 && isinf(ci.lo) && ci.lo < 0 && isinf(ci.hi) && isnan(ci.sd));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_quantile_matches_the_closed_forms_of_one_and_two_degrees),
        cmocka_unit_test(t_quantile_agrees_with_the_integrated_density),
        cmocka_unit_test(t_quantile_tends_to_the_normal),
        cmocka_unit_test(mean_interval_is_mean_plus_minus_t_times_standard_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
