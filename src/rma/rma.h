/* rma: the one-sided engine. Symmetric regions, the translation of an
 * address to every peer's copy, put/get (contiguous and strided), atomics,
 * ordering (fence) and completion (quiet), waiting on local memory.
 *
 * A symmetric region is memory every PE has at the same offset from the
 * region's start: the symmetric heap, and the program's data and bss (which
 * ASLR puts at a different address in each process). Inside a node every
 * PE maps every local peer's copy of each region, so a put is a memcpy into
 * the peer's mapping and an atomic is a CPU atomic on it. A PE on another
 * node is reached through the remote operations an upper layer plugs in
 * (rma_remote_ops: the OpenSHMEM layer's are MPI-3 RMA windows over the
 * same regions), which complete without the target calling anything.
 *
 * Atomics are atomic against every other PE's atomics: where the job spans
 * nodes, all of them, a local peer's included, go through the remote
 * operations (a CPU atomic and the network's would not exclude each other).
 *
 * Owns: rma_engine, rma_heap (the symmetric allocator: every PE that makes
 * the same calls in the same order gets the same offsets).
 * May call: core. Never MPI: the upper layer builds the regions (segments,
 * their exchange) and hands them in. */
#ifndef SHOAL_RMA_H
#define SHOAL_RMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum rma_region_id { RMA_REGION_HEAP, RMA_REGION_DATA, RMA_REGIONS } rma_region_id;

typedef struct rma_region {
    char *base; /* this PE's copy; NULL: the region does not exist */
    size_t size;
    char **peer_base; /* [local PEs]: each local peer's copy as mapped here */
} rma_region;

typedef enum rma_atomic_op {
    RMA_AMO_FETCH,     /* returns the value */
    RMA_AMO_SET,       /* stores operand */
    RMA_AMO_SWAP,      /* stores operand, returns the old value */
    RMA_AMO_CSWAP,     /* stores operand where the value equals compare; returns the old one */
    RMA_AMO_FETCH_ADD, /* the rest return the old value too */
    RMA_AMO_FETCH_AND,
    RMA_AMO_FETCH_OR,
    RMA_AMO_FETCH_XOR,
} rma_atomic_op;

/* Comparisons of wait_until and test, as OpenSHMEM numbers them. */
typedef enum rma_cmp { RMA_CMP_EQ = 1, RMA_CMP_NE, RMA_CMP_GT, RMA_CMP_GE, RMA_CMP_LT, RMA_CMP_LE } rma_cmp;

/* How a PE on another node is reached. Offsets are from the region's start
 * on the target. put may return before the data left src only where
 * nonblocking is set (the caller keeps src until quiet); get returns with
 * the data in dst. quiet completes every operation issued so far at its
 * target; progress lets the transport serve peers while this PE waits. */
typedef struct rma_remote_ops {
    void (*put)(void *ctx, rma_region_id region, size_t offset, const void *src, size_t bytes, int pe,
                bool nonblocking);
    void (*get)(void *ctx, rma_region_id region, size_t offset, void *dst, size_t bytes, int pe);
    uint64_t (*atomic)(void *ctx, rma_atomic_op op, int width, rma_region_id region, size_t offset, uint64_t operand,
                       uint64_t compare, int pe);
    /* count elements of elem bytes, strides in elements (target side at
     * offset, local side at buf); the put complete at the next quiet, the
     * get on return. */
    void (*put_strided)(void *ctx, rma_region_id region, size_t offset, ptrdiff_t target_stride, const void *buf,
                        ptrdiff_t buf_stride, size_t count, size_t elem, int pe);
    void (*get_strided)(void *ctx, rma_region_id region, size_t offset, ptrdiff_t target_stride, void *buf,
                        ptrdiff_t buf_stride, size_t count, size_t elem, int pe);
    void (*quiet)(void *ctx);
    void (*progress)(void *ctx);
} rma_remote_ops;

