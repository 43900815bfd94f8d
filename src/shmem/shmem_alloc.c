/* shmem_alloc: the symmetric heap's malloc, calloc, realloc, align and
 * free. Collective: every PE makes the same calls with the same sizes, and
 * the allocator (rma_heap) gives each the same offset. The barrier each
 * call ends with (as the specification asks) is an allreduce that also
 * checks that: PEs asking for different sizes end the job with a message
 * rather than go on with asymmetric memory.
 * Calls: rma, MPI. */
#include <string.h>

#include "shmem_internal.h"

/* The barrier of an allocation: every PE asked for bytes and got (or not)
 * an offset. Returns whether every PE got one; fails where they differ. */
static bool agree(const char *call, size_t bytes, bool got)
{
    rma_quiet(&osh.engine);
    uint64_t mine[3] = {bytes, ~(uint64_t)bytes, got ? 0 : 1}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, osh.world);
    if (all[0] != bytes || ~all[1] != bytes)
        osh_fail(call,
                 "PEs asked for different sizes (%llu to %llu bytes): symmetric memory must be alike on "
                 "every PE",
                 (unsigned long long)~all[1], (unsigned long long)all[0]);
    return all[2] == 0;
}

static void *allocate(const char *call, size_t bytes, size_t alignment)
{
    osh_require_init(call);
    if (bytes == 0) {
        agree(call, 0, true);
        return NULL;
    }
    size_t offset = rma_heap_alloc(osh.heap, bytes, alignment);
    bool all_got = agree(call, bytes, offset != RMA_HEAP_NONE);
    if (!all_got) {
        if (offset != RMA_HEAP_NONE)
            rma_heap_free(osh.heap, offset);
        core_log_error("%s: the symmetric heap (%zu bytes a PE) has no room for %zu more bytes; set "
                       "SHMEM_SYMMETRIC_SIZE higher",
                       call, osh.engine.region[RMA_REGION_HEAP].size, bytes);
        return NULL;
    }
    return osh.engine.region[RMA_REGION_HEAP].base + offset;
}

/* ptr's offset in the heap; fails where ptr starts no allocation. */
static size_t offset_of(const char *call, const void *ptr)
{
    const rma_region *heap = &osh.engine.region[RMA_REGION_HEAP];
    size_t offset = (size_t)((const char *)ptr - heap->base);
    if ((const char *)ptr < heap->base || offset >= heap->size || !rma_heap_block_size(osh.heap, offset))
        osh_fail(call, "%p is not a block of the symmetric heap (from shmem_malloc and kin)", ptr);
    return offset;
}

void *shmem_malloc(size_t size) { return allocate("shmem_malloc", size, 0); }

void *shmem_malloc_with_hints(size_t size, long hints)
{
    (void)hints;
    return allocate("shmem_malloc_with_hints", size, 0);
}

void *shmem_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        osh_fail("shmem_calloc", "%zu elements of %zu bytes overflow", count, size);
    osh_require_init("shmem_calloc");
    size_t offset = count * size != 0 ? rma_heap_alloc(osh.heap, count * size, 0) : RMA_HEAP_NONE;
    if (offset != RMA_HEAP_NONE)
        memset(osh.engine.region[RMA_REGION_HEAP].base + offset, 0, count * size);
    bool all_got = agree("shmem_calloc", count * size, count * size == 0 || offset != RMA_HEAP_NONE);
    if (count * size == 0)
        return NULL;
    if (!all_got) {
        if (offset != RMA_HEAP_NONE)
            rma_heap_free(osh.heap, offset);
        core_log_error("shmem_calloc: the symmetric heap has no room for %zu more bytes; set SHMEM_SYMMETRIC_SIZE "
                       "higher",
                       count * size);
        return NULL;
    }
    return osh.engine.region[RMA_REGION_HEAP].base + offset;
}

void *shmem_align(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)))
        osh_fail("shmem_align", "alignment %zu is not a power of two", alignment);
    osh_require_init("shmem_align");
    /* Past the heap's own alignment, an aligned offset is no aligned address. */
    if (alignment > osh.heap_alignment) {
        agree("shmem_align", size, false);
        core_log_error("shmem_align: alignment %zu is beyond the symmetric heap's (%zu bytes)", alignment,
                       osh.heap_alignment);
        return NULL;
    }
    return allocate("shmem_align", size, alignment);
}

void shmem_free(void *ptr)
{
    osh_require_init("shmem_free");
    /* Every PE is done with the block before any reuses it. */
    shmem_barrier_all();
    if (ptr)
        rma_heap_free(osh.heap, offset_of("shmem_free", ptr));
}

void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return shmem_malloc(size);
    if (size == 0) {
        shmem_free(ptr);
        return NULL;
    }
    osh_require_init("shmem_realloc");
    size_t old = offset_of("shmem_realloc", ptr), old_size = rma_heap_block_size(osh.heap, old);
    shmem_barrier_all();
    char *base = osh.engine.region[RMA_REGION_HEAP].base;
    size_t moved = rma_heap_alloc(osh.heap, size, 0);
    if (agree("shmem_realloc", size, moved != RMA_HEAP_NONE)) {
        memcpy(base + moved, ptr, old_size < size ? old_size : size);
        rma_heap_free(osh.heap, old);
        shmem_barrier_all();
        return base + moved;
    }
    if (moved != RMA_HEAP_NONE)
        rma_heap_free(osh.heap, moved);
    core_log_error("shmem_realloc: the symmetric heap has no room for %zu more bytes; the block stays as it was", size);
    return NULL;
}

void *shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void *ptr) { shmem_free(ptr); }
void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }
void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }
