/* thread_nbc: non-blocking collectives on a thread communicator (MPI_Ibarrier,
 * Ibcast, Ireduce, Iallreduce, Ireduce_scatter(_block), Igather(v),
 * Iscatter(v), Iallgather(v), Ialltoall(v, w), Iscan, Iexscan).
 *
 * Each is a schedule of rounds of the communicator's own point-to-point
 * messages, on a tag of its own (from the count of non-blocking collectives
 * each rank has started, alike on every rank, so that several outstanding
 * ones never take each other's messages). The call posts the first round
 * and returns. A round's last message to complete, in whichever thread
 * completes it (a sender copying into a posted receive, a thread moving the
 * host's messages, a waiter), runs the schedule on: local work (a reduction)
 * and the next round's posts. So a rank that never enters MPI after the
 * call still lets the others' rounds go on as far as its own posts allow,
 * and a program may start one, exchange messages, then wait, without
 * deadlock. The request handed out is a thread request (a host generalized
 * request) that completes with the last round.
 *
 * Reductions gather every input at the root and combine them there in rank
 * order, as the blocking ones do; Iallreduce then sends the result from rank
 * 0 to every rank, Ireduce_scatter(_block) each rank its share; scans pass a
 * prefix along the ranks.
 *
 * May call: core, and PMPI. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "thread_internal.h"

/* Tags of non-blocking collectives: below the blocking ones' (THREAD_TAG_*),
 * one per call, reused after 2^20 calls. */
#define NBC_TAG_BASE (-(1 << 24))
#define NBC_TAGS (1u << 20)

typedef struct thread_nbc thread_nbc;
/* Posts the next round (true), or ends the schedule (false). */
typedef bool (*nbc_step)(thread_nbc *x);

struct thread_nbc {
    thread_req user; /* first: the host's free function frees the whole */
    thread_comm *tc;
    int self, rank, size, root, tag, round;
    _Atomic int pending; /* the round's steps not done, plus one while posting */
    thread_req *steps;
    int nsteps, error;
    nbc_step step;
    /* the call's arguments */
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    const int *scounts, *sdispls, *rcounts, *rdispls; /* the v-forms' */
    const MPI_Datatype *stypes, *rtypes;              /* alltoallw's (displacements in bytes) */
    MPI_Op op;
    thread_layout sl, rl;
    bool in_place, all; /* all: Iallreduce */
    bool scatters;      /* Ireduce_scatter(_block): each rank gets its share of the result */
    MPI_Count block;    /* each rank's share, or */
    const int *shares;  /* each rank's, Ireduce_scatter's */
    /* inputs gathered at a reduction's root, or an in-place alltoall's copy */
    void *tmp_base;
    char *tmp;
    size_t tmp_stride;
    void *owned; /* the caller's arguments, freed with the call (thread_nbc_next_call) */
};

/* Room for the round's messages. */
static void round_of(thread_nbc *x, int most)
{
    x->steps = calloc((size_t)most, sizeof *x->steps);
    if (!x->steps)
        core_fatal("out of memory for a collective's %d messages", most);
}

static void post(thread_nbc *x, bool send, const void *buf, MPI_Count count, MPI_Datatype type, int peer)
{
    thread_req *req = &x->steps[x->nsteps++];
    req->nbc = x;
    atomic_fetch_add_explicit(&x->pending, 1, memory_order_relaxed);
    int rc = send ? thread_coll_send(x->tc, x->self, buf, (int)count, type, peer, x->tag, req)
                  : thread_coll_recv(x->tc, x->self, (void *)buf, (int)count, type, peer, x->tag, req);
    if (rc != MPI_SUCCESS) {
        /* Never started, never done: the hold of posting keeps pending above 0. */
        atomic_fetch_sub_explicit(&x->pending, 1, memory_order_relaxed);
        if (!x->error)
            x->error = rc;
    }
}

static void end(thread_nbc *x)
{
    free(x->tmp_base);
    x->tmp_base = NULL;
    free(x->owned);
    x->owned = NULL;
    x->user.error = x->error;
    thread_req_finish(&x->user);
}

