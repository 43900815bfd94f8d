/* thread_coll: collectives on a thread communicator.
 *
 * The threads of a process meet at their barrier and read each other's
 * buffers, published in their slots; where the communicator spans
 * processes, each process's first thread runs one step between processes
 * (the public MPI_* collective on a private duplicate of the parent, so
 * shoal's process path serves it where it pays) on the process's combined
 * data. Thread ranks are numbered process by process, so a process's
 * threads' blocks are contiguous in rank order.
 *
 * Reductions combine in rank order (MPI_Reduce_local, so every datatype and
 * operation the host knows, user-defined ones included): each thread folds
 * one slice of the elements over its process's threads, then the processes'
 * results combine in process order. Blocks that gather, scatter and
 * all-to-all move are packed bytes in the communicator's scratch.
 *
 * May call: core, and PMPI (and the public MPI_* collectives, for the step
 * between processes). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "thread_internal.h"

/* What one collective call knows: the communicator, this thread's place. */
typedef struct call {
    thread_comm *tc;
    int self;    /* this thread's place in its process */
    int rank;    /* its thread rank */
    bool leader; /* the process's first thread: runs the step between processes */
    bool spread; /* the communicator spans processes */
} call;

static int enter(MPI_Comm comm, call *c)
{
    c->tc = thread_comm_find(comm);
    c->self = c->tc ? thread_self(c->tc) : -1;
    if (c->self < 0)
        return c->tc ? thread_error(c->tc, MPI_ERR_COMM, "a collective by a thread that has not started it")
                     : MPI_ERR_COMM;
    c->rank = c->tc->offset[c->tc->my_proc] + c->self;
    c->leader = c->self == 0;
    c->spread = c->tc->nprocs > 1;
    return MPI_SUCCESS;
}

/* The last thread to arrive grows the scratch buffers to what any asked. */
static void grow_scratch(void *arg)
{
    thread_comm *tc = arg;
    for (int k = 0; k < 2; k++) {
        size_t need = atomic_exchange(&tc->scratch_need[k], 0);
        if (need > tc->scratch_size[k]) {
            free(tc->scratch[k]);
            tc->scratch[k] = malloc(need);
            if (!tc->scratch[k])
                core_fatal("out of memory for %zu bytes of thread scratch", need);
            tc->scratch_size[k] = need;
        }
    }
}

static void ask_scratch(thread_comm *tc, int k, size_t bytes)
{
    size_t have = atomic_load(&tc->scratch_need[k]);
    while (have < bytes && !atomic_compare_exchange_weak(&tc->scratch_need[k], &have, bytes)) {
    }
}

/* Publishes this thread's buffers and meets the others (scratch grown). */
static void meet_with(call *c, const void *sbuf, void *rbuf)
{
    c->tc->slot[c->self].sbuf = sbuf;
    c->tc->slot[c->self].rbuf = rbuf;
    thread_barrier_wait(&c->tc->barrier, grow_scratch, c->tc);
}

static void meet(call *c) { thread_barrier_wait(&c->tc->barrier, NULL, NULL); }

/* The step between processes, by the first thread; its result goes to every
 * thread of the process (they wait at the next meeting). */
#define BETWEEN_PROCESSES(c, rc, call_expr) \
    do {                                    \
        if ((c)->spread && (c)->leader) {   \
            thread_host_lock();             \
            rc = (call_expr);               \
            thread_host_unlock();           \
        }                                   \
    } while (0)

/* Counts of whole-process block runs for the v-collectives between
 * processes: process p holds threads(p) blocks of `block` bytes. */
static bool process_blocks(thread_comm *tc, size_t block, size_t per_thread_blocks)
{
    for (int p = 0; p < tc->nprocs; p++) {
        size_t count = (size_t)(tc->offset[p + 1] - tc->offset[p]) * per_thread_blocks * block;
        size_t displ = (size_t)tc->offset[p] * per_thread_blocks * block;
        if (count > INT_MAX || displ > INT_MAX)
            return false;
        tc->counts[p] = (int)count;
        tc->displs[p] = (int)displ;
    }
    return true;
}

static int fail(call *c, int rc, const char *what) { return thread_error(c->tc, rc, what); }

int thread_MPI_Barrier(MPI_Comm comm)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    meet(&c);
    BETWEEN_PROCESSES(&c, rc, MPI_Barrier(c.tc->procs));
    meet(&c);
    return rc;
}

