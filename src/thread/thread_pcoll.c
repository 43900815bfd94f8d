/* thread_pcoll: collectives given as a description of their call
 * (thread_coll_call): MPI-4's persistent collectives (MPI_<name>_init) and
 * the large-count (`_c`) non-blocking v and w forms, on a thread
 * communicator. Both run on the non-blocking collectives of thread_nbc.c.
 *
 * A persistent collective copies, at its init, the arrays this rank reads
 * (as ints), keeps duplicates of derived datatypes, and takes its tag there
 * (MPI-4 matches persistent collectives at their init, so ranks may start
 * them in any order); each MPI_Start runs the matching non-blocking
 * collective on that tag. A large-count v or w form runs the int form on
 * ints copied from its arrays, freed when the collective is done; a count
 * or displacement beyond an int is MPI_ERR_COUNT.
 *
 * May call: core, and PMPI. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "thread_internal.h"

/* n entries of an array of the int binding or of the large-count one
 * (counts MPI_Count, displacements MPI_Aint), as ints; false where one
 * does not fit. */
static bool to_ints(int *dst, const void *src, int n, bool large, bool displacements)
{
    for (int i = 0; i < n; i++) {
        long long v = !large          ? ((const int *)src)[i]
                      : displacements ? (long long)((const MPI_Aint *)src)[i]
                                      : (long long)((const MPI_Count *)src)[i];
        if (v < INT_MIN || v > INT_MAX)
            return false;
        dst[i] = (int)v;
    }
    return true;
}

/* The copy's arrays: those this rank reads, as ints, in one block (*block,
 * which the caller frees). */
static int own_arrays(const thread_comm *tc, int rank, const thread_coll_call *call, thread_coll_call *copy,
                      void **block)
{
    *copy = *call;
    copy->large = false;
    copy->scounts = copy->sdispls = copy->rcounts = copy->rdispls = NULL;
    copy->stypes = copy->rtypes = NULL;
    *block = NULL;
    if ((call->scount < 0 || call->scount > INT_MAX) || (call->rcount < 0 || call->rcount > INT_MAX))
        return MPI_ERR_COUNT;
    bool root = rank == call->root;
    bool send_side = false, recv_side = false, recv_counts_only = false, types = false;
    switch (call->kind) {
    case THREAD_GATHERV: recv_side = root; break;
    case THREAD_SCATTERV: send_side = root; break;
    case THREAD_ALLGATHERV: recv_side = true; break;
    case THREAD_ALLTOALLV: send_side = call->sbuf != MPI_IN_PLACE, recv_side = true; break;
    case THREAD_ALLTOALLW: send_side = call->sbuf != MPI_IN_PLACE, recv_side = types = true; break;
    case THREAD_REDUCE_SCATTER: recv_counts_only = true; break;
    default: return MPI_SUCCESS;
    }
    size_t n = (size_t)tc->size;
    char *b = calloc(1, 4 * n * sizeof(int) + 2 * n * sizeof(MPI_Datatype) + 1);
    if (!b)
        return MPI_ERR_NO_MEM;
    *block = b;
    int *ints = (int *)b;
    MPI_Datatype *type_copies = (MPI_Datatype *)(b + 4 * n * sizeof(int));
    bool fits = true;
    /* The send side's counts and displacements (the sender's own, unless
     * MPI_IN_PLACE leaves them out), then the receive side's. */
    if (send_side && call->scounts) {
        fits &= to_ints(ints, call->scounts, tc->size, call->large, false);
        copy->scounts = ints;
    }
    if (send_side && call->sdispls) {
        fits &= to_ints(ints + n, call->sdispls, tc->size, call->large, true);
        copy->sdispls = ints + n;
    }
    if ((recv_side || recv_counts_only) && call->rcounts) {
        fits &= to_ints(ints + 2 * n, call->rcounts, tc->size, call->large, false);
        copy->rcounts = ints + 2 * n;
    }
    if (recv_side && call->rdispls) {
        fits &= to_ints(ints + 3 * n, call->rdispls, tc->size, call->large, true);
        copy->rdispls = ints + 3 * n;
    }
    if (types && send_side && call->stypes) {
        memcpy(type_copies, call->stypes, n * sizeof *type_copies);
        copy->stypes = type_copies;
    }
    if (types && call->rtypes) {
        memcpy(type_copies + n, call->rtypes, n * sizeof *type_copies);
        copy->rtypes = type_copies + n;
    }
    return fits ? MPI_SUCCESS : MPI_ERR_COUNT;
}

