/* thread_comm: thread communicators (MPIX_Threadcomm_init, _start, _finish,
 * _free), the registry that recognises their handles, each thread's rank in
 * them, the barrier of a process's threads, and datatypes as bytes.
 *
 * Ranks are numbered process by process (the parent's order), thread by
 * thread within a process in their order of arrival at start, as MPICH
 * documents.
 *
 * May call: core, and PMPI. */
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "thread_internal.h"

_Atomic int thread_comms_live;
bool thread_host_serialised;
/* Recursive: building and releasing a communicator call helpers that lock it too. */
pthread_mutex_t thread_host_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* Live communicators: slots stored with release and read with acquire, so
 * that a lookup needs no lock. A derived communicator is made and freed
 * inside a parallel region, while threads outside it look up others: a
 * lookup compares the handle kept beside each slot and touches only the
 * communicator it finds, one its caller belongs to, never one being freed. */
#define THREAD_MAX_COMMS 64
static _Atomic(thread_comm *) registry[THREAD_MAX_COMMS];
static _Atomic(MPI_Comm) registry_handle[THREAD_MAX_COMMS];
static _Atomic int registry_used; /* slots ever used: lookups look no further */
static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;

thread_comm *thread_comm_find(MPI_Comm comm)
{
    int used = atomic_load_explicit(&registry_used, memory_order_acquire);
    for (int i = 0; i < used; i++) {
        if (atomic_load_explicit(&registry_handle[i], memory_order_acquire) != comm)
            continue;
        thread_comm *tc = atomic_load_explicit(&registry[i], memory_order_acquire);
        if (tc)
            return tc;
    }
    return NULL;
}

static bool registry_add(thread_comm *tc)
{
    pthread_mutex_lock(&registry_mutex);
    for (int i = 0; i < THREAD_MAX_COMMS; i++)
        if (!atomic_load_explicit(&registry[i], memory_order_relaxed)) {
            atomic_store_explicit(&registry[i], tc, memory_order_release);
            atomic_store_explicit(&registry_handle[i], tc->handle, memory_order_release);
            if (atomic_load_explicit(&registry_used, memory_order_relaxed) <= i)
                atomic_store_explicit(&registry_used, i + 1, memory_order_release);
            atomic_fetch_add(&thread_comms_live, 1);
            pthread_mutex_unlock(&registry_mutex);
            return true;
        }
    pthread_mutex_unlock(&registry_mutex);
    return false;
}

static void registry_remove(thread_comm *tc)
{
    pthread_mutex_lock(&registry_mutex);
    for (int i = 0; i < THREAD_MAX_COMMS; i++)
        if (atomic_load_explicit(&registry[i], memory_order_relaxed) == tc) {
            atomic_store_explicit(&registry_handle[i], MPI_COMM_NULL, memory_order_release);
            atomic_store_explicit(&registry[i], NULL, memory_order_release);
            atomic_fetch_sub(&thread_comms_live, 1);
        }
    pthread_mutex_unlock(&registry_mutex);
}

/* This thread's places in the communicators it has started. */
#define THREAD_MAX_STARTED 64
static _Thread_local struct {
    const thread_comm *tc;
    int index;
    MPI_Comm attributes; /* this thread's attributes on tc, or 0 */
} started[THREAD_MAX_STARTED];
static _Thread_local int started_count;

int thread_self(const thread_comm *tc)
{
    for (int i = 0; i < started_count; i++)
        if (started[i].tc == tc)
            return started[i].index;
    return -1;
}

int thread_error(const thread_comm *tc, int code, const char *what)
{
    core_log_debug(1, "thread communicator: %s", what);
    PMPI_Comm_call_errhandler(tc->handle, code);
    return code;
}

/* Polls before a waiting thread yields: many where each of a process's
 * threads may have a core of its own, a few where they take turns on cores
 * (as under a launcher that binds each process to one core). */
static _Atomic unsigned spin_limit = 2048;

static void choose_spin(int threads)
{
    cpu_set_t mask;
    int cores = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : core_cpu_count();
    atomic_store_explicit(&spin_limit, cores >= threads ? 2048u : 0u, memory_order_relaxed);
}

