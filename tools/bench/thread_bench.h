/* shoal-bench's thread-rank benchmarks: thread_latency (thread_latency.c)
 * and thread_coll (thread_coll.c), thread ranks of one process
 * (MPIX_Threadcomm) against as many process ranks, in one run, and the
 * helpers the two share. */
#ifndef SHOAL_BENCH_THREAD_BENCH_H
#define SHOAL_BENCH_THREAD_BENCH_H

#include <stdbool.h>
#include <stddef.h>

/* Each runs its benchmark (argv[1] is its name), finalises MPI and returns
 * the exit status. */
int thread_latency_main(int argc, char **argv);
int thread_coll_main(int argc, char **argv);

/* The options both take: -m MIN:MAX (bytes), -i ITERS, -x WARMUP; false on
 * anything else. */
bool thread_bench_options(int argc, char **argv, size_t *min, size_t *max, int *iterations, int *warmup);
/* A barrier of MPI_COMM_WORLD that sleeps while it waits, so that the
 * ranks not timing leave the cores to the threads that are. */
void thread_bench_quiet_barrier(void);

#endif
