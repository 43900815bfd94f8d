/* The intercepted collectives. Each wrapper: is shoal on for this call, is
 * every argument valid (else the host MPI reports the error), then map MPI
 * buffers to bytes (packing datatypes that are not dense) and run the
 * team's algorithm. Anything not handled goes to PMPI unchanged. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "shim.h"

/* The team of comm when shoal handles collective c there, else NULL. */
static coll_team *team_for(core_coll c, MPI_Comm comm, shim_comm **out, const char *doing)
{
    coll_forget_choice(); /* until the planner chooses, the call is the host MPI's */
    if (!shim_wants(c) || comm == MPI_COMM_NULL)
        return NULL;
    shim_comm *sc = shim_comm_team(comm);
    if (!sc)
        return NULL;
    sc->team.doing = doing;
    *out = sc;
    return &sc->team;
}

/* ---- buffers as bytes ---- */

static bool bad_pointer(const void *buf, const shim_layout *l, size_t count)
{
    return count && l->dense && (uintptr_t)buf + (uintptr_t)l->lb == 0;
}

/* count elements at buf, as contiguous bytes: the user's memory when the
 * type is dense, else packed into scratch buffer i. */
static const char *send_bytes(shim_comm *sc, int i, const void *buf, int count, MPI_Datatype type,
                              const shim_layout *l, MPI_Comm comm)
{
    if (l->dense)
        return (const char *)buf + l->lb;
    size_t bytes = (size_t)count * l->size;
    char *tmp = shim_comm_scratch(sc, i, bytes ? bytes : 1);
    int pos = 0;
    if (count)
        PMPI_Pack(buf, count, type, tmp, (int)bytes, &pos, comm);
    return tmp;
}

/* Where count elements bound for buf are written as bytes; recv_finish
 * unpacks them when the type is not dense. */
static char *recv_bytes(shim_comm *sc, int i, void *buf, size_t count, const shim_layout *l)
{
    if (l->dense)
        return (char *)buf + l->lb;
    size_t bytes = count * l->size;
    return shim_comm_scratch(sc, i, bytes ? bytes : 1);
}

static void recv_finish(shim_comm *sc, int i, void *buf, int count, MPI_Datatype type, const shim_layout *l,
                        MPI_Comm comm)
{
    if (l->dense || !count)
        return;
    int pos = 0;
    PMPI_Unpack(sc->pack[i], (int)((size_t)count * l->size), &pos, buf, count, type, comm);
}

/* Packing works in int-sized pieces: larger non-dense messages go to PMPI. */
static bool packable(const shim_layout *l, size_t count)
{
    return l->dense || count * l->size <= INT_MAX;
}

/* Blocks i < n of counts[i] elements at displs[i] extents from buf, as bytes:
 * fills bytes[] and offs[] and returns the base the offsets start from
 * (the user's memory when dense, else scratch buffer `scratch` with the
 * blocks back to back). */
static char *blocks_at(shim_comm *sc, int scratch, const void *buf, const int *counts, const int *displs,
                       const shim_layout *l, size_t *bytes, size_t *offs)
{
    int n = sc->size;
    if (l->dense) {
        int lowest = 0;
        for (int i = 0; i < n; i++)
            if (i == 0 || displs[i] < lowest)
                lowest = displs[i];
        for (int i = 0; i < n; i++) {
            bytes[i] = (size_t)counts[i] * l->size;
            offs[i] = (size_t)((MPI_Aint)(displs[i] - lowest) * l->extent);
        }
        return (char *)buf + l->lb + (MPI_Aint)lowest * l->extent;
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        bytes[i] = (size_t)counts[i] * l->size;
        offs[i] = total;
        total += bytes[i];
    }
    return shim_comm_scratch(sc, scratch, total ? total : 1);
}

static void block_pack(char *base, const size_t *bytes, const size_t *offs, int i, const void *buf,
                       const int *counts, const int *displs, MPI_Datatype type, const shim_layout *l,
                       MPI_Comm comm)
{
    if (l->dense || !counts[i])
        return;
    int pos = 0;
    PMPI_Pack((const char *)buf + (MPI_Aint)displs[i] * l->extent, counts[i], type, base + offs[i], (int)bytes[i],
              &pos, comm);
}

