/* What the thread communicator checks (threadcomm_check,
 * threadcomm_persist_check) share: failures counted from every thread, the
 * first few printed, and the values a rank sends, which any rank can
 * compute to check what it received. */
#ifndef SHOAL_THREADCOMM_COMMON_H
#define SHOAL_THREADCOMM_COMMON_H

#include <stdatomic.h>
#include <stdio.h>

static int world_rank;
static _Atomic long failures;

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            if (atomic_fetch_add(&failures, 1) < 20) {                         \
                fprintf(stderr, "[world %d] line %d: ", world_rank, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                                  \
                fputc('\n', stderr);                                           \
            }                                                                  \
        }                                                                      \
    } while (0)

static inline int value(int rank, int i, int salt) { return rank * 100003 + i * 7 + salt; }

#endif
