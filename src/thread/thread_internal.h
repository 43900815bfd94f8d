/* thread_internal: what the thread layer's files share: the communicator's
 * state, the barrier of a process's threads, datatypes as bytes, and the
 * host lock.
 *
 * May call: core, and PMPI. */
#ifndef SHOAL_THREAD_INTERNAL_H
#define SHOAL_THREAD_INTERNAL_H

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "thread.h"

/* The threads of one process meeting: the last to arrive runs `last` (with
 * every other thread still waiting) and releases them. Those waiting move
 * the host's messages for `owner` meanwhile: a receive posted before a
 * collective must still be able to complete a sender's MPI_Ssend. */
typedef struct thread_barrier {
    _Atomic int arrived;
    _Atomic unsigned generation;
    int n;
    _Atomic(struct thread_comm *) owner;
} thread_barrier;

void thread_barrier_wait(thread_barrier *b, void (*last)(void *), void *arg);

/* Backing off in a wait: spins first, then yields, then sleeps a little,
 * since threads of several ranks may take turns on a core. */
void thread_pause(unsigned *spins);

/* A thread's buffers, published to its process's others for a collective. */
typedef struct thread_slot {
    _Alignas(64) const void *sbuf;
    void *rbuf;
} thread_slot;

/* A thread's staging areas for short collectives within one process: two,
 * used by turns (call numbers' parity; `calls`, the short collectives this
 * thread has made, alike in every thread of the process). The owner copies
 * its input into one, marks it `ready` with the call's number and goes on;
 * every thread marks `finished` with the number of each short call it has
 * completed, its reads included. Before reusing an area (call k, last used
 * by k - 2) the owner waits for every thread to have finished k - 2, which
 * it knows without looking where it has seen that thread ready for k - 1:
 * in a loop of allreduces no thread writes a line another owns. A bcast
 * stages up to THREAD_STAGE_BYTES (its root returns once the message is
 * staged, as a process root does once it is in the cells); a reduction up
 * to THREAD_SHORT_REDUCE_BYTES, past which every thread folding every input
 * costs more than meeting to fold a slice each. */
#define THREAD_STAGE_BYTES 65536
#define THREAD_SHORT_REDUCE_BYTES 4096
typedef struct thread_stage_area {
    _Alignas(64) _Atomic unsigned ready; /* a short message shares its line */
    char bytes[THREAD_STAGE_BYTES];
} thread_stage_area;
typedef struct thread_stage {
    _Alignas(64) _Atomic unsigned finished;
    unsigned calls;  /* the owner's */
    unsigned *known; /* the owner's: per thread, a call it is known to have finished */
    thread_stage_area area[2];
} thread_stage;

struct thread_mailbox;
struct thread_outgoing;

struct thread_comm {
    MPI_Comm handle; /* the user's: a duplicate of the parent */
    MPI_Comm wire;   /* point-to-point between processes */
    MPI_Comm procs;  /* the collectives' process step (first threads only) */
    int nprocs, my_proc;
    int nthreads;         /* this process's threads */
    int size;             /* every process's */
    int *offset;          /* per process, its first thread rank; offset[nprocs] = size */
    int *proc_of;         /* per thread rank, its process */
    int *counts, *displs; /* per process: the first thread's per-call scratch */
    /* MPIX_Threadcomm_start and _finish */
    _Atomic int arrivals;
    thread_barrier barrier;
    /* point-to-point */
    struct thread_mailbox *box; /* per thread of this process */
    pthread_mutex_t progress_lock, out_lock;
    struct thread_outgoing *out; /* host sends still in flight */
    /* MPI_Comm_dup and MPI_Comm_split inside the region: each thread's
     * colour and key, and what the first thread made for it; whether this
     * communicator is such a one (MPI_Comm_free ends it), and how many of
     * its threads have left it at that free */
    struct thread_derive {
        int colour, key;
        struct thread_comm *made;
        int index;
    } * derive;
    int derive_rc;
    bool derived;
    /* non-blocking collectives: each thread's count of those it started */
    unsigned *nbc_started;
    _Atomic int departed;
    /* collectives: each thread's buffers, scratch the last to arrive grows */
    thread_slot *slot;
    thread_stage *stage; /* per thread */
    unsigned *known;     /* the stages' known rows, each whole cache lines: an owner writes its own */
    char *scratch[2];
    size_t scratch_size[2];
    _Atomic size_t scratch_need[2];
};

/* This thread's place in tc (its order of arrival at start), or -1. */
int thread_self(const thread_comm *tc);

/* An error through tc's error handler, as the host reports its own. */
int thread_error(const thread_comm *tc, int code, const char *what);

/* Count elements of an MPI datatype as bytes. */
typedef struct thread_layout {
    size_t size;          /* data bytes per element */
    MPI_Aint extent, lb;  /* element stride; where its bytes begin (true lb) */
    MPI_Aint true_extent; /* span of one element's bytes */
    bool dense;           /* an element is size bytes at lb, elements abut */
} thread_layout;

bool thread_layout_of(MPI_Datatype type, thread_layout *out);
/* Bytes spanned by count elements, from buf + lb. */
size_t thread_span(const thread_layout *l, size_t count);
/* count elements at buf to bytes (packed), and back; n bytes in all. */
int thread_pack(const void *buf, size_t count, MPI_Datatype type, const thread_layout *l, void *bytes);
int thread_unpack(const void *bytes, size_t n, void *buf, MPI_Datatype type, const thread_layout *l);

