/* What each benchmark is: its name, its kind, the sizes it accepts and the
 * bytes that bound it. No MPI here, so the unit tests can check it. */
#include <string.h>

#include "bench.h"

static const struct {
    const char *name;
    enum bench_kind kind;
    bool reduction;
    const char *bound_formula; /* n ranks, s bytes as the size column counts them */
} benchmark_table[BENCH_COUNT] = {
    [BENCH_BARRIER] = {"barrier", KIND_COLLECTIVE, false, "0"},
    [BENCH_BCAST] = {"bcast", KIND_COLLECTIVE, false, "(n-1)*s/n"},
    [BENCH_REDUCE] = {"reduce", KIND_COLLECTIVE, true, "(n-1)*s/n"},
    [BENCH_ALLREDUCE] = {"allreduce", KIND_COLLECTIVE, true, "2*(n-1)*s/n"},
    [BENCH_GATHER] = {"gather", KIND_COLLECTIVE, false, "s"},
    [BENCH_ALLGATHER] = {"allgather", KIND_COLLECTIVE, false, "n*s"},
    [BENCH_SCATTER] = {"scatter", KIND_COLLECTIVE, false, "s"},
    [BENCH_ALLTOALL] = {"alltoall", KIND_COLLECTIVE, false, "n*s"},
    [BENCH_REDUCE_SCATTER_BLOCK] = {"reduce_scatter_block", KIND_COLLECTIVE, true, "(n-1)*s/n"},
    [BENCH_REDUCE_SCATTER] = {"reduce_scatter", KIND_COLLECTIVE, true, "(n-1)*s/n"},
    [BENCH_SCAN] = {"scan", KIND_COLLECTIVE, true, "(n-1)*s/n"},
    [BENCH_EXSCAN] = {"exscan", KIND_COLLECTIVE, true, "(n-1)*s/n"},
    [BENCH_LATENCY] = {"latency", KIND_LATENCY, false, "s/2"},
    [BENCH_BW] = {"bw", KIND_BANDWIDTH, false, "s/2"},
};

const char *bench_name(enum bench_id id) { return benchmark_table[id].name; }
const char *bench_method_name(enum bench_method m) { return m == METHOD_OSU ? "osu" : "fresh"; }
enum bench_kind bench_kind_of(enum bench_id id) { return benchmark_table[id].kind; }
bool bench_is_reduction(enum bench_id id) { return benchmark_table[id].reduction; }
const char *bench_bound_formula(enum bench_id id) { return benchmark_table[id].bound_formula; }

int bench_from_name(const char *name)
{
    for (int id = 0; id < BENCH_COUNT; id++)
        if (strcmp(name, benchmark_table[id].name) == 0)
            return id;
    return -1;
}

/* reduce_scatter_block splits an s-byte vector into n blocks of whole
 * floats; what does not divide evenly is not sent. */
static size_t reduce_scatter_used_bytes(size_t size, int nprocs)
{
    size_t block_floats = size / sizeof(float) / (size_t)nprocs;
    return block_floats * sizeof(float) * (size_t)nprocs;
}

size_t bench_reduce_scatter_first(size_t size, int nprocs, int rank)
{
    size_t floats = size / sizeof(float), n = (size_t)nprocs, r = (size_t)rank;
    /* rank r's share is (r + 1) / (1 + 2 + ... + n) of the floats */
    return floats * (r * (r + 1) / 2) / (n * (n + 1) / 2);
}

bool bench_size_supported(enum bench_id id, size_t size, int nprocs)
{
    switch (bench_kind_of(id)) {
    case KIND_LATENCY:
    case KIND_BANDWIDTH: return true;
    case KIND_COLLECTIVE: break;
    }
    if (id == BENCH_BARRIER)
        return true;
    if (size == 0)
        return false;
    if (id == BENCH_REDUCE_SCATTER_BLOCK)
        return reduce_scatter_used_bytes(size, nprocs) > 0;
    if (bench_is_reduction(id))
        return size % sizeof(float) == 0;
    return true;
}

/* The total that must land in output buffers (or be folded into a
 * reduction's result) divided by the ranks that can share the copying:
 * with single-copy transfers any rank may copy on behalf of another, so the
 * busiest rank moves at least total / n. */
double bench_bound_bytes(enum bench_id id, size_t size, int nprocs)
{
    double n = nprocs, s = (double)size;
    switch (id) {
    case BENCH_BARRIER: return 0;
    case BENCH_BCAST: /* n-1 ranks must receive s; the root holds it already */ return (n - 1) * s / n;
    case BENCH_REDUCE: /* n-1 vectors of s folded into the root's result */ return (n - 1) * s / n;
    case BENCH_ALLREDUCE: /* the fold above, then n-1 more copies of the result */ return 2 * (n - 1) * s / n;
    case BENCH_GATHER: /* n blocks of s land in the root's buffer */
    case BENCH_SCATTER: /* n blocks of s leave the root's buffer */ return s;
    case BENCH_ALLGATHER: /* every rank's output holds n blocks of s */
    case BENCH_ALLTOALL: return n * s;
    case BENCH_REDUCE_SCATTER_BLOCK: /* each rank folds n-1 blocks of s/n */
        return (n - 1) * (double)reduce_scatter_used_bytes(size, nprocs) / n;
    case BENCH_REDUCE_SCATTER: /* n-1 vectors of s folded, whoever's blocks they are */ return (n - 1) * s / n;
    case BENCH_SCAN: /* the last rank's result folds n-1 vectors of s into its own */
    case BENCH_EXSCAN: /* (at least: every input but the last reaches a later rank) */ return (n - 1) * s / n;
    case BENCH_LATENCY: /* one message of s between two ranks, copied by both */
    case BENCH_BW: return s / 2;
    case BENCH_COUNT: break;
    }
    return 0;
}
