/* shmem_extensions: the shmemx_ routines of include/shmemx.h.
 * Calls: rma (through the engine of shmem_init), libc. */
#include <time.h>

#include "shmem_internal.h"
#include "shmemx.h"

double shmemx_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void update_signal(const char *call, rma_atomic_op op, uint64_t *sig_addr, uint64_t signal, int pe)
{
    rma_atomic(osh_engine(call), call, op, 8, sig_addr, signal, 0, pe);
}

void shmemx_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    update_signal("shmemx_signal_set", RMA_AMO_SET, sig_addr, signal, pe);
}

void shmemx_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    update_signal("shmemx_signal_add", RMA_AMO_FETCH_ADD, sig_addr, signal, pe);
}

void shmemx_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    shmemx_signal_set(sig_addr, signal, osh_ctx_pe(ctx, pe));
}

void shmemx_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    shmemx_signal_add(sig_addr, signal, osh_ctx_pe(ctx, pe));
}
