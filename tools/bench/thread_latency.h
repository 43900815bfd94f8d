/* shoal-bench thread_latency (thread_latency.c): latency between two thread
 * ranks of one process against two process ranks of the host MPI. */
#ifndef SHOAL_BENCH_THREAD_LATENCY_H
#define SHOAL_BENCH_THREAD_LATENCY_H

#include <stdbool.h>

/* Runs the benchmark (argv[1] is its name) and finalises MPI; the exit status. */
int thread_latency_main(int argc, char **argv);

#endif
