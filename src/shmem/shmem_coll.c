/* shmem_coll: broadcast, collect, fcollect, alltoall(s) and the reductions,
 * on teams (1.5) and on active sets. Each is the MPI collective on the
 * team's communicator, which shoal's MPI layer runs over its node teams
 * and, across nodes, in two levels. pSync and pWrk are not needed.
 * Calls: MPI. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_internal.h"

/* MPI counts are ints: longer buffers go in pieces of this many elements. */
#define PIECE (INT_MAX / 16)

static void bcast_bytes(void *buf, size_t bytes, int root, MPI_Comm comm)
{
    for (size_t done = 0; done < bytes; done += PIECE) {
        size_t n = bytes - done < PIECE ? bytes - done : PIECE;
        MPI_Bcast((char *)buf + done, (int)n, MPI_BYTE, root, comm);
    }
}

static void check_count(const char *call, size_t bytes)
{
    if (bytes > INT_MAX)
        osh_fail(call, "blocks of %zu bytes are more than shoal's collectives take (%d)", bytes, INT_MAX);
}

static void check_root(const char *call, int root, MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size)
        osh_fail(call, "root %d is not a PE of the team or active set (0..%d)", root, size - 1);
}

/* The team form updates the root's dest too; the active-set form leaves
 * it alone. */
static void broadcast(const char *call, MPI_Comm comm, void *dest, const void *source, size_t bytes, int root,
                      bool root_gets_copy)
{
    check_root(call, root, comm);
    int me;
    MPI_Comm_rank(comm, &me);
    if (me == root && !root_gets_copy) {
        bcast_bytes((void *)source, bytes, root, comm);
        return;
    }
    if (me == root && dest != source)
        memmove(dest, source, bytes);
    bcast_bytes(dest, bytes, root, comm);
}

/* MPI forbids a send buffer that overlaps the receive buffer; OpenSHMEM
 * programs pass one (in place, or with a dest shorter than what it
 * receives, which then runs into the next block). Returns source, or where
 * the two overlap a copy of it in *copy (for the caller to free). */
static const void *apart_from(const char *call, const void *source, size_t bytes, const void *dest, size_t dest_bytes,
                              void **copy)
{
    *copy = NULL;
    const char *s = source, *d = dest;
    if (bytes == 0 || s + bytes <= d || d + dest_bytes <= s)
        return source;
    *copy = malloc(bytes);
    if (!*copy)
        osh_fail(call, "out of memory for a copy of the %zu-byte source", bytes);
    memcpy(*copy, source, bytes);
    return *copy;
}

static int comm_size(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    return size;
}

static void fcollect(const char *call, MPI_Comm comm, void *dest, const void *source, size_t bytes)
{
    check_count(call, bytes);
    void *copy;
    source = apart_from(call, source, bytes, dest, bytes * (size_t)comm_size(comm), &copy);
    MPI_Allgather(source, (int)bytes, MPI_BYTE, dest, (int)bytes, MPI_BYTE, comm);
    free(copy);
}

static void collect(const char *call, MPI_Comm comm, void *dest, const void *source, size_t bytes)
{
    check_count(call, bytes);
    int size;
    MPI_Comm_size(comm, &size);
    int *counts = malloc((size_t)size * sizeof *counts), *offsets = malloc((size_t)size * sizeof *offsets);
    int mine = (int)bytes;
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, comm);
    long total = 0;
    for (int i = 0; i < size; i++) {
        offsets[i] = (int)total;
        total += counts[i];
    }
    if (total > INT_MAX)
        osh_fail(call, "%ld bytes in all are more than shoal's collect takes (%d)", total, INT_MAX);
    void *copy;
    source = apart_from(call, source, bytes, dest, (size_t)total, &copy);
    MPI_Allgatherv(source, mine, MPI_BYTE, dest, counts, offsets, MPI_BYTE, comm);
    free(copy);
    free(counts);
    free(offsets);
}