static int bcast(MPI_Comm comm, void *buf, MPI_Count count, MPI_Datatype type, int root)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    thread_layout l;
    if (root < 0 || root >= tc->size)
        return fail(&c, MPI_ERR_ROOT, "MPI_Bcast's root");
    if (count < 0 || count > INT_MAX)
        return fail(&c, MPI_ERR_COUNT, "MPI_Bcast's count");
    if (!thread_layout_of(type, &l))
        return fail(&c, MPI_ERR_TYPE, "MPI_Bcast's datatype");
    int root_proc = tc->proc_of[root], root_self = root - tc->offset[root_proc];
    bool here = root_proc == tc->my_proc;
    meet_with(&c, buf, buf);
    /* The root's process sends from the root's buffer; elsewhere the first
     * thread's buffer receives. */
    void *source = here ? tc->slot[root_self].rbuf : tc->slot[0].rbuf;
    BETWEEN_PROCESSES(&c, rc, MPI_Bcast(source, (int)count, type, root_proc, tc->procs));
    meet(&c);
    if (buf != source && count) {
        /* Same datatype both sides: copy its span (dense), else by packing. */
        if (l.dense)
            memcpy((char *)buf + l.lb, (const char *)source + l.lb, (size_t)count * l.size);
        else {
            size_t n = (size_t)count * l.size;
            void *bytes = malloc(n);
            if (!bytes)
                core_fatal("out of memory for %zu bytes", n);
            thread_pack(source, (size_t)count, type, &l, bytes);
            thread_unpack(bytes, n, buf, type, &l);
            free(bytes);
        }
    }
    meet(&c); /* the source stays until every thread has copied it */
    return rc;
}

/* Folds the process's threads' inputs (slot sbuf, in rank order) into
 * scratch 0, each thread one slice of the elements. */
static int fold_slice(call *c, MPI_Count count, MPI_Datatype type, MPI_Op op, const thread_layout *l, char *acc)
{
    thread_comm *tc = c->tc;
    int n = tc->nthreads;
    MPI_Count per = (count + n - 1) / n, first = per * c->self;
    MPI_Count mine = first >= count ? 0 : (count - first < per ? count - first : per);
    if (!mine)
        return MPI_SUCCESS;
    size_t at = (size_t)first * (size_t)l->extent;
    size_t span = thread_span(l, (size_t)mine);
    /* acc = x[n-1]; then acc = x[t] op acc for t = n-2..0: x[0] op (x[1] op ...). */
    memcpy(acc + l->lb + at, (const char *)tc->slot[n - 1].sbuf + l->lb + at, span);
    for (int t = n - 2; t >= 0; t--) {
        int rc = PMPI_Reduce_local((const char *)tc->slot[t].sbuf + at, acc + at, (int)mine, type, op);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Allreduce and reduce (root >= 0). */
static int reduce_common(MPI_Comm comm, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                         int root)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    thread_layout l;
    const char *name = root >= 0 ? "MPI_Reduce" : "MPI_Allreduce";
    if (root != -1 && (root < 0 || root >= tc->size))
        return fail(&c, MPI_ERR_ROOT, name);
    if (count < 0 || count > INT_MAX)
        return fail(&c, MPI_ERR_COUNT, name);
    if (!thread_layout_of(type, &l))
        return fail(&c, MPI_ERR_TYPE, name);
    if (op == MPI_OP_NULL)
        return fail(&c, MPI_ERR_OP, name);
    bool gets_result = root < 0 || root == c.rank;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    size_t span = thread_span(&l, (size_t)count);
    ask_scratch(tc, 0, span + 1);
    meet_with(&c, sbuf, rbuf);
    /* The accumulator: scratch 0, shifted so that an element's lb lands at
     * its start (the copy and the reduction address elements from there). */
    char *acc = tc->scratch[0] - l.lb;
    int mine = fold_slice(&c, count, type, op, &l, acc);
    meet(&c);
    if (root < 0) {
        BETWEEN_PROCESSES(&c, rc, MPI_Allreduce(MPI_IN_PLACE, acc, (int)count, type, op, tc->procs));
    } else {
        int root_proc = tc->proc_of[root];
        BETWEEN_PROCESSES(&c, rc,
                          MPI_Reduce(root_proc == tc->my_proc ? MPI_IN_PLACE : acc,
                                     root_proc == tc->my_proc ? acc : NULL, (int)count, type, op, root_proc,
                                     tc->procs));
    }
    meet(&c);
    if (gets_result && count)
        memcpy((char *)rbuf + l.lb, acc + l.lb, span);
    meet(&c); /* the scratch stays until every thread has its result */
    if (mine != MPI_SUCCESS)
        return fail(&c, mine, name);
    return rc;
}

/* Packs count elements of type into this thread's block of scratch k. */
static void pack_block(const void *buf, MPI_Count count, MPI_Datatype type, const thread_layout *l, char *block)
{
    thread_pack(buf, (size_t)count, type, l, block);
}

static int check_blocks(call *c, MPI_Count count, MPI_Datatype type, thread_layout *l, size_t *block, const char *name)
{
    if (count < 0 || count > INT_MAX)
        return fail(c, MPI_ERR_COUNT, name);
    if (!thread_layout_of(type, l))
        return fail(c, MPI_ERR_TYPE, name);
    *block = (size_t)count * l->size;
    return MPI_SUCCESS;
}

static int allgather(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    thread_layout sl, rl;
    size_t block = 0;
    if ((rc = check_blocks(&c, rcount, rtype, &rl, &block, "MPI_Allgather")) != MPI_SUCCESS)
        return rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = check_blocks(&c, scount, stype, &sl, &(size_t){0}, "MPI_Allgather")) != MPI_SUCCESS)
        return rc;
    if (!process_blocks(tc, block, 1))
        return fail(&c, MPI_ERR_COUNT, "MPI_Allgather: more than 2 GiB between processes");
    ask_scratch(tc, 0, (size_t)tc->size * block + 1);
    meet_with(&c, sbuf, rbuf);
    char *all = tc->scratch[0];
    if (sbuf == MPI_IN_PLACE)
        pack_block((char *)rbuf + (MPI_Aint)c.rank * rcount * rl.extent, rcount, rtype, &rl, all + c.rank * block);
    else
        pack_block(sbuf, scount, stype, &sl, all + c.rank * block);
    meet(&c);
    BETWEEN_PROCESSES(&c, rc,
                      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, tc->counts, tc->displs, MPI_BYTE, tc->procs));
    meet(&c);
    thread_unpack(all, (size_t)tc->size * block, rbuf, rtype, &rl);
    meet(&c);
    return rc;
}

