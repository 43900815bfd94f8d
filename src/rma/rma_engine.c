/* rma_engine: one-sided operations on symmetric regions. Inside a node a
 * put is a memcpy into the target's mapping and an atomic a CPU atomic on
 * it; a PE on another node goes through the engine's remote operations.
 * Calls: core (clocks, liveness, the fatal path), libc. */
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core_log.h"
#include "core_sys.h"
#include "rma.h"

static bool in_region(const rma_region *r, const char *p, size_t bytes)
{
    return r->base && p >= r->base && (size_t)(p - r->base) <= r->size && bytes <= r->size - (size_t)(p - r->base);
}

bool rma_locate(const rma_engine *e, const void *addr, size_t bytes, rma_region_id *region, size_t *offset)
{
    for (int r = 0; r < RMA_REGIONS; r++) {
        if (in_region(&e->region[r], addr, bytes)) {
            *region = (rma_region_id)r;
            *offset = (size_t)((const char *)addr - e->region[r].base);
            return true;
        }
    }
    return false;
}

static void fail(const rma_engine *e, const char *call, const char *fmt, ...) CORE_PRINTF(3, 4);

static void fail(const rma_engine *e, const char *call, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (e->fail)
        e->fail(call, what);
    core_fatal("%s: %s", call, what);
}

static void check_pe(const rma_engine *e, const char *call, int pe)
{
    if (pe < 0 || pe >= e->n_pes)
        fail(e, call, "PE %d is out of range (the job has PEs 0..%d)", pe, e->n_pes - 1);
}

/* The symmetric address addr of bytes on pe: its region and offset, and the
 * target's mapping here where pe is on this node (else *local = NULL). */
static void resolve(const rma_engine *e, const char *call, const void *addr, size_t bytes, int pe,
                    rma_region_id *region, size_t *offset, char **local)
{
    check_pe(e, call, pe);
    if (!rma_locate(e, addr, bytes, region, offset))
        fail(e, call,
             "address %p (%zu bytes) is not symmetric: it is neither in the symmetric heap (shmem_malloc) "
             "nor in the program's global and static data",
             addr, bytes);
    int local_pe = e->local_index[pe];
    *local = local_pe >= 0 && e->region[*region].peer_base[local_pe] ? e->region[*region].peer_base[local_pe] + *offset
                                                                     : NULL;
}

void *rma_peer_address(const rma_engine *e, const void *addr, int pe)
{
    rma_region_id region;
    size_t offset;
    if (pe < 0 || pe >= e->n_pes || !rma_locate(e, addr, 1, &region, &offset) || e->local_index[pe] < 0)
        return NULL;
    char *peer = e->region[region].peer_base[e->local_index[pe]];
    return peer ? peer + offset : NULL;
}

/* Long copies go in pieces of COPY_PIECE: glibc's memcpy moves up to
 * its rep_movsb_stop_threshold (the L2's size on AMD, 1 MiB on the test
 * machine) with `rep movsb` and longer ones with a vector loop that ran
 * 15 % slower at 1 MiB and up to 7 times slower at 16 MiB there (2-core
 * AMD EPYC VM, glibc 2.36, where Open MPI 4.1's MPI_Put into an
 * MPI_Win_allocate window took 15 us for 1 MiB and shoal's put 18); in
 * pieces every copy stays on the fast path. */
#define COPY_PIECE ((size_t)512 << 10)

static void copy_bytes(char *dst, const char *src, size_t bytes)
{
    for (size_t done = 0; done < bytes; done += COPY_PIECE)
        memcpy(dst + done, src + done, bytes - done < COPY_PIECE ? bytes - done : COPY_PIECE);
}

void rma_put(rma_engine *e, const char *call, void *dst, const void *src, size_t bytes, int pe, bool nonblocking)
{
    if (bytes == 0)
        return;
    rma_region_id region;
    size_t offset;
    char *local;
    resolve(e, call, dst, bytes, pe, &region, &offset, &local);
    if (local)
        copy_bytes(local, src, bytes);
    else
        e->remote->put(e->remote_ctx, region, offset, src, bytes, pe, nonblocking);
}

void rma_get(rma_engine *e, const char *call, void *dst, const void *src, size_t bytes, int pe)
{
    if (bytes == 0)
        return;
    rma_region_id region;
    size_t offset;
    char *local;
    resolve(e, call, src, bytes, pe, &region, &offset, &local);
    if (local)
        copy_bytes(dst, local, bytes);
    else
        e->remote->get(e->remote_ctx, region, offset, dst, bytes, pe);
}