/* Runs the schedule from a finished round: by the call itself, then by
 * whichever thread completes a round's last step. */
static void advance(thread_nbc *x)
{
    for (;;) {
        for (int i = 0; i < x->nsteps; i++)
            if (x->steps[i].is_recv && x->steps[i].error && !x->error)
                x->error = x->steps[i].error;
        free(x->steps);
        x->steps = NULL;
        x->nsteps = 0;
        atomic_store_explicit(&x->pending, 1, memory_order_relaxed);
        if (x->error || !x->step(x)) {
            end(x);
            return;
        }
        x->round++;
        if (atomic_fetch_sub_explicit(&x->pending, 1, memory_order_acq_rel) != 1)
            return; /* the round's last step runs it on */
    }
}

void thread_nbc_step_done(thread_nbc *x)
{
    if (atomic_fetch_sub_explicit(&x->pending, 1, memory_order_acq_rel) == 1)
        advance(x);
}

/* Dissemination: in round k every rank signals rank + 2^k and hears from
 * rank - 2^k. */
static bool barrier_step(thread_nbc *x)
{
    if (x->round >= 31 || (1 << x->round) >= x->size)
        return false;
    int distance = 1 << x->round;
    round_of(x, 2);
    post(x, false, NULL, 0, MPI_BYTE, (x->rank - distance + x->size) % x->size);
    post(x, true, NULL, 0, MPI_BYTE, (x->rank + distance) % x->size);
    return true;
}

static bool bcast_step(thread_nbc *x)
{
    if (x->round > 0)
        return false;
    if (x->rank != x->root) {
        round_of(x, 1);
        post(x, false, x->rbuf, x->rcount, x->rtype, x->root);
        return true;
    }
    round_of(x, x->size);
    for (int r = 0; r < x->size; r++)
        if (r != x->root)
            post(x, true, x->rbuf, x->rcount, x->rtype, r);
    return true;
}

/* Rank r's block on the receive side and its count: at the v-forms' counts
 * and displacements, else equal blocks one after the other. */
static void post_recv_block(thread_nbc *x, int r, int from)
{
    if (x->rtypes) {
        post(x, false, (char *)x->rbuf + x->rdispls[r], x->rcounts[r], x->rtypes[r], from);
        return;
    }
    MPI_Count count = x->rcounts ? x->rcounts[r] : x->rcount;
    MPI_Aint at = x->rcounts ? x->rdispls[r] : (MPI_Aint)r * x->rcount;
    post(x, false, (char *)x->rbuf + at * x->rl.extent, count, x->rtype, from);
}

static void post_send_block(thread_nbc *x, int r, int to)
{
    if (x->stypes) {
        post(x, true, (const char *)x->sbuf + x->sdispls[r], x->scounts[r], x->stypes[r], to);
        return;
    }
    MPI_Count count = x->scounts ? x->scounts[r] : x->scount;
    MPI_Aint at = x->scounts ? x->sdispls[r] : (MPI_Aint)r * x->scount;
    post(x, true, (const char *)x->sbuf + at * x->sl.extent, count, x->stype, to);
}

/* Gather and gatherv. */
static bool gather_step(thread_nbc *x)
{
    if (x->round > 0)
        return false;
    bool root = x->rank == x->root;
    round_of(x, root ? x->size + 1 : 1);
    for (int r = 0; root && r < x->size; r++)
        if (!(x->in_place && r == x->root))
            post_recv_block(x, r, r);
    if (!(root && x->in_place))
        post(x, true, x->sbuf, x->scount, x->stype, x->root);
    return true;
}

/* Scatter and scatterv. */
static bool scatter_step(thread_nbc *x)
{
    if (x->round > 0)
        return false;
    bool root = x->rank == x->root;
    round_of(x, root ? x->size + 1 : 1);
    if (!(root && x->in_place))
        post(x, false, x->rbuf, x->rcount, x->rtype, x->root);
    for (int r = 0; root && r < x->size; r++)
        if (!(x->in_place && r == x->root))
            post_send_block(x, r, r);
    return true;
}

