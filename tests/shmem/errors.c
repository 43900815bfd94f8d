/* shmem_errors MODE: a program that misuses OpenSHMEM one way, for the
 * tests that the job ends with a message naming the call instead of a
 * crash or a hang (tests/shmem/CMakeLists.txt lists what each must say).
 *   not-symmetric  a put whose destination is a local (stack) variable
 *   bad-pe         a put to a PE beyond the job
 *   sizes-differ   shmem_malloc with a different size on one PE
 *   dead-pe        PE 1 dies while PE 0 waits for it in wait_until */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

static long flag;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long value = 42, on_stack = 0;
    if (!strcmp(mode, "not-symmetric")) {
        if (me == 0)
            shmem_long_put(&on_stack, &value, 1, npes - 1);
    } else if (!strcmp(mode, "bad-pe")) {
        if (me == 0)
            shmem_long_put(&flag, &value, 1, npes);
    } else if (!strcmp(mode, "sizes-differ")) {
        shmem_malloc(me == 0 ? 100 : 200);
    } else if (!strcmp(mode, "dead-pe")) {
        if (me == 1)
            raise(SIGKILL);
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    } else {
        fprintf(stderr, "usage: shmem_errors not-symmetric|bad-pe|sizes-differ|dead-pe\n");
        return 2;
    }
    shmem_barrier_all();
    printf("PE %d: the misuse went unnoticed\n", me);
    shmem_finalize();
    return 0;
}