static void alltoall(const char *call, MPI_Comm comm, void *dest, const void *source, size_t bytes)
{
    check_count(call, bytes);
    size_t all = bytes * (size_t)comm_size(comm);
    void *copy;
    source = apart_from(call, source, all, dest, all, &copy);
    MPI_Alltoall(source, (int)bytes, MPI_BYTE, dest, (int)bytes, MPI_BYTE, comm);
    free(copy);
}

/* Block j of source (nelems elements sst apart, from element j*nelems*sst)
 * goes to PE j, which stores it dst apart from element i*nelems*dst. */
static void alltoalls(const char *call, MPI_Comm comm, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                      size_t nelems, size_t elem)
{
    if (dst < 1 || sst < 1)
        osh_fail(call, "strides %td and %td must be positive", dst, sst);
    int size;
    MPI_Comm_size(comm, &size);
    size_t block = nelems * elem;
    char *packed = malloc(block * (size_t)size + 1), *received = malloc(block * (size_t)size + 1);
    for (size_t k = 0; k < nelems * (size_t)size; k++)
        memcpy(packed + k * elem, (const char *)source + k * (size_t)sst * elem, elem);
    alltoall(call, comm, received, packed, block);
    for (size_t k = 0; k < nelems * (size_t)size; k++)
        memcpy((char *)dest + k * (size_t)dst * elem, received + k * elem, elem);
    free(packed);
    free(received);
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    broadcast("shmem_broadcastmem", osh_team_comm("shmem_broadcastmem", team), dest, source, nelems, PE_root, true);
    return 0;
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    collect("shmem_collectmem", osh_team_comm("shmem_collectmem", team), dest, source, nelems);
    return 0;
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    fcollect("shmem_fcollectmem", osh_team_comm("shmem_fcollectmem", team), dest, source, nelems);
    return 0;
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    alltoall("shmem_alltoallmem", osh_team_comm("shmem_alltoallmem", team), dest, source, nelems);
    return 0;
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems)
{
    alltoalls("shmem_alltoallsmem", osh_team_comm("shmem_alltoallsmem", team), dest, source, dst, sst, nelems, 1);
    return 0;
}

#define DEFINE_TEAM_COLL(T, N)                                                                                     \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root)             \
    {                                                                                                              \
        broadcast("shmem_" #N "_broadcast", osh_team_comm("shmem_" #N "_broadcast", team), dest, source,           \
                  nelems * sizeof(T), PE_root, true);                                                              \
        return 0;                                                                                                  \
    }                                                                                                              \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)                            \
    {                                                                                                              \
        collect("shmem_" #N "_collect", osh_team_comm("shmem_" #N "_collect", team), dest, source,                 \
                nelems * sizeof(T));                                                                               \
        return 0;                                                                                                  \
    }                                                                                                              \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)                           \
    {                                                                                                              \
        fcollect("shmem_" #N "_fcollect", osh_team_comm("shmem_" #N "_fcollect", team), dest, source,              \
                 nelems * sizeof(T));                                                                              \
        return 0;                                                                                                  \
    }                                                                                                              \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)                           \
    {                                                                                                              \
        alltoall("shmem_" #N "_alltoall", osh_team_comm("shmem_" #N "_alltoall", team), dest, source,              \
                 nelems * sizeof(T));                                                                              \
        return 0;                                                                                                  \
    }                                                                                                              \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,           \
                              size_t nelems)                                                                       \
    {                                                                                                              \
        alltoalls("shmem_" #N "_alltoalls", osh_team_comm("shmem_" #N "_alltoalls", team), dest, source, dst, sst, \
                  nelems, sizeof(T));                                                                              \
        return 0;                                                                                                  \
    }
SHOAL_SHMEM_RMA_TYPES(DEFINE_TEAM_COLL)