/* Allgather and allgatherv: in place, a rank sends its block of the receive
 * buffer. */
static bool allgather_step(thread_nbc *x)
{
    if (x->round > 0)
        return false;
    round_of(x, 2 * x->size);
    for (int r = 0; r < x->size; r++)
        if (!(x->in_place && r == x->rank))
            post_recv_block(x, r, r);
    MPI_Count count = x->rcounts ? x->rcounts[x->rank] : x->rcount;
    MPI_Aint at = x->rcounts ? x->rdispls[x->rank] : (MPI_Aint)x->rank * x->rcount;
    for (int r = 0; r < x->size; r++) {
        if (x->in_place && r != x->rank)
            post(x, true, (char *)x->rbuf + at * x->rl.extent, count, x->rtype, r);
        else if (!x->in_place)
            post(x, true, x->sbuf, x->scount, x->stype, r);
    }
    return true;
}

/* Alltoall and alltoallv. */
static bool alltoall_step(thread_nbc *x)
{
    if (x->round > 0)
        return false;
    round_of(x, 2 * x->size);
    for (int r = 0; r < x->size; r++)
        post_recv_block(x, r, r);
    for (int r = 0; r < x->size; r++)
        post_send_block(x, r, r);
    return true;
}

/* Rank r's input at a reduction's root. */
static const char *input_of(const thread_nbc *x, int r)
{
    if (r == x->root && !x->in_place)
        return x->sbuf;
    return x->tmp + (size_t)r * x->tmp_stride - x->rl.lb;
}

/* Rank r's share of a reduce_scatter's result: its first element, and in
 * *count how many. */
static MPI_Count share_of(const thread_nbc *x, int r, MPI_Count *count)
{
    if (!x->shares) {
        *count = x->block;
        return (MPI_Count)r * x->block;
    }
    MPI_Count first = 0;
    for (int q = 0; q < r; q++)
        first += x->shares[q];
    *count = x->shares[r];
    return first;
}

/* Round 0: every input to the root; round 1: the root combines them in rank
 * order, x[0] op (x[1] op ... x[n-1]), and for Iallreduce sends the result
 * to every rank, which receives it; for Ireduce_scatter(_block) it combines
 * them aside and sends each rank its share. */
static bool reduce_step(thread_nbc *x)
{
    bool root = x->rank == x->root;
    if (x->round == 0) {
        round_of(x, x->size);
        if (!root)
            post(x, true, x->in_place ? x->rbuf : x->sbuf, x->rcount, x->rtype, x->root);
        for (int r = 0; root && r < x->size; r++)
            if (r != x->root)
                post(x, false, (void *)input_of(x, r), x->rcount, x->rtype, r);
        return true;
    }
    if (x->round > 1)
        return false;
    MPI_Count share;
    if (!root) {
        if (!x->all && !x->scatters)
            return false;
        round_of(x, 1);
        share_of(x, x->rank, &share);
        post(x, false, x->rbuf, x->scatters ? share : x->rcount, x->rtype, x->root);
        return true;
    }
    char *result = x->scatters ? x->tmp + (size_t)x->size * x->tmp_stride - x->rl.lb : x->rbuf;
    int rc = thread_copy_typed(result, input_of(x, x->size - 1), x->rcount, x->rtype, &x->rl);
    for (int t = x->size - 2; t >= 0 && rc == MPI_SUCCESS; t--)
        rc = PMPI_Reduce_local(input_of(x, t), result, (int)x->rcount, x->rtype, x->op);
    if (rc == MPI_SUCCESS && x->scatters) {
        MPI_Count first = share_of(x, x->root, &share);
        rc = thread_copy_typed(x->rbuf, result + first * x->rl.extent, share, x->rtype, &x->rl);
    }
    if (rc != MPI_SUCCESS)
        x->error = rc;
    if ((!x->all && !x->scatters) || rc != MPI_SUCCESS)
        return false;
    round_of(x, x->size);
    if (x->scatters) {
        for (int r = 0; r < x->size; r++)
            if (r != x->root) {
                MPI_Count first = share_of(x, r, &share);
                post(x, true, result + first * x->rl.extent, share, x->rtype, r);
            }
        return true;
    }
    for (int r = 0; r < x->size; r++)
        if (r != x->root)
            post(x, true, x->rbuf, x->rcount, x->rtype, r);
    return true;
}

