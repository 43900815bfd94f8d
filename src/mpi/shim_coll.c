/* The intercepted collectives. Each wrapper: is shoal on for this call, is
 * every argument valid (else the host MPI reports the error), then map MPI
 * buffers to bytes (packing datatypes that are not dense) and run the
 * team's algorithm. Anything not handled goes to PMPI unchanged. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "shim.h"

/* The team of comm when shoal handles collective c there, else NULL.
 * at_once: take comm over now, even during its warm-up. */
static coll_team *team_for(core_coll c, MPI_Comm comm, shim_comm **out, const char *doing, bool at_once)
{
    coll_forget_choice(); /* until the planner chooses, the call is the host MPI's */
    if (!shim_wants(c) || comm == MPI_COMM_NULL)
        return NULL;
    shim_comm *sc = at_once ? shim_comm_team_now(comm) : shim_comm_team(comm);
    if (!sc)
        return NULL;
    sc->team.doing = doing;
    *out = sc;
    return &sc->team;
}

/* ---- counts and buffers as bytes ----
 * Counts arrive as int from the classic bindings and as MPI_Count (arrays:
 * MPI_Count counts, MPI_Aint displacements) from MPI-4's large-count `_c`
 * ones; the wrappers below take the wider type, so both bindings share one
 * path. */

/* A count or displacement array in whichever type the binding passed. */
typedef struct shim_array {
    const int *ints;
    const MPI_Count *counts;
    const MPI_Aint *aints;
} shim_array;

#define INTS(p) ((shim_array){.ints = (p)})
#define COUNTS(p) ((shim_array){.counts = (p)})
#define AINTS(p) ((shim_array){.aints = (p)})

static MPI_Count array_at(shim_array a, int i)
{
    return a.ints ? a.ints[i] : a.counts ? a.counts[i] : (MPI_Count)a.aints[i];
}

static bool array_missing(shim_array a) { return !a.ints && !a.counts && !a.aints; }

/* count elements of layout l are something shoal takes: not negative, their
 * bytes addressable, and, when the type is not dense, count and bytes both
 * within an int (PMPI_Pack takes ints). Anything else goes to the host. */
static bool takes(const shim_layout *l, MPI_Count count)
{
    /* Overflow-checked products, not divisions: a 64-bit divide costs a
     * tenth of a small collective on every call. */
    uint64_t limit = l->dense ? (uint64_t)PTRDIFF_MAX : (uint64_t)INT_MAX, bytes;
    return count >= 0 && !__builtin_mul_overflow((uint64_t)count, (uint64_t)l->size, &bytes) && bytes <= limit &&
           (l->dense || (uint64_t)count <= limit);
}

/* n blocks of count elements each. */
static bool takes_blocks(const shim_layout *l, MPI_Count count, int n)
{
    MPI_Count total;
    return count >= 0 && !__builtin_mul_overflow(count, (MPI_Count)n, &total) && takes(l, total);
}

static bool bad_pointer(const void *buf, const shim_layout *l, MPI_Count count)
{
    return count && l->dense && (uintptr_t)buf + (uintptr_t)l->lb == 0;
}

/* count elements at buf, as contiguous bytes: the user's memory when the
 * type is dense, else packed into scratch buffer i. */
static const char *send_bytes(shim_comm *sc, int i, const void *buf, MPI_Count count, MPI_Datatype type,
                              const shim_layout *l, MPI_Comm comm)
{
    if (l->dense)
        return (const char *)buf + l->lb;
    size_t bytes = (size_t)count * l->size;
    char *tmp = shim_comm_scratch(sc, i, bytes ? bytes : 1);
    int pos = 0;
    if (count)
        PMPI_Pack(buf, (int)count, type, tmp, (int)bytes, &pos, comm);
    return tmp;
}

/* Where count elements bound for buf are written as bytes; recv_finish
 * unpacks them when the type is not dense. */
