/* What the thread communicator checks (threadcomm_check,
 * threadcomm_persist_check) share: failures counted from every thread, the
 * first few printed, and the values a rank sends, which any rank can
 * compute to check what it received. */
#ifndef SHOAL_THREADCOMM_COMMON_H
#define SHOAL_THREADCOMM_COMMON_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Runs body on n new threads of this process, and waits for them. */
static inline void run_threads(int n, void *(*body)(void *))
{
    pthread_t *ids = malloc(sizeof(pthread_t) * (size_t)n);
    for (int t = 0; t < n; t++)
        pthread_create(&ids[t], NULL, body, NULL);
    for (int t = 0; t < n; t++)
        pthread_join(ids[t], NULL);
    free(ids);
}

/* Every process's failures, summed. */
static inline long failures_everywhere(void)
{
    long mine = atomic_load(&failures), all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

#endif
