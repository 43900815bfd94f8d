/* Minimal check harness for the simulator tests: CHECK records a failure with
 * its location and a message and goes on, so one run shows every problem;
 * main returns sim_test_finish(), non-zero when anything failed or when a
 * test ran no check at all (a test that asserts nothing is a defect). */
#ifndef SIM_TEST_H
#define SIM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sim_test_checks, sim_test_failures;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        sim_test_checks++;                                                  \
        if (!(cond)) {                                                      \
            sim_test_failures++;                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

/* Aborts the test when a setup step fails (nothing after it would mean anything). */
#define REQUIRE(cond, ...)                                                          \
    do {                                                                            \
        int sim_test_ok_ = (cond); /* evaluated once: cond may have side effects */ \
        CHECK(sim_test_ok_, __VA_ARGS__);                                           \
        if (!sim_test_ok_)                                                          \
            exit(1);                                                                \
    } while (0)

static inline int sim_test_finish(const char *name)
{
    printf("%s: %d checks, %d failures\n", name, sim_test_checks, sim_test_failures);
    if (sim_test_checks == 0) {
        fprintf(stderr, "%s: no check ran\n", name);
        return 1;
    }
    return sim_test_failures ? 1 : 0;
}

/* "quick" as the first argument: the reduced set the sanitizer build runs. */
static inline int sim_test_quick(int argc, char **argv) { return argc > 1 && !strcmp(argv[1], "quick"); }
/* "full": the exhaustive set behind the `full` CTest label. */
static inline int sim_test_full(int argc, char **argv) { return argc > 1 && !strcmp(argv[1], "full"); }

#endif
