/* A program a user builds against an installed shoal: install_check.sh
 * compiles it once through pkg-config and once through find_package(shoal),
 * from the install prefix only. Run at np >= 2 on one node, it checks that
 * the libshoal it runs is the installed one and active, that shoal (not the
 * host MPI) takes every MPI_Allreduce on doubles, and that every element is
 * the sum computed here. Rank 0 prints the verdict; the exit code is 0 only
 * when all holds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <shoal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Which file shoal_enabled came from: the installed libshoal, not a build tree's. */
    Dl_info where = {0};
    const char *lib = dladdr((void *)shoal_enabled, &where) && where.dli_fname ? where.dli_fname : "?";

    long wrong = 0;
    int taken = 0, calls = 0;
    const char *algorithm = "-", *lane = "-";
    /* 8 B to 2 MiB a rank. Floating-point reductions are shoal's from a
     * communicator's first call (no warm-up); the values are small integers,
     * so the sum is exact in any order. */
    for (int count = 1; count <= 1 << 18; count *= 8) {
        double *x = malloc(sizeof(double) * (size_t)count), *y = malloc(sizeof(double) * (size_t)count);
        if (!x || !y)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < count; i++) {
            x[i] = (double)(rank + 1) * (double)(i % 1000 + 1);
            y[i] = -1.0;
        }
        MPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        taken += shoal_last_choice(&algorithm, &lane);
        calls++;
        double ranks_sum = (double)size * (double)(size + 1) / 2.0;
        for (int i = 0; i < count; i++)
            wrong += y[i] != ranks_sum * (double)(i % 1000 + 1);
        free(x);
        free(y);
    }

    /* The verdict travels by the host MPI's own allreduce, past shoal. */
    long mine[3] = {wrong, taken, shoal_enabled()}, all[3];
    PMPI_Allreduce(mine, all, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = all[0] == 0 && all[1] == (long)calls * size && all[2] == size;
    if (rank == 0) {
        printf("install_app: libshoal %s\n", lib);
        printf("install_app: %d ranks, shoal %s on %ld, %ld of %ld allreduces taken by shoal (last: %s over %s), "
               "%ld wrong elements: %s\n",
               size, shoal_version(), all[2], all[1], (long)calls * size, algorithm, lane, all[0],
               ok ? "OK" : "FAILED");
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