static char *recv_bytes(shim_comm *sc, int i, void *buf, MPI_Count count, const shim_layout *l)
{
    if (l->dense)
        return (char *)buf + l->lb;
    size_t bytes = (size_t)count * l->size;
    return shim_comm_scratch(sc, i, bytes ? bytes : 1);
}

static void recv_finish(shim_comm *sc, int i, void *buf, MPI_Count count, MPI_Datatype type, const shim_layout *l,
                        MPI_Comm comm)
{
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Unpack(sc->pack[i], (int)((size_t)count * l->size), &pos, buf, (int)count, type, comm);
}

/* Blocks i < n of counts[i] elements at displs[i] extents from buf, as bytes:
 * fills bytes[] and offs[] and returns the base the offsets start from
 * (the user's memory when dense, else scratch buffer `scratch` with the
 * blocks back to back). */
static char *blocks_at(shim_comm *sc, int scratch, const void *buf, shim_array counts, shim_array displs,
                       const shim_layout *l, size_t *bytes, size_t *offs)
{
    int n = sc->size;
    if (l->dense) {
        MPI_Count lowest = 0;
        for (int i = 0; i < n; i++)
            if (i == 0 || array_at(displs, i) < lowest)
                lowest = array_at(displs, i);
        for (int i = 0; i < n; i++) {
            bytes[i] = (size_t)array_at(counts, i) * l->size;
            offs[i] = (size_t)(array_at(displs, i) - lowest) * (size_t)l->extent;
        }
        return (char *)buf + l->lb + (MPI_Aint)lowest * l->extent;
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        bytes[i] = (size_t)array_at(counts, i) * l->size;
        offs[i] = total;
        total += bytes[i];
    }
    return shim_comm_scratch(sc, scratch, total ? total : 1);
}

static void block_pack(char *base, const size_t *bytes, const size_t *offs, int i, const void *buf, shim_array counts,
                       shim_array displs, MPI_Datatype type, const shim_layout *l, MPI_Comm comm)
{
    MPI_Count count = array_at(counts, i);
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Pack((const char *)buf + (MPI_Aint)array_at(displs, i) * l->extent, (int)count, type, base + offs[i],
              (int)bytes[i], &pos, comm);
}

static void block_unpack(const char *base, const size_t *bytes, const size_t *offs, int i, void *buf, shim_array counts,
                         shim_array displs, MPI_Datatype type, const shim_layout *l, MPI_Comm comm)
{
    MPI_Count count = array_at(counts, i);
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Unpack(base + offs[i], (int)bytes[i], &pos, (char *)buf + (MPI_Aint)array_at(displs, i) * l->extent,
                (int)count, type, comm);
}

static bool counts_ok(shim_array counts, shim_array displs, int n, const shim_layout *l)
{
    if (array_missing(counts) || array_missing(displs))
        return false;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count c = array_at(counts, i);
        if (c < 0 || c > INT64_MAX - total)
            return false;
        total += c;
    }
    return takes(l, total);
}

/* ---- barrier, bcast ---- */

int MPI_Barrier(MPI_Comm comm)
{
    shim_comm *sc;
    coll_team *t = team_for(CORE_COLL_BARRIER, comm, &sc, "MPI_Barrier", false);
    if (!t)
        return PMPI_Barrier(comm);
    coll_barrier(t);
    return MPI_SUCCESS;
}

/* Each collective: <name>_by_shoal runs the call and returns true, or
 * returns false having done nothing, and the entry point passes it to PMPI. */

static bool bcast_by_shoal(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout l;
    coll_team *t = team_for(CORE_COLL_BCAST, comm, &sc, name, false);
    if (!t || root < 0 || root >= sc->size || !shim_layout_of(type, &l) || !takes(&l, count) || buf == MPI_IN_PLACE ||
        bad_pointer(buf, &l, count))
        return false;
    size_t bytes = (size_t)count * l.size;
    if (l.dense) {
        coll_bcast(t, (char *)buf + l.lb, bytes, root);
        return true;
    }
    char *tmp =
        sc->rank == root ? (char *)send_bytes(sc, 0, buf, count, type, &l, comm) : recv_bytes(sc, 0, buf, count, &l);
    coll_bcast(t, tmp, bytes, root);
    if (sc->rank != root)
        recv_finish(sc, 0, buf, count, type, &l, comm);
    return true;
}