/* Scan and exscan (x->all: exclusive), a chain in rank order: a rank
 * receives its predecessors' prefix, combines it with its input (prefix op
 * mine) and sends that on. In tmp: the prefix, then the running result. */
static bool scan_step(thread_nbc *x)
{
    int combine_round = x->rank > 0 ? 1 : 0;
    char *prefix = x->tmp - x->rl.lb, *acc = x->tmp + x->tmp_stride - x->rl.lb;
    if (x->round < combine_round) {
        round_of(x, 1);
        post(x, false, prefix, x->rcount, x->rtype, x->rank - 1);
        return true;
    }
    if (x->round > combine_round)
        return false;
    int rc = thread_copy_typed(acc, x->in_place ? x->rbuf : x->sbuf, x->rcount, x->rtype, &x->rl);
    if (rc == MPI_SUCCESS && x->rank > 0)
        rc = PMPI_Reduce_local(prefix, acc, (int)x->rcount, x->rtype, x->op);
    if (rc == MPI_SUCCESS && (!x->all || x->rank > 0))
        rc = thread_copy_typed(x->rbuf, x->all ? prefix : acc, x->rcount, x->rtype, &x->rl);
    if (rc != MPI_SUCCESS || x->rank + 1 == x->size) {
        x->error = rc;
        return false;
    }
    round_of(x, 1);
    post(x, true, acc, x->rcount, x->rtype, x->rank + 1);
    return true;
}

int thread_nbc_take_tag(thread_comm *tc, int self) { return NBC_TAG_BASE - (int)(tc->nbc_started[self]++ % NBC_TAGS); }

/* What thread_nbc_next_call set for this thread's next call. */
static _Thread_local struct {
    int tag; /* 0: a new one */
    void *owned;
} next_call;

void thread_nbc_next_call(int tag, void *owned)
{
    next_call.tag = tag;
    next_call.owned = owned;
}

/* A new call on comm by this thread: its place, its tag; NULL and the error
 * in *rc where comm is not a started thread communicator. */
static thread_nbc *open_call(MPI_Comm comm, nbc_step step, int *rc)
{
    int tag = next_call.tag;
    void *owned = next_call.owned;
    next_call.tag = 0;
    next_call.owned = NULL;
    thread_comm *tc = thread_comm_find(comm);
    int self = tc ? thread_self(tc) : -1;
    if (self < 0) {
        free(owned);
        *rc = tc ? thread_error(tc, MPI_ERR_COMM, "a collective by a thread that has not started it") : MPI_ERR_COMM;
        return NULL;
    }
    thread_nbc *x = calloc(1, sizeof *x);
    if (!x) {
        free(owned);
        *rc = thread_error(tc, MPI_ERR_NO_MEM, "no memory for a non-blocking collective");
        return NULL;
    }
    x->user.tc = tc;
    x->tc = tc;
    x->self = self;
    x->rank = tc->offset[tc->my_proc] + self;
    x->size = tc->size;
    x->owned = owned;
    x->tag = tag ? tag : thread_nbc_take_tag(tc, self);
    x->step = step;
    x->root = -1;
    *rc = MPI_SUCCESS;
    return x;
}