static int gather(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    if (root < 0 || root >= tc->size)
        return fail(&c, MPI_ERR_ROOT, "MPI_Gather's root");
    bool is_root = root == c.rank;
    thread_layout sl, rl;
    size_t block = 0;
    if (is_root && (rc = check_blocks(&c, rcount, rtype, &rl, &block, "MPI_Gather")) != MPI_SUCCESS)
        return rc;
    if (!(is_root && sbuf == MPI_IN_PLACE) &&
        (rc = check_blocks(&c, scount, stype, &sl, is_root ? &(size_t){0} : &block, "MPI_Gather")) != MPI_SUCCESS)
        return rc;
    ask_scratch(tc, 0, (size_t)tc->size * block + 1);
    meet_with(&c, sbuf, rbuf);
    char *all = tc->scratch[0];
    if (is_root && sbuf == MPI_IN_PLACE)
        pack_block((char *)rbuf + (MPI_Aint)root * rcount * rl.extent, rcount, rtype, &rl, all + c.rank * block);
    else
        pack_block(sbuf, scount, stype, &sl, all + c.rank * block);
    meet(&c);
    int root_proc = tc->proc_of[root];
    if (c.spread && c.leader) {
        if (!process_blocks(tc, block, 1))
            rc = MPI_ERR_COUNT;
        else
            BETWEEN_PROCESSES(&c, rc,
                              root_proc == tc->my_proc
                                  ? MPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, tc->counts, tc->displs, MPI_BYTE,
                                                root_proc, tc->procs)
                                  : MPI_Gatherv(all + tc->displs[tc->my_proc], tc->counts[tc->my_proc], MPI_BYTE, NULL,
                                                NULL, NULL, MPI_BYTE, root_proc, tc->procs));
    }
    meet(&c);
    if (is_root)
        thread_unpack(all, (size_t)tc->size * block, rbuf, rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Gather");
}

