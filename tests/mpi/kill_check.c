/* A rank dies in the middle of collectives: the others must not hang. Rank
 * `victim` arms a timer whose signal ends it at a random moment while every
 * rank runs allreduce, bcast and barrier in a loop; the job has to end (with
 * shoal's or the launcher's message) well within the test's time limit.
 *   kill_check [victim] [delay-ms] */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = argc > 1 ? atoi(argv[1]) % size : size - 1;
    int delay_ms = argc > 2 ? atoi(argv[2]) : 300;
    if (rank == victim) {
        signal(SIGALRM, SIG_DFL); /* default action: terminate */
        struct itimerval it = {.it_value = {.tv_sec = delay_ms / 1000, .tv_usec = (delay_ms % 1000) * 1000}};
        setitimer(ITIMER_REAL, &it, NULL);
    }
    size_t n = 1 << 18;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++)
        a[i] = (double)i;
    for (long it = 0;; it++) {
        size_t count = it % 3 == 0 ? 1 : it % 3 == 1 ? 512 : n;
        MPI_Allreduce(a, b, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(a, (int)count, MPI_DOUBLE, (int)(it % size), MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}