int thread_refuse(thread_comm *tc, const char *call)
{
    core_log_warn_once("%s on a thread communicator is not served by shoal yet: MPI_ERR_OTHER", call);
    return thread_error(tc, MPI_ERR_OTHER, call);
}

int thread_count_too_large(thread_comm *tc, const char *call) { return thread_error(tc, MPI_ERR_COUNT, call); }

/* Each thread's own spin budget, adapted wait by wait (0: not yet set).
 * Where a thread's peer runs on a core of its own, a handover comes within
 * a few polls, and once a wait spins out its yields return at once (no one
 * else wants the core): the budget stays whole. Where the two share a core
 * (the scheduler put them together, or other work holds the other cores),
 * spinning only delays the peer, which runs when this thread yields: the
 * budget halves down to a few polls. With the whole budget always, every
 * handover of a ping-pong between threads sharing a core cost it: 52-55 us
 * one-way on the loaded 2-core VM, against 0.2 when they were spread. */
static CORE_THREAD_LOCAL unsigned spin_budget;
#define SPIN_BUDGET_FLOOR 16
#define YIELD_GAVE_CORE_NS 2000 /* a sched_yield this long ran another thread */

void thread_pause(unsigned *spins)
{
    unsigned n = (*spins)++, ceiling = atomic_load_explicit(&spin_limit, memory_order_relaxed);
    if (spin_budget == 0 || spin_budget > ceiling)
        spin_budget = ceiling;
    if (n < spin_budget) {
        core_cpu_relax();
        return;
    }
    if (n < spin_budget + 20000) {
        uint64_t start = core_now_ns();
        sched_yield();
        bool gave_core = core_now_ns() - start > YIELD_GAVE_CORE_NS;
        if (n == spin_budget && gave_core)
            spin_budget = spin_budget / 2 > SPIN_BUDGET_FLOOR ? spin_budget / 2 : SPIN_BUDGET_FLOOR;
        else if (!gave_core && spin_budget < ceiling)
            spin_budget = spin_budget * 2 < ceiling ? spin_budget * 2 : ceiling;
        return;
    }
    nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
}

void thread_barrier_wait(thread_barrier *b, void (*last)(void *), void *arg)
{
    unsigned generation = atomic_load_explicit(&b->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) == b->n - 1) {
        if (last)
            last(arg);
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&b->generation, generation + 1, memory_order_release);
        return;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&b->generation, memory_order_acquire) == generation) {
        thread_comm *owner = atomic_load_explicit(&b->owner, memory_order_acquire);
        if (owner)
            thread_progress(owner);
        thread_pause(&spins);
    }
}

bool thread_layout_of(MPI_Datatype type, thread_layout *out)
{
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return false;
    out->size = (size_t)size;
    out->extent = extent;
    out->lb = true_lb;
    out->true_extent = true_extent;
    out->dense = (MPI_Aint)size == true_extent && extent == (MPI_Aint)size;
    return true;
}

size_t thread_span(const thread_layout *l, size_t count)
{
    return count ? (size_t)l->true_extent + (count - 1) * (size_t)l->extent : 0;
}

int thread_pack(const void *buf, size_t count, MPI_Datatype type, const thread_layout *l, void *bytes)
{
    size_t n = count * l->size;
    if (!n)
        return MPI_SUCCESS;
    if (l->dense) {
        memcpy(bytes, (const char *)buf + l->lb, n);
        return MPI_SUCCESS;
    }
    if (count > INT_MAX || n > INT_MAX)
        return MPI_ERR_COUNT;
    int position = 0;
    thread_host_lock();
    int rc = PMPI_Pack(buf, (int)count, type, bytes, (int)n, &position, MPI_COMM_SELF);
    thread_host_unlock();
    return rc;
}

int thread_unpack(const void *bytes, size_t n, void *buf, MPI_Datatype type, const thread_layout *l)
{
    if (!n)
        return MPI_SUCCESS;
    if (l->dense) {
        memcpy((char *)buf + l->lb, bytes, n);
        return MPI_SUCCESS;
    }
    if (n > INT_MAX)
        return MPI_ERR_COUNT;
    int position = 0;
    thread_host_lock();
    int rc = PMPI_Unpack(bytes, (int)n, &position, buf, (int)(n / l->size), type, MPI_COMM_SELF);
    thread_host_unlock();
    return rc;
}