/* ---- reductions ---- */

/* Pair types whose C struct has padding are reduced in core's packed
 * layout, so padding in the user's buffer is never written. */
static bool needs_pair_packing(core_type ct)
{
    return core_type_is_pair(ct) && core_pair_struct_size(ct) != core_type_size(ct);
}

typedef enum { REDUCE_ONE, REDUCE_ALL, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER } reduce_kind;

/* Runs a reduction given validated arguments; sbuf NULL means in place.
 * count: elements of the result (REDUCE_SCATTER: mine, the blocks being
 * counts[i] elements from element firsts[i]; NULL for the other kinds). */
static void run_reduction(shim_comm *sc, reduce_kind kind, const void *sbuf, void *rbuf, size_t count, core_type ct,
                          core_op op, int root, const size_t *counts, const size_t *firsts)
{
    coll_team *t = &sc->team;
    int n = sc->size;
    bool has_result = kind != REDUCE_ONE || sc->rank == root;
    size_t in_count = kind == REDUCE_SCATTER_BLOCK ? count * (size_t)n
                      : kind == REDUCE_SCATTER     ? firsts[n - 1] + counts[n - 1]
                                                   : count;
    const void *in = sbuf;
    void *out = rbuf;
    if (needs_pair_packing(ct)) {
        size_t psize = core_type_size(ct);
        char *packed_in = shim_comm_scratch(sc, 0, in_count * psize + 1);
        core_pair_pack(ct, packed_in, sbuf ? sbuf : rbuf, in_count);
        in = packed_in;
        out = has_result ? shim_comm_scratch(sc, 1, count * psize + 1) : NULL;
    }
    switch (kind) {
    case REDUCE_ONE: coll_reduce(t, in, out, count, ct, op, root); break;
    case REDUCE_ALL: coll_allreduce(t, in, out, count, ct, op); break;
    case REDUCE_SCATTER_BLOCK: coll_reduce_scatter_block(t, in, out, count, ct, op); break;
    case REDUCE_SCATTER: coll_reduce_scatter(t, in, out, counts, firsts, ct, op); break;
    }
    if (needs_pair_packing(ct) && has_result)
        core_pair_unpack(ct, rbuf, out, count);
}

/* The team for reduction c of type and op (as core's ct and cop), else NULL.
 * A floating-point reduction takes its communicator over at once, skipping
 * the warm-up: the host combines values in an order of its own, so a result
 * that came from the host during the warm-up and from shoal after it would
 * change bits between two calls on the same input. Integer results are
 * exact in any order and keep the warm-up. */
static coll_team *reduction_team(core_coll c, MPI_Comm comm, shim_comm **sc, const char *doing, MPI_Datatype type,
                                 MPI_Op op, core_type *ct, core_op *cop)
{
    bool known = shim_reduction_of(type, op, ct, cop);
    coll_team *t = team_for(c, comm, sc, doing, known && core_type_is_floating(*ct));
    return known ? t : NULL;
}

/* Reductions are on predefined types: dense, their size the core type's. */
static bool reduction_takes(core_type ct, MPI_Count count, int blocks)
{
    shim_layout l = {.size = core_type_size(ct), .dense = true};
    return takes_blocks(&l, count, blocks);
}

static bool reduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                            MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE, comm, &sc, name, type, op, &ct, &cop);
    if (!t || root < 0 || root >= sc->size || !reduction_takes(ct, count, 1))
        return false;
    bool is_root = sc->rank == root;
    bool in_place = sbuf == MPI_IN_PLACE;
    if ((in_place && !is_root) ||
        (count && (!(in_place ? rbuf : sbuf) || (is_root && (!rbuf || rbuf == MPI_IN_PLACE)))) ||
        (is_root && count && sbuf == rbuf))
        return false;
    if (count)
        run_reduction(sc, REDUCE_ONE, in_place ? NULL : sbuf, is_root ? rbuf : NULL, (size_t)count, ct, cop, root, NULL,
                      NULL);
    return true;
}

