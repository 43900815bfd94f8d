/* shim_coll: the per-collective paths. Each <name>_by_shoal: is shoal on
 * for this call, is every argument valid (else the host MPI reports the
 * error), then map MPI buffers to bytes (shim_bytes: packing datatypes that
 * are not dense) and run the team's algorithm, returning true; or return
 * false having done nothing, and the entry point (shim_bindings.c) passes
 * the call to PMPI unchanged. */
#include <stdint.h>
#include <string.h>

#include "shim_bytes.h"
#include "shim_coll.h"
#include "shim_comm.h"
#include "shim_init.h"
#include "shim_nodes.h"
#include "shim_types.h"

/* The team of comm when shoal handles collective c there, else NULL.
 * *out: comm's state when shoal handles c there (a communicator spanning
 * nodes has no team: its collectives are shim_nodes'), else NULL.
 * at_once: take comm over now, even during its warm-up. */
static coll_team *team_for(core_coll c, MPI_Comm comm, shim_comm **out, const char *doing, bool at_once)
{
    coll_forget_choice(); /* until the planner chooses, the call is the host MPI's */
    *out = NULL;
    if (!shim_wants(c) || comm == MPI_COMM_NULL)
        return NULL;
    shim_comm *sc = shim_comm_taken(comm, at_once);
    if (!sc)
        return NULL;
    *out = sc;
    if (sc->mode == SHIM_NODES)
        return NULL;
    sc->team.doing = doing;
    return &sc->team;
}

static bool spans_nodes(const shim_comm *sc) { return sc && sc->mode == SHIM_NODES; }

/* Whether shoal tune measured the host's own run of collective c of
 * `bytes` on this team faster than shoal's choice: then the call is the
 * host's (every rank knows the sizes and decides alike). */
static bool host_faster(coll_team *t, core_coll c, size_t bytes) { return t && coll_host_faster(t, c, bytes); }

/* ---- barrier, bcast ---- */

bool shim_barrier_by_shoal(MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    coll_team *t = team_for(CORE_COLL_BARRIER, comm, &sc, name, false);
    if (!t)
        return spans_nodes(sc) && shim_nodes_barrier(sc);
    if (host_faster(t, CORE_COLL_BARRIER, 0))
        return false;
    coll_barrier(t);
    return true;
}

bool shim_bcast_by_shoal(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout l;
    coll_team *t = team_for(CORE_COLL_BCAST, comm, &sc, name, false);
    if (!t)
        return spans_nodes(sc) && shim_nodes_bcast(sc, buf, count, type, root);
    if (root < 0 || root >= sc->size || !shim_layout_of(type, &l) || !shim_takes(&l, count) || buf == MPI_IN_PLACE ||
        shim_bad_pointer(buf, &l, count))
        return false;
    size_t bytes = (size_t)count * l.size;
    if (host_faster(t, CORE_COLL_BCAST, bytes))
        return false;
    if (l.dense) {
        coll_bcast(t, (char *)buf + l.lb, bytes, root);
        return true;
    }
    char *tmp = sc->rank == root ? (char *)shim_send_bytes(sc, 0, buf, count, type, &l, comm)
                                 : shim_recv_bytes(sc, 0, buf, count, &l);
    coll_bcast(t, tmp, bytes, root);
    if (sc->rank != root)
        shim_recv_finish(sc, 0, buf, count, type, &l, comm);
    return true;
}

/* ---- reductions ---- */

/* Pair types whose C struct has padding are reduced in core's packed
 * layout, so padding in the user's buffer is never written. */
static bool needs_pair_packing(core_type ct)
{
    return core_type_is_pair(ct) && core_pair_struct_size(ct) != core_type_size(ct);
}

typedef enum { REDUCE_ONE, REDUCE_ALL, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER, REDUCE_SCAN, REDUCE_EXSCAN } reduce_kind;

/* Runs a reduction given validated arguments; sbuf NULL means in place.
 * count: elements of the result (REDUCE_SCATTER: mine, the blocks being
 * counts[i] elements from element firsts[i]; NULL for the other kinds). */
