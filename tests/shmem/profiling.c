/* profiling: the OpenSHMEM profiling interface. This program defines
 * shmem_long_put and shmem_barrier_all itself, as a profiling tool does,
 * counts the calls and passes them on to the library's pshmem_ names; the
 * puts must land and every call be counted once. Exits non-zero on a
 * failed check. */
#include <shmem.h>
#include <stdio.h>

void pshmem_long_put(long *dest, const long *source, size_t nelems, int pe);
void pshmem_barrier_all(void);
int pshmem_my_pe(void);

static int puts_seen, barriers_seen;

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    puts_seen++;
    pshmem_long_put(dest, source, nelems, pe);
}

void shmem_barrier_all(void)
{
    barriers_seen++;
    pshmem_barrier_all();
}

static long block[4];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), failures = 0;
    if (pshmem_my_pe() != me) {
        fprintf(stderr, "PE %d: pshmem_my_pe says %d\n", me, pshmem_my_pe());
        failures++;
    }
    long mine[4] = {me, me + 1, me + 2, me + 3};
    shmem_long_put(block, mine, 4, (me + 1) % npes);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes;
    for (int i = 0; i < 4; i++)
        if (block[i] != left + i) {
            fprintf(stderr, "PE %d: block[%d] = %ld, expected %d\n", me, i, block[i], left + i);
            failures++;
        }
    if (puts_seen != 1 || barriers_seen != 1) {
        fprintf(stderr, "PE %d: the tool saw %d puts and %d barriers, expected 1 and 1\n", me, puts_seen,
                barriers_seen);
        failures++;
    }
    if (me == 0 && !failures)
        printf("profiling: shmem_long_put and shmem_barrier_all reached the tool and then pshmem_ (%d PEs)\n", npes);
    shmem_finalize();
    return failures ? 1 : 0;
}