static bool allreduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_ALLREDUCE, comm, &sc, name, type, op, &ct, &cop);
    if (!t || !reduction_takes(ct, count, 1) || rbuf == MPI_IN_PLACE || (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    if (count)
        run_reduction(sc, REDUCE_ALL, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0, NULL, NULL);
    return true;
}

static bool rsb_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                         const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE_SCATTER_BLOCK, comm, &sc, name, type, op, &ct, &cop);
    if (!t || !reduction_takes(ct, count, sc->size) || rbuf == MPI_IN_PLACE ||
        (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    if (count)
        run_reduction(sc, REDUCE_SCATTER_BLOCK, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0,
                      NULL, NULL);
    return true;
}

static bool rs_by_shoal(const void *sbuf, void *rbuf, shim_array rcounts, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE_SCATTER, comm, &sc, name, type, op, &ct, &cop);
    if (!t || array_missing(rcounts) || rbuf == MPI_IN_PLACE || sbuf == rbuf)
        return false;
    int n = sc->size;
    size_t *counts = sc->sizes, *firsts = sc->sizes + n;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count c = array_at(rcounts, i);
        if (c < 0 || c > INT64_MAX - total)
            return false;
        counts[i] = (size_t)c;
        firsts[i] = (size_t)total;
        total += c;
    }
    if (!reduction_takes(ct, total, 1) || (total && !sbuf) || (counts[sc->rank] && !rbuf))
        return false;
    if (total)
        run_reduction(sc, REDUCE_SCATTER, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, counts[sc->rank], ct, cop, 0,
                      counts, firsts);
    return true;
}

/* ---- gather ---- */

static bool gather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                            MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHER, comm, &sc, name, false);
    if (!t || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    int n = sc->size;
    bool ok = is_root || !in_place;
    if (!in_place)
        ok = ok && shim_layout_of(stype, &sl) && takes(&sl, scount) && !bad_pointer(sbuf, &sl, scount);
    if (is_root)
        ok = ok && shim_layout_of(rtype, &rl) && takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
             !bad_pointer(rbuf, &rl, rcount) && !(rcount && sbuf == rbuf);
    if (!ok)
        return false;

    size_t bytes = is_root ? (size_t)rcount * rl.size : (size_t)scount * sl.size;
    if (!bytes)
        return true;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = NULL;
    if (is_root) {
        rdata = recv_bytes(sc, 1, rbuf, rcount * n, &rl);
        if (in_place && !rl.dense) {
            int pos = 0;
            PMPI_Pack((char *)rbuf + (MPI_Aint)root * rcount * rl.extent, (int)rcount, rtype,
                      rdata + (size_t)root * bytes, (int)bytes, &pos, comm);
        }
    }
    coll_gather(t, sdata, bytes, rdata, root);
    if (is_root)
        recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

static bool gatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                             shim_array displs, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHERV, comm, &sc, name, false);
    if (!t || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (!in_place)
        ok = ok && shim_layout_of(stype, &sl) && takes(&sl, scount) && !bad_pointer(sbuf, &sl, scount);
    if (is_root)
        ok = ok && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, displs, sc->size, &rl) &&
             !(sbuf == rbuf && !in_place);
    if (!ok)
        return false;

    size_t *rbytes = sc->sizes + 2 * sc->size, *roffs = sc->sizes + 3 * sc->size;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rbase = NULL;
    if (is_root) {
        rbase = blocks_at(sc, 1, rbuf, rcounts, displs, &rl, rbytes, roffs);
        if (in_place)
            block_pack(rbase, rbytes, roffs, root, rbuf, rcounts, displs, rtype, &rl, comm);
    }
    coll_gatherv(t, sdata, in_place ? 0 : (size_t)scount * sl.size, rbase, rbytes, roffs, root);
    if (is_root)
        for (int i = 0; i < sc->size; i++)
            block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, displs, rtype, &rl, comm);
    return true;
}