#define DEFINE_ACTIVE_SET_COLL(S, B)                                                                                   \
    void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,                  \
                            int logPE_stride, int PE_size, long *pSync)                                                \
    {                                                                                                                  \
        (void)pSync;                                                                                                   \
        broadcast("shmem_broadcast" #S, osh_active_set("shmem_broadcast" #S, PE_start, logPE_stride, PE_size), dest,   \
                  source, nelems *(B), PE_root, false);                                                                \
    }                                                                                                                  \
    void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                          long *pSync)                                                                                 \
    {                                                                                                                  \
        (void)pSync;                                                                                                   \
        collect("shmem_collect" #S, osh_active_set("shmem_collect" #S, PE_start, logPE_stride, PE_size), dest, source, \
                nelems *(B));                                                                                          \
    }                                                                                                                  \
    void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                           long *pSync)                                                                                \
    {                                                                                                                  \
        (void)pSync;                                                                                                   \
        fcollect("shmem_fcollect" #S, osh_active_set("shmem_fcollect" #S, PE_start, logPE_stride, PE_size), dest,      \
                 source, nelems *(B));                                                                                 \
    }                                                                                                                  \
    void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                           long *pSync)                                                                                \
    {                                                                                                                  \
        (void)pSync;                                                                                                   \
        alltoall("shmem_alltoall" #S, osh_active_set("shmem_alltoall" #S, PE_start, logPE_stride, PE_size), dest,      \
                 source, nelems *(B));                                                                                 \
    }                                                                                                                  \
    void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync)                                                \
    {                                                                                                                  \
        (void)pSync;                                                                                                   \
        alltoalls("shmem_alltoalls" #S, osh_active_set("shmem_alltoalls" #S, PE_start, logPE_stride, PE_size), dest,   \
                  source, dst, sst, nelems, B);                                                                        \
    }
DEFINE_ACTIVE_SET_COLL(32, 4)
DEFINE_ACTIVE_SET_COLL(64, 8)

/* Reductions. The MPI type of each OpenSHMEM type name. */
#define OSH_MPI_float MPI_FLOAT
#define OSH_MPI_double MPI_DOUBLE
#define OSH_MPI_longdouble MPI_LONG_DOUBLE
/* MPI's MAX and MIN take no MPI_CHAR: char is one of the other two. */
#define OSH_MPI_char (CHAR_MIN < 0 ? MPI_SIGNED_CHAR : MPI_UNSIGNED_CHAR)
#define OSH_MPI_schar MPI_SIGNED_CHAR
#define OSH_MPI_short MPI_SHORT
#define OSH_MPI_int MPI_INT
#define OSH_MPI_long MPI_LONG
#define OSH_MPI_longlong MPI_LONG_LONG
#define OSH_MPI_uchar MPI_UNSIGNED_CHAR
#define OSH_MPI_ushort MPI_UNSIGNED_SHORT
#define OSH_MPI_uint MPI_UNSIGNED
#define OSH_MPI_ulong MPI_UNSIGNED_LONG
#define OSH_MPI_ulonglong MPI_UNSIGNED_LONG_LONG
#define OSH_MPI_int8 MPI_INT8_T
#define OSH_MPI_int16 MPI_INT16_T
#define OSH_MPI_int32 MPI_INT32_T
#define OSH_MPI_int64 MPI_INT64_T
#define OSH_MPI_uint8 MPI_UINT8_T
#define OSH_MPI_uint16 MPI_UINT16_T
#define OSH_MPI_uint32 MPI_UINT32_T
#define OSH_MPI_uint64 MPI_UINT64_T
#define OSH_MPI_size MPI_UINT64_T
#define OSH_MPI_ptrdiff MPI_INT64_T
#define OSH_MPI_complexd MPI_C_DOUBLE_COMPLEX
#define OSH_MPI_complexf MPI_C_FLOAT_COMPLEX
_Static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8, "size_t and ptrdiff_t reduce as 64-bit integers");