typedef struct rma_engine {
    int my_pe, n_pes;
    int n_local;            /* PEs on this node */
    const int *local_index; /* [n_pes]: a PE's index among this node's PEs, -1 on other nodes */
    const pid_t *local_pid; /* [n_local]: for the liveness checks of long waits */
    rma_region region[RMA_REGIONS];
    bool remote_atomics; /* the job spans nodes: every atomic goes through remote */
    const rma_remote_ops *remote;
    void *remote_ctx;
    /* Where a bad address or PE is reported: the call's name is given. */
    void (*fail)(const char *call, const char *what);
} rma_engine;

/* Where addr lies: its region and offset, or false. */
bool rma_locate(const rma_engine *e, const void *addr, size_t bytes, rma_region_id *region, size_t *offset);
/* The target's copy of addr as mapped in this process, or NULL where pe is
 * on another node (or addr is not symmetric). */
void *rma_peer_address(const rma_engine *e, const void *addr, int pe);

/* call names the API call, for messages. Blocking put: src may be reused
 * on return. A nonblocking put or get completes at the next quiet. */
void rma_put(rma_engine *e, const char *call, void *dst, const void *src, size_t bytes, int pe, bool nonblocking);
void rma_get(rma_engine *e, const char *call, void *dst, const void *src, size_t bytes, int pe);
/* Elements of elem bytes, dst_stride and src_stride elements apart. */
void rma_put_strided(rma_engine *e, const char *call, void *dst, const void *src, ptrdiff_t dst_stride,
                     ptrdiff_t src_stride, size_t count, size_t elem, int pe);
void rma_get_strided(rma_engine *e, const char *call, void *dst, const void *src, ptrdiff_t dst_stride,
                     ptrdiff_t src_stride, size_t count, size_t elem, int pe);
/* width 4 or 8; values as their bits. */
uint64_t rma_atomic(rma_engine *e, const char *call, rma_atomic_op op, int width, void *target, uint64_t operand,
                    uint64_t compare, int pe);
/* Orders the puts and atomics before it, to each PE, before those after it. */
void rma_fence(rma_engine *e);
/* Completes every put, get and atomic issued before it. */
void rma_quiet(rma_engine *e);

/* True when the local value at addr (width 1, 2, 4 or 8 bytes; signed or
 * not) compares to value as cmp asks. */
bool rma_test(const void *addr, int width, bool is_signed, rma_cmp cmp, uint64_t value);
/* Returns once rma_test holds: spins briefly, then yields and sleeps,
 * driving the remote transport meanwhile, and ends the job with a message
 * when a local peer died. */
void rma_wait(rma_engine *e, const char *call, const volatile void *addr, int width, bool is_signed, rma_cmp cmp,
              uint64_t value);

/* Drives the remote transport once, where the job spans nodes: what a
 * program's own polling loop (shmem_test and kin) calls, since MPIs that
 * carry atomics as messages apply them only while the target calls MPI. */
void rma_progress(rma_engine *e);

/* One step of a polling loop's polite waiting (polls: steps so far):
 * spin, then yield, then sleep, driving the remote transport meanwhile and
 * now and then checking that the local PEs are alive. */
void rma_backoff(rma_engine *e, const char *call, long polls);

/* The symmetric allocator: offsets into a region of size bytes. Its
 * bookkeeping lives in private memory, so the region holds only user data
 * and every PE that makes the same calls gets the same offsets. */
typedef struct rma_heap rma_heap;
rma_heap *rma_heap_create(size_t size);
void rma_heap_destroy(rma_heap *h);
/* (size_t)-1 when no free block fits. alignment: a power of two. */
size_t rma_heap_alloc(rma_heap *h, size_t bytes, size_t alignment);
/* The block's size, 0 where offset starts no block. */
size_t rma_heap_block_size(const rma_heap *h, size_t offset);
/* False where offset starts no block. */
bool rma_heap_free(rma_heap *h, size_t offset);
#define RMA_HEAP_NONE ((size_t)-1)

#endif