/* Checks a count and datatype, and takes the type's layout. */
static int check(MPI_Count count, MPI_Datatype type, thread_layout *l)
{
    if (count < 0 || count > INT_MAX)
        return MPI_ERR_COUNT;
    return thread_layout_of(type, l) ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/* Hands the request out and posts the first round; or reports rc. */
static int start(thread_nbc *x, int rc, const char *name, MPI_Request *request)
{
    if (rc == MPI_SUCCESS && x->root != -1 && (x->root < 0 || x->root >= x->size))
        rc = MPI_ERR_ROOT;
    if (rc == MPI_SUCCESS)
        rc = thread_req_hand_out(&x->user, request);
    if (rc != MPI_SUCCESS) {
        thread_comm *tc = x->tc;
        free(x->tmp_base);
        free(x->owned);
        free(x);
        return thread_error(tc, rc, name);
    }
    advance(x);
    return MPI_SUCCESS;
}

int thread_MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    int rc;
    thread_nbc *x = open_call(comm, barrier_step, &rc);
    return x ? start(x, MPI_SUCCESS, "MPI_Ibarrier", request) : rc;
}

int thread_MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request)
{
    int rc;
    thread_nbc *x = open_call(comm, bcast_step, &rc);
    if (!x)
        return rc;
    x->rbuf = buf;
    x->rcount = count;
    x->rtype = type;
    x->root = root;
    return start(x, check(count, type, &x->rl), "MPI_Ibcast", request);
}

typedef enum {
    REDUCE_TO_ROOT,
    REDUCE_TO_ALL,
    REDUCE_SCATTER_BLOCK,
    REDUCE_SCATTER,
    SCAN_INCLUSIVE,
    SCAN_EXCLUSIVE
} reduce_kind;

/* shares: Ireduce_scatter's counts (count is then unused). */
static int reduction(reduce_kind kind, const void *sbuf, void *rbuf, int count, const int *shares, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Request *request, const char *name)
{
    int rc;
    bool scan = kind == SCAN_INCLUSIVE || kind == SCAN_EXCLUSIVE;
    thread_nbc *x = open_call(comm, scan ? scan_step : reduce_step, &rc);
    if (!x)
        return rc;
    x->root = kind == REDUCE_TO_ROOT ? root : scan ? -1 : 0;
    x->all = kind == REDUCE_TO_ALL || kind == SCAN_EXCLUSIVE;
    x->scatters = kind == REDUCE_SCATTER_BLOCK || kind == REDUCE_SCATTER;
    x->block = kind == REDUCE_SCATTER_BLOCK ? count : 0;
    x->shares = kind == REDUCE_SCATTER ? shares : NULL;
    /* A reduce_scatter reduces every rank's share at once. */
    MPI_Count total = kind == REDUCE_SCATTER_BLOCK ? (MPI_Count)count * x->size : count;
    if (kind == REDUCE_SCATTER) {
        total = 0;
        for (int r = 0; r < x->size; r++)
            total += shares[r] < 0 ? (MPI_Count)INT_MAX + 1 : shares[r];
    }
    x->rbuf = rbuf;
    x->rcount = total;
    x->rtype = type;
    x->op = op;
    rc = check(total, type, &x->rl);
    if (rc == MPI_SUCCESS && op == MPI_OP_NULL)
        rc = MPI_ERR_OP;
    x->in_place = sbuf == MPI_IN_PLACE && (kind != REDUCE_TO_ROOT || x->rank == root);
    x->sbuf = sbuf;
    bool gathers = !scan && x->rank == x->root && x->root >= 0 && x->root < x->size;
    if (rc == MPI_SUCCESS && (scan || gathers)) {
        /* A scan's prefix and result; a root's inputs, gathered (an in-place
         * root's own copied in now, since the result overwrites it), and
         * Ireduce_scatter_block's result. */
        int slots = scan ? 2 : x->size + (x->scatters ? 1 : 0);
        x->tmp_stride = thread_span(&x->rl, (size_t)total);
        x->tmp_base = malloc((size_t)slots * x->tmp_stride + 1);
        x->tmp = x->tmp_base;
        if (!x->tmp_base)
            rc = MPI_ERR_NO_MEM;
        else if (gathers && x->in_place)
            rc = thread_copy_typed((char *)input_of(x, x->root), rbuf, total, type, &x->rl);
    }
    return start(x, rc, name, request);
}