/* The bytes a strided run of count elements spans, from its first. */
static size_t strided_span(ptrdiff_t stride, size_t count, size_t elem, const char *call, const rma_engine *e)
{
    if (stride < 1)
        fail(e, call, "stride %td is not positive", stride);
    return ((size_t)stride * (count - 1) + 1) * elem;
}

/* count elements of elem bytes from src to dst, dst_stride and src_stride
 * elements apart, where the target's side (dst of a put, src of a get) is
 * symmetric on pe. */
static void transfer_strided(rma_engine *e, const char *call, bool put, char *dst, const char *src,
                             ptrdiff_t dst_stride, ptrdiff_t src_stride, size_t count, size_t elem, int pe)
{
    if (count == 0)
        return;
    size_t dst_span = strided_span(dst_stride, count, elem, call, e);
    size_t src_span = strided_span(src_stride, count, elem, call, e);
    rma_region_id region;
    size_t offset;
    char *mapped;
    resolve(e, call, put ? dst : src, put ? dst_span : src_span, pe, &region, &offset, &mapped);
    if (!mapped && put) {
        e->remote->put_strided(e->remote_ctx, region, offset, dst_stride, src, src_stride, count, elem, pe);
        /* A blocking call: the source may be reused on return. */
        e->remote->quiet(e->remote_ctx);
        return;
    }
    if (!mapped) {
        e->remote->get_strided(e->remote_ctx, region, offset, src_stride, dst, dst_stride, count, elem, pe);
        return;
    }
    if (put)
        dst = mapped;
    else
        src = mapped;
    for (size_t i = 0; i < count; i++)
        memcpy(dst + i * (size_t)dst_stride * elem, src + i * (size_t)src_stride * elem, elem);
}

void rma_put_strided(rma_engine *e, const char *call, void *dst, const void *src, ptrdiff_t dst_stride,
                     ptrdiff_t src_stride, size_t count, size_t elem, int pe)
{
    transfer_strided(e, call, true, dst, src, dst_stride, src_stride, count, elem, pe);
}

void rma_get_strided(rma_engine *e, const char *call, void *dst, const void *src, ptrdiff_t dst_stride,
                     ptrdiff_t src_stride, size_t count, size_t elem, int pe)
{
    transfer_strided(e, call, false, dst, src, dst_stride, src_stride, count, elem, pe);
}

#define CPU_ATOMIC(T, p, op, operand, compare)                                                     \
    do {                                                                                           \
        T *at = (T *)(p), val = (T)(operand), old;                                                 \
        switch (op) {                                                                              \
        case RMA_AMO_FETCH: return __atomic_load_n(at, __ATOMIC_SEQ_CST);                          \
        case RMA_AMO_SET: __atomic_store_n(at, val, __ATOMIC_SEQ_CST); return 0;                   \
        case RMA_AMO_SWAP: return __atomic_exchange_n(at, val, __ATOMIC_SEQ_CST);                  \
        case RMA_AMO_CSWAP:                                                                        \
            old = (T)(compare);                                                                    \
            __atomic_compare_exchange_n(at, &old, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            return old;                                                                            \
        case RMA_AMO_FETCH_ADD: return __atomic_fetch_add(at, val, __ATOMIC_SEQ_CST);              \
        case RMA_AMO_FETCH_AND: return __atomic_fetch_and(at, val, __ATOMIC_SEQ_CST);              \
        case RMA_AMO_FETCH_OR: return __atomic_fetch_or(at, val, __ATOMIC_SEQ_CST);                \
        case RMA_AMO_FETCH_XOR: return __atomic_fetch_xor(at, val, __ATOMIC_SEQ_CST);              \
        }                                                                                          \
        return 0;                                                                                  \
    } while (0)

static uint64_t cpu_atomic32(void *p, rma_atomic_op op, uint64_t operand, uint64_t compare)
{
    CPU_ATOMIC(uint32_t, p, op, operand, compare);
}

static uint64_t cpu_atomic64(void *p, rma_atomic_op op, uint64_t operand, uint64_t compare)
{
    CPU_ATOMIC(uint64_t, p, op, operand, compare);
}

uint64_t rma_atomic(rma_engine *e, const char *call, rma_atomic_op op, int width, void *target, uint64_t operand,
                    uint64_t compare, int pe)
{
    rma_region_id region;
    size_t offset;
    char *local;
    resolve(e, call, target, (size_t)width, pe, &region, &offset, &local);
    if ((uintptr_t)target % (uintptr_t)width)
        fail(e, call, "address %p is not aligned to its %d-byte type", target, width);
    if (local && !e->remote_atomics)
        return width == 4 ? cpu_atomic32(local, op, operand, compare) : cpu_atomic64(local, op, operand, compare);
    return e->remote->atomic(e->remote_ctx, op, width, region, offset, operand, compare, pe);
}

static bool spans_nodes(const rma_engine *e) { return e->remote && e->n_local < e->n_pes; }

void rma_fence(rma_engine *e)
{
    atomic_thread_fence(memory_order_seq_cst);
    /* MPI orders nothing short of completion. */
    if (spans_nodes(e))
        e->remote->quiet(e->remote_ctx);
}

void rma_quiet(rma_engine *e)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (spans_nodes(e))
        e->remote->quiet(e->remote_ctx);
}