static void reduce(MPI_Comm comm, void *dest, const void *source, size_t count, size_t elem, MPI_Datatype type,
                   MPI_Op op)
{
    for (size_t done = 0; done < count; done += PIECE) {
        size_t n = count - done < PIECE ? count - done : PIECE;
        char *to = (char *)dest + done * elem;
        const char *from = (const char *)source + done * elem;
        MPI_Allreduce(from == to ? MPI_IN_PLACE : from, to, (int)n, type, op, comm);
    }
}

#define DEFINE_REDUCE(T, N, OP, MPI_OPERATION)                                                                    \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)                    \
    {                                                                                                             \
        reduce(osh_team_comm("shmem_" #N "_" #OP "_reduce", team), dest, source, nreduce, sizeof(T), OSH_MPI_##N, \
               MPI_OPERATION);                                                                                    \
        return 0;                                                                                                 \
    }
#define DEFINE_BITWISE_REDUCE(T, N) \
    DEFINE_REDUCE(T, N, and, MPI_BAND) DEFINE_REDUCE(T, N, or, MPI_BOR) DEFINE_REDUCE(T, N, xor, MPI_BXOR)
#define DEFINE_ORDERED_REDUCE(T, N) DEFINE_REDUCE(T, N, max, MPI_MAX) DEFINE_REDUCE(T, N, min, MPI_MIN)
#define DEFINE_ARITH_REDUCE(T, N) DEFINE_REDUCE(T, N, sum, MPI_SUM) DEFINE_REDUCE(T, N, prod, MPI_PROD)
SHOAL_SHMEM_BITWISE_REDUCE_TYPES(DEFINE_BITWISE_REDUCE)
SHOAL_SHMEM_ORDERED_REDUCE_TYPES(DEFINE_ORDERED_REDUCE)
SHOAL_SHMEM_ARITH_REDUCE_TYPES(DEFINE_ARITH_REDUCE)

#define DEFINE_TO_ALL(T, N, OP, MPI_OPERATION)                                                                         \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, int PE_size, \
                                   T *pWrk, long *pSync)                                                               \
    {                                                                                                                  \
        (void)pWrk;                                                                                                    \
        (void)pSync;                                                                                                   \
        if (nreduce < 0)                                                                                               \
            osh_fail("shmem_" #N "_" #OP "_to_all", "nreduce %d is negative", nreduce);                                \
        reduce(osh_active_set("shmem_" #N "_" #OP "_to_all", PE_start, logPE_stride, PE_size), dest, source,           \
               (size_t)nreduce, sizeof(T), OSH_MPI_##N, MPI_OPERATION);                                                \
    }
#define DEFINE_TO_ALL_BITWISE(T, N) \
    DEFINE_TO_ALL(T, N, and, MPI_BAND) DEFINE_TO_ALL(T, N, or, MPI_BOR) DEFINE_TO_ALL(T, N, xor, MPI_BXOR)
#define DEFINE_TO_ALL_ORDERED(T, N) DEFINE_TO_ALL(T, N, max, MPI_MAX) DEFINE_TO_ALL(T, N, min, MPI_MIN)
#define DEFINE_TO_ALL_ARITH(T, N) DEFINE_TO_ALL(T, N, sum, MPI_SUM) DEFINE_TO_ALL(T, N, prod, MPI_PROD)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(DEFINE_TO_ALL_BITWISE)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(DEFINE_TO_ALL_ORDERED)
SHOAL_SHMEM_TO_ALL_INTEGER_TYPES(DEFINE_TO_ALL_ARITH)
SHOAL_SHMEM_TO_ALL_REAL_TYPES(DEFINE_TO_ALL_ORDERED)
SHOAL_SHMEM_TO_ALL_REAL_TYPES(DEFINE_TO_ALL_ARITH)
SHOAL_SHMEM_TO_ALL_COMPLEX_TYPES(DEFINE_TO_ALL_ARITH)
