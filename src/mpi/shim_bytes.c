/* shim_bytes: counts and buffers as bytes, the parts out of line (see
 * shim_bytes.h): packing and unpacking of datatypes that are not dense, the
 * blocks of the v-variants, and their counts' checks. */
#include "shim_bytes.h"

/* The v-calls walk their arrays up to four times a call. Each walk below is
 * written once and called in branches that know the arrays' element types
 * (the classic bindings' ints above all), so that the compiler drops
 * shim_array_at's choice from every element. */

static inline bool counts_sum(shim_array counts, int n, MPI_Count *total)
{
    MPI_Count sum = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count c = shim_array_at(counts, i);
        if (c < 0 || c > INT64_MAX - sum)
            return false;
        sum += c;
    }
    *total = sum;
    return true;
}

bool shim_counts_ok(shim_array counts, shim_array displs, int n, const shim_layout *l, MPI_Count *total)
{
    if (shim_array_missing(counts) || shim_array_missing(displs))
        return false;
    if (!(counts.ints ? counts_sum(SHIM_INTS(counts.ints), n, total) : counts_sum(counts, n, total)))
        return false;
    return shim_takes(l, *total);
}

const char *shim_pack_send(shim_comm *sc, int i, const void *buf, MPI_Count count, MPI_Datatype type,
                           const shim_layout *l, MPI_Comm comm)
{
    size_t bytes = (size_t)count * l->size;
    char *tmp = shim_comm_scratch(sc, i, bytes ? bytes : 1);
    int pos = 0;
    if (count)
        PMPI_Pack(buf, (int)count, type, tmp, (int)bytes, &pos, comm);
    return tmp;
}

void shim_unpack_recv(shim_comm *sc, int i, void *buf, MPI_Count count, MPI_Datatype type, const shim_layout *l,
                      MPI_Comm comm)
{
    int pos = 0;
    PMPI_Unpack(sc->pack[i], (int)((size_t)count * l->size), &pos, buf, (int)count, type, comm);
}

/* Dense blocks: their bytes, and their offsets from the lowest
 * displacement, which it returns. */
static inline MPI_Count dense_blocks(shim_array counts, shim_array displs, int n, const shim_layout *l, size_t *bytes,
                                     size_t *offs)
{
    MPI_Count lowest = shim_array_at(displs, 0);
    for (int i = 1; i < n; i++)
        if (shim_array_at(displs, i) < lowest)
            lowest = shim_array_at(displs, i);
    for (int i = 0; i < n; i++) {
        bytes[i] = (size_t)shim_array_at(counts, i) * l->size;
        offs[i] = (size_t)(shim_array_at(displs, i) - lowest) * (size_t)l->extent;
    }
    return lowest;
}

char *shim_blocks_at(shim_comm *sc, int scratch, const void *buf, shim_array counts, shim_array displs,
                     const shim_layout *l, size_t *bytes, size_t *offs)
{
    int n = sc->size;
    if (l->dense) {
        MPI_Count lowest = counts.ints && displs.ints
                               ? dense_blocks(SHIM_INTS(counts.ints), SHIM_INTS(displs.ints), n, l, bytes, offs)
                               : dense_blocks(counts, displs, n, l, bytes, offs);
        return (char *)buf + l->lb + (MPI_Aint)lowest * l->extent;
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        bytes[i] = (size_t)shim_array_at(counts, i) * l->size;
        offs[i] = total;
        total += bytes[i];
    }
    return shim_comm_scratch(sc, scratch, total ? total : 1);
}

void shim_block_pack_typed(char *base, const size_t *bytes, const size_t *offs, int i, const void *buf,
                           shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l, MPI_Comm comm)
{
    MPI_Count count = shim_array_at(counts, i);
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Pack((const char *)buf + (MPI_Aint)shim_array_at(displs, i) * l->extent, (int)count, type, base + offs[i],
              (int)bytes[i], &pos, comm);
}

void shim_block_unpack_typed(const char *base, const size_t *bytes, const size_t *offs, int i, void *buf,
                             shim_array counts, shim_array displs, MPI_Datatype type, const shim_layout *l,
                             MPI_Comm comm)
{
    MPI_Count count = shim_array_at(counts, i);
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Unpack(base + offs[i], (int)bytes[i], &pos, (char *)buf + (MPI_Aint)shim_array_at(displs, i) * l->extent,
                (int)count, type, comm);
}