static void run_reduction(shim_comm *sc, reduce_kind kind, const void *sbuf, void *rbuf, size_t count, core_type ct,
                          core_op op, int root, const size_t *counts, const size_t *firsts)
{
    coll_team *t = &sc->team;
    int n = sc->size;
    /* Rank 0's exscan result is undefined: its buffer is left alone. */
    bool has_result = kind == REDUCE_ONE ? sc->rank == root : kind != REDUCE_EXSCAN || sc->rank > 0;
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
    case REDUCE_SCAN:
    case REDUCE_EXSCAN: coll_scan(t, in, out, count, ct, op, kind == REDUCE_SCAN); break;
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
    return shim_takes_blocks(&l, count, blocks);
}

bool shim_reduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE, comm, &sc, name, type, op, &ct, &cop);
    if (!t)
        return spans_nodes(sc) && shim_nodes_reduce(sc, sbuf, rbuf, count, type, op, root);
    if (root < 0 || root >= sc->size || !reduction_takes(ct, count, 1))
        return false;
    bool is_root = sc->rank == root;
    bool in_place = sbuf == MPI_IN_PLACE;
    if ((in_place && !is_root) ||
        (count && (!(in_place ? rbuf : sbuf) || (is_root && (!rbuf || rbuf == MPI_IN_PLACE)))) ||
        (is_root && count && sbuf == rbuf))
        return false;
    if (count && host_faster(t, CORE_COLL_REDUCE, (size_t)count * core_type_size(ct)))
        return false;
    if (count)
        run_reduction(sc, REDUCE_ONE, in_place ? NULL : sbuf, is_root ? rbuf : NULL, (size_t)count, ct, cop, root, NULL,
                      NULL);
    return true;
}

bool shim_allreduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_ALLREDUCE, comm, &sc, name, type, op, &ct, &cop);
    if (!t)
        return spans_nodes(sc) && shim_nodes_allreduce(sc, sbuf, rbuf, count, type, op);
    if (!reduction_takes(ct, count, 1) || rbuf == MPI_IN_PLACE || (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    if (count && host_faster(t, CORE_COLL_ALLREDUCE, (size_t)count * core_type_size(ct)))
        return false;
    if (count)
        run_reduction(sc, REDUCE_ALL, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0, NULL, NULL);
    return true;
}

bool shim_scan_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        bool inclusive, const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    core_coll c = inclusive ? CORE_COLL_SCAN : CORE_COLL_EXSCAN;
    coll_team *t = reduction_team(c, comm, &sc, name, type, op, &ct, &cop);
    if (!t)
        return spans_nodes(sc) && shim_nodes_scan(sc, sbuf, rbuf, count, type, op, inclusive);
    if (!reduction_takes(ct, count, 1) || rbuf == MPI_IN_PLACE || (count && (!rbuf || !sbuf || sbuf == rbuf)))
        return false;
    size_t bytes = (size_t)count * core_type_size(ct);
    if (bytes > PLAN_SCAN_MAX_BYTES || (count && host_faster(t, c, bytes)))
        return false;
    if (count)
        run_reduction(sc, inclusive ? REDUCE_SCAN : REDUCE_EXSCAN, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf,
                      (size_t)count, ct, cop, 0, NULL, NULL);
    return true;
}

bool shim_reduce_scatter_block_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                                        MPI_Comm comm, const char *name)
{
    /* No elements: nothing moves, and the host's own checks of the
     * arguments cost less than finding the team. */
    if (count == 0)
        return false;
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE_SCATTER_BLOCK, comm, &sc, name, type, op, &ct, &cop);
    if (!t && !spans_nodes(sc))
        return false;
    if (count < 0 || rbuf == MPI_IN_PLACE || !rbuf || !sbuf || sbuf == rbuf)
        return false;
    if (!t) {
        size_t *counts = sc->sizes, *firsts = sc->sizes + sc->size;
        for (int i = 0; i < sc->size; i++) {
            counts[i] = (size_t)count;
            firsts[i] = (size_t)count * (size_t)i;
        }
        return shim_nodes_reduce_scatter(sc, sbuf, rbuf, counts, firsts, type, op);
    }
    if (!reduction_takes(ct, count, sc->size) ||
        host_faster(t, CORE_COLL_REDUCE_SCATTER_BLOCK, (size_t)count * core_type_size(ct)))
        return false;
    run_reduction(sc, REDUCE_SCATTER_BLOCK, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, (size_t)count, ct, cop, 0, NULL,
                  NULL);
    return true;
}

