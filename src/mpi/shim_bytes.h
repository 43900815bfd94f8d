/* shim_bytes: MPI counts and buffers as the bytes a team moves
 * (shim_bytes.c): count and displacement arrays of either binding, the
 * checks that a count is something shoal takes, and buffers of datatypes
 * that are not dense packed into the communicator's scratch buffers (and
 * unpacked after).
 *
 * Counts arrive as int from the classic bindings and as MPI_Count (arrays:
 * MPI_Count counts, MPI_Aint displacements) from MPI-4's large-count `_c`
 * ones; what follows takes the wider type, so both bindings share one path.
 * The dense case, every call's, is inline here; packing is in shim_bytes.c.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_BYTES_H
#define SHOAL_SHIM_BYTES_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim_comm.h"
#include "shim_types.h"

/* A count or displacement array in whichever type the binding passed. */
typedef struct shim_array {
    const int *ints;
    const MPI_Count *counts;
    const MPI_Aint *aints;
} shim_array;

#define SHIM_INTS(p) ((shim_array){.ints = (p)})
#define SHIM_COUNTS(p) ((shim_array){.counts = (p)})
#define SHIM_AINTS(p) ((shim_array){.aints = (p)})

static inline MPI_Count shim_array_at(shim_array a, int i)
{
    return a.ints ? a.ints[i] : a.counts ? a.counts[i] : (MPI_Count)a.aints[i];
}

static inline bool shim_array_missing(shim_array a) { return !a.ints && !a.counts && !a.aints; }

/* count elements of layout l are something shoal takes: not negative, their
 * bytes addressable, and, when the type is not dense, count and bytes both
 * within an int (PMPI_Pack takes ints). Anything else goes to the host. */
static inline bool shim_takes(const shim_layout *l, MPI_Count count)
{
    /* Overflow-checked products, not divisions: a 64-bit divide costs a
     * tenth of a small collective on every call. */
    uint64_t limit = l->dense ? (uint64_t)PTRDIFF_MAX : (uint64_t)INT_MAX, bytes;
    return count >= 0 && !__builtin_mul_overflow((uint64_t)count, (uint64_t)l->size, &bytes) && bytes <= limit &&
           (l->dense || (uint64_t)count <= limit);
}

/* n blocks of count elements each. */
static inline bool shim_takes_blocks(const shim_layout *l, MPI_Count count, int n)
{
    MPI_Count total;
    return count >= 0 && !__builtin_mul_overflow(count, (MPI_Count)n, &total) && shim_takes(l, total);
}

static inline bool shim_bad_pointer(const void *buf, const shim_layout *l, MPI_Count count)
{
    return count && l->dense && (uintptr_t)buf + (uintptr_t)l->lb == 0;
}

/* Blocks of counts[i] elements at displs[i] extents for each of n ranks are
 * something shoal takes: both arrays given, every count not negative, and
 * their total (*total, in elements) as shim_takes says. */
bool shim_counts_ok(shim_array counts, shim_array displs, int n, const shim_layout *l, MPI_Count *total);

/* A send and a receive buffer at one address, each naming sbytes and rbytes:
 * they overlap only where both name bytes. Such a call is erroneous, and
 * shoal leaves it to the host, which reports it where it checks. Where
 * either side is empty the two name no common memory and the call is valid
 * (mpi4py passes one address for every empty buffer), so shoal takes it: a
 * rank that alone passed a valid call to the host would leave its peers
 * waiting in shoal's collective, and the next calls of the two would meet
 * each other's (wrong results, then a hang). */
static inline bool shim_aliased(const void *sbuf, size_t sbytes, const void *rbuf, size_t rbytes)
{
    return sbuf == rbuf && sbytes && rbytes;
}

/* ---- one buffer ---- */

/* shim_send_bytes when the type is not dense: packed into scratch buffer i. */
const char *shim_pack_send(shim_comm *sc, int i, const void *buf, MPI_Count count, MPI_Datatype type,
                           const shim_layout *l, MPI_Comm comm);
/* shim_recv_finish when the type is not dense and count not 0. */
void shim_unpack_recv(shim_comm *sc, int i, void *buf, MPI_Count count, MPI_Datatype type, const shim_layout *l,
                      MPI_Comm comm);

/* count elements at buf, as contiguous bytes: the user's memory when the
 * type is dense, else packed into scratch buffer i. */
static inline const char *shim_send_bytes(shim_comm *sc, int i, const void *buf, MPI_Count count, MPI_Datatype type,
                                          const shim_layout *l, MPI_Comm comm)
{
    if (l->dense)
        return (const char *)buf + l->lb;
    return shim_pack_send(sc, i, buf, count, type, l, comm);
}

/* Where count elements bound for buf are written as bytes; shim_recv_finish
 * unpacks them when the type is not dense. */
static inline char *shim_recv_bytes(shim_comm *sc, int i, void *buf, MPI_Count count, const shim_layout *l)
{
    if (l->dense)
        return (char *)buf + l->lb;
    size_t bytes = (size_t)count * l->size;
    return shim_comm_scratch(sc, i, bytes ? bytes : 1);
}

static inline void shim_recv_finish(shim_comm *sc, int i, void *buf, MPI_Count count, MPI_Datatype type,
                                    const shim_layout *l, MPI_Comm comm)
{
    if (l->dense || !count)
        return;
    shim_unpack_recv(sc, i, buf, count, type, l, comm);
}

/* ---- one block per rank (v-variants) ---- */

/* Blocks i < n of counts[i] elements at displs[i] extents from buf, as bytes:
 * fills bytes[] and offs[] and returns the base the offsets start from
 * (the user's memory when dense, else scratch buffer `scratch` with the
 * blocks back to back). */
char *shim_blocks_at(shim_comm *sc, int scratch, const void *buf, shim_array counts, shim_array displs,
                     const shim_layout *l, size_t *bytes, size_t *offs);

/* Block i of buf packed to base + offs[i] (shim_blocks_at's), and back,
 * with PMPI_Pack and PMPI_Unpack; shim_block_pack and shim_block_unpack
 * call them only where the type is not dense, checked inline: a v-call
 * of a dense type runs through them once per rank, twice. */
void shim_block_pack_typed(char *base, const size_t *bytes, const size_t *offs, int i, const void *buf,
                           shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l,
                           MPI_Comm comm);
void shim_block_unpack_typed(const char *base, const size_t *bytes, const size_t *offs, int i, void *buf,
                             shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l,
                             MPI_Comm comm);
static inline void shim_block_pack(char *base, const size_t *bytes, const size_t *offs, int i, const void *buf,
                                   shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l,
                                   MPI_Comm comm)
{
    if (!l->dense)
        shim_block_pack_typed(base, bytes, offs, i, buf, counts, displs, type, l, comm);
}
static inline void shim_block_unpack(const char *base, const size_t *bytes, const size_t *offs, int i, void *buf,
                                     shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l,
                                     MPI_Comm comm)
{
    if (!l->dense)
        shim_block_unpack_typed(base, bytes, offs, i, buf, counts, displs, type, l, comm);
}

#endif