static int scatter(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    if (root < 0 || root >= tc->size)
        return fail(&c, MPI_ERR_ROOT, "MPI_Scatter's root");
    bool is_root = root == c.rank, in_place = is_root && rbuf == MPI_IN_PLACE;
    thread_layout sl, rl;
    size_t block = 0;
    if (is_root && (rc = check_blocks(&c, scount, stype, &sl, &block, "MPI_Scatter")) != MPI_SUCCESS)
        return rc;
    if (!in_place &&
        (rc = check_blocks(&c, rcount, rtype, &rl, is_root ? &(size_t){0} : &block, "MPI_Scatter")) != MPI_SUCCESS)
        return rc;
    ask_scratch(tc, 0, (size_t)tc->size * block + 1);
    meet_with(&c, sbuf, rbuf);
    char *all = tc->scratch[0];
    if (is_root)
        thread_pack(sbuf, (size_t)tc->size * (size_t)scount, stype, &sl, all);
    meet(&c);
    int root_proc = tc->proc_of[root];
    if (c.spread && c.leader) {
        if (!process_blocks(tc, block, 1))
            rc = MPI_ERR_COUNT;
        else
            BETWEEN_PROCESSES(&c, rc,
                              root_proc == tc->my_proc
                                  ? MPI_Scatterv(all, tc->counts, tc->displs, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE,
                                                 root_proc, tc->procs)
                                  : MPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, all + tc->displs[tc->my_proc],
                                                 tc->counts[tc->my_proc], MPI_BYTE, root_proc, tc->procs));
    }
    meet(&c);
    if (!in_place)
        thread_unpack(all + c.rank * block, block, rbuf, rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Scatter");
}