static void block_unpack(const char *base, const size_t *bytes, const size_t *offs, int i, void *buf,
                         const int *counts, const int *displs, MPI_Datatype type, const shim_layout *l,
                         MPI_Comm comm)
{
    if (l->dense || !counts[i])
        return;
    int pos = 0;
    PMPI_Unpack(base + offs[i], (int)bytes[i], &pos, (char *)buf + (MPI_Aint)displs[i] * l->extent, counts[i],
                type, comm);
}

static bool counts_ok(const int *counts, const int *displs, int n, const shim_layout *l)
{
    if (!counts || !displs)
        return false;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return false;
        total += (size_t)counts[i];
    }
    return packable(l, total);
}

/* ---- barrier, bcast ---- */

int MPI_Barrier(MPI_Comm comm)
{
    shim_comm *sc;
    coll_team *t = team_for(CORE_COLL_BARRIER, comm, &sc, "MPI_Barrier");
    if (!t)
        return PMPI_Barrier(comm);
    coll_barrier(t);
    return MPI_SUCCESS;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout l;
    coll_team *t = team_for(CORE_COLL_BCAST, comm, &sc, "MPI_Bcast");
    if (!t || count < 0 || root < 0 || root >= sc->size || !shim_layout_of(type, &l) || buf == MPI_IN_PLACE ||
        bad_pointer(buf, &l, (size_t)count) || !packable(&l, (size_t)count))
        return PMPI_Bcast(buf, count, type, root, comm);
    size_t bytes = (size_t)count * l.size;
    if (l.dense) {
        coll_bcast(t, (char *)buf + l.lb, bytes, root);
        return MPI_SUCCESS;
    }
    char *tmp = sc->rank == root ? (char *)send_bytes(sc, 0, buf, count, type, &l, comm)
                                 : recv_bytes(sc, 0, buf, (size_t)count, &l);
    coll_bcast(t, tmp, bytes, root);
    if (sc->rank != root)
        recv_finish(sc, 0, buf, count, type, &l, comm);
    return MPI_SUCCESS;
}

/* ---- reductions ---- */

/* Pair types whose C struct has padding are reduced in core's packed
 * layout, so padding in the user's buffer is never written. */
static bool needs_pair_packing(core_type ct)
{
    return core_type_is_pair(ct) && core_pair_struct_size(ct) != core_type_size(ct);
}

typedef enum { REDUCE_ONE, REDUCE_ALL, REDUCE_SCATTER } reduce_kind;

/* Runs a reduction given validated arguments; sbuf NULL means in place. */
static void run_reduction(shim_comm *sc, reduce_kind kind, const void *sbuf, void *rbuf, size_t count,
                          core_type ct, core_op op, int root)
{
    coll_team *t = &sc->team;
    bool has_result = kind != REDUCE_ONE || sc->rank == root;
    size_t in_count = kind == REDUCE_SCATTER ? count * (size_t)sc->size : count;
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
    case REDUCE_SCATTER: coll_reduce_scatter_block(t, in, out, count, ct, op); break;
    }
    if (needs_pair_packing(ct) && has_result)
        core_pair_unpack(ct, rbuf, out, count);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = team_for(CORE_COLL_REDUCE, comm, &sc, "MPI_Reduce");
    if (!t || count < 0 || root < 0 || root >= sc->size || !shim_reduction_of(type, op, &ct, &cop))
        return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    bool is_root = sc->rank == root;
    bool in_place = sbuf == MPI_IN_PLACE;
    if ((in_place && !is_root) || (count && (!(in_place ? rbuf : sbuf) || (is_root && (!rbuf || rbuf == MPI_IN_PLACE)))) ||
        (is_root && count && sbuf == rbuf))
        return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    if (count)
        run_reduction(sc, REDUCE_ONE, in_place ? NULL : sbuf, is_root ? rbuf : NULL, (size_t)count, ct, cop, root);
    return MPI_SUCCESS;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = team_for(CORE_COLL_ALLREDUCE, comm, &sc, "MPI_Allreduce");
    if (!t || count < 0 || !shim_reduction_of(type, op, &ct, &cop) || rbuf == MPI_IN_PLACE ||
        (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    if (count)
        run_reduction(sc, REDUCE_ALL, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0);
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = team_for(CORE_COLL_REDUCE_SCATTER_BLOCK, comm, &sc, "MPI_Reduce_scatter_block");
    if (!t || count < 0 || !shim_reduction_of(type, op, &ct, &cop) || rbuf == MPI_IN_PLACE ||
        (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
    if (count)
        run_reduction(sc, REDUCE_SCATTER, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0);
    return MPI_SUCCESS;
}

/* ---- gather ---- */

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHER, comm, &sc, "MPI_Gather");
    if (!t || root < 0 || root >= sc->size)
        return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    int n = sc->size;
    bool ok = is_root || !in_place;
    if (!in_place)
        ok = ok && scount >= 0 && shim_layout_of(stype, &sl) && !bad_pointer(sbuf, &sl, (size_t)scount) &&
             packable(&sl, (size_t)scount);
    if (is_root)
        ok = ok && rcount >= 0 && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE &&
             !bad_pointer(rbuf, &rl, (size_t)rcount) && packable(&rl, (size_t)rcount * (size_t)n) &&
             !(rcount && sbuf == rbuf);
    if (!ok)
        return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);

    size_t bytes = is_root ? (size_t)rcount * rl.size : (size_t)scount * sl.size;
    if (!bytes)
        return MPI_SUCCESS;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = NULL;
    if (is_root) {
        rdata = recv_bytes(sc, 1, rbuf, (size_t)rcount * (size_t)n, &rl);
        if (in_place && !rl.dense) {
            int pos = 0;
            PMPI_Pack((char *)rbuf + (MPI_Aint)root * rcount * rl.extent, rcount, rtype, rdata + (size_t)root * bytes,
                      (int)bytes, &pos, comm);
        }
    }
    coll_gather(t, sdata, bytes, rdata, root);
    if (is_root)
        recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return MPI_SUCCESS;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHERV, comm, &sc, "MPI_Gatherv");
    if (!t || root < 0 || root >= sc->size)
        return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (!in_place)
        ok = ok && scount >= 0 && shim_layout_of(stype, &sl) && !bad_pointer(sbuf, &sl, (size_t)scount) &&
             packable(&sl, (size_t)scount);
    if (is_root)
        ok = ok && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, displs, sc->size, &rl) &&
             !(sbuf == rbuf && !in_place);
    if (!ok)
        return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);

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
    return MPI_SUCCESS;
}