/* count elements of type from src to dst (both laid out as type says). */
int thread_copy_typed(void *dst, const void *src, MPI_Count count, MPI_Datatype type, const thread_layout *l)
{
    if (dst == src || !count)
        return MPI_SUCCESS;
    size_t n = (size_t)count * l->size;
    if (l->dense) {
        memcpy((char *)dst + l->lb, (const char *)src + l->lb, n);
        return MPI_SUCCESS;
    }
    void *bytes = malloc(n);
    if (!bytes)
        return MPI_ERR_NO_MEM;
    int rc = thread_pack(src, (size_t)count, type, l, bytes);
    if (rc == MPI_SUCCESS)
        rc = thread_unpack(bytes, n, dst, type, l);
    free(bytes);
    return rc;
}

/* Room for count elements of a layout, and where element 0 starts in it. */
char *thread_alloc_elements(const thread_layout *l, MPI_Count count, void **base)
{
    *base = malloc(thread_span(l, (size_t)count) + 1);
    return *base ? (char *)*base - l->lb : NULL;
}

static void thread_comm_destroy(thread_comm *tc)
{
    free(tc->offset);
    free(tc->proc_of);
    free(tc->counts);
    free(tc->displs);
    free(tc->slot);
    free(tc->stage);
    free(tc->known);
    free(tc->derive);
    free(tc->nbc_started);
    free(tc->scratch[0]);
    free(tc->scratch[1]);
    free(tc);
}

static bool valid_comm(MPI_Comm comm) { return comm != MPI_COMM_NULL && comm; }

/* A communicator of threads[p] threads on each process p of parent (this
 * process's nthreads): its layout, its three copies of parent, its
 * queues, registered. Collective over parent's processes (one thread each). */
static int build(MPI_Comm parent, const int *threads, int nthreads, thread_comm **out)
{
    thread_comm *tc = calloc(1, sizeof *tc);
    if (!tc)
        return MPI_ERR_NO_MEM;
    int rc = MPI_ERR_NO_MEM;
    PMPI_Comm_size(parent, &tc->nprocs);
    PMPI_Comm_rank(parent, &tc->my_proc);
    tc->offset = malloc(((size_t)tc->nprocs + 1) * sizeof *tc->offset);
    tc->counts = malloc((size_t)tc->nprocs * sizeof *tc->counts);
    tc->displs = malloc((size_t)tc->nprocs * sizeof *tc->displs);
    /* Slots and stages are a cache line each (_Alignas(64)): calloc aligns less. */
    tc->slot = aligned_alloc(64, (size_t)nthreads * sizeof *tc->slot);
    if (tc->slot)
        memset(tc->slot, 0, (size_t)nthreads * sizeof *tc->slot);
    tc->stage = aligned_alloc(64, (size_t)nthreads * sizeof *tc->stage);
    size_t row = core_align_up((size_t)nthreads * sizeof *tc->known, CORE_CACHELINE) / sizeof *tc->known;
    tc->known = aligned_alloc(CORE_CACHELINE, (size_t)nthreads * row * sizeof *tc->known);
    if (tc->known)
        memset(tc->known, 0, (size_t)nthreads * row * sizeof *tc->known);
    for (int t = 0; tc->stage && tc->known && t < nthreads; t++) { /* the headers: bytes are written before read */
        thread_stage *st = &tc->stage[t];
        atomic_init(&st->finished, 0);
        st->calls = 0;
        atomic_init(&st->area[0].ready, 0);
        atomic_init(&st->area[1].ready, 0);
        st->known = tc->known + (size_t)t * row;
    }
    tc->derive = calloc((size_t)nthreads, sizeof *tc->derive);
    tc->nbc_started = calloc((size_t)nthreads, sizeof *tc->nbc_started);
    if (!tc->offset || !tc->counts || !tc->displs || !tc->slot || !tc->stage || !tc->known || !tc->derive ||
        !tc->nbc_started)
        goto fail;
    long long total = 0;
    for (int p = 0; p < tc->nprocs; p++) {
        if (threads[p] < 1 || total + threads[p] > INT_MAX) {
            rc = MPI_ERR_ARG;
            goto fail;
        }
        tc->offset[p] = (int)total;
        total += threads[p];
    }
    tc->offset[tc->nprocs] = (int)total;
    tc->size = (int)total;
    tc->nthreads = nthreads;
    rc = MPI_ERR_NO_MEM;
    if (!(tc->proc_of = malloc((size_t)tc->size * sizeof *tc->proc_of)))
        goto fail;
    for (int p = 0; p < tc->nprocs; p++)
        for (int r = tc->offset[p]; r < tc->offset[p + 1]; r++)
            tc->proc_of[r] = p;
    tc->barrier.n = nthreads;
    atomic_store(&tc->barrier.owner, tc);
    /* The user's handle copies parent's attributes, as a dup does; the
     * private ones are splits, which copy none (a keyval's copy and delete
     * functions run once per new communicator the user sees). */
    if ((rc = PMPI_Comm_dup(parent, &tc->handle)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_split(parent, 0, tc->my_proc, &tc->wire)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_split(parent, 0, tc->my_proc, &tc->procs)) != MPI_SUCCESS)
        goto fail;
    PMPI_Comm_set_name(tc->handle, "shoal thread communicator");
    if ((rc = thread_p2p_create(tc)) != MPI_SUCCESS)
        goto fail;
    if (!registry_add(tc)) {
        thread_p2p_destroy(tc);
        rc = MPI_ERR_INTERN;
        goto fail;
    }
    *out = tc;
    return MPI_SUCCESS;
fail:
    if (valid_comm(tc->handle))
        PMPI_Comm_free(&tc->handle);
    if (valid_comm(tc->wire))
        PMPI_Comm_free(&tc->wire);
    if (valid_comm(tc->procs))
        PMPI_Comm_free(&tc->procs);
    thread_comm_destroy(tc);
    return rc;
}