/* ---- allgather ---- */

static bool allgather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                               MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHER, comm, &sc, name, false);
    if (!t)
        return false;
    int n = sc->size, me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
              !bad_pointer(rbuf, &rl, rcount) && !(rcount && sbuf == rbuf);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && takes(&sl, scount) && !bad_pointer(sbuf, &sl, scount);
    if (!ok)
        return false;
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = recv_bytes(sc, 1, rbuf, rcount * n, &rl);
    if (in_place && !rl.dense) {
        int pos = 0;
        PMPI_Pack((char *)rbuf + (MPI_Aint)me * rcount * rl.extent, (int)rcount, rtype, rdata + (size_t)me * bytes,
                  (int)bytes, &pos, comm);
    }
    coll_allgather(t, sdata, bytes, rdata);
    recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

static bool allgatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                                shim_array displs, MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHERV, comm, &sc, name, false);
    if (!t)
        return false;
    int me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, displs, sc->size, &rl) &&
              !(sbuf == rbuf);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && takes(&sl, scount) && !bad_pointer(sbuf, &sl, scount);
    if (!ok)
        return false;
    size_t *rbytes = sc->sizes + 2 * sc->size, *roffs = sc->sizes + 3 * sc->size;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rbase = blocks_at(sc, 1, rbuf, rcounts, displs, &rl, rbytes, roffs);
    if (in_place)
        block_pack(rbase, rbytes, roffs, me, rbuf, rcounts, displs, rtype, &rl, comm);
    coll_allgatherv(t, sdata, in_place ? rbytes[me] : (size_t)scount * sl.size, rbase, rbytes, roffs);
    for (int i = 0; i < sc->size; i++)
        block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, displs, rtype, &rl, comm);
    return true;
}

/* ---- scatter ---- */

static bool scatter_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                             MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTER, comm, &sc, name, false);
    if (!t || root < 0 || root >= sc->size)
        return false;
    int n = sc->size;
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (is_root)
        ok = ok && shim_layout_of(stype, &sl) && takes_blocks(&sl, scount, n) && sbuf != MPI_IN_PLACE &&
             !bad_pointer(sbuf, &sl, scount) && !(scount && sbuf == rbuf);
    if (!in_place)
        ok = ok && shim_layout_of(rtype, &rl) && takes(&rl, rcount) && !bad_pointer(rbuf, &rl, rcount);
    if (!ok)
        return false;
    size_t bytes = is_root ? (size_t)scount * sl.size : (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    const char *sdata = is_root ? send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm) : NULL;
    char *rdata = in_place ? NULL : recv_bytes(sc, 1, rbuf, rcount, &rl);
    coll_scatter(t, sdata, bytes, rdata, root);
    if (!in_place)
        recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return true;
}

static bool scatterv_by_shoal(const void *sbuf, shim_array scounts, shim_array displs, MPI_Datatype stype, void *rbuf,
                              MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTERV, comm, &sc, name, false);
    if (!t || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (is_root)
        ok = ok && shim_layout_of(stype, &sl) && sbuf != MPI_IN_PLACE && counts_ok(scounts, displs, sc->size, &sl) &&
             !(sbuf == rbuf);
    if (!in_place)
        ok = ok && shim_layout_of(rtype, &rl) && takes(&rl, rcount) && !bad_pointer(rbuf, &rl, rcount);
    if (!ok)
        return false;
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + sc->size;
    char *sbase = NULL;
    if (is_root) {
        sbase = blocks_at(sc, 0, sbuf, scounts, displs, &sl, sbytes, soffs);
        for (int i = 0; i < sc->size; i++)
            block_pack(sbase, sbytes, soffs, i, sbuf, scounts, displs, stype, &sl, comm);
    }
    char *rdata = in_place ? NULL : recv_bytes(sc, 1, rbuf, rcount, &rl);
    coll_scatterv(t, sbase, sbytes, soffs, rdata, in_place ? 0 : (size_t)rcount * rl.size, root);
    if (!in_place)
        recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return true;
}

