/* An MPI program that knows nothing of shoal (built without it). Run under
 * LD_PRELOAD=libshoal.so it must find shoal active and still compute what
 * the host MPI computes.  plain_app --expect-shoal 0|1 */
#include <dlfcn.h>
#include <string.h>

#include "check_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int expect = argc > 2 && !strcmp(argv[1], "--expect-shoal") ? atoi(argv[2]) : -1;
    int (*enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "shoal_enabled");
    int active = enabled ? enabled() : 0;
    if (expect >= 0 && active != expect) {
        fprintf(stderr, "plain_app: shoal active %d, expected %d\n", active, expect);
        bad++;
    }
    for (int count = 1; count <= 1 << 20; count *= 16) {
        long *x = malloc(sizeof(long) * (size_t)count), *y = malloc(sizeof(long) * (size_t)count);
        long *z = malloc(sizeof(long) * (size_t)count);
        for (int i = 0; i < count; i++)
            x[i] = rank * 1000 + i;
        MPI_Allreduce(x, y, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(x, z, count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        bad += memcmp(y, z, sizeof(long) * (size_t)count) != 0;
        MPI_Bcast(x, count, MPI_LONG, size - 1, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            bad += x[i] != (long)(size - 1) * 1000 + i;
        free(x), free(y), free(z);
    }
    int all;
    PMPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_app: %d ranks, shoal %s, %d errors\n", size, active ? "active" : "not loaded", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
