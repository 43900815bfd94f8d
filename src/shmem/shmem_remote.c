/* shmem_remote: the engine's way to PEs on other nodes, MPI-3 RMA in
 * passive target: one window over each symmetric region of every PE, all
 * locked (lock_all) from shmem_init to shmem_finalize, so that a put
 * completes without its target calling anything. A PE's waits drive MPI's
 * progress meanwhile (osh_remote_ops.progress), for MPIs whose RMA over
 * TCP needs the target's help.
 * Calls: MPI. */
#include <limits.h>

#include "shmem_internal.h"

static MPI_Win windows[RMA_REGIONS] = {MPI_WIN_NULL, MPI_WIN_NULL};
static MPI_Comm progress_comm = MPI_COMM_NULL;
/* Puts or atomics not yet complete at their target. */
static _Atomic bool unflushed;

void osh_remote_open(void)
{
    for (int r = 0; r < RMA_REGIONS; r++) {
        rma_region *region = &osh.engine.region[r];
        /* Collective: every PE has the same regions (shmem_init agreed). */
        if (!region->base)
            continue;
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "accumulate_ordering", "none");
        MPI_Win_create(region->base, (MPI_Aint)region->size, 1, info, osh.world, &windows[r]);
        MPI_Info_free(&info);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, windows[r]);
    }
    /* Probing a communicator of one process makes no progress in MPICH's
     * ch4 (it answers from its self path without polling the network), so
     * the probe goes to a copy of the world, where nothing is ever sent. */
    MPI_Comm_dup(osh.world, &progress_comm);
}

void osh_remote_close(void)
{
    for (int r = 0; r < RMA_REGIONS; r++) {
        if (windows[r] == MPI_WIN_NULL)
            continue;
        MPI_Win_unlock_all(windows[r]);
        MPI_Win_free(&windows[r]);
    }
    MPI_Comm_free(&progress_comm);
    unflushed = false;
}

/* MPI counts are ints: long transfers go in pieces. */
#define PIECE ((size_t)1 << 30)

static void remote_put(void *ctx, rma_region_id region, size_t offset, const void *src, size_t bytes, int pe,
                       bool nonblocking)
{
    (void)ctx;
    for (size_t done = 0; done < bytes; done += PIECE) {
        int n = (int)(bytes - done < PIECE ? bytes - done : PIECE);
        MPI_Put((const char *)src + done, n, MPI_BYTE, pe, (MPI_Aint)(offset + done), n, MPI_BYTE, windows[region]);
    }
    if (!nonblocking)
        MPI_Win_flush_local(pe, windows[region]);
    unflushed = true;
}

static void remote_get(void *ctx, rma_region_id region, size_t offset, void *dst, size_t bytes, int pe)
{
    (void)ctx;
    for (size_t done = 0; done < bytes; done += PIECE) {
        int n = (int)(bytes - done < PIECE ? bytes - done : PIECE);
        MPI_Get((char *)dst + done, n, MPI_BYTE, pe, (MPI_Aint)(offset + done), n, MPI_BYTE, windows[region]);
    }
    MPI_Win_flush_local(pe, windows[region]);
}

/* One MPI call for a strided transfer: vectors of elem-byte blocks on
 * both sides (one derived type each), instead of a put per element. */
static MPI_Datatype strided_type(size_t count, size_t elem, ptrdiff_t stride)
{
    MPI_Datatype vector;
    MPI_Type_vector((int)count, (int)elem, (int)(stride * (ptrdiff_t)elem), MPI_BYTE, &vector);
    MPI_Type_commit(&vector);
    return vector;
}

static bool fits_one_type(size_t count, size_t elem, ptrdiff_t a, ptrdiff_t b)
{
    return count <= INT_MAX && elem <= INT_MAX && (size_t)a * elem <= INT_MAX && (size_t)b * elem <= INT_MAX;
}

static void remote_put_strided(void *ctx, rma_region_id region, size_t offset, ptrdiff_t target_stride, const void *buf,
                               ptrdiff_t buf_stride, size_t count, size_t elem, int pe)
{
    if (!fits_one_type(count, elem, target_stride, buf_stride)) {
        for (size_t i = 0; i < count; i++)
            remote_put(ctx, region, offset + i * (size_t)target_stride * elem,
                       (const char *)buf + i * (size_t)buf_stride * elem, elem, pe, true);
        return;
    }
    MPI_Datatype origin = strided_type(count, elem, buf_stride), target = strided_type(count, elem, target_stride);
    MPI_Put(buf, 1, origin, pe, (MPI_Aint)offset, 1, target, windows[region]);
    MPI_Type_free(&origin);
    MPI_Type_free(&target);
    unflushed = true;
}