/* Undoes build: collective over the processes (one thread each). */
static void release(thread_comm *tc)
{
    thread_p2p_destroy(tc);
    registry_remove(tc);
    thread_host_lock();
    PMPI_Comm_free(&tc->wire);
    /* Through shoal's entry point: its process path may hold state for it. */
    MPI_Comm_free(&tc->procs);
    PMPI_Comm_free(&tc->handle);
    thread_host_unlock();
}

/* MPICH: outside parallel regions, collective over comm; every process
 * names how many of its threads will start the new communicator. */
int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *newthreadcomm)
{
    int initialized = 0, inter = 0;
    PMPI_Initialized(&initialized);
    if (!initialized || !newthreadcomm)
        return MPI_ERR_ARG;
    if (!valid_comm(comm) || thread_owns(comm))
        return PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_COMM), MPI_ERR_COMM;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return PMPI_Comm_call_errhandler(comm, MPI_ERR_COMM), MPI_ERR_COMM;
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (!thread_host_serialised)
            core_log_once("thread communicators: the host MPI runs at thread level %d, not MPI_THREAD_MULTIPLE: "
                          "shoal's calls to it take turns under a lock",
                          provided);
        thread_host_serialised = true;
    }
    /* Every process learns every count, a bad one included, so that all
     * fail alike instead of some waiting for the others. */
    int nprocs = 0;
    PMPI_Comm_size(comm, &nprocs);
    int *threads = malloc((size_t)nprocs * sizeof *threads);
    if (!threads)
        return PMPI_Comm_call_errhandler(comm, MPI_ERR_NO_MEM), MPI_ERR_NO_MEM;
    int rc = PMPI_Allgather(&num_threads, 1, MPI_INT, threads, 1, MPI_INT, comm);
    thread_comm *tc = NULL;
    /* The process's threads: a derived communicator may hold fewer of them. */
    choose_spin(num_threads);
    if (rc == MPI_SUCCESS)
        rc = build(comm, threads, num_threads, &tc);
    free(threads);
    if (rc != MPI_SUCCESS)
        return PMPI_Comm_call_errhandler(comm, rc), rc;
    *newthreadcomm = tc->handle;
    return MPI_SUCCESS;
}

/* Adds tc at this thread's place in this thread's started list, with the
 * attributes it starts with (0: none). */
static bool add_started(const thread_comm *tc, int index, MPI_Comm attributes)
{
    if (started_count == THREAD_MAX_STARTED)
        return false;
    started[started_count].tc = tc;
    started[started_count].index = index;
    started[started_count].attributes = attributes;
    started_count++;
    return true;
}

