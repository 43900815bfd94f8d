/* extensions: shmemx.h against values computed locally. Every PE adds
 * its number + 1 to PE 0's signal word (with and without a context), sets
 * its own slot on the next PE, and waits for its own slot; PE 0 waits for
 * the sum. shmemx_wtime advances; SHMEMX_TEAM_NODE is this node's team.
 * Exits non-zero on a failed check. */
#include <shmemx.h>
#include <stdio.h>

static uint64_t sum_signal, slot_signal;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), failures = 0;
    double start = shmemx_wtime();
    shmem_barrier_all();
    if (me % 2)
        shmemx_signal_add(&sum_signal, (uint64_t)me + 1, 0);
    else
        shmemx_signal_add(SHMEM_CTX_DEFAULT, &sum_signal, (uint64_t)me + 1, 0);
    shmemx_signal_set(SHMEM_CTX_DEFAULT, &slot_signal, 1000 + (uint64_t)me, (me + 1) % npes);
    uint64_t expected_slot = 1000 + (uint64_t)((me + npes - 1) % npes);
    uint64_t slot = shmem_signal_wait_until(&slot_signal, SHMEM_CMP_EQ, expected_slot);
    uint64_t expected_sum = (uint64_t)npes * (uint64_t)(npes + 1) / 2;
    if (me == 0) {
        uint64_t sum = shmem_signal_wait_until(&sum_signal, SHMEM_CMP_GE, expected_sum);
        if (sum != expected_sum) {
            fprintf(stderr, "PE 0: signal sum %llu, expected %llu\n", (unsigned long long)sum,
                    (unsigned long long)expected_sum);
            failures++;
        }
    }
    if (slot != expected_slot) {
        fprintf(stderr, "PE %d: slot %llu, expected %llu\n", me, (unsigned long long)slot,
                (unsigned long long)expected_slot);
        failures++;
    }
    if (!(shmemx_wtime() >= start)) {
        fprintf(stderr, "PE %d: shmemx_wtime went back\n", me);
        failures++;
    }
    if (shmem_team_n_pes(SHMEMX_TEAM_NODE) != shmem_team_n_pes(SHMEM_TEAM_SHARED)) {
        fprintf(stderr, "PE %d: SHMEMX_TEAM_NODE has %d PEs, SHMEM_TEAM_SHARED %d\n", me,
                shmem_team_n_pes(SHMEMX_TEAM_NODE), shmem_team_n_pes(SHMEM_TEAM_SHARED));
        failures++;
    }
    shmem_barrier_all();
    if (me == 0 && !failures)
        printf("extensions: signal add and set, wtime, SHMEMX_TEAM_NODE right (%d PEs)\n", npes);
    shmem_finalize();
    return failures ? 1 : 0;
}
