/* shmem_remote: the engine's way to PEs on other nodes, MPI-3 RMA in
 * passive target: one window over each symmetric region of every PE, all
 * locked (lock_all) from shmem_init to shmem_finalize, so that a put
 * completes without its target calling anything. A PE's waits drive MPI's
 * progress meanwhile (osh_remote_ops.progress), for MPIs whose RMA over
 * TCP needs the target's help.
 *
 * Small blocking puts leave from a copy in a ring of this PE's (the bounce
 * ring), so they return without waiting for MPI_Win_flush_local, which is
 * a round trip wherever the host MPI's RMA needs the target's progress;
 * the ring is reclaimed by a local flush of every window when it wraps,
 * and pushed out the same way wherever this PE may wait for a peer (every
 * polling loop's progress call, a collective): an MPI that gathers puts
 * into larger messages until a flush (Open MPI 4's osc/pt2pt) would
 * otherwise hold a put whose target this PE waits for.
 * Completion is counted: every put gets a number once MPI_Put returned;
 * quiet flushes only where a put beyond the last flush's number exists,
 * and a get, or an atomic, from a PE that a blocking put not yet flushed
 * went to flushes that PE first (a blocking put, then a get of the same
 * bytes, reads what was put).
 * Calls: MPI. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_internal.h"

static MPI_Win windows[RMA_REGIONS] = {MPI_WIN_NULL, MPI_WIN_NULL};
static MPI_Comm progress_comm = MPI_COMM_NULL;

/* Numbers of puts (from 1, in the order their MPI_Put returned): the last
 * one issued, the highest that a flush of every window completed, and per
 * PE the last blocking put to it and the highest a flush of it completed.
 * A flush raises a mark to the number it saw before it started, so that
 * threads that flush at once never lower one. */
static _Atomic uint64_t puts_issued, puts_completed;
static _Atomic uint64_t *last_blocking_put_to, *completed_to; /* [n_pes] */

/* Open MPI 4's osc/pt2pt (which shmem_init asks for there) holds puts
 * until a flush: a blocking put left in the ring would not leave while this
 * PE computes, or waits in an MPI call of its own that shoal passes through,
 * and a peer that waits for it would hang. There every blocking put is
 * flushed locally, as before the ring, and no ring is made. */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
#define BOUNCE_PUTS false
#else
#define BOUNCE_PUTS true
#endif

/* Blocking puts up to BOUNCE_MAX bytes go through the ring (8 KiB: a copy
 * of it costs well under a microsecond, less than any round trip the MPI
 * can make); the ring holds 128 of them before a wrap waits. */
#define BOUNCE_MAX ((size_t)8 << 10)
#define BOUNCE_RING ((size_t)1 << 20)
#define BOUNCE_ALIGN ((size_t)64)
static char *bounce_ring;
static size_t bounce_used;
static _Atomic bool bounce_pending; /* puts from the ring not yet locally complete */
/* Under SHMEM_THREAD_MULTIPLE threads take turns on the ring: a wrap must
 * not reclaim a slot another thread is still filling. */
static bool bounce_shared;
static pthread_mutex_t bounce_lock = PTHREAD_MUTEX_INITIALIZER;

static void raise_mark(_Atomic uint64_t *mark, uint64_t to)
{
    uint64_t was = atomic_load(mark);
    while (was < to && !atomic_compare_exchange_weak(mark, &was, to))
        ;
}

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
    last_blocking_put_to = calloc((size_t)osh.n_pes, sizeof *last_blocking_put_to);
    completed_to = calloc((size_t)osh.n_pes, sizeof *completed_to);
    bounce_ring = BOUNCE_PUTS ? malloc(BOUNCE_RING) : NULL;
    if (!last_blocking_put_to || !completed_to || (BOUNCE_PUTS && !bounce_ring))
        osh_fail("shmem_init", "no memory for the bookkeeping of puts to other nodes");
    bounce_used = 0;
    bounce_shared = osh.thread_level == SHMEM_THREAD_MULTIPLE;
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
    /* unlock_all completed every put: the ring's copies are free. */
    free(bounce_ring);
    bounce_pending = false;
    free(last_blocking_put_to);
    free(completed_to);
    bounce_ring = NULL;
    last_blocking_put_to = completed_to = NULL;
    puts_issued = puts_completed = 0;
}