bool shim_reduce_scatter_by_shoal(const void *sbuf, void *rbuf, shim_array rcounts, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    core_type ct;
    core_op cop;
    coll_team *t = reduction_team(CORE_COLL_REDUCE_SCATTER, comm, &sc, name, type, op, &ct, &cop);
    if ((!t && !spans_nodes(sc)) || shim_array_missing(rcounts) || rbuf == MPI_IN_PLACE)
        return false;
    int n = sc->size;
    size_t *counts = sc->sizes, *firsts = sc->sizes + n;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count c = shim_array_at(rcounts, i);
        if (c < 0 || c > INT64_MAX - total)
            return false;
        counts[i] = (size_t)c;
        firsts[i] = (size_t)total;
        total += c;
    }
    if ((total && !sbuf) || (counts[sc->rank] && !rbuf) || shim_aliased(sbuf, (size_t)total, rbuf, counts[sc->rank]))
        return false;
    if (!t)
        return shim_nodes_reduce_scatter(sc, sbuf, rbuf, counts, firsts, type, op);
    if (!reduction_takes(ct, total, 1))
        return false;
    if (total)
        run_reduction(sc, REDUCE_SCATTER, sbuf == MPI_IN_PLACE ? NULL : sbuf, rbuf, counts[sc->rank], ct, cop, 0,
                      counts, firsts);
    return true;
}

/* ---- gather ---- */

bool shim_gather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHER, comm, &sc, name, false);
    if (!sc || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    int n = sc->size;
    bool ok = is_root || !in_place;
    if (!in_place)
        ok = ok && shim_layout_of(stype, &sl) && shim_takes(&sl, scount) && !shim_bad_pointer(sbuf, &sl, scount);
    if (is_root)
        ok = ok && shim_layout_of(rtype, &rl) && shim_takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
             !shim_bad_pointer(rbuf, &rl, rcount) &&
             !shim_aliased(sbuf, in_place ? 0 : (size_t)scount * sl.size, rbuf, (size_t)rcount * rl.size);
    if (!ok)
        return false;

    size_t bytes = is_root ? (size_t)rcount * rl.size : (size_t)scount * sl.size;
    if (!bytes)
        return true;
    if ((spans_nodes(sc) && !shim_nodes_takes_bytes(sc, CORE_COLL_GATHER, bytes)) ||
        host_faster(t, CORE_COLL_GATHER, bytes))
        return false;
    const char *sdata = in_place ? NULL : shim_send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = NULL;
    if (is_root) {
        rdata = shim_recv_bytes(sc, 1, rbuf, rcount * n, &rl);
        if (in_place && !rl.dense) {
            int pos = 0;
            PMPI_Pack((char *)rbuf + (MPI_Aint)root * rcount * rl.extent, (int)rcount, rtype,
                      rdata + (size_t)root * bytes, (int)bytes, &pos, comm);
        }
    }
    if (t)
        coll_gather(t, sdata, bytes, rdata, root);
    else
        shim_nodes_gather(sc, sdata, bytes, rdata, root);
    if (is_root)
        shim_recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

bool shim_gatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                           shim_array displs, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_GATHERV, comm, &sc, name, false);
    if (!sc || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = sbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    MPI_Count rtotal;
    if (!in_place)
        ok = ok && shim_layout_of(stype, &sl) && shim_takes(&sl, scount) && !shim_bad_pointer(sbuf, &sl, scount);
    if (is_root)
        ok = ok && shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE &&
             shim_counts_ok(rcounts, displs, sc->size, &rl, &rtotal) &&
             !shim_aliased(sbuf, in_place ? 0 : (size_t)scount * sl.size, rbuf, (size_t)rtotal * rl.size);
    if (!ok)
        return false;

    size_t *rbytes = sc->sizes + 2 * sc->size, *roffs = sc->sizes + 3 * sc->size;
    const char *sdata = in_place ? NULL : shim_send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rbase = NULL;
    if (is_root) {
        rbase = shim_blocks_at(sc, 1, rbuf, rcounts, displs, &rl, rbytes, roffs);
        if (in_place)
            shim_block_pack(rbase, rbytes, roffs, root, rbuf, rcounts, displs, rtype, &rl, comm);
    }
    if (t)
        coll_gatherv(t, sdata, in_place ? 0 : (size_t)scount * sl.size, rbase, rbytes, roffs, root);
    else
        shim_nodes_gatherv(sc, sdata, in_place ? 0 : (size_t)scount * sl.size, rbase, rbytes, roffs, root);
    if (is_root)
        for (int i = 0; i < sc->size; i++)
            shim_block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, displs, rtype, &rl, comm);
    return true;
}

