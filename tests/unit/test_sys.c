/* core_sys's small facts: the median the benchmarks and the tuner quote,
 * alignment, the fingerprint hash, liveness of a process. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "unit.h"

/* The median by a slower definition: the value with as many below as above,
 * or the mean of the two middle ones, found by counting. */
static double median_by_counting(const double *v, int n)
{
    double lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        int below = 0, equal = 0;
        for (int j = 0; j < n; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        /* v[i] takes sorted positions below .. below+equal-1 */
        if (below <= (n - 1) / 2 && (n - 1) / 2 < below + equal)
            lo = v[i];
        if (below <= n / 2 && n / 2 < below + equal)
            hi = v[i];
    }
    return 0.5 * (lo + hi);
}

int main(void)
{
    unsigned seed = (unsigned)getpid();
    printf("test_sys: seed %u\n", seed);
    srand(seed);
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + rand() % 9;
        double v[9], copy[9];
        for (int i = 0; i < n; i++)
            v[i] = copy[i] = (double)(rand() % 7) - 3; /* ties on purpose */
        double want = median_by_counting(copy, n), got = core_median(v, n);
        CHECK(got == want, "median of %d values: %g, want %g", n, got, want);
        for (int i = 1; i < n; i++)
            CHECK(v[i - 1] <= v[i], "core_median leaves the values sorted");
    }
    double two[2] = {4, 1};
    CHECK(core_median(two, 2) == 2.5, "even count: the mean of the middle two");

    CHECK(core_align_up(0, 64) == 0 && core_align_up(1, 64) == 64 && core_align_up(64, 64) == 64, "align_up");
    CHECK(core_hash(CORE_HASH_START, "a", 1) != core_hash(CORE_HASH_START, "b", 1), "hash tells bytes apart");
    CHECK(core_hash(CORE_HASH_START, "ab", 2) == core_hash(core_hash(CORE_HASH_START, "a", 1), "b", 1),
          "hash folds incrementally");

    CHECK(core_pid_alive(getpid()), "this process is alive");
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    CHECK(!core_pid_alive(child), "a reaped child is gone");
    return unit_done("test_sys");
}