int thread_MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    return reduction(REDUCE_TO_ROOT, sbuf, rbuf, count, NULL, type, op, root, comm, request, "MPI_Ireduce");
}

int thread_MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request)
{
    return reduction(REDUCE_TO_ALL, sbuf, rbuf, count, NULL, type, op, 0, comm, request, "MPI_Iallreduce");
}

int thread_MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request)
{
    return reduction(REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, NULL, type, op, 0, comm, request,
                     "MPI_Ireduce_scatter_block");
}

int thread_MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
    return reduction(REDUCE_SCATTER, sbuf, rbuf, 0, rcounts, type, op, 0, comm, request, "MPI_Ireduce_scatter");
}

int thread_MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                     MPI_Request *request)
{
    return reduction(SCAN_INCLUSIVE, sbuf, rbuf, count, NULL, type, op, 0, comm, request, "MPI_Iscan");
}

int thread_MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request)
{
    return reduction(SCAN_EXCLUSIVE, sbuf, rbuf, count, NULL, type, op, 0, comm, request, "MPI_Iexscan");
}

/* The block collectives: a send and a receive side, either of which a root
 * or MPI_IN_PLACE may leave out; the v-forms give counts and displacements
 * per rank (NULL: equal blocks). */
typedef struct side {
    const void *buf;
    int count;
    const int *counts, *displs;
    MPI_Datatype type;
    const MPI_Datatype *types; /* alltoallw's, one per rank (displacements in bytes) */
} side;

/* Checks a side's types and counts. */
static int check_side(const side *d, int size, thread_layout *l)
{
    int rc = d->types ? MPI_SUCCESS : check(d->counts ? 0 : d->count, d->type, l);
    for (int r = 0; d->counts && r < size && rc == MPI_SUCCESS; r++)
        if (d->counts[r] < 0)
            rc = MPI_ERR_COUNT;
        else if (d->types && !thread_layout_of(d->types[r], l))
            rc = MPI_ERR_TYPE;
    return rc;
}

/* Bytes of an alltoallw receive buffer its blocks span, from its start. */
static size_t span_of_blocks(const side *d, int size)
{
    size_t end = 0;
    for (int r = 0; r < size; r++) {
        thread_layout l;
        if (d->counts[r] > 0 && thread_layout_of(d->types[r], &l)) {
            size_t last = (size_t)(d->displs[r] + l.lb) + thread_span(&l, (size_t)d->counts[r]);
            end = last > end ? last : end;
        }
    }
    return end;
}

static int blocks(nbc_step step, side send, side recv, int root, MPI_Comm comm, MPI_Request *request, const char *name)
{
    int rc;
    thread_nbc *x = open_call(comm, step, &rc);
    if (!x)
        return rc;
    bool is_root = x->rank == root;
    x->root = root;
    x->sbuf = send.buf;
    x->scount = send.count;
    x->scounts = send.counts;
    x->sdispls = send.displs;
    x->stype = send.type;
    x->rbuf = (void *)recv.buf;
    x->rcount = recv.count;
    x->rcounts = recv.counts;
    x->rdispls = recv.displs;
    x->rtype = recv.type;
    x->stypes = send.types;
    x->rtypes = recv.types;
    /* MPI_IN_PLACE: the root's send buffer in a gather, its receive buffer
     * in a scatter; the send buffer of allgather and alltoall. */
    bool sends = step != scatter_step || is_root, receives = step != gather_step || is_root;
    x->in_place = (step == scatter_step ? recv.buf : send.buf) == MPI_IN_PLACE && (root < 0 || is_root);
    if (x->in_place && step == scatter_step)
        receives = false;
    else if (x->in_place)
        sends = false;
    rc = MPI_SUCCESS;
    if (receives)
        rc = check_side(&recv, x->size, &x->rl);
    if (rc == MPI_SUCCESS && sends)
        rc = check_side(&send, x->size, &x->sl);
    if (rc == MPI_SUCCESS && x->in_place && recv.types) {
        /* Every block is sent from a copy of the receive buffer's bytes. */
        size_t bytes = span_of_blocks(&recv, x->size);
        x->tmp_base = x->tmp = malloc(bytes + 1);
        if (!x->tmp)
            rc = MPI_ERR_NO_MEM;
        else
            memcpy(x->tmp, recv.buf, bytes);
        x->sbuf = x->tmp;
        x->scounts = recv.counts;
        x->sdispls = recv.displs;
        x->stypes = recv.types;
        x->in_place = false;
    } else if (rc == MPI_SUCCESS && x->in_place && step == alltoall_step) {
        /* Every block is sent from a copy of what the receive buffer holds. */
        MPI_Count elements = (MPI_Count)x->size * recv.count;
        if (recv.counts) {
            elements = 0;
            for (int r = 0; r < x->size; r++)
                if ((MPI_Count)recv.displs[r] + recv.counts[r] > elements)
                    elements = (MPI_Count)recv.displs[r] + recv.counts[r];
        }
        x->tmp = thread_alloc_elements(&x->rl, elements, &x->tmp_base);
        if (!x->tmp)
            rc = MPI_ERR_NO_MEM;
        else
            rc = thread_copy_typed(x->tmp, recv.buf, elements, recv.type, &x->rl);
        x->sbuf = x->tmp;
        x->scount = recv.count;
        x->scounts = recv.counts;
        x->sdispls = recv.displs;
        x->stype = recv.type;
        x->sl = x->rl;
        x->in_place = false;
    }
    return start(x, rc, name, request);
}