static void remote_get_strided(void *ctx, rma_region_id region, size_t offset, ptrdiff_t target_stride, void *buf,
                               ptrdiff_t buf_stride, size_t count, size_t elem, int pe)
{
    if (!fits_one_type(count, elem, target_stride, buf_stride)) {
        for (size_t i = 0; i < count; i++)
            remote_get(ctx, region, offset + i * (size_t)target_stride * elem,
                       (char *)buf + i * (size_t)buf_stride * elem, elem, pe);
        return;
    }
    MPI_Datatype origin = strided_type(count, elem, buf_stride), target = strided_type(count, elem, target_stride);
    MPI_Get(buf, 1, origin, pe, (MPI_Aint)offset, 1, target, windows[region]);
    MPI_Type_free(&origin);
    MPI_Type_free(&target);
    MPI_Win_flush_local(pe, windows[region]);
}

static MPI_Op op_of(rma_atomic_op op)
{
    switch (op) {
    case RMA_AMO_FETCH: return MPI_NO_OP;
    case RMA_AMO_SET:
    case RMA_AMO_SWAP: return MPI_REPLACE;
    case RMA_AMO_FETCH_ADD: return MPI_SUM;
    case RMA_AMO_FETCH_AND: return MPI_BAND;
    case RMA_AMO_FETCH_OR: return MPI_BOR;
    case RMA_AMO_FETCH_XOR: return MPI_BXOR;
    case RMA_AMO_CSWAP: break;
    }
    return MPI_OP_NULL;
}

/* One MPI atomic on the target's word, completed before it returns. */
static uint64_t mpi_atomic(rma_atomic_op op, int width, rma_region_id region, size_t offset, uint64_t operand,
                           uint64_t compare, int pe)
{
    MPI_Datatype type = width == 4 ? MPI_UINT32_T : MPI_UINT64_T;
    uint32_t operand32 = (uint32_t)operand, compare32 = (uint32_t)compare, result32 = 0;
    uint64_t result64 = 0;
    void *operand_p = width == 4 ? (void *)&operand32 : (void *)&operand;
    void *result_p = width == 4 ? (void *)&result32 : (void *)&result64;
    if (op == RMA_AMO_CSWAP)
        MPI_Compare_and_swap(operand_p, width == 4 ? (void *)&compare32 : (void *)&compare, result_p, type, pe,
                             (MPI_Aint)offset, windows[region]);
    else
        MPI_Fetch_and_op(operand_p, result_p, type, pe, (MPI_Aint)offset, op_of(op), windows[region]);
    /* The result being here does not mean the target's word was written:
     * Open MPI 4.1's osc/pt2pt answered a swap first, and a get right
     * after it read the old value (SOS's swapm at 4 PEs on pretend nodes).
     * A flush completes the operation at the target. */
    MPI_Win_flush(pe, windows[region]);
    return width == 4 ? result32 : result64;
}

/* The bitwise operations run as a compare-and-swap loop: Open MPI 5.0.11's
 * MPI_Fetch_and_op with MPI_BAND and MPI_BOR on 64-bit words lost updates
 * under contention (shmem.np4.cliques2 of the ompi5 tree), while its
 * compare-and-swap is sound; both are MPI atomics on the same type, so the
 * loop stays atomic against every other PE's atomics. */
static uint64_t remote_atomic(void *ctx, rma_atomic_op op, int width, rma_region_id region, size_t offset,
                              uint64_t operand, uint64_t compare, int pe)
{
    (void)ctx;
    if (op != RMA_AMO_FETCH_AND && op != RMA_AMO_FETCH_OR && op != RMA_AMO_FETCH_XOR)
        return mpi_atomic(op, width, region, offset, operand, compare, pe);
    uint64_t mask = width == 4 ? UINT32_MAX : UINT64_MAX;
    uint64_t seen = mpi_atomic(RMA_AMO_FETCH, width, region, offset, 0, 0, pe);
    for (;;) {
        uint64_t wanted = op == RMA_AMO_FETCH_AND  ? seen & operand
                          : op == RMA_AMO_FETCH_OR ? seen | operand
                                                   : seen ^ operand;
        uint64_t was = mpi_atomic(RMA_AMO_CSWAP, width, region, offset, wanted & mask, seen, pe);
        if (was == seen)
            return seen;
        seen = was;
    }
}

static void remote_quiet(void *ctx)
{
    (void)ctx;
    if (!unflushed)
        return;
    for (int r = 0; r < RMA_REGIONS; r++)
        if (windows[r] != MPI_WIN_NULL)
            MPI_Win_flush_all(windows[r]);
    unflushed = false;
}

static void remote_progress(void *ctx)
{
    (void)ctx;
    int arrived;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress_comm, &arrived, MPI_STATUS_IGNORE);
}

const rma_remote_ops osh_remote_ops = {
    .put = remote_put,
    .get = remote_get,
    .atomic = remote_atomic,
    .put_strided = remote_put_strided,
    .get_strided = remote_get_strided,
    .quiet = remote_quiet,
    .progress = remote_progress,
};