/* Each thread's attributes on a thread communicator (MPICH keeps them per
 * thread) live on a host communicator of its own, a duplicate of
 * MPI_COMM_SELF made at its first MPI_Comm_set_attr; freeing it at finish
 * runs the keyvals' delete functions, as MPICH's finish does. Duplicating
 * and freeing one communicator are collective calls on it, so threads take
 * turns. */
static pthread_mutex_t attributes_mutex = PTHREAD_MUTEX_INITIALIZER;

static void drop_started(const thread_comm *tc)
{
    for (int i = 0; i < started_count; i++)
        if (started[i].tc == tc) {
            if (started[i].attributes) {
                pthread_mutex_lock(&attributes_mutex);
                thread_host_lock();
                PMPI_Comm_free(&started[i].attributes);
                thread_host_unlock();
                pthread_mutex_unlock(&attributes_mutex);
            }
            started[i] = started[--started_count];
            return;
        }
}

/* This thread's attribute communicator on tc (made if `make`), or 0. */
static MPI_Comm thread_attributes(const thread_comm *tc, bool make)
{
    for (int i = 0; i < started_count; i++)
        if (started[i].tc == tc) {
            if (!started[i].attributes && make) {
                pthread_mutex_lock(&attributes_mutex);
                thread_host_lock();
                if (PMPI_Comm_dup(MPI_COMM_SELF, &started[i].attributes) != MPI_SUCCESS)
                    started[i].attributes = 0;
                thread_host_unlock();
                pthread_mutex_unlock(&attributes_mutex);
            }
            return started[i].attributes;
        }
    return 0;
}

/* A started thread's attributes are its own; others' calls, and keys this
 * thread has not set (the predefined ones, those set outside the region),
 * reach the handle. */
int thread_comm_set_attr(thread_comm *tc, int keyval, void *value)
{
    MPI_Comm mine = thread_attributes(tc, true);
    return PMPI_Comm_set_attr(mine ? mine : tc->handle, keyval, value);
}

int thread_comm_get_attr(thread_comm *tc, int keyval, void *value, int *flag)
{
    MPI_Comm mine = thread_attributes(tc, false);
    int rc = MPI_SUCCESS;
    *flag = 0;
    if (mine)
        rc = PMPI_Comm_get_attr(mine, keyval, value, flag);
    if (rc == MPI_SUCCESS && !*flag)
        rc = PMPI_Comm_get_attr(tc->handle, keyval, value, flag);
    return rc;
}

int thread_comm_delete_attr(thread_comm *tc, int keyval)
{
    MPI_Comm mine = thread_attributes(tc, false);
    void *value;
    int flag = 0;
    if (mine && PMPI_Comm_get_attr(mine, keyval, &value, &flag) == MPI_SUCCESS && flag)
        return PMPI_Comm_delete_attr(mine, keyval);
    return PMPI_Comm_delete_attr(tc->handle, keyval);
}

/* MPI_Comm_dup, MPI_Comm_split and MPI_Comm_split_type inside the parallel
 * region, by every thread of tc: each thread leaves its colour and key, the
 * first thread of each process learns every rank's (over the processes),
 * and all of them build the new thread communicators colour by colour, in
 * ascending order (so that each host call meets the same one everywhere):
 * a host communicator of the processes that hold members of the colour
 * (MPI_Comm_split of the handle; a dup uses the handle itself, so that the
 * host copies the attributes set on it), then build over it. A new
 * communicator's ranks are its members ordered by key, then by rank in tc;
 * its threads are started already, and MPI_Comm_free ends it.
 *
 * The layers below number a communicator's ranks process by process, so a
 * split whose order would interleave two processes' threads is refused. */
typedef enum { DERIVE_DUP, DERIVE_SPLIT, DERIVE_NODE } derive_kind;

typedef struct member {
    int colour, key, rank;
} member;

static int by_colour_key_rank(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->colour != y->colour)
        return x->colour < y->colour ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Every rank's colour and key, in rank order (by the first thread). */