/* ---- allgather ---- */

bool shim_allgather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                             MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHER, comm, &sc, name, false);
    if (!sc)
        return false;
    int n = sc->size, me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && shim_takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
              !shim_bad_pointer(rbuf, &rl, rcount);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && shim_takes(&sl, scount) && !shim_bad_pointer(sbuf, &sl, scount) &&
             !shim_aliased(sbuf, (size_t)scount * sl.size, rbuf, (size_t)rcount * rl.size);
    if (!ok)
        return false;
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    if ((spans_nodes(sc) && !shim_nodes_takes_bytes(sc, CORE_COLL_ALLGATHER, bytes)) ||
        host_faster(t, CORE_COLL_ALLGATHER, bytes))
        return false;
    const char *sdata = in_place ? NULL : shim_send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rdata = shim_recv_bytes(sc, 1, rbuf, rcount * n, &rl);
    if (in_place && !rl.dense) {
        int pos = 0;
        PMPI_Pack((char *)rbuf + (MPI_Aint)me * rcount * rl.extent, (int)rcount, rtype, rdata + (size_t)me * bytes,
                  (int)bytes, &pos, comm);
    }
    if (t)
        coll_allgather(t, sdata, bytes, rdata);
    else
        shim_nodes_allgather(sc, sdata, bytes, rdata);
    shim_recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

bool shim_allgatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                              shim_array displs, MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLGATHERV, comm, &sc, name, false);
    if (!sc)
        return false;
    int me = sc->rank;
    bool in_place = sbuf == MPI_IN_PLACE;
    MPI_Count rtotal;
    bool ok =
        shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && shim_counts_ok(rcounts, displs, sc->size, &rl, &rtotal);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && shim_takes(&sl, scount) && !shim_bad_pointer(sbuf, &sl, scount) &&
             !shim_aliased(sbuf, (size_t)scount * sl.size, rbuf, (size_t)rtotal * rl.size);
    if (!ok)
        return false;
    size_t *rbytes = sc->sizes + 2 * sc->size, *roffs = sc->sizes + 3 * sc->size;
    const char *sdata = in_place ? NULL : shim_send_bytes(sc, 0, sbuf, scount, stype, &sl, comm);
    char *rbase = shim_blocks_at(sc, 1, rbuf, rcounts, displs, &rl, rbytes, roffs);
    if (in_place)
        shim_block_pack(rbase, rbytes, roffs, me, rbuf, rcounts, displs, rtype, &rl, comm);
    if (t)
        coll_allgatherv(t, sdata, in_place ? rbytes[me] : (size_t)scount * sl.size, rbase, rbytes, roffs);
    else if (!shim_nodes_allgatherv(sc, sdata, rbase, rbytes, roffs))
        return false; /* too big for the host's int counts: nothing was sent */
    for (int i = 0; i < sc->size; i++)
        shim_block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, displs, rtype, &rl, comm);
    return true;
}

