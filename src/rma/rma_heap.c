/* rma_heap: the symmetric allocator. A list of blocks sorted by offset, each
 * free or used, kept in private memory; first fit, split on allocation,
 * merged with free neighbours on release. Deterministic: the same calls give
 * the same offsets on every PE, which is what makes an allocation symmetric.
 * Calls: libc. */
#include <stdlib.h>
#include <string.h>

#include "core_sys.h"
#include "rma.h"

/* Every block starts on a cache line: neighbouring allocations of two PEs'
 * threads never share one, and any type's alignment is met. */
#define GRAIN CORE_CACHELINE

typedef struct block {
    size_t offset, size;
    bool used;
} block;

struct rma_heap {
    block *blocks;
    size_t count, capacity;
};

rma_heap *rma_heap_create(size_t size)
{
    rma_heap *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->capacity = 16;
    h->blocks = malloc(h->capacity * sizeof *h->blocks);
    if (!h->blocks) {
        free(h);
        return NULL;
    }
    h->blocks[0] = (block){0, size / GRAIN * GRAIN, false};
    h->count = 1;
    return h;
}

void rma_heap_destroy(rma_heap *h)
{
    if (h) {
        free(h->blocks);
        free(h);
    }
}

static bool insert_at(rma_heap *h, size_t at, block b)
{
    if (h->count == h->capacity) {
        block *grown = realloc(h->blocks, 2 * h->capacity * sizeof *grown);
        if (!grown)
            return false;
        h->blocks = grown;
        h->capacity *= 2;
    }
    memmove(&h->blocks[at + 1], &h->blocks[at], (h->count - at) * sizeof *h->blocks);
    h->blocks[at] = b;
    h->count++;
    return true;
}

static void remove_at(rma_heap *h, size_t at)
{
    memmove(&h->blocks[at], &h->blocks[at + 1], (h->count - at - 1) * sizeof *h->blocks);
    h->count--;
}

size_t rma_heap_alloc(rma_heap *h, size_t bytes, size_t alignment)
{
    if (alignment < GRAIN)
        alignment = GRAIN;
    if (bytes == 0 || bytes > SIZE_MAX / 2 || (alignment & (alignment - 1)))
        return RMA_HEAP_NONE;
    bytes = core_align_up(bytes, GRAIN);
    for (size_t i = 0; i < h->count; i++) {
        block b = h->blocks[i];
        if (b.used)
            continue;
        size_t start = core_align_up(b.offset, alignment);
        if (start < b.offset || start - b.offset > b.size || b.size - (start - b.offset) < bytes)
            continue;
        size_t gap = start - b.offset, rest = b.size - gap - bytes;
        /* Room for the split pieces first, so that a failed insert changes nothing. */
        if (h->capacity - h->count < 2) {
            block *grown = realloc(h->blocks, (h->capacity + 2) * 2 * sizeof *grown);
            if (!grown)
                return RMA_HEAP_NONE;
            h->blocks = grown;
            h->capacity = (h->capacity + 2) * 2;
        }
        h->blocks[i] = (block){start, bytes, true};
        if (gap)
            insert_at(h, i++, (block){b.offset, gap, false});
        if (rest)
            insert_at(h, i + 1, (block){start + bytes, rest, false});
        return start;
    }
    return RMA_HEAP_NONE;
}

static long find_used(const rma_heap *h, size_t offset)
{
    size_t lo = 0, hi = h->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->blocks[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < h->count && h->blocks[lo].offset == offset && h->blocks[lo].used)
        return (long)lo;
    return -1;
}

size_t rma_heap_block_size(const rma_heap *h, size_t offset)
{
    long i = find_used(h, offset);
    return i < 0 ? 0 : h->blocks[i].size;
}

bool rma_heap_free(rma_heap *h, size_t offset)
{
    long found = find_used(h, offset);
    if (found < 0)
        return false;
    size_t i = (size_t)found;
    h->blocks[i].used = false;
    if (i + 1 < h->count && !h->blocks[i + 1].used) {
        h->blocks[i].size += h->blocks[i + 1].size;
        remove_at(h, i + 1);
    }
    if (i > 0 && !h->blocks[i - 1].used) {
        h->blocks[i - 1].size += h->blocks[i].size;
        remove_at(h, i);
    }
    return true;
}
