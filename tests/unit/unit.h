/* A minimal harness for the unit tests: CHECK records a failure and goes on,
 * unit_done() prints the tally and gives the exit status. */
#ifndef SHOAL_UNIT_H
#define SHOAL_UNIT_H

#include <stdio.h>

static int unit_failures, unit_checks;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        unit_checks++;                                                               \
        if (!(cond)) {                                                               \
            unit_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
        }                                                                            \
    } while (0)

static inline int unit_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures);
    return unit_failures ? 1 : 0;
}

#endif
