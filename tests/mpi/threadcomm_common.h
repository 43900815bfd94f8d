/* What the thread communicator checks (threadcomm_check,
 * threadcomm_persist_check, threadcomm_pcoll_check) share: failures counted from every thread, the
 * first few printed, the values a rank sends, which any rank can compute
 * to check what it received, and a thread's start in the communicator. */
#ifndef SHOAL_THREADCOMM_COMMON_H
#define SHOAL_THREADCOMM_COMMON_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpix_threadcomm.h"

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

/* A thread's start in comm: MPIX_Threadcomm_start, its rank and the size,
 * which must be the ranks of every process's threads together. */
static inline void threadcomm_enter(MPI_Comm comm, int total_ranks, int *rank, int *size)
{
    MPIX_Threadcomm_start(comm);
    *rank = *size = -1;
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    EXPECT(*size == total_ranks, "size %d, expected %d", *size, total_ranks);
}

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

/* MPI_Init_thread (MPI_THREAD_MULTIPLE), world_rank, and the checks' common
 * arguments: --threads T (default 2), --uneven (odd processes start one
 * more) and the caller's own numeric option `extra` (its value in
 * *extra_value); anything else ends the job with `usage`. Returns how many
 * threads this process starts. Needs check_common.h's CHECK_FATAL. */
static inline int threadcomm_init_args(int *argc, char ***argv, const char *extra, int *extra_value, const char *usage)
{
    int provided, threads = 2, uneven = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    for (int i = 1; i < *argc; i++) {
        if (!strcmp((*argv)[i], "--threads") && i + 1 < *argc)
            threads = atoi((*argv)[++i]);
        else if (!strcmp((*argv)[i], extra) && i + 1 < *argc)
            *extra_value = atoi((*argv)[++i]);
        else if (!strcmp((*argv)[i], "--uneven"))
            uneven = 1;
        else
            CHECK_FATAL("%s", usage);
    }
    return threads + (uneven && world_rank % 2);
}

/* Every process's failures, summed. */
static inline long failures_everywhere(void)
{
    long mine = atomic_load(&failures), all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

#endif
