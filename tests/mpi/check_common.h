/* Shared by the MPI test programs: a seeded RNG every rank can replay, and
 * failure accounting. Tests call MPI_* (shoal) and PMPI_* (the host MPI,
 * the reference) in the same process. */
#ifndef SHOAL_CHECK_COMMON_H
#define SHOAL_CHECK_COMMON_H

#include <dlfcn.h>
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

#define CHECK_FATAL(...)               \
    do {                               \
        fprintf(stderr, __VA_ARGS__);  \
        fprintf(stderr, "\n");         \
        PMPI_Abort(MPI_COMM_WORLD, 2); \
    } while (0)

/* shoal_last_choice (include/shoal.h) tells of the last call shoal
 * intercepted. One it passes to the host, an allreduce with a user-defined
 * op, makes it say "host MPI" again, so a later call that never reaches
 * shoal cannot inherit an earlier choice. Looked up at run time: some test
 * programs are built without shoal (loaded by LD_PRELOAD, or not at all). */
static inline void check_first_of(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

static inline void check_forget_last_choice(void)
{
    static MPI_Op user_op = MPI_OP_NULL;
    if (user_op == MPI_OP_NULL)
        MPI_Op_create(check_first_of, 1, &user_op);
    int x = 0, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, user_op, MPI_COMM_SELF);
    int (*last_choice)(const char **, const char **) =
        (int (*)(const char **, const char **))dlsym(RTLD_DEFAULT, "shoal_last_choice");
    if (last_choice && last_choice(NULL, NULL))
        CHECK_FATAL("a call with a user-defined op did not reset shoal_last_choice");
}

#endif