/* ---- allgather ---- */

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHER, comm, &sc, "MPI_Allgather");
    if (!t)
        return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    int n = sc->size, me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = rcount >= 0 && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE &&
              !bad_pointer(rbuf, &rl, (size_t)rcount) && packable(&rl, (size_t)rcount * (size_t)n) &&
              !(rcount && sbuf == rbuf);
    if (ok && !in_place)
        ok = scount >= 0 && shim_layout_of(stype, &sl) && !bad_pointer(sbuf, &sl, (size_t)scount) &&
             packable(&sl, (size_t)scount);
    if (!ok)
        return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return MPI_SUCCESS;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = recv_bytes(sc, 1, rbuf, (size_t)rcount * (size_t)n, &rl);
    if (in_place && !rl.dense) {
        int pos = 0;
        PMPI_Pack((char *)rbuf + (MPI_Aint)me * rcount * rl.extent, rcount, rtype, rdata + (size_t)me * bytes,
                  (int)bytes, &pos, comm);
    }
    coll_allgather(t, sdata, bytes, rdata);
    recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return MPI_SUCCESS;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHERV, comm, &sc, "MPI_Allgatherv");
    if (!t)
        return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    int me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, displs, sc->size, &rl) &&
              !(sbuf == rbuf);
    if (ok && !in_place)
        ok = scount >= 0 && shim_layout_of(stype, &sl) && !bad_pointer(sbuf, &sl, (size_t)scount) &&
             packable(&sl, (size_t)scount);
    if (!ok)
        return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    size_t *rbytes = sc->sizes + 2 * sc->size, *roffs = sc->sizes + 3 * sc->size;
    const char *sdata = in_place ? NULL : send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rbase = blocks_at(sc, 1, rbuf, rcounts, displs, &rl, rbytes, roffs);
    if (in_place)
        block_pack(rbase, rbytes, roffs, me, rbuf, rcounts, displs, rtype, &rl, comm);
    coll_allgatherv(t, sdata, in_place ? rbytes[me] : (size_t)scount * sl.size, rbase, rbytes, roffs);
    for (int i = 0; i < sc->size; i++)
        block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, displs, rtype, &rl, comm);
    return MPI_SUCCESS;
}