#define SIDE(buf, count, type) ((side){(buf), (count), NULL, NULL, (type), NULL})
#define SIDE_V(buf, counts, displs, type) ((side){(buf), 0, (counts), (displs), (type), NULL})
#define SIDE_W(buf, counts, displs, types) ((side){(buf), 0, (counts), (displs), MPI_DATATYPE_NULL, (types)})

int thread_MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    return blocks(gather_step, SIDE(sbuf, scount, stype), SIDE(rbuf, rcount, rtype), root, comm, request,
                  "MPI_Igather");
}

int thread_MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, MPI_Request *request)
{
    return blocks(scatter_step, SIDE(sbuf, scount, stype), SIDE(rbuf, rcount, rtype), root, comm, request,
                  "MPI_Iscatter");
}

int thread_MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                          MPI_Comm comm, MPI_Request *request)
{
    return blocks(allgather_step, SIDE(sbuf, scount, stype), SIDE(rbuf, rcount, rtype), -1, comm, request,
                  "MPI_Iallgather");
}

int thread_MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         MPI_Comm comm, MPI_Request *request)
{
    return blocks(alltoall_step, SIDE(sbuf, scount, stype), SIDE(rbuf, rcount, rtype), -1, comm, request,
                  "MPI_Ialltoall");
}

int thread_MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return blocks(gather_step, SIDE(sbuf, scount, stype), SIDE_V(rbuf, rcounts, displs, rtype), root, comm, request,
                  "MPI_Igatherv");
}

int thread_MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                         int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return blocks(scatter_step, SIDE_V(sbuf, scounts, displs, stype), SIDE(rbuf, rcount, rtype), root, comm, request,
                  "MPI_Iscatterv");
}

int thread_MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    return blocks(allgather_step, SIDE(sbuf, scount, stype), SIDE_V(rbuf, rcounts, displs, rtype), -1, comm, request,
                  "MPI_Iallgatherv");
}

int thread_MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                          MPI_Request *request)
{
    return blocks(alltoall_step, SIDE_V(sbuf, scounts, sdispls, stype), SIDE_V(rbuf, rcounts, rdispls, rtype), -1, comm,
                  request, "MPI_Ialltoallv");
}

int thread_MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                          void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                          MPI_Comm comm, MPI_Request *request)
{
    return blocks(alltoall_step, SIDE_W(sbuf, scounts, sdispls, stypes), SIDE_W(rbuf, rcounts, rdispls, rtypes), -1,
                  comm, request, "MPI_Ialltoallw");
}