/* ---- alltoall ---- */

static bool alltoall_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                              MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALL, comm, &sc, name, false);
    if (!t)
        return false;
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
              !bad_pointer(rbuf, &rl, rcount) && !(rcount && sbuf == rbuf);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && takes_blocks(&sl, scount, n) && !bad_pointer(sbuf, &sl, scount);
    if (!ok)
        return false;
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    const char *sdata;
    if (in_place)
        /* Dense: coll_alltoall copies the send blocks itself. */
        sdata = rl.dense ? NULL : send_bytes(sc, 0, rbuf, rcount * n, rtype, &rl, comm);
    else
        sdata = send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm);
    char *rdata = recv_bytes(sc, 1, rbuf, rcount * n, &rl);
    coll_alltoall(t, sdata, bytes, rdata);
    recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

static bool alltoallv_by_shoal(const void *sbuf, shim_array scounts, shim_array sdispls, MPI_Datatype stype, void *rbuf,
                               shim_array rcounts, shim_array rdispls, MPI_Datatype rtype, MPI_Comm comm,
                               const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALLV, comm, &sc, name, false);
    if (!t)
        return false;
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok =
        shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, rdispls, n, &rl) && !(sbuf == rbuf);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && counts_ok(scounts, sdispls, n, &sl);
    if (!ok)
        return false;
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + n, *rbytes = sc->sizes + 2 * n, *roffs = sc->sizes + 3 * n;
    char *sbase;
    if (in_place) {
        /* Peers read my blocks while I overwrite them: send from a packed copy. */
        shim_layout packed = rl;
        packed.dense = false;
        sbase = blocks_at(sc, 0, rbuf, rcounts, rdispls, &packed, sbytes, soffs);
        for (int i = 0; i < n; i++) {
            if (rl.dense)
                memcpy(sbase + soffs[i], (char *)rbuf + rl.lb + (MPI_Aint)array_at(rdispls, i) * rl.extent, sbytes[i]);
            else
                block_pack(sbase, sbytes, soffs, i, rbuf, rcounts, rdispls, rtype, &rl, comm);
        }
    } else {
        sbase = blocks_at(sc, 0, sbuf, scounts, sdispls, &sl, sbytes, soffs);
        for (int i = 0; i < n; i++)
            block_pack(sbase, sbytes, soffs, i, sbuf, scounts, sdispls, stype, &sl, comm);
    }
    char *rbase = blocks_at(sc, 1, rbuf, rcounts, rdispls, &rl, rbytes, roffs);
    coll_alltoallv(t, sbase, sbytes, soffs, rbase, rbytes, roffs);
    for (int i = 0; i < n; i++)
        block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, rdispls, rtype, &rl, comm);
    return true;
}