/* Runs the non-blocking collective a call (int arrays) describes. */
static int issue(MPI_Comm comm, const thread_coll_call *c, MPI_Request *request)
{
    int s = (int)c->scount, r = (int)c->rcount;
    const int *sc = c->scounts, *sd = c->sdispls, *rc = c->rcounts, *rd = c->rdispls;
    switch (c->kind) {
    case THREAD_BARRIER: return thread_MPI_Ibarrier(comm, request);
    case THREAD_BCAST: return thread_MPI_Ibcast(c->rbuf, r, c->rtype, c->root, comm, request);
    case THREAD_REDUCE: return thread_MPI_Ireduce(c->sbuf, c->rbuf, r, c->rtype, c->op, c->root, comm, request);
    case THREAD_ALLREDUCE: return thread_MPI_Iallreduce(c->sbuf, c->rbuf, r, c->rtype, c->op, comm, request);
    case THREAD_REDUCE_SCATTER: return thread_MPI_Ireduce_scatter(c->sbuf, c->rbuf, rc, c->rtype, c->op, comm, request);
    case THREAD_REDUCE_SCATTER_BLOCK:
        return thread_MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, r, c->rtype, c->op, comm, request);
    case THREAD_SCAN: return thread_MPI_Iscan(c->sbuf, c->rbuf, r, c->rtype, c->op, comm, request);
    case THREAD_EXSCAN: return thread_MPI_Iexscan(c->sbuf, c->rbuf, r, c->rtype, c->op, comm, request);
    case THREAD_GATHER: return thread_MPI_Igather(c->sbuf, s, c->stype, c->rbuf, r, c->rtype, c->root, comm, request);
    case THREAD_GATHERV:
        return thread_MPI_Igatherv(c->sbuf, s, c->stype, c->rbuf, rc, rd, c->rtype, c->root, comm, request);
    case THREAD_SCATTER: return thread_MPI_Iscatter(c->sbuf, s, c->stype, c->rbuf, r, c->rtype, c->root, comm, request);
    case THREAD_SCATTERV:
        return thread_MPI_Iscatterv(c->sbuf, sc, sd, c->stype, c->rbuf, r, c->rtype, c->root, comm, request);
    case THREAD_ALLGATHER: return thread_MPI_Iallgather(c->sbuf, s, c->stype, c->rbuf, r, c->rtype, comm, request);
    case THREAD_ALLGATHERV:
        return thread_MPI_Iallgatherv(c->sbuf, s, c->stype, c->rbuf, rc, rd, c->rtype, comm, request);
    case THREAD_ALLTOALL: return thread_MPI_Ialltoall(c->sbuf, s, c->stype, c->rbuf, r, c->rtype, comm, request);
    case THREAD_ALLTOALLV:
        return thread_MPI_Ialltoallv(c->sbuf, sc, sd, c->stype, c->rbuf, rc, rd, c->rtype, comm, request);
    case THREAD_ALLTOALLW:
        return thread_MPI_Ialltoallw(c->sbuf, sc, sd, c->stypes, c->rbuf, rc, rd, c->rtypes, comm, request);
    }
    return MPI_ERR_INTERN;
}

/* The calling thread's place in comm's thread communicator, or an error
 * through its handler (*rc). */
static thread_comm *caller(MPI_Comm comm, int *self, int *rc, const char *name)
{
    thread_comm *tc = thread_comm_find(comm);
    *self = tc ? thread_self(tc) : -1;
    *rc = MPI_SUCCESS;
    if (*self < 0)
        *rc = tc ? thread_error(tc, MPI_ERR_COMM, name) : MPI_ERR_COMM;
    return *self < 0 ? NULL : tc;
}

int thread_coll_large(MPI_Comm comm, const thread_coll_call *call, MPI_Request *request, const char *name)
{
    int self, rc;
    thread_comm *tc = caller(comm, &self, &rc, name);
    if (!tc)
        return rc;
    thread_coll_call copy;
    void *block;
    rc = own_arrays(tc, tc->offset[tc->my_proc] + self, call, &copy, &block);
    if (rc != MPI_SUCCESS) {
        free(block);
        return thread_error(tc, rc, name);
    }
    thread_nbc_next_call(0, block);
    return issue(comm, &copy, request);
}

/* A persistent collective: its call (arrays and datatypes its own) and
 * the tag it took at its init. */
typedef struct thread_pcoll {
    thread_comm *tc;
    MPI_Comm comm;
    int self, tag;
    thread_coll_call call;
    void *block;
    bool stype_owned, rtype_owned;
    bool *w_owned; /* alltoallw's types, send then receive */
} thread_pcoll;

/* Where own_arrays put alltoallw's datatypes: the send side's, then the
 * receive side's. */
