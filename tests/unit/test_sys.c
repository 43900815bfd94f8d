/* core_sys's small facts: the median the benchmarks and the tuner quote,
 * alignment, the fingerprint hash, liveness of a process, CPUs apart. */
#include <sched.h>
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

static cpu_set_t cpus(int count, const int *list)
{
    cpu_set_t m;
    CPU_ZERO(&m);
    for (int i = 0; i < count; i++)
        CPU_SET(list[i], &m);
    return m;
}

/* core_cpus_apart against its definition: two different CPUs, one of each
 * mask, the preferred ones where allowed; core_cpus_partner on layouts a
 * launcher makes. */
static void test_cpus_apart(void)
{
    int a = -1, b = -1;
    cpu_set_t zero = cpus(1, (int[]){0}), one = cpus(1, (int[]){1}), both = cpus(2, (int[]){0, 1}),
              none = cpus(0, NULL);
    CHECK(!core_cpus_apart(&zero, -1, &zero, -1, &a, &b), "two masks of the same one CPU are never apart");
    CHECK(!core_cpus_apart(&none, -1, &both, -1, &a, &b), "an empty mask has no CPU");
    CHECK(core_cpus_apart(&zero, -1, &one, -1, &a, &b) && a == 0 && b == 1, "bound apart already: %d %d", a, b);
    CHECK(core_cpus_apart(&both, 0, &zero, -1, &a, &b) && a == 1 && b == 0,
          "the first gives up its preferred CPU when the second may run only there: %d %d", a, b);
    CHECK(core_cpus_apart(&both, 1, &both, 1, &a, &b) && a == 1 && b == 0, "the first's preference wins: %d %d", a, b);
    CHECK(core_cpus_apart(&both, -1, &both, 1, &a, &b) && a == 0 && b == 1, "both preferences kept: %d %d", a, b);
    /* Random masks of 6 CPUs: apart exactly when not the same single CPU. */
    for (int trial = 0; trial < 500; trial++) {
        cpu_set_t m[2];
        int pref[2];
        for (int k = 0; k < 2; k++) {
            CPU_ZERO(&m[k]);
            for (int c = 0; c < 6; c++)
                if (rand() % 3 == 0)
                    CPU_SET(c, &m[k]);
            pref[k] = rand() % 7 - 1;
        }
        cpu_set_t all;
        CPU_OR(&all, &m[0], &m[1]);
        bool possible = CPU_COUNT(&m[0]) && CPU_COUNT(&m[1]) && CPU_COUNT(&all) >= 2;
        bool got = core_cpus_apart(&m[0], pref[0], &m[1], pref[1], &a, &b);
        CHECK(got == possible, "trial %d: apart %d, want %d", trial, got, possible);
        if (got) {
            CHECK(a != b && CPU_ISSET(a, &m[0]) && CPU_ISSET(b, &m[1]), "trial %d: %d and %d", trial, a, b);
            if (pref[0] >= 0 && CPU_ISSET(pref[0], &m[0]) && !(CPU_COUNT(&m[1]) == 1 && CPU_ISSET(pref[0], &m[1])))
                CHECK(a == pref[0], "trial %d: the first keeps its preferred CPU %d (took %d)", trial, pref[0], a);
        }
    }

    /* 4 ranks on 2 CPUs, 0+1 on one and 2+3 on the other: rank 2. */
    cpu_set_t split[4] = {zero, zero, one, one};
    CHECK(core_cpus_partner(split, 4) == 2, "ranks 0 and 1 on one CPU: partner %d", core_cpus_partner(split, 4));
    /* Alternating: rank 1. Nothing bound: rank 1, to be kept apart. */
    cpu_set_t alternate[4] = {zero, one, zero, one}, free4[4] = {both, both, both, both};
    CHECK(core_cpus_partner(alternate, 4) == 1, "alternating CPUs: rank 1");
    CHECK(core_cpus_partner(free4, 4) == 1, "nothing bound: rank 1");
    /* A rank apart beats an earlier one that could be kept apart. */
    cpu_set_t mixed[3] = {zero, both, one};
    CHECK(core_cpus_partner(mixed, 3) == 2, "a rank bound apart first");
    cpu_set_t stuck[3] = {zero, zero, zero};
    CHECK(core_cpus_partner(stuck, 3) == -1, "every rank on rank 0's one CPU: none");
    CHECK(core_cpus_partner(stuck, 1) == -1, "one rank: none");
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
    test_cpus_apart();
    return unit_done("test_sys");
}