/* ---- scatter ---- */

bool shim_scatter_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTER, comm, &sc, name, false);
    if (!sc || root < 0 || root >= sc->size)
        return false;
    int n = sc->size;
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    if (is_root)
        ok = ok && shim_layout_of(stype, &sl) && shim_takes_blocks(&sl, scount, n) && sbuf != MPI_IN_PLACE &&
             !shim_bad_pointer(sbuf, &sl, scount);
    if (!in_place)
        ok = ok && shim_layout_of(rtype, &rl) && shim_takes(&rl, rcount) && !shim_bad_pointer(rbuf, &rl, rcount);
    if (is_root)
        ok = ok && !shim_aliased(sbuf, (size_t)scount * sl.size, rbuf, in_place ? 0 : (size_t)rcount * rl.size);
    if (!ok)
        return false;
    size_t bytes = is_root ? (size_t)scount * sl.size : (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    if ((spans_nodes(sc) && !shim_nodes_takes_bytes(sc, CORE_COLL_SCATTER, bytes)) ||
        host_faster(t, CORE_COLL_SCATTER, bytes))
        return false;
    const char *sdata = is_root ? shim_send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm) : NULL;
    char *rdata = in_place ? NULL : shim_recv_bytes(sc, 1, rbuf, rcount, &rl);
    if (t)
        coll_scatter(t, sdata, bytes, rdata, root);
    else
        shim_nodes_scatter(sc, sdata, bytes, rdata, root);
    if (!in_place)
        shim_recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return true;
}

bool shim_scatterv_by_shoal(const void *sbuf, shim_array scounts, shim_array displs, MPI_Datatype stype, void *rbuf,
                            MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_SCATTERV, comm, &sc, name, false);
    if (!sc || root < 0 || root >= sc->size)
        return false;
    bool is_root = sc->rank == root, in_place = rbuf == MPI_IN_PLACE;
    bool ok = is_root || !in_place;
    MPI_Count stotal;
    if (is_root)
        ok = ok && shim_layout_of(stype, &sl) && sbuf != MPI_IN_PLACE &&
             shim_counts_ok(scounts, displs, sc->size, &sl, &stotal);
    if (!in_place)
        ok = ok && shim_layout_of(rtype, &rl) && shim_takes(&rl, rcount) && !shim_bad_pointer(rbuf, &rl, rcount);
    if (is_root)
        ok = ok && !shim_aliased(sbuf, (size_t)stotal * sl.size, rbuf, in_place ? 0 : (size_t)rcount * rl.size);
    if (!ok)
        return false;
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + sc->size;
    char *sbase = NULL;
    if (is_root) {
        sbase = shim_blocks_at(sc, 0, sbuf, scounts, displs, &sl, sbytes, soffs);
        for (int i = 0; i < sc->size; i++)
            shim_block_pack(sbase, sbytes, soffs, i, sbuf, scounts, displs, stype, &sl, comm);
    }
    char *rdata = in_place ? NULL : shim_recv_bytes(sc, 1, rbuf, rcount, &rl);
    if (t)
        coll_scatterv(t, sbase, sbytes, soffs, rdata, in_place ? 0 : (size_t)rcount * rl.size, root);
    else
        shim_nodes_scatterv(sc, sbase, sbytes, soffs, rdata, in_place ? 0 : (size_t)rcount * rl.size, root);
    if (!in_place)
        shim_recv_finish(sc, 1, rbuf, rcount, rtype, &rl, comm);
    return true;
}

/* ---- alltoall ---- */

