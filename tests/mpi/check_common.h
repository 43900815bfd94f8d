/* Shared by the MPI test programs: a seeded RNG every rank can replay, and
 * failure accounting. Tests call MPI_* (shoal) and PMPI_* (the host MPI,
 * the reference) in the same process. */
#ifndef SHOAL_CHECK_COMMON_H
#define SHOAL_CHECK_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r)
{
    /* splitmix64: tiny, and identical on every rank for the same seed */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline rng rng_make(uint64_t a, uint64_t b, uint64_t c)
{
    rng r = {a * 0x100000001b3ull ^ (b + 0x9e37) * 0xc2b2ae3d27d4eb4full ^ (c + 7) * 0x165667b19e3779f9ull};
    rng_next(&r);
    return r;
}

static inline int rng_int(rng *r, int lo, int hi) /* inclusive */
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

#define CHECK_FATAL(...)                                                                                      \
    do {                                                                                                      \
        fprintf(stderr, __VA_ARGS__);                                                                         \
        fprintf(stderr, "\n");                                                                                \
        PMPI_Abort(MPI_COMM_WORLD, 2);                                                                        \
    } while (0)

#endif