static int gather_colours(thread_comm *tc, derive_kind kind, int *table)
{
    int n = tc->nthreads, *mine = malloc(2 * (size_t)n * sizeof *mine);
    int *counts = malloc((size_t)tc->nprocs * sizeof *counts), *displs = malloc((size_t)tc->nprocs * sizeof *displs);
    int rc = mine && counts && displs ? MPI_SUCCESS : MPI_ERR_NO_MEM, node = 0;
    if (rc == MPI_SUCCESS && kind == DERIVE_NODE) {
        /* A node's colour: the lowest process of tc on it. */
        MPI_Comm shared;
        rc = PMPI_Comm_split_type(tc->procs, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Allreduce(&tc->my_proc, &node, 1, MPI_INT, MPI_MIN, shared);
            PMPI_Comm_free(&shared);
        }
    }
    for (int t = 0; rc == MPI_SUCCESS && t < n; t++) {
        int colour = tc->derive[t].colour;
        mine[2 * t] = kind == DERIVE_NODE && colour != MPI_UNDEFINED ? node : colour;
        mine[2 * t + 1] = tc->derive[t].key;
        tc->derive[t].made = NULL;
    }
    for (int p = 0; rc == MPI_SUCCESS && p < tc->nprocs; p++) {
        counts[p] = 2 * (tc->offset[p + 1] - tc->offset[p]);
        displs[p] = 2 * tc->offset[p];
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgatherv(mine, 2 * n, MPI_INT, table, counts, displs, MPI_INT, tc->procs);
    free(mine);
    free(counts);
    free(displs);
    return rc;
}

/* The members of one colour, ordered, from m[0] to m[count - 1]: this
 * process's place among the processes holding some (-1: none), how many
 * processes those are, and each one's number of members (threads). False
 * where a process's members are not consecutive. */
static bool colour_layout(const thread_comm *tc, const member *m, int count, int *threads, int *nprocs, int *place)
{
    *nprocs = 0;
    *place = -1;
    for (int i = 0; i < count; i++) {
        int proc = tc->proc_of[m[i].rank];
        if (i > 0 && proc == tc->proc_of[m[i - 1].rank]) {
            threads[*nprocs - 1]++;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (tc->proc_of[m[j].rank] == proc)
                return false;
        if (proc == tc->my_proc)
            *place = *nprocs;
        threads[(*nprocs)++] = 1;
    }
    return true;
}

/* The first thread's part: every new communicator this process takes part
 * in, built; each thread's in tc->derive. Every process returns the same
 * error, bar a host failure. */
static int derive_lead(thread_comm *tc, derive_kind kind)
{
    int size = tc->size, *table = malloc(2 * (size_t)size * sizeof *table),
        *threads = malloc((size_t)tc->nprocs * sizeof *threads);
    member *m = malloc((size_t)size * sizeof *m);
    int rc = table && threads && m ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = gather_colours(tc, kind, table);
    int count = 0;
    for (int r = 0; rc == MPI_SUCCESS && r < size; r++) {
        int colour = table[2 * r];
        if (colour == MPI_UNDEFINED)
            continue;
        if (colour < 0)
            rc = MPI_ERR_ARG;
        m[count++] = (member){.colour = colour, .key = table[2 * r + 1], .rank = r};
    }
    if (rc == MPI_SUCCESS)
        qsort(m, (size_t)count, sizeof *m, by_colour_key_rank);
    /* Check every colour before building any. */
    for (int first = 0, next; rc == MPI_SUCCESS && first < count; first = next) {
        for (next = first; next < count && m[next].colour == m[first].colour;)
            next++;
        int nprocs, place;
        if (!colour_layout(tc, m + first, next - first, threads, &nprocs, &place))
            rc = MPI_ERR_OTHER;
    }
    for (int first = 0, next; rc == MPI_SUCCESS && first < count; first = next) {
        for (next = first; next < count && m[next].colour == m[first].colour;)
            next++;
        int nprocs, place;
        colour_layout(tc, m + first, next - first, threads, &nprocs, &place);
        MPI_Comm host = tc->handle;
        if (kind != DERIVE_DUP)
            rc = PMPI_Comm_split(tc->handle, place >= 0 ? 0 : MPI_UNDEFINED, place, &host);
        if (rc != MPI_SUCCESS || place < 0)
            continue;
        thread_comm *made = NULL;
        rc = build(host, threads, threads[place], &made);
        if (kind != DERIVE_DUP)
            PMPI_Comm_free(&host);
        if (rc != MPI_SUCCESS)
            continue;
        made->derived = true;
        for (int i = first, index = 0; i < next; i++)
            if (tc->proc_of[m[i].rank] == tc->my_proc) {
                struct thread_derive *d = &tc->derive[m[i].rank - tc->offset[tc->my_proc]];
                d->made = made;
                d->index = index++;
            }
    }
    free(table);
    free(threads);
    free(m);
    return rc;
}

/* A copy of this thread's attributes on tc for a duplicate of it (the
 * host runs the keyvals' copy functions), or 0. */
static MPI_Comm copy_attributes(const thread_comm *tc)
{
    for (int i = 0; i < started_count; i++)
        if (started[i].tc == tc && started[i].attributes) {
            MPI_Comm copy = 0;
            pthread_mutex_lock(&attributes_mutex);
            thread_host_lock();
            if (PMPI_Comm_dup(started[i].attributes, &copy) != MPI_SUCCESS)
                copy = 0;
            thread_host_unlock();
            pthread_mutex_unlock(&attributes_mutex);
            return copy;
        }
    return 0;
}

static int derive(thread_comm *tc, derive_kind kind, int colour, int key, MPI_Comm *newcomm, const char *name)
{
    int self = thread_self(tc);
    if (self < 0)
        return thread_error(tc, MPI_ERR_COMM, name);
    tc->derive[self].colour = colour;
    tc->derive[self].key = key;
    thread_barrier_wait(&tc->barrier, NULL, NULL);
    if (self == 0) {
        thread_host_lock();
        tc->derive_rc = derive_lead(tc, kind);
        thread_host_unlock();
    }
    /* What the first thread wrote is read by every thread before it may
     * write again: after this meeting and the first of the next call. */
    thread_barrier_wait(&tc->barrier, NULL, NULL);
    *newcomm = MPI_COMM_NULL;
    if (tc->derive_rc == MPI_ERR_OTHER)
        return thread_refuse(tc, "MPI_Comm_split ordering one process's threads apart");
    if (tc->derive_rc != MPI_SUCCESS)
        return thread_error(tc, tc->derive_rc, name);
    thread_comm *made = tc->derive[self].made;
    if (!made)
        return MPI_SUCCESS;
    MPI_Comm attributes = kind == DERIVE_DUP ? copy_attributes(tc) : 0;
    if (!add_started(made, tc->derive[self].index, attributes))
        core_fatal("a thread has started more than %d thread communicators", THREAD_MAX_STARTED);
    *newcomm = made->handle;
    return MPI_SUCCESS;
}

int thread_comm_dup(thread_comm *tc, MPI_Comm *newcomm)
{
    int self = thread_self(tc), rank = self < 0 ? 0 : tc->offset[tc->my_proc] + self;
    return derive(tc, DERIVE_DUP, 0, rank, newcomm, "MPI_Comm_dup by a thread that has not started the communicator");
}

int thread_comm_idup(thread_comm *tc, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc = thread_comm_dup(tc, newcomm);
    return rc != MPI_SUCCESS ? rc : thread_request_done(tc, request);
}

int thread_comm_split(thread_comm *tc, int colour, int key, MPI_Comm *newcomm)
{
    return derive(tc, DERIVE_SPLIT, colour, key, newcomm,
                  "MPI_Comm_split by a thread that has not started the communicator");
}

int thread_comm_split_type(thread_comm *tc, int type, int key, MPI_Comm *newcomm)
{
    if (type != MPI_COMM_TYPE_SHARED && type != MPI_UNDEFINED)
        return thread_refuse(tc, "MPI_Comm_split_type of a type other than MPI_COMM_TYPE_SHARED");
    return derive(tc, DERIVE_NODE, type == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, newcomm,
                  "MPI_Comm_split_type by a thread that has not started the communicator");
}

static void reset_arrivals(void *arg) { atomic_store(&((thread_comm *)arg)->arrivals, 0); }

/* MPICH: inside the parallel region, by every thread of the process. */
int MPIX_Threadcomm_start(MPI_Comm threadcomm)
{
    thread_comm *tc = thread_owns(threadcomm);
    if (!tc)
        return PMPI_Comm_call_errhandler(threadcomm == MPI_COMM_NULL ? MPI_COMM_WORLD : threadcomm, MPI_ERR_COMM),
               MPI_ERR_COMM;
    if (thread_self(tc) >= 0)
        return thread_error(tc, MPI_ERR_OTHER, "MPIX_Threadcomm_start twice by one thread");
    if (started_count == THREAD_MAX_STARTED)
        return thread_error(tc, MPI_ERR_OTHER, "too many thread communicators started by one thread");
    int index = atomic_fetch_add(&tc->arrivals, 1);
    if (index >= tc->nthreads)
        return thread_error(tc, MPI_ERR_OTHER,
                            "more threads called MPIX_Threadcomm_start than MPIX_Threadcomm_init named");
    add_started(tc, index, 0);
    /* Every thread has its rank before any returns: ranks are final. */
    thread_barrier_wait(&tc->barrier, reset_arrivals, tc);
    return MPI_SUCCESS;
}

int MPIX_Threadcomm_finish(MPI_Comm threadcomm)
{
    thread_comm *tc = thread_owns(threadcomm);
    if (!tc)
        return PMPI_Comm_call_errhandler(threadcomm == MPI_COMM_NULL ? MPI_COMM_WORLD : threadcomm, MPI_ERR_COMM),
               MPI_ERR_COMM;
    if (thread_self(tc) < 0)
        return thread_error(tc, MPI_ERR_OTHER, "MPIX_Threadcomm_finish by a thread that did not start it");
    /* No thread leaves while another may still send to it. */
    thread_barrier_wait(&tc->barrier, NULL, NULL);
    drop_started(tc);
    return MPI_SUCCESS;
}

/* MPICH: outside parallel regions, collective over the parent's processes. */
int MPIX_Threadcomm_free(MPI_Comm *threadcomm)
{
    thread_comm *tc = threadcomm ? thread_owns(*threadcomm) : NULL;
    if (!tc)
        return PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_COMM), MPI_ERR_COMM;
    if (tc->derived)
        return thread_error(tc, MPI_ERR_COMM, "MPIX_Threadcomm_free of a duplicate: MPI_Comm_free ends those");
    release(tc);
    thread_comm_destroy(tc);
    *threadcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static void stop_progress(void *arg) { atomic_store(&((thread_comm *)arg)->barrier.owner, NULL); }

/* MPI_Comm_free: a derived communicator, inside the region by every thread
 * of it; else as MPIX_Threadcomm_free, outside it. */
int thread_comm_free_handle(thread_comm *tc, MPI_Comm *comm)
{
    int self = thread_self(tc);
    if (!tc->derived) {
        if (self >= 0)
            return thread_error(tc, MPI_ERR_COMM, "MPI_Comm_free on a started thread communicator");
        return MPIX_Threadcomm_free(comm);
    }
    if (self < 0)
        return thread_error(tc, MPI_ERR_COMM, "MPI_Comm_free of a derived thread communicator by a thread outside it");
    /* Every thread leaves tc at its barrier, whose last arrival stops its
     * waiters moving tc's messages; each then says it has gone, its last
     * touch of tc, and the first thread releases tc once all have. */
    *comm = MPI_COMM_NULL;
    thread_barrier_wait(&tc->barrier, stop_progress, tc);
    drop_started(tc);
    if (self != 0) {
        atomic_fetch_add_explicit(&tc->departed, 1, memory_order_release);
        return MPI_SUCCESS;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&tc->departed, memory_order_acquire) < tc->nthreads - 1)
        thread_pause(&spins);
    release(tc);
    thread_comm_destroy(tc);
    return MPI_SUCCESS;
}

int thread_comm_rank(thread_comm *tc, int *rank)
{
    int self = thread_self(tc);
    if (self < 0)
        return thread_error(tc, MPI_ERR_COMM, "MPI_Comm_rank by a thread that has not started the thread communicator");
    *rank = tc->offset[tc->my_proc] + self;
    return MPI_SUCCESS;
}

int thread_comm_size(thread_comm *tc, int *size)
{
    *size = tc->size;
    return MPI_SUCCESS;
}