static int alltoall(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    thread_layout sl, rl;
    size_t block = 0;
    if ((rc = check_blocks(&c, rcount, rtype, &rl, &block, "MPI_Alltoall")) != MPI_SUCCESS)
        return rc;
    if (sbuf == MPI_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        stype = rtype;
        sl = rl;
    } else if ((rc = check_blocks(&c, scount, stype, &sl, &(size_t){0}, "MPI_Alltoall")) != MPI_SUCCESS) {
        return rc;
    }
    int n = tc->nthreads, size = tc->size;
    size_t total = (size_t)n * (size_t)size * block;
    ask_scratch(tc, 0, total + 1);
    ask_scratch(tc, 1, total + 1);
    meet_with(&c, sbuf, rbuf);
    /* Out: for each destination process p, [sending thread t][p's thread j];
     * in: [source rank s][this process's thread u]. In one process the two
     * orders are the same. */
    char *out = tc->scratch[0], *in = c.spread ? tc->scratch[1] : tc->scratch[0];
    for (int p = 0; p < tc->nprocs; p++) {
        int first = tc->offset[p], threads = tc->offset[p + 1] - first;
        for (int j = 0; j < threads; j++) {
            size_t at = ((size_t)first * n + (size_t)c.self * threads + j) * block;
            pack_block((const char *)sbuf + (MPI_Aint)(first + j) * scount * sl.extent, scount, stype, &sl, out + at);
        }
    }
    meet(&c);
    if (c.spread && c.leader) {
        if (!process_blocks(tc, block, (size_t)n))
            rc = MPI_ERR_COUNT;
        else {
            /* What goes to p is n threads x p's threads blocks at n x offset[p];
             * what comes from p is p's threads x n blocks at offset[p] x n. */
            BETWEEN_PROCESSES(
                &c, rc,
                MPI_Alltoallv(out, tc->counts, tc->displs, MPI_BYTE, in, tc->counts, tc->displs, MPI_BYTE, tc->procs));
        }
    }
    meet(&c);
    for (int s = 0; s < size; s++)
        thread_unpack(in + ((size_t)s * n + c.self) * block, block, (char *)rbuf + (MPI_Aint)s * rcount * rl.extent,
                      rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Alltoall");
}

static int unsupported(MPI_Comm comm, const char *name)
{
    thread_comm *tc = thread_comm_find(comm);
    core_log_warn_once("%s on a thread communicator is not served by shoal yet", name);
    return tc ? thread_error(tc, MPI_ERR_OTHER, name) : MPI_ERR_COMM;
}

/* Both bindings of each collective: the served ones share one path (counts
 * of either width), the others are refused by name. */
#define THREAD_COLL_DEFINE(S, C, CA, DA)                                                                               \
    int thread_MPI_Bcast##S(void *buf, C count, MPI_Datatype type, int root, MPI_Comm comm)                            \
    {                                                                                                                  \
        return bcast(comm, buf, count, type, root);                                                                    \
    }                                                                                                                  \
    int thread_MPI_Reduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, int root,            \
                             MPI_Comm comm)                                                                            \
    {                                                                                                                  \
        return root < 0 ? unsupported(comm, "MPI_Reduce with a negative root")                                         \
                        : reduce_common(comm, sbuf, rbuf, count, type, op, root);                                      \
    }                                                                                                                  \
    int thread_MPI_Allreduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)    \
    {                                                                                                                  \
        return reduce_common(comm, sbuf, rbuf, count, type, op, -1);                                                   \
    }                                                                                                                  \
    int thread_MPI_Reduce_scatter_block##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op,        \
                                           MPI_Comm comm)                                                              \
    {                                                                                                                  \
        (void)sbuf, (void)rbuf, (void)count, (void)type, (void)op;                                                     \
        return unsupported(comm, "MPI_Reduce_scatter_block" #S);                                                       \
    }                                                                                                                  \
    int thread_MPI_Reduce_scatter##S(const void *sbuf, void *rbuf, const CA rcounts[], MPI_Datatype type, MPI_Op op,   \
                                     MPI_Comm comm)                                                                    \
    {                                                                                                                  \
        (void)sbuf, (void)rbuf, (void)rcounts, (void)type, (void)op;                                                   \
        return unsupported(comm, "MPI_Reduce_scatter" #S);                                                             \
    }                                                                                                                  \
    int thread_MPI_Gather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, \
                             int root, MPI_Comm comm)                                                                  \
    {                                                                                                                  \
        return gather(comm, sbuf, scount, stype, rbuf, rcount, rtype, root);                                           \
    }                                                                                                                  \
    int thread_MPI_Gatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],          \
                              const DA displs[], MPI_Datatype rtype, int root, MPI_Comm comm)                          \
    {                                                                                                                  \
        (void)sbuf, (void)scount, (void)stype, (void)rbuf, (void)rcounts, (void)displs, (void)rtype, (void)root;       \
        return unsupported(comm, "MPI_Gatherv" #S);                                                                    \
    }                                                                                                                  \
    int thread_MPI_Allgather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                  \
                                MPI_Datatype rtype, MPI_Comm comm)                                                     \
    {                                                                                                                  \
        return allgather(comm, sbuf, scount, stype, rbuf, rcount, rtype);                                              \
    }                                                                                                                  \
    int thread_MPI_Allgatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],       \
                                 const DA displs[], MPI_Datatype rtype, MPI_Comm comm)                                 \
    {                                                                                                                  \
        (void)sbuf, (void)scount, (void)stype, (void)rbuf, (void)rcounts, (void)displs, (void)rtype;                   \
        return unsupported(comm, "MPI_Allgatherv" #S);                                                                 \
    }                                                                                                                  \
    int thread_MPI_Scatter##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                    \
                              MPI_Datatype rtype, int root, MPI_Comm comm)                                             \
    {                                                                                                                  \
        return scatter(comm, sbuf, scount, stype, rbuf, rcount, rtype, root);                                          \
    }                                                                                                                  \
    int thread_MPI_Scatterv##S(const void *sbuf, const CA scounts[], const DA displs[], MPI_Datatype stype,            \
                               void *rbuf, C rcount, MPI_Datatype rtype, int root, MPI_Comm comm)                      \
    {                                                                                                                  \
        (void)sbuf, (void)scounts, (void)displs, (void)stype, (void)rbuf, (void)rcount, (void)rtype, (void)root;       \
        return unsupported(comm, "MPI_Scatterv" #S);                                                                   \
    }                                                                                                                  \
    int thread_MPI_Alltoall##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                   \
                               MPI_Datatype rtype, MPI_Comm comm)                                                      \
    {                                                                                                                  \
        return alltoall(comm, sbuf, scount, stype, rbuf, rcount, rtype);                                               \
    }                                                                                                                  \
    int thread_MPI_Alltoallv##S(const void *sbuf, const CA scounts[], const DA sdispls[], MPI_Datatype stype,          \
                                void *rbuf, const CA rcounts[], const DA rdispls[], MPI_Datatype rtype, MPI_Comm comm) \
    {                                                                                                                  \
        (void)sbuf, (void)scounts, (void)sdispls, (void)stype, (void)rbuf, (void)rcounts, (void)rdispls, (void)rtype;  \
        return unsupported(comm, "MPI_Alltoallv" #S);                                                                  \
    }

THREAD_COLL_DEFINE(, int, int, int)
#if MPI_VERSION >= 4
THREAD_COLL_DEFINE(_c, MPI_Count, MPI_Count, MPI_Aint)
#endif