bool rma_test(const void *addr, int width, bool is_signed, rma_cmp cmp, uint64_t value)
{
    uint64_t u;
    int64_t s;
    switch (width) {
    case 1:
        u = __atomic_load_n((const uint8_t *)addr, __ATOMIC_ACQUIRE);
        s = (int8_t)u;
        break;
    case 2:
        u = __atomic_load_n((const uint16_t *)addr, __ATOMIC_ACQUIRE);
        s = (int16_t)u;
        break;
    case 4:
        u = __atomic_load_n((const uint32_t *)addr, __ATOMIC_ACQUIRE);
        s = (int32_t)u;
        break;
    default:
        u = __atomic_load_n((const uint64_t *)addr, __ATOMIC_ACQUIRE);
        s = (int64_t)u;
        break;
    }
    if (width < 8) {
        uint64_t mask = (UINT64_C(1) << (8 * width)) - 1;
        value &= mask;
        int64_t sv = (int64_t)(value << (64 - 8 * width)) >> (64 - 8 * width);
        if (is_signed)
            value = (uint64_t)sv;
    }
    int order = is_signed ? (s > (int64_t)value) - (s < (int64_t)value) : (u > value) - (u < value);
    switch (cmp) {
    case RMA_CMP_EQ: return order == 0;
    case RMA_CMP_NE: return order != 0;
    case RMA_CMP_GT: return order > 0;
    case RMA_CMP_GE: return order >= 0;
    case RMA_CMP_LT: return order < 0;
    case RMA_CMP_LE: return order <= 0;
    }
    return false;
}

void rma_progress(rma_engine *e)
{
    if (spans_nodes(e) && e->remote->progress)
        e->remote->progress(e->remote_ctx);
}

static void check_local_peers(const rma_engine *e, const char *call)
{
    for (int i = 0; i < e->n_local; i++)
        if (e->local_pid && e->local_pid[i] > 0 && !core_pid_alive(e->local_pid[i]))
            core_fatal("%s: a PE on this node (process %d) died while PE %d waited; ending the job", call,
                       (int)e->local_pid[i], e->my_pe);
}

/* Polls spent spinning, then yielding, before sleeping; sleeps between
 * liveness checks. Spin while each local PE can have a core; where they
 * take turns, the PE we wait for needs ours. */
#define SPIN_POLLS 20000
#define SPIN_POLLS_SHARED 50
#define YIELD_POLLS 200
#define SLEEP_NS 20000
#define SLEEPS_PER_CHECK 4096

void rma_backoff(rma_engine *e, const char *call, long polls)
{
    long spin = e->n_local <= core_cpu_count() ? SPIN_POLLS : SPIN_POLLS_SHARED;
    if (polls < spin) {
        core_cpu_relax();
        return;
    }
    rma_progress(e);
    long later = polls - spin;
    if (later < YIELD_POLLS) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, SLEEP_NS};
    nanosleep(&ts, NULL);
    if ((later - YIELD_POLLS) % SLEEPS_PER_CHECK == SLEEPS_PER_CHECK - 1)
        check_local_peers(e, call);
}

void rma_wait(rma_engine *e, const char *call, const volatile void *addr, int width, bool is_signed, rma_cmp cmp,
              uint64_t value)
{
    const void *p = (const void *)addr;
    for (long polls = 0; !rma_test(p, width, is_signed, cmp, value); polls++)
        rma_backoff(e, call, polls);
}
