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

/* enter, for a collective with a root, which must be a rank of comm. */
static int enter_rooted(MPI_Comm comm, call *c, int root, const char *name)
{
    int rc = enter(comm, c);
    if (rc == MPI_SUCCESS && (root < 0 || root >= c->tc->size))
        rc = thread_error(c->tc, MPI_ERR_ROOT, name);
    return rc;
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

/* After the step between processes: its result reaches the process's other
 * threads. Within one process there was no step, and no need to meet. */
static void meet_after_step(call *c)
{
    if (c->spread)
        meet(c);
}

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
 * processes: process p holds threads(p) x per_thread_blocks blocks of
 * `block` bytes. False where they pass an int; written (by the first
 * thread only) where `write`. */
static bool process_blocks(thread_comm *tc, size_t block, size_t per_thread_blocks, bool write)
{
    for (int p = 0; p < tc->nprocs; p++) {
        size_t count = (size_t)(tc->offset[p + 1] - tc->offset[p]) * per_thread_blocks * block;
        size_t displ = (size_t)tc->offset[p] * per_thread_blocks * block;
        if (count > INT_MAX || displ > INT_MAX)
            return false;
        if (!write)
            continue;
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
    meet_after_step(&c);
    return rc;
}

/* Short collectives within one process never meet: each thread that has
 * input stages it (in its area for this call, once every thread has
 * finished the call that last used it) and marks it ready, and each thread
 * that needs a result waits for the areas it reads, and only those. So a
 * bcast's root and a reduce's other ranks return at once, as process ranks
 * do, and nobody waits on a counter every thread writes. */
static bool reached(unsigned mark, unsigned number) { return (int)(mark - number) >= 0; }

static unsigned stage_call(thread_comm *tc, int self) { return ++tc->stage[self].calls; }

/* This thread's area for call number, once nobody reads it any more. */
static char *stage_claim(thread_comm *tc, int self, unsigned number)
{
    thread_stage *st = &tc->stage[self];
    unsigned last_use = number - 2;
    for (int t = 0; t < tc->nthreads; t++) {
        if (t == self || reached(st->known[t], last_use))
            continue;
        unsigned spins = 0, mark;
        while (!reached(mark = atomic_load_explicit(&tc->stage[t].finished, memory_order_acquire), last_use))
            thread_pause(&spins);
        st->known[t] = mark;
    }
    return st->area[number % 2].bytes;
}

static void stage_publish(thread_comm *tc, int self, unsigned number)
{
    atomic_store_explicit(&tc->stage[self].area[number % 2].ready, number, memory_order_release);
}

/* owner's area, once it is ready for call number. Having staged it, owner
 * has finished the call before. */
static const char *stage_wait(thread_comm *tc, int self, int owner, unsigned number)
{
    thread_stage_area *area = &tc->stage[owner].area[number % 2];
    unsigned spins = 0;
    while (!reached(atomic_load_explicit(&area->ready, memory_order_acquire), number))
        thread_pause(&spins);
    unsigned *known = &tc->stage[self].known[owner];
    if (!reached(*known, number - 1))
        *known = number - 1;
    return area->bytes;
}

/* This thread is done with call number, its reads of others' areas too. */
static void stage_finish(thread_comm *tc, int self, unsigned number)
{
    atomic_store_explicit(&tc->stage[self].finished, number, memory_order_release);
}

static int bcast(MPI_Comm comm, void *buf, MPI_Count count, MPI_Datatype type, int root)
{
    call c;
    int rc = enter_rooted(comm, &c, root, "MPI_Bcast's root");
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    thread_layout l;
    if (count < 0 || count > INT_MAX)
        return fail(&c, MPI_ERR_COUNT, "MPI_Bcast's count");
    if (!thread_layout_of(type, &l))
        return fail(&c, MPI_ERR_TYPE, "MPI_Bcast's datatype");
    int root_proc = tc->proc_of[root], root_self = root - tc->offset[root_proc];
    bool here = root_proc == tc->my_proc;
    size_t bytes = (size_t)count * l.size;
    if (!c.spread && bytes <= THREAD_STAGE_BYTES) {
        /* Short, within one process: the root stages the message and goes. */
        unsigned number = stage_call(tc, c.self);
        if (c.self == root_self) {
            rc = thread_pack(buf, (size_t)count, type, &l, stage_claim(tc, root_self, number));
            stage_publish(tc, root_self, number);
        } else {
            rc = thread_unpack(stage_wait(tc, c.self, root_self, number), bytes, buf, type, &l);
        }
        stage_finish(tc, c.self, number);
        return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Bcast");
    }
    meet_with(&c, buf, buf);
    /* The root's process sends from the root's buffer; elsewhere the first
     * thread's buffer receives. */
    void *source = here ? tc->slot[root_self].rbuf : tc->slot[0].rbuf;
    BETWEEN_PROCESSES(&c, rc, MPI_Bcast(source, (int)count, type, root_proc, tc->procs));
    meet_after_step(&c);
    int copied = thread_copy_typed(buf, source, count, type, &l);
    meet(&c); /* the source stays until every thread has copied it */
    return rc != MPI_SUCCESS ? rc : copied == MPI_SUCCESS ? MPI_SUCCESS : fail(&c, copied, "MPI_Bcast");
}

/* Folds elements [first, first + n) of the process's threads' inputs (slot
 * sbuf) in rank order into acc: x[0] op (x[1] op ... x[n-1]). */
static int fold(const thread_comm *tc, MPI_Count first, MPI_Count n, MPI_Datatype type, MPI_Op op,
                const thread_layout *l, char *acc)
{
    if (!n)
        return MPI_SUCCESS;
    int threads = tc->nthreads;
    size_t at = (size_t)first * (size_t)l->extent;
    memcpy(acc + l->lb + at, (const char *)tc->slot[threads - 1].sbuf + l->lb + at, thread_span(l, (size_t)n));
    for (int t = threads - 2; t >= 0; t--) {
        int rc = PMPI_Reduce_local((const char *)tc->slot[t].sbuf + at, acc + at, (int)n, type, op);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* This thread's slice of the elements, folded into acc. */
static int fold_slice(call *c, MPI_Count count, MPI_Datatype type, MPI_Op op, const thread_layout *l, char *acc)
{
    int n = c->tc->nthreads;
    MPI_Count per = (count + n - 1) / n, first = per * c->self;
    MPI_Count mine = first >= count ? 0 : (count - first < per ? count - first : per);
    return fold(c->tc, first, mine, type, op, l, acc);
}

/* A reduction within one process of at most a stage: each thread that
 * wants the result folds every element, in rank order, from the stages
 * straight into its receive buffer. */
static int reduce_short(call *c, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                        const thread_layout *l, int root)
{
    thread_comm *tc = c->tc;
    int n = tc->nthreads;
    size_t span = thread_span(l, (size_t)count);
    unsigned number = stage_call(tc, c->self);
    memcpy(stage_claim(tc, c->self, number), (const char *)sbuf + l->lb, span);
    stage_publish(tc, c->self, number);
    int rc = MPI_SUCCESS;
    if (root < 0 || root == c->rank) {
        memcpy((char *)rbuf + l->lb, stage_wait(tc, c->self, n - 1, number), span);
        for (int t = n - 2; t >= 0 && rc == MPI_SUCCESS; t--)
            rc = PMPI_Reduce_local(stage_wait(tc, c->self, t, number) - l->lb, rbuf, (int)count, type, op);
    }
    stage_finish(tc, c->self, number);
    return rc;
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
    if (!c.spread && span <= THREAD_SHORT_REDUCE_BYTES) {
        rc = reduce_short(&c, sbuf, rbuf, count, type, op, &l, root);
        return rc == MPI_SUCCESS ? rc : fail(&c, rc, name);
    }
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
    meet_after_step(&c);
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

/* How a block collective's blocks flow: to a root (gather, whose root's
 * send side MPI_IN_PLACE leaves out), from it (scatter, its receive side),
 * or among all ranks (allgather and alltoall: every send side). */
typedef enum { TO_ROOT, FROM_ROOT, AMONG_ALL } block_flow;

/* A block collective's entry: comm entered (with its root, unless the
 * blocks flow among all), each side this rank takes part in checked, and
 * the bytes of one rank's block, from its receive side where it has one. */
static int enter_blocks(MPI_Comm comm, call *c, block_flow flow, int root, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype, thread_layout *sl,
                        thread_layout *rl, size_t *block, const char *name)
{
    int rc = flow == AMONG_ALL ? enter(comm, c) : enter_rooted(comm, c, root, name);
    if (rc != MPI_SUCCESS)
        return rc;
    bool is_root = flow != AMONG_ALL && root == c->rank;
    bool receives = flow == AMONG_ALL || (flow == TO_ROOT ? is_root : !(is_root && rbuf == MPI_IN_PLACE));
    bool sends = flow == AMONG_ALL   ? sbuf != MPI_IN_PLACE
                 : flow == FROM_ROOT ? is_root
                                     : !(is_root && sbuf == MPI_IN_PLACE);
    size_t send_block = 0;
    *sl = *rl = (thread_layout){0};
    *block = 0;
    if (receives && (rc = check_blocks(c, rcount, rtype, rl, block, name)) != MPI_SUCCESS)
        return rc;
    if (sends && (rc = check_blocks(c, scount, stype, sl, &send_block, name)) != MPI_SUCCESS)
        return rc;
    if (!receives)
        *block = send_block;
    return MPI_SUCCESS;
}

static int allgather(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype)
{
    call c;
    thread_layout sl, rl;
    size_t block;
    int rc = enter_blocks(comm, &c, AMONG_ALL, 0, sbuf, scount, stype, rbuf, rcount, rtype, &sl, &rl, &block,
                          "MPI_Allgather");
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    if (!process_blocks(tc, block, 1, false))
        return fail(&c, MPI_ERR_COUNT, "MPI_Allgather: more than 2 GiB between processes");
    ask_scratch(tc, 0, (size_t)tc->size * block + 1);
    meet_with(&c, sbuf, rbuf);
    char *all = tc->scratch[0];
    if (sbuf == MPI_IN_PLACE)
        pack_block((char *)rbuf + (MPI_Aint)c.rank * rcount * rl.extent, rcount, rtype, &rl, all + c.rank * block);
    else
        pack_block(sbuf, scount, stype, &sl, all + c.rank * block);
    meet(&c);
    if (c.spread && c.leader)
        process_blocks(tc, block, 1, true);
    BETWEEN_PROCESSES(&c, rc,
                      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, tc->counts, tc->displs, MPI_BYTE, tc->procs));
    meet_after_step(&c);
    thread_unpack(all, (size_t)tc->size * block, rbuf, rtype, &rl);
    meet(&c);
    return rc;
}

static int gather(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root)
{
    call c;
    thread_layout sl, rl;
    size_t block;
    int rc =
        enter_blocks(comm, &c, TO_ROOT, root, sbuf, scount, stype, rbuf, rcount, rtype, &sl, &rl, &block, "MPI_Gather");
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    bool is_root = root == c.rank;
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
        if (!process_blocks(tc, block, 1, true))
            rc = MPI_ERR_COUNT;
        else
            BETWEEN_PROCESSES(&c, rc,
                              root_proc == tc->my_proc
                                  ? MPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, tc->counts, tc->displs, MPI_BYTE,
                                                root_proc, tc->procs)
                                  : MPI_Gatherv(all + tc->displs[tc->my_proc], tc->counts[tc->my_proc], MPI_BYTE, NULL,
                                                NULL, NULL, MPI_BYTE, root_proc, tc->procs));
    }
    meet_after_step(&c);
    if (is_root)
        thread_unpack(all, (size_t)tc->size * block, rbuf, rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Gather");
}

static int scatter(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root)
{
    call c;
    thread_layout sl, rl;
    size_t block;
    int rc = enter_blocks(comm, &c, FROM_ROOT, root, sbuf, scount, stype, rbuf, rcount, rtype, &sl, &rl, &block,
                          "MPI_Scatter");
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    bool is_root = root == c.rank, in_place = is_root && rbuf == MPI_IN_PLACE;
    ask_scratch(tc, 0, (size_t)tc->size * block + 1);
    meet_with(&c, sbuf, rbuf);
    char *all = tc->scratch[0];
    if (is_root)
        thread_pack(sbuf, (size_t)tc->size * (size_t)scount, stype, &sl, all);
    meet(&c);
    int root_proc = tc->proc_of[root];
    if (c.spread && c.leader) {
        if (!process_blocks(tc, block, 1, true))
            rc = MPI_ERR_COUNT;
        else
            BETWEEN_PROCESSES(&c, rc,
                              root_proc == tc->my_proc
                                  ? MPI_Scatterv(all, tc->counts, tc->displs, MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE,
                                                 root_proc, tc->procs)
                                  : MPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, all + tc->displs[tc->my_proc],
                                                 tc->counts[tc->my_proc], MPI_BYTE, root_proc, tc->procs));
    }
    meet_after_step(&c);
    if (!in_place)
        thread_unpack(all + c.rank * block, block, rbuf, rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Scatter");
}

static int alltoall(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype)
{
    call c;
    thread_layout sl, rl;
    size_t block;
    int rc = enter_blocks(comm, &c, AMONG_ALL, 0, sbuf, scount, stype, rbuf, rcount, rtype, &sl, &rl, &block,
                          "MPI_Alltoall");
    if (rc != MPI_SUCCESS)
        return rc;
    thread_comm *tc = c.tc;
    if (sbuf == MPI_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        stype = rtype;
        sl = rl;
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
        if (!process_blocks(tc, block, (size_t)n, true))
            rc = MPI_ERR_COUNT;
        else {
            /* What goes to p is n threads x p's threads blocks at n x offset[p];
             * what comes from p is p's threads x n blocks at offset[p] x n. */
            BETWEEN_PROCESSES(
                &c, rc,
                MPI_Alltoallv(out, tc->counts, tc->displs, MPI_BYTE, in, tc->counts, tc->displs, MPI_BYTE, tc->procs));
        }
    }
    meet_after_step(&c);
    for (int s = 0; s < size; s++)
        thread_unpack(in + ((size_t)s * n + c.self) * block, block, (char *)rbuf + (MPI_Aint)s * rcount * rl.extent,
                      rtype, &rl);
    meet(&c);
    return rc == MPI_SUCCESS ? rc : fail(&c, rc, "MPI_Alltoall");
}

/* A count or displacement array of either binding. */
typedef struct thread_array {
    const int *ints;
    const MPI_Count *counts;
    const MPI_Aint *aints;
} thread_array;

#define THREAD_INTS(p) ((thread_array){.ints = (p)})
#define THREAD_COUNTS(p) ((thread_array){.counts = (p)})
#define THREAD_AINTS(p) ((thread_array){.aints = (p)})

static MPI_Count at(thread_array a, int i)
{
    return a.ints ? a.ints[i] : a.counts ? a.counts[i] : (MPI_Count)a.aints[i];
}

/* The v-collectives and the scans run on the communicator's own messages
 * (THREAD_TAG_*): between threads of a process the receiver copies from the
 * sender's buffer, as any message does. */
#define NO_ROOT (-1)

typedef struct exchange {
    call c;
    thread_req *reqs;
    int n;
} exchange;

/* Room for per_rank messages per rank of comm, and two more. */
static int exchange_begin(MPI_Comm comm, exchange *x, int per_rank, int root, const char *name)
{
    memset(x, 0, sizeof *x);
    int rc = root == NO_ROOT ? enter(comm, &x->c) : enter_rooted(comm, &x->c, root, name);
    if (rc != MPI_SUCCESS)
        return rc;
    x->reqs = calloc((size_t)per_rank * (size_t)x->c.tc->size + 2, sizeof *x->reqs);
    return x->reqs ? MPI_SUCCESS : fail(&x->c, MPI_ERR_NO_MEM, "no memory for a collective's messages");
}

static int post(exchange *x, bool send, const void *buf, MPI_Count count, MPI_Datatype type, int peer, int tag)
{
    if (count < 0 || count > INT_MAX)
        return MPI_ERR_COUNT;
    thread_req *req = &x->reqs[x->n++];
    *req = (thread_req){0}; /* a slot may be reused: a done one would not wait */
    return send ? thread_coll_send(x->c.tc, x->c.self, buf, (int)count, type, peer, tag, req)
                : thread_coll_recv(x->c.tc, x->c.self, (void *)buf, (int)count, type, peer, tag, req);
}

/* Waits for what was posted; posting failed with rc where it is not 0. */
static int exchange_end(exchange *x, int rc, const char *name)
{
    int waited = thread_coll_wait(x->reqs, x->n);
    free(x->reqs);
    if (rc == MPI_SUCCESS)
        rc = waited;
    return rc == MPI_SUCCESS ? rc : fail(&x->c, rc, name);
}

static int extent_of(MPI_Datatype type, MPI_Aint *extent)
{
    thread_layout l;
    if (!thread_layout_of(type, &l))
        return MPI_ERR_TYPE;
    *extent = l.extent;
    return MPI_SUCCESS;
}

static int gatherv(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                   thread_array rcounts, thread_array displs, MPI_Datatype rtype, int root)
{
    exchange x;
    int rc = exchange_begin(comm, &x, 1, root, "MPI_Gatherv's root");
    if (rc != MPI_SUCCESS)
        return rc;
    int size = x.c.tc->size;
    bool is_root = x.c.rank == root, in_place = is_root && sbuf == MPI_IN_PLACE;
    MPI_Aint extent = 0;
    if (is_root && (rc = extent_of(rtype, &extent)) == MPI_SUCCESS)
        for (int r = 0; r < size && rc == MPI_SUCCESS; r++)
            if (!(in_place && r == root))
                rc = post(&x, false, (char *)rbuf + at(displs, r) * extent, at(rcounts, r), rtype, r,
                          THREAD_TAG_GATHERV);
    if (rc == MPI_SUCCESS && !in_place)
        rc = post(&x, true, sbuf, scount, stype, root, THREAD_TAG_GATHERV);
    return exchange_end(&x, rc, "MPI_Gatherv");
}

static int scatterv(MPI_Comm comm, const void *sbuf, thread_array scounts, thread_array displs, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root)
{
    exchange x;
    int rc = exchange_begin(comm, &x, 1, root, "MPI_Scatterv's root");
    if (rc != MPI_SUCCESS)
        return rc;
    int size = x.c.tc->size;
    bool is_root = x.c.rank == root, in_place = is_root && rbuf == MPI_IN_PLACE;
    if (!in_place)
        rc = post(&x, false, rbuf, rcount, rtype, root, THREAD_TAG_SCATTERV);
    MPI_Aint extent = 0;
    if (rc == MPI_SUCCESS && is_root && (rc = extent_of(stype, &extent)) == MPI_SUCCESS)
        for (int r = 0; r < size && rc == MPI_SUCCESS; r++)
            if (!(in_place && r == root))
                rc = post(&x, true, (const char *)sbuf + at(displs, r) * extent, at(scounts, r), stype, r,
                          THREAD_TAG_SCATTERV);
    return exchange_end(&x, rc, "MPI_Scatterv");
}

static int allgatherv(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                      thread_array rcounts, thread_array displs, MPI_Datatype rtype)
{
    exchange x;
    int rc = exchange_begin(comm, &x, 2, NO_ROOT, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = x.c.tc->size;
    MPI_Aint extent = 0;
    int me = x.c.rank;
    if ((rc = extent_of(rtype, &extent)) == MPI_SUCCESS && sbuf == MPI_IN_PLACE) {
        sbuf = (char *)rbuf + at(displs, me) * extent;
        scount = at(rcounts, me);
        stype = rtype;
    } else if (rc == MPI_SUCCESS) {
        rc = post(&x, false, (char *)rbuf + at(displs, me) * extent, at(rcounts, me), rtype, me, THREAD_TAG_ALLGATHERV);
        if (rc == MPI_SUCCESS)
            rc = post(&x, true, sbuf, scount, stype, me, THREAD_TAG_ALLGATHERV);
    }
    for (int k = 1; k < size && rc == MPI_SUCCESS; k++) {
        int from = (me - k + size) % size, to = (me + k) % size;
        rc = post(&x, false, (char *)rbuf + at(displs, from) * extent, at(rcounts, from), rtype, from,
                  THREAD_TAG_ALLGATHERV);
        if (rc == MPI_SUCCESS)
            rc = post(&x, true, sbuf, scount, stype, to, THREAD_TAG_ALLGATHERV);
    }
    return exchange_end(&x, rc, "MPI_Allgatherv");
}

/* Alltoallv (types NULL: stype and rtype for every peer, displacements in
 * extents) and alltoallw (a type per peer, displacements in bytes). */
static int alltoallw(MPI_Comm comm, const void *sbuf, thread_array scounts, thread_array sdispls,
                     const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf, thread_array rcounts,
                     thread_array rdispls, const MPI_Datatype *rtypes, MPI_Datatype rtype, const char *name)
{
    exchange x;
    int rc = exchange_begin(comm, &x, 2, NO_ROOT, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = x.c.tc->size;
    void *copy = NULL;
    bool per_peer = rtypes != NULL;
    MPI_Aint sunit = 1, runit = 1;
    if (!per_peer && ((rc = extent_of(rtype, &runit)) != MPI_SUCCESS ||
                      (sbuf != MPI_IN_PLACE && (rc = extent_of(stype, &sunit)) != MPI_SUCCESS)))
        return exchange_end(&x, rc, name);
    if (sbuf == MPI_IN_PLACE) {
        /* Send from a copy of what the receive buffer holds now. */
        size_t span = 0;
        for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
            thread_layout l;
            if (!thread_layout_of(per_peer ? rtypes[r] : rtype, &l))
                rc = MPI_ERR_TYPE;
            else if (at(rcounts, r) > 0) {
                size_t end = (size_t)(at(rdispls, r) * runit + l.lb) + thread_span(&l, (size_t)at(rcounts, r));
                span = end > span ? end : span;
            }
        }
        if (rc == MPI_SUCCESS && !(copy = malloc(span + 1)))
            rc = MPI_ERR_NO_MEM;
        if (rc == MPI_SUCCESS)
            memcpy(copy, rbuf, span);
        sbuf = copy;
        scounts = rcounts;
        sdispls = rdispls;
        stypes = rtypes;
        stype = rtype;
        sunit = runit;
    }
    int me = x.c.rank;
    for (int k = 0; k < size && rc == MPI_SUCCESS; k++) {
        int from = (me - k + size) % size, to = (me + k) % size;
        rc = post(&x, false, (char *)rbuf + at(rdispls, from) * runit, at(rcounts, from),
                  per_peer ? rtypes[from] : rtype, from, THREAD_TAG_ALLTOALLW);
        if (rc == MPI_SUCCESS)
            rc = post(&x, true, (const char *)sbuf + at(sdispls, to) * sunit, at(scounts, to),
                      per_peer ? stypes[to] : stype, to, THREAD_TAG_ALLTOALLW);
    }
    rc = exchange_end(&x, rc, name);
    free(copy);
    return rc;
}

/* Reduce_scatter and its block form: the whole reduction (in rank order),
 * then this rank's block of it. */
static int reduce_scatter(MPI_Comm comm, const void *sbuf, void *rbuf, thread_array rcounts, MPI_Count block,
                          MPI_Datatype type, MPI_Op op, const char *name)
{
    call c;
    int rc = enter(comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_layout l;
    if (!thread_layout_of(type, &l))
        return fail(&c, MPI_ERR_TYPE, name);
    int size = c.tc->size;
    MPI_Count total = 0, first = 0;
    for (int r = 0; r < size; r++) {
        MPI_Count n = rcounts.ints || rcounts.counts ? at(rcounts, r) : block;
        if (n < 0)
            return fail(&c, MPI_ERR_COUNT, name);
        if (r == c.rank)
            first = total;
        total += n;
    }
    MPI_Count mine = rcounts.ints || rcounts.counts ? at(rcounts, c.rank) : block;
    void *base;
    char *all = thread_alloc_elements(&l, total, &base);
    if (!all)
        return fail(&c, MPI_ERR_NO_MEM, name);
    rc = reduce_common(comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, all, total, type, op, -1);
    if (rc == MPI_SUCCESS)
        rc = thread_copy_typed(rbuf, all + first * l.extent, mine, type, &l);
    free(base);
    return rc;
}

/* Scan and exscan: a chain in rank order, each rank folding its
 * predecessors' prefix with its own input. */
static int scan(MPI_Comm comm, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                bool exclusive)
{
    const char *name = exclusive ? "MPI_Exscan" : "MPI_Scan";
    exchange x;
    int rc = exchange_begin(comm, &x, 0, NO_ROOT, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    thread_layout l;
    if (!thread_layout_of(type, &l))
        return exchange_end(&x, MPI_ERR_TYPE, name);
    if (count < 0 || count > INT_MAX)
        return exchange_end(&x, MPI_ERR_COUNT, name);
    int me = x.c.rank, size = x.c.tc->size;
    void *acc_base, *prefix_base;
    char *acc = thread_alloc_elements(&l, count, &acc_base), *prefix = thread_alloc_elements(&l, count, &prefix_base);
    if (!acc || !prefix)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = thread_copy_typed(acc, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, type, &l);
    if (rc == MPI_SUCCESS && me > 0) {
        rc = post(&x, false, prefix, count, type, me - 1, THREAD_TAG_SCAN);
        if (rc == MPI_SUCCESS)
            rc = thread_coll_wait(x.reqs, x.n);
        x.n = 0;
        if (rc == MPI_SUCCESS && exclusive)
            rc = thread_copy_typed(rbuf, prefix, count, type, &l);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Reduce_local(prefix, acc, (int)count, type, op); /* prefix op mine */
    }
    if (rc == MPI_SUCCESS && !exclusive)
        rc = thread_copy_typed(rbuf, acc, count, type, &l);
    if (rc == MPI_SUCCESS && me + 1 < size)
        rc = post(&x, true, acc, count, type, me + 1, THREAD_TAG_SCAN);
    rc = exchange_end(&x, rc, name);
    free(acc_base);
    free(prefix_base);
    return rc;
}

/* Both bindings of each collective: one path, counts of either width. */
#define THREAD_COLL_DEFINE(S, C, CA, DA, CW, DW)                                                                       \
    int thread_MPI_Bcast##S(void *buf, C count, MPI_Datatype type, int root, MPI_Comm comm)                            \
    {                                                                                                                  \
        return bcast(comm, buf, count, type, root);                                                                    \
    }                                                                                                                  \
    int thread_MPI_Reduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, int root,            \
                             MPI_Comm comm)                                                                            \
    {                                                                                                                  \
        return reduce_common(comm, sbuf, rbuf, count, type, op, root < 0 ? -2 : root);                                 \
    }                                                                                                                  \
    int thread_MPI_Allreduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)    \
    {                                                                                                                  \
        return reduce_common(comm, sbuf, rbuf, count, type, op, -1);                                                   \
    }                                                                                                                  \
    int thread_MPI_Reduce_scatter_block##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op,        \
                                           MPI_Comm comm)                                                              \
    {                                                                                                                  \
        return reduce_scatter(comm, sbuf, rbuf, (thread_array){0}, count, type, op, "MPI_Reduce_scatter_block" #S);    \
    }                                                                                                                  \
    int thread_MPI_Reduce_scatter##S(const void *sbuf, void *rbuf, const CA rcounts[], MPI_Datatype type, MPI_Op op,   \
                                     MPI_Comm comm)                                                                    \
    {                                                                                                                  \
        return reduce_scatter(comm, sbuf, rbuf, CW(rcounts), 0, type, op, "MPI_Reduce_scatter" #S);                    \
    }                                                                                                                  \
    int thread_MPI_Gather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, \
                             int root, MPI_Comm comm)                                                                  \
    {                                                                                                                  \
        return gather(comm, sbuf, scount, stype, rbuf, rcount, rtype, root);                                           \
    }                                                                                                                  \
    int thread_MPI_Gatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],          \
                              const DA displs[], MPI_Datatype rtype, int root, MPI_Comm comm)                          \
    {                                                                                                                  \
        return gatherv(comm, sbuf, scount, stype, rbuf, CW(rcounts), DW(displs), rtype, root);                         \
    }                                                                                                                  \
    int thread_MPI_Allgather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                  \
                                MPI_Datatype rtype, MPI_Comm comm)                                                     \
    {                                                                                                                  \
        return allgather(comm, sbuf, scount, stype, rbuf, rcount, rtype);                                              \
    }                                                                                                                  \
    int thread_MPI_Allgatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],       \
                                 const DA displs[], MPI_Datatype rtype, MPI_Comm comm)                                 \
    {                                                                                                                  \
        return allgatherv(comm, sbuf, scount, stype, rbuf, CW(rcounts), DW(displs), rtype);                            \
    }                                                                                                                  \
    int thread_MPI_Scatter##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                    \
                              MPI_Datatype rtype, int root, MPI_Comm comm)                                             \
    {                                                                                                                  \
        return scatter(comm, sbuf, scount, stype, rbuf, rcount, rtype, root);                                          \
    }                                                                                                                  \
    int thread_MPI_Scatterv##S(const void *sbuf, const CA scounts[], const DA displs[], MPI_Datatype stype,            \
                               void *rbuf, C rcount, MPI_Datatype rtype, int root, MPI_Comm comm)                      \
    {                                                                                                                  \
        return scatterv(comm, sbuf, CW(scounts), DW(displs), stype, rbuf, rcount, rtype, root);                        \
    }                                                                                                                  \
    int thread_MPI_Alltoall##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                   \
                               MPI_Datatype rtype, MPI_Comm comm)                                                      \
    {                                                                                                                  \
        return alltoall(comm, sbuf, scount, stype, rbuf, rcount, rtype);                                               \
    }                                                                                                                  \
    int thread_MPI_Alltoallv##S(const void *sbuf, const CA scounts[], const DA sdispls[], MPI_Datatype stype,          \
                                void *rbuf, const CA rcounts[], const DA rdispls[], MPI_Datatype rtype, MPI_Comm comm) \
    {                                                                                                                  \
        return alltoallw(comm, sbuf, CW(scounts), DW(sdispls), NULL, stype, rbuf, CW(rcounts), DW(rdispls), NULL,      \
                         rtype, "MPI_Alltoallv" #S);                                                                   \
    }                                                                                                                  \
    int thread_MPI_Alltoallw##S(const void *sbuf, const CA scounts[], const DA sdispls[], const MPI_Datatype stypes[], \
                                void *rbuf, const CA rcounts[], const DA rdispls[], const MPI_Datatype rtypes[],       \
                                MPI_Comm comm)                                                                         \
    {                                                                                                                  \
        return alltoallw(comm, sbuf, CW(scounts), DW(sdispls), stypes, MPI_DATATYPE_NULL, rbuf, CW(rcounts),           \
                         DW(rdispls), rtypes, MPI_DATATYPE_NULL, "MPI_Alltoallw" #S);                                  \
    }                                                                                                                  \
    int thread_MPI_Scan##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)         \
    {                                                                                                                  \
        return scan(comm, sbuf, rbuf, count, type, op, false);                                                         \
    }                                                                                                                  \
    int thread_MPI_Exscan##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)       \
    {                                                                                                                  \
        return scan(comm, sbuf, rbuf, count, type, op, true);                                                          \
    }

THREAD_COLL_DEFINE(, int, int, int, THREAD_INTS, THREAD_INTS)
#if MPI_VERSION >= 4
THREAD_COLL_DEFINE(_c, MPI_Count, MPI_Count, MPI_Aint, THREAD_COUNTS, THREAD_AINTS)
#endif
