/* A /dev/shm with room for one segment (a private tmpfs made by
 * with_small_shm.sh, segments made large with SHOAL_SHM_SIZE): each
 * communicator here has its ranks in the other order from the one before,
 * so it cannot adopt the parked team and needs a segment of its own, for
 * which the parked team must first give its pages back. Every collective
 * must still be shoal's, and right. Run with SHOAL_COMM_WARMUP=0. */
#include <string.h>

#include "check_common.h"
#include "shoal.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 4; round++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, round % 2 ? size - rank : rank, &c);
        long in[16], out[16], ref[16];
        for (int i = 0; i < 16; i++)
            in[i] = 1000L * rank + 10L * round + i;
        MPI_Allreduce(in, out, 16, MPI_LONG, MPI_SUM, c);
        int by_shoal = shoal_last_choice(NULL, NULL);
        PMPI_Allreduce(in, ref, 16, MPI_LONG, MPI_SUM, c);
        if (!by_shoal || memcmp(out, ref, sizeof out)) {
            fprintf(stderr, "rank %d, round %d: %s\n", rank, round,
                    by_shoal ? "wrong allreduce result" : "the allreduce went to the host MPI");
            failures++;
        }
        MPI_Comm_free(&c);
    }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("shmroom_check: %d ranks, %d failures\n", size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