/* ---- entry points: the classic bindings ---- */

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (bcast_by_shoal(buf, count, type, root, comm, "MPI_Bcast"))
        return MPI_SUCCESS;
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    if (reduce_by_shoal(sbuf, rbuf, count, type, op, root, comm, "MPI_Reduce"))
        return MPI_SUCCESS;
    return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (allreduce_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Allreduce"))
        return MPI_SUCCESS;
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (rsb_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Reduce_scatter_block"))
        return MPI_SUCCESS;
    return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (rs_by_shoal(sbuf, rbuf, INTS(rcounts), type, op, comm, "MPI_Reduce_scatter"))
        return MPI_SUCCESS;
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm)
{
    if (gather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Gather"))
        return MPI_SUCCESS;
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (gatherv_by_shoal(sbuf, scount, stype, rbuf, INTS(rcounts), INTS(displs), rtype, root, comm, "MPI_Gatherv"))
        return MPI_SUCCESS;
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm)
{
    if (allgather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Allgather"))
        return MPI_SUCCESS;
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    if (allgatherv_by_shoal(sbuf, scount, stype, rbuf, INTS(rcounts), INTS(displs), rtype, comm, "MPI_Allgatherv"))
        return MPI_SUCCESS;
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    if (scatter_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Scatter"))
        return MPI_SUCCESS;
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (scatterv_by_shoal(sbuf, INTS(scounts), INTS(displs), stype, rbuf, rcount, rtype, root, comm, "MPI_Scatterv"))
        return MPI_SUCCESS;
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm)
{
    if (alltoall_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Alltoall"))
        return MPI_SUCCESS;
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    if (alltoallv_by_shoal(sbuf, INTS(scounts), INTS(sdispls), stype, rbuf, INTS(rcounts), INTS(rdispls), rtype, comm,
                           "MPI_Alltoallv"))
        return MPI_SUCCESS;
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}

/* ---- entry points: MPI-4's large-count bindings, where the host has them ---- */

#if MPI_VERSION >= 4
int MPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (bcast_by_shoal(buf, count, type, root, comm, "MPI_Bcast_c"))
        return MPI_SUCCESS;
    return PMPI_Bcast_c(buf, count, type, root, comm);
}

int MPI_Reduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    if (reduce_by_shoal(sbuf, rbuf, count, type, op, root, comm, "MPI_Reduce_c"))
        return MPI_SUCCESS;
    return PMPI_Reduce_c(sbuf, rbuf, count, type, op, root, comm);
}

int MPI_Allreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (allreduce_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Allreduce_c"))
        return MPI_SUCCESS;
    return PMPI_Allreduce_c(sbuf, rbuf, count, type, op, comm);
}

int MPI_Reduce_scatter_block_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm)
{
    if (rsb_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Reduce_scatter_block_c"))
        return MPI_SUCCESS;
    return PMPI_Reduce_scatter_block_c(sbuf, rbuf, count, type, op, comm);
}

int MPI_Reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    if (rs_by_shoal(sbuf, rbuf, COUNTS(rcounts), type, op, comm, "MPI_Reduce_scatter_c"))
        return MPI_SUCCESS;
    return PMPI_Reduce_scatter_c(sbuf, rbuf, rcounts, type, op, comm);
}

int MPI_Gather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (gather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Gather_c"))
        return MPI_SUCCESS;
    return PMPI_Gather_c(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                  const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (gatherv_by_shoal(sbuf, scount, stype, rbuf, COUNTS(rcounts), AINTS(displs), rtype, root, comm, "MPI_Gatherv_c"))
        return MPI_SUCCESS;
    return PMPI_Gatherv_c(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

int MPI_Allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, MPI_Comm comm)
{
    if (allgather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Allgather_c"))
        return MPI_SUCCESS;
    return PMPI_Allgather_c(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                     const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    if (allgatherv_by_shoal(sbuf, scount, stype, rbuf, COUNTS(rcounts), AINTS(displs), rtype, comm, "MPI_Allgatherv_c"))
        return MPI_SUCCESS;
    return PMPI_Allgatherv_c(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int MPI_Scatter_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (scatter_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Scatter_c"))
        return MPI_SUCCESS;
    return PMPI_Scatter_c(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Scatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (scatterv_by_shoal(sbuf, COUNTS(scounts), AINTS(displs), stype, rbuf, rcount, rtype, root, comm,
                          "MPI_Scatterv_c"))
        return MPI_SUCCESS;
    return PMPI_Scatterv_c(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, MPI_Comm comm)
{
    if (alltoall_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Alltoall_c"))
        return MPI_SUCCESS;
    return PMPI_Alltoall_c(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype,
                    void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    if (alltoallv_by_shoal(sbuf, COUNTS(scounts), AINTS(sdispls), stype, rbuf, COUNTS(rcounts), AINTS(rdispls), rtype,
                           comm, "MPI_Alltoallv_c"))
        return MPI_SUCCESS;
    return PMPI_Alltoallv_c(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}
#endif

/* ---- communicator release ---- */

int MPI_Comm_free(MPI_Comm *comm)
{
    if (shim_active && comm)
        shim_comm_forget(*comm);
    return PMPI_Comm_free(comm);
}