/* count elements of type from src to dst (both laid out as type says). */
int thread_copy_typed(void *dst, const void *src, MPI_Count count, MPI_Datatype type, const thread_layout *l);
/* Room for count elements of a layout (free *base), and where element 0
 * starts in it. */
char *thread_alloc_elements(const thread_layout *l, MPI_Count count, void **base);

/* Host MPI calls from several threads at once: where the host was not
 * initialised with MPI_THREAD_MULTIPLE, they take turns under one lock. */
extern bool thread_host_serialised;
extern pthread_mutex_t thread_host_mutex;
static inline void thread_host_lock(void)
{
    if (thread_host_serialised)
        pthread_mutex_lock(&thread_host_mutex);
}
static inline void thread_host_unlock(void)
{
    if (thread_host_serialised)
        pthread_mutex_unlock(&thread_host_mutex);
}

/* A send or receive in progress (thread_p2p.c). What a matching sender
 * reads and writes, and the flag its waiter polls, share the first cache
 * line: a request on the stack is declared _Alignas(64), so a one-way
 * message between threads moves that line once instead of three times. */
typedef struct thread_req {
    struct thread_req *next; /* in a posted queue */
    _Atomic int done;
    /* a receive: what it takes, and where */
    int source, tag;
    int count;
    void *buf;
    /* its outcome */
    int got_source, got_tag, error;
    bool is_recv;
    bool cancelled;
    size_t got_bytes;
    /* the non-blocking collective it is a step of, told when it is done */
    struct thread_nbc *nbc;
    /* the MPI_Isendrecv it is a half of, told when it is done */
    struct thread_pair *pair;
    thread_comm *tc;
    MPI_Datatype type;
    thread_layout layout;
    struct thread_mailbox *box; /* where it is posted */
    /* handed to the user */
    MPI_Request handle;
    struct thread_req *registry_next;
} thread_req;

/* Point-to-point state of a communicator (thread_p2p.c). */
int thread_p2p_create(thread_comm *tc);
/* Waits until every host send of tc is done and every process is there
 * (collective over the parent's processes), then frees the queues. */
void thread_p2p_destroy(thread_comm *tc);
/* Moves what the host has for tc's threads into their mailboxes. */
void thread_progress(thread_comm *tc);

/* The collectives' own messages, on tags below the user's (THREAD_TAG_*),
 * which MPI_ANY_TAG never takes: start a send or receive in req (zeroed),
 * then wait for n of them (the first receive's error). */
enum {
    THREAD_TAG_GATHERV = -1001,
    THREAD_TAG_SCATTERV,
    THREAD_TAG_ALLGATHERV,
    THREAD_TAG_ALLTOALLV,
    THREAD_TAG_ALLTOALLW,
    THREAD_TAG_SCAN
};
int thread_coll_send(thread_comm *tc, int self, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     thread_req *req);
int thread_coll_recv(thread_comm *tc, int self, void *buf, int count, MPI_Datatype type, int source, int tag,
                     thread_req *req);
int thread_coll_wait(thread_req *reqs, int n);
/* Hands req to the user as a host generalized request, registered for the
 * wait family. */
int thread_req_hand_out(thread_req *req, MPI_Request *request);
/* Completes a request (a step's: its collective is told). */
void thread_req_finish(thread_req *req);
/* A step of nbc is done (thread_nbc.c). */
void thread_nbc_step_done(struct thread_nbc *nbc);
/* A non-blocking collective's tag, taken now by this thread (self) of tc
 * in its order of collectives: a persistent collective is matched at its
 * init, as MPI-4 says, and runs every start on the tag it took there. */
int thread_nbc_take_tag(thread_comm *tc, int self);
/* The next non-blocking collective this thread calls runs on tag (not a
 * new one) and frees `owned` (may be NULL) once done or refused. */
void thread_nbc_next_call(int tag, void *owned);

/* Partitioned messages (thread_part.c) travel as the user's tag plus
 * THREAD_TAG_PARTITIONED: below every other tag, so that no other receive
 * takes them; the user's tag must be below THREAD_PARTITIONED_TAGS. */
#define THREAD_TAG_PARTITIONED INT_MIN
#define THREAD_PARTITIONED_TAGS (1 << 30)

/* Persistent requests of other files' kinds (persistent collectives,
 * partitioned requests): start makes the operation's request (a thread
 * request handed out) in *active; release frees args once the persistent
 * request is freed. MPI_Request_free refuses one whose operation is under
 * way. */
typedef struct thread_persistent_ops {
    int (*start)(void *args, MPI_Request *active);
    void (*release)(void *args);
} thread_persistent_ops;
int thread_persistent_make(thread_comm *tc, int self, const thread_persistent_ops *ops, void *args,
                           MPI_Request *request);
/* The arguments of handle where it is a persistent request of ops's kind
 * (and whether it is active), else NULL. */
void *thread_persistent_args(MPI_Request handle, const thread_persistent_ops *ops, bool *active);
/* A datatype a request keeps: a duplicate of a derived one, which the user
 * may free meanwhile (owned), else the type itself. */
int thread_type_hold(MPI_Datatype type, MPI_Datatype *held, bool *owned);
void thread_type_release(MPI_Datatype *held, bool owned);

#endif
