/* test_stats.c - the Wilson score interval against values computed independently (the closed
 * form evaluated in double precision by another program), table-driven; Student's t CDF against
 * published table quantiles; the mean and sample variance. */
#include "core/stats.h"
#include "test.h"

#include <math.h>

static int near(double a, double b)
{
    return fabs(a - b) < 1e-6;
}

int main(void)
{
    static const struct {
        uint64_t k, n;
        double lo, hi;
    } cases[] = {
        {0, 20, 0.0, 0.161130},      {20, 20, 0.838870, 1.0},     {10, 10, 0.722460, 1.0},
        {8, 10, 0.490157, 0.943319}, {5, 10, 0.236590, 0.763410}, {1, 20, 0.008881, 0.236136},
        {0, 1, 0.0, 0.793457},       {3, 7, 0.158217, 0.749546},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double lo = -1, hi = -1;
        h2b_stats_wilson(cases[i].k, cases[i].n, 1.96, &lo, &hi);
        if (!near(lo, cases[i].lo) || !near(hi, cases[i].hi))
            fprintf(stderr, "wilson(%llu, %llu) = [%.6f, %.6f], want [%.6f, %.6f]\n",
                    (unsigned long long)cases[i].k, (unsigned long long)cases[i].n, lo, hi,
                    cases[i].lo, cases[i].hi);
        CHECK(near(lo, cases[i].lo));
        CHECK(near(hi, cases[i].hi));
        CHECK(lo <= (double)cases[i].k / (double)cases[i].n);
        CHECK(hi >= (double)cases[i].k / (double)cases[i].n);
    }
    /* No trials, or more successes than trials: no interval, never [0, 0]. */
    double lo = 0, hi = 0;
    h2b_stats_wilson(0, 0, 1.96, &lo, &hi);
    CHECK(isnan(lo) && isnan(hi));
    h2b_stats_wilson(3, 2, 1.96, &lo, &hi);
    CHECK(isnan(lo) && isnan(hi));
    /* A wider z gives a wider interval around the same proportion. */
    double lo99, hi99;
    h2b_stats_wilson(5, 10, 2.576, &lo99, &hi99);
    h2b_stats_wilson(5, 10, 1.96, &lo, &hi);
    CHECK(lo99 < lo && hi99 > hi);
    /* Student's t: the two-sided 95 % and 99.9 % table quantiles, and symmetry. */
    CHECK(fabs(h2b_stats_t_cdf(2.228139, 10) - 0.975) < 1e-6);
    CHECK(fabs(h2b_stats_t_cdf(-2.228139, 10) - 0.025) < 1e-6);
    CHECK(fabs(h2b_stats_t_cdf(12.7062, 1) - 0.975) < 1e-5);
    CHECK(fabs(h2b_stats_t_cdf(8.610302, 4) - 0.9995) < 1e-7);
    CHECK(fabs(h2b_stats_t_cdf(3.290527, 1e6) - 0.9995) < 1e-6);
    CHECK(h2b_stats_t_cdf(0, 7) == 0.5);
    double mean, var;
    const double v[] = {1, 2, 3, 4};
    h2b_stats_mean_var(v, 4, &mean, &var);
    CHECK(near(mean, 2.5) && near(var, 5.0 / 3));
    h2b_stats_mean_var(v + 2, 1, &mean, &var);
    CHECK(mean == 3 && var == 0);
    return test_report();
}