bool shim_alltoall_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                            MPI_Datatype rtype, MPI_Comm comm, const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALL, comm, &sc, name, false);
    if (!sc)
        return false;
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    bool ok = shim_layout_of(rtype, &rl) && shim_takes_blocks(&rl, rcount, n) && rbuf != MPI_IN_PLACE &&
              !shim_bad_pointer(rbuf, &rl, rcount);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && shim_takes_blocks(&sl, scount, n) && !shim_bad_pointer(sbuf, &sl, scount) &&
             !shim_aliased(sbuf, (size_t)scount * sl.size, rbuf, (size_t)rcount * rl.size);
    if (!ok)
        return false;
    size_t bytes = (size_t)rcount * rl.size;
    if (!bytes)
        return true;
    if (host_faster(t, CORE_COLL_ALLTOALL, bytes))
        return false;
    const char *sdata;
    if (in_place)
        /* Dense: coll_alltoall copies the send blocks itself. */
        sdata = rl.dense ? NULL : shim_send_bytes(sc, 0, rbuf, rcount * n, rtype, &rl, comm);
    else
        sdata = shim_send_bytes(sc, 0, sbuf, scount * n, stype, &sl, comm);
    char *rdata = shim_recv_bytes(sc, 1, rbuf, rcount * n, &rl);
    if (t)
        coll_alltoall(t, sdata, bytes, rdata);
    else if (!shim_nodes_alltoall(sc, sdata, bytes, rdata))
        return false; /* too big for the host's int counts: nothing was sent */
    shim_recv_finish(sc, 1, rbuf, rcount * n, rtype, &rl, comm);
    return true;
}

bool shim_alltoallv_by_shoal(const void *sbuf, shim_array scounts, shim_array sdispls, MPI_Datatype stype, void *rbuf,
                             shim_array rcounts, shim_array rdispls, MPI_Datatype rtype, MPI_Comm comm,
                             const char *name)
{
    shim_comm *sc;
    shim_layout sl, rl;
    coll_team *t = team_for(CORE_COLL_ALLTOALLV, comm, &sc, name, false);
    if (!sc)
        return false;
    int n = sc->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    MPI_Count stotal, rtotal;
    bool ok = shim_layout_of(rtype, &rl) && rbuf != MPI_IN_PLACE && shim_counts_ok(rcounts, rdispls, n, &rl, &rtotal);
    if (ok && !in_place)
        ok = shim_layout_of(stype, &sl) && shim_counts_ok(scounts, sdispls, n, &sl, &stotal) &&
             !shim_aliased(sbuf, (size_t)stotal * sl.size, rbuf, (size_t)rtotal * rl.size);
    if (!ok)
        return false;
    size_t *sbytes = sc->sizes, *soffs = sc->sizes + n, *rbytes = sc->sizes + 2 * n, *roffs = sc->sizes + 3 * n;
    char *sbase;
    if (in_place) {
        /* Peers read my blocks while I overwrite them: send from a packed copy. */
        shim_layout packed = rl;
        packed.dense = false;
        sbase = shim_blocks_at(sc, 0, rbuf, rcounts, rdispls, &packed, sbytes, soffs);
        for (int i = 0; i < n; i++) {
            if (rl.dense)
                memcpy(sbase + soffs[i], (char *)rbuf + rl.lb + (MPI_Aint)shim_array_at(rdispls, i) * rl.extent,
                       sbytes[i]);
            else
                shim_block_pack(sbase, sbytes, soffs, i, rbuf, rcounts, rdispls, rtype, &rl, comm);
        }
    } else {
        sbase = shim_blocks_at(sc, 0, sbuf, scounts, sdispls, &sl, sbytes, soffs);
        for (int i = 0; i < n; i++)
            shim_block_pack(sbase, sbytes, soffs, i, sbuf, scounts, sdispls, stype, &sl, comm);
    }
    char *rbase = shim_blocks_at(sc, 1, rbuf, rcounts, rdispls, &rl, rbytes, roffs);
    if (t)
        coll_alltoallv(t, sbase, sbytes, soffs, rbase, rbytes, roffs);
    else if (!shim_nodes_alltoallv(sc, sbase, sbytes, soffs, rbase, rbytes, roffs))
        return false; /* blocks too big for the leaders to gain: nothing was sent */
    for (int i = 0; i < n; i++)
        shim_block_unpack(rbase, rbytes, roffs, i, rbuf, rcounts, rdispls, rtype, &rl, comm);
    return true;
}