static MPI_Datatype *w_types(const thread_pcoll *pc)
{
    return (MPI_Datatype *)((char *)pc->block + 4 * (size_t)pc->tc->size * sizeof(int));
}

static int pcoll_start(void *args, MPI_Request *active)
{
    thread_pcoll *pc = args;
    if (thread_self(pc->tc) != pc->self)
        return thread_error(pc->tc, MPI_ERR_REQUEST, "MPI_Start of a persistent collective by another rank's thread");
    thread_nbc_next_call(pc->tag, NULL);
    return issue(pc->comm, &pc->call, active);
}

static void pcoll_release(void *args)
{
    thread_pcoll *pc = args;
    thread_type_release(&pc->call.stype, pc->stype_owned);
    thread_type_release(&pc->call.rtype, pc->rtype_owned);
    if (pc->w_owned) {
        MPI_Datatype *types = w_types(pc);
        for (int i = 0; i < 2 * pc->tc->size; i++)
            thread_type_release(&types[i], pc->w_owned[i]);
    }
    free(pc->w_owned);
    free(pc->block);
    free(pc);
}

static const thread_persistent_ops pcoll_ops = {pcoll_start, pcoll_release};

/* Holds alltoallw's datatypes (those own_arrays copied). */
static int hold_w_types(thread_pcoll *pc)
{
    int n = pc->tc->size, rc = MPI_SUCCESS;
    pc->w_owned = calloc(2 * (size_t)n, sizeof *pc->w_owned);
    if (!pc->w_owned)
        return MPI_ERR_NO_MEM;
    MPI_Datatype *types = w_types(pc);
    for (int i = 0; i < 2 * n && rc == MPI_SUCCESS; i++)
        if ((i < n ? pc->call.stypes : pc->call.rtypes) != NULL)
            rc = thread_type_hold(types[i], &types[i], &pc->w_owned[i]);
    return rc;
}

/* Whether this rank reads the send side's datatype, and the receive
 * side's (MPI_IN_PLACE and a root's part leave them out). */
static void types_read(const thread_coll_call *c, int rank, bool *send, bool *recv)
{
    bool root = rank == c->root;
    switch (c->kind) {
    case THREAD_BARRIER:
    case THREAD_ALLTOALLW: *send = *recv = false; return;
    case THREAD_GATHER:
    case THREAD_GATHERV: *send = c->sbuf != MPI_IN_PLACE || !root, *recv = root; return;
    case THREAD_SCATTER:
    case THREAD_SCATTERV: *send = root, *recv = c->rbuf != MPI_IN_PLACE || !root; return;
    case THREAD_ALLGATHER:
    case THREAD_ALLGATHERV:
    case THREAD_ALLTOALL:
    case THREAD_ALLTOALLV: *send = c->sbuf != MPI_IN_PLACE, *recv = true; return;
    default: *send = false, *recv = true; return; /* bcast and the reductions: one datatype */
    }
}

int thread_coll_init(MPI_Comm comm, const thread_coll_call *call, MPI_Request *request, const char *name)
{
    int self, rc;
    thread_comm *tc = caller(comm, &self, &rc, name);
    if (!tc)
        return rc;
    thread_pcoll *pc = calloc(1, sizeof *pc);
    if (!pc)
        return thread_error(tc, MPI_ERR_NO_MEM, name);
    pc->tc = tc;
    pc->comm = comm;
    pc->self = self;
    int rank = tc->offset[tc->my_proc] + self;
    rc = own_arrays(tc, rank, call, &pc->call, &pc->block);
    bool send_type, recv_type;
    types_read(call, rank, &send_type, &recv_type);
    if (rc == MPI_SUCCESS && send_type)
        rc = thread_type_hold(call->stype, &pc->call.stype, &pc->stype_owned);
    if (rc == MPI_SUCCESS && recv_type)
        rc = thread_type_hold(call->rtype, &pc->call.rtype, &pc->rtype_owned);
    if (rc == MPI_SUCCESS && call->kind == THREAD_ALLTOALLW)
        rc = hold_w_types(pc);
    if (rc != MPI_SUCCESS) {
        pcoll_release(pc);
        return thread_error(tc, rc == MPI_ERR_COUNT || rc == MPI_ERR_NO_MEM ? rc : MPI_ERR_TYPE, name);
    }
    /* Matched here: every rank takes its tag in its order of collectives. */
    pc->tag = thread_nbc_take_tag(tc, self);
    rc = thread_persistent_make(tc, self, &pcoll_ops, pc, request);
    if (rc != MPI_SUCCESS)
        pcoll_release(pc);
    return rc;
}
