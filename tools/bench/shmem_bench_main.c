/* shmem-bench: the OpenSHMEM benchmark of shmem_bench.c as a program of
 * its own, on the OpenSHMEM API alone, so that any OpenSHMEM builds it:
 *
 *   oshcc -o shmem-bench shmem_bench_main.c shmem_bench.c   (shoal's, or Open MPI's /usr/bin/oshcc)
 *   oshrun -np 2 ./shmem-bench [-m MIN:MAX] [--batches B]
 *
 * scripts/shmem_peer_bench.sh runs shoal's build and Open MPI's run by run.
 * Every figure is printed as soon as it is measured (Open MPI's oshmem may
 * crash at exit). Calls: the OpenSHMEM API, shmem_bench.c. */
#include <shmem.h>
#include <stdio.h>

#include "shmem_bench.h"

int main(int argc, char **argv)
{
    shmem_bench_options opt = {.min = 8, .max = (size_t)1 << 20, .batches = 5, .title = "shmem-bench"};
    shmem_init();
    if (!shmem_bench_parse(argc, argv, 1, &opt)) {
        if (shmem_my_pe() == 0)
            fprintf(stderr, "usage: shmem-bench [-m MIN:MAX] [--batches B]\n");
        shmem_finalize();
        return 2;
    }
    int status = shmem_bench_run(&opt, NULL);
    shmem_finalize();
    return status;
}