/* ---- scatter ---- */

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTER, comm, &sc, "MPI_Scatter");
    if (!t || root < 0 || root >= sc->size)
        return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    int n = sc->size;
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (is_root)
        ok = ok && scount >= 0 && shim_layout_of(stype, &sl) && sbuf != MPI_IN_PLACE &&
             !bad_pointer(sbuf, &sl, (size_t)scount) && packable(&sl, (size_t)scount * (size_t)n) &&
             !(scount && sbuf == rbuf);
    if (!in_place)
        ok = ok && rcount >= 0 && shim_layout_of(rtype, &rl) && !bad_pointer(rbuf, &rl, (size_t)rcount) &&
             packable(&rl, (size_t)rcount);
    if (!ok)
        return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    size_t bytes = is_root ? (size_t)scount * sl.size : (size_t)rcount * rl.size;
    if (!bytes)
        return MPI_SUCCESS;
    const char *sdata = is_root ? send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm) : NULL;
    char *rdata = in_place ? NULL : recv_bytes(sc, 1, rbuf, (size_t)rcount, &rl);
    coll_scatter(t, sdata, bytes, rdata, root);
    if (!in_place)
        recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return MPI_SUCCESS;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTERV, comm, &sc, "MPI_Scatterv");
    if (!t || root < 0 || root >= sc->size)
        return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (is_root)
        ok = ok && shim_layout_of(stype, &sl) && sbuf != MPI_IN_PLACE && counts_ok(scounts, displs, sc->size, &sl) &&
             !(sbuf == rbuf);
    if (!in_place)
        ok = ok && rcount >= 0 && shim_layout_of(rtype, &rl) && !bad_pointer(rbuf, &rl, (size_t)rcount) &&
             packable(&rl, (size_t)rcount);
    if (!ok)
        return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + sc->size;
    char *sbase = NULL;
    if (is_root) {
        sbase = blocks_at(sc, 0, sbuf, scounts, displs, &sl, sbytes, soffs);
        for (int i = 0; i < sc->size; i++)
            block_pack(sbase, sbytes, soffs, i, sbuf, scounts, displs, stype, &sl, comm);
    }
    char *rdata = in_place ? NULL : recv_bytes(sc, 1, rbuf, (size_t)rcount, &rl);
    coll_scatterv(t, sbase, sbytes, soffs, rdata, in_place ? 0 : (size_t)rcount * rl.size, root);
    if (!in_place)
        recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return MPI_SUCCESS;
}

/* ---- alltoall ---- */

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALL, comm, &sc, "MPI_Alltoall");
    if (!t)
        return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = rcount >= 0 && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE &&
              !bad_pointer(rbuf, &rl, (size_t)rcount) && packable(&rl, (size_t)rcount * (size_t)n) &&
              !(rcount && sbuf == rbuf);
    if (ok && !in_place)
        ok = scount >= 0 && shim_layout_of(stype, &sl) && !bad_pointer(sbuf, &sl, (size_t)scount) &&
             packable(&sl, (size_t)scount * (size_t)n);
    if (!ok)
        return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return MPI_SUCCESS;
    const char *sdata;
    if (in_place)
        /* Dense: coll_alltoall copies the send blocks itself. */
        sdata = rl.dense ? NULL : send_bytes(sc, 0, rbuf, rcount * n, rtype, &rl, comm);
    else
        sdata = send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm);
    char *rdata = recv_bytes(sc, 1, rbuf, (size_t)rcount * (size_t)n, &rl);
    coll_alltoall(t, sdata, bytes, rdata);
    recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return MPI_SUCCESS;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALLV, comm, &sc, "MPI_Alltoallv");
    if (!t)
        return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && counts_ok(rcounts, rdispls, n, &rl) &&
              !(sbuf == rbuf);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && counts_ok(scounts, sdispls, n, &sl);
    if (!ok)
        return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + n, *rbytes = sc->sizes + 2 * n, *roffs = sc->sizes + 3 * n;
    char *sbase;
    if (in_place) {
        /* Peers read my blocks while I overwrite them: send from a packed copy. */
        shim_layout packed = rl;
        packed.dense = false;
        sbase = blocks_at(sc, 0, rbuf, rcounts, rdispls, &packed, sbytes, soffs);
        for (int i = 0; i < n; i++) {
            if (rl.dense)
                memcpy(sbase + soffs[i], (char *)rbuf + rl.lb + (MPI_Aint)rdispls[i] * rl.extent, sbytes[i]);
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
    return MPI_SUCCESS;
}

/* ---- communicator release ---- */

int MPI_Comm_free(MPI_Comm *comm)
{
    if (shim_active && comm)
        shim_comm_forget(*comm);
    return PMPI_Comm_free(comm);
}