/* Called once the put's MPI_Put returned. */
static void count_put(int pe, bool blocking)
{
    uint64_t number = atomic_fetch_add(&puts_issued, 1) + 1;
    if (blocking)
        raise_mark(&last_blocking_put_to[pe], number);
}

/* Completes the blocking puts to pe not yet flushed: what a get or an
 * atomic on pe must see. */
static void complete_puts_to(int pe)
{
    uint64_t last = atomic_load(&last_blocking_put_to[pe]);
    if (last <= atomic_load(&puts_completed) || last <= atomic_load(&completed_to[pe]))
        return;
    for (int r = 0; r < RMA_REGIONS; r++)
        if (windows[r] != MPI_WIN_NULL)
            MPI_Win_flush(pe, windows[r]);
    raise_mark(&completed_to[pe], last);
}

/* Makes every put from the ring locally complete and the ring free again.
 * The caller holds bounce_lock where threads share the ring. */
static void reclaim_ring(void)
{
    for (int r = 0; r < RMA_REGIONS; r++)
        if (windows[r] != MPI_WIN_NULL)
            MPI_Win_flush_local_all(windows[r]);
    bounce_used = 0;
    atomic_store(&bounce_pending, false);
}

/* A copy of src in the ring, put from there. */
static void put_bounced(rma_region_id region, size_t offset, const void *src, size_t bytes, int pe)
{
    if (bounce_shared)
        pthread_mutex_lock(&bounce_lock);
    if (bounce_used + bytes > BOUNCE_RING)
        reclaim_ring();
    char *copy = bounce_ring + bounce_used;
    bounce_used += (bytes + BOUNCE_ALIGN - 1) & ~(BOUNCE_ALIGN - 1);
    memcpy(copy, src, bytes);
    MPI_Put(copy, (int)bytes, MPI_BYTE, pe, (MPI_Aint)offset, (int)bytes, MPI_BYTE, windows[region]);
    atomic_store(&bounce_pending, true);
    count_put(pe, true);
    if (bounce_shared)
        pthread_mutex_unlock(&bounce_lock);
}

void osh_remote_push(void)
{
    if (!atomic_load(&bounce_pending))
        return;
    if (bounce_shared)
        pthread_mutex_lock(&bounce_lock);
    if (atomic_load(&bounce_pending))
        reclaim_ring();
    if (bounce_shared)
        pthread_mutex_unlock(&bounce_lock);
}

/* MPI counts are ints: long transfers go in pieces. */
#define PIECE ((size_t)1 << 30)

static void remote_put(void *ctx, rma_region_id region, size_t offset, const void *src, size_t bytes, int pe,
                       bool nonblocking)
{
    (void)ctx;
    if (BOUNCE_PUTS && !nonblocking && bytes <= BOUNCE_MAX) {
        put_bounced(region, offset, src, bytes, pe);
        return;
    }
    for (size_t done = 0; done < bytes; done += PIECE) {
        int n = (int)(bytes - done < PIECE ? bytes - done : PIECE);
        MPI_Put((const char *)src + done, n, MPI_BYTE, pe, (MPI_Aint)(offset + done), n, MPI_BYTE, windows[region]);
    }
    if (!nonblocking)
        MPI_Win_flush_local(pe, windows[region]);
    count_put(pe, !nonblocking);
}

static void remote_get(void *ctx, rma_region_id region, size_t offset, void *dst, size_t bytes, int pe)
{
    (void)ctx;
    complete_puts_to(pe);
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
    count_put(pe, false);
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
    complete_puts_to(pe);
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
    complete_puts_to(pe);
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
    uint64_t issued = atomic_load(&puts_issued);
    if (atomic_load(&puts_completed) >= issued)
        return;
    for (int r = 0; r < RMA_REGIONS; r++)
        if (windows[r] != MPI_WIN_NULL)
            MPI_Win_flush_all(windows[r]);
    raise_mark(&puts_completed, issued);
}

static void remote_progress(void *ctx)
{
    (void)ctx;
    osh_remote_push();
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
