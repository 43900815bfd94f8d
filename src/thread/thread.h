/* thread: thread ranks, the MPIX_Threadcomm interface MPICH defined, on any
 * host MPI. A thread communicator's handle is a real communicator of the
 * host (a duplicate of its parent), so the calls shoal does not route here
 * (attributes, names, error handlers) reach the host meaningfully; the MPI
 * layer's entry points send every call shoal serves on one (rank, size,
 * point-to-point, the wait family, collectives) to the functions below.
 *
 * Programs that never make a thread communicator pay one relaxed atomic
 * load per call for it (thread_owns, thread_requests_pending).
 *
 * Owns: the thread communicators (thread_comm.c: init, start, finish, free,
 * ranks, dup and split), their point-to-point messages, matched probes and
 * requests (thread_p2p.c), their collectives (thread_coll.c) and
 * non-blocking collectives (thread_nbc.c).
 * May call: core, and PMPI (the host MPI). The collectives' step between
 * processes calls the public MPI_* collectives on a private duplicate of the
 * parent, so that shoal's own process path serves it where it pays. */
#ifndef SHOAL_THREAD_H
#define SHOAL_THREAD_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct thread_comm thread_comm;

/* Live thread communicators and user-visible requests, process-wide. */
extern _Atomic int thread_comms_live;
extern _Atomic int thread_requests_live;

thread_comm *thread_comm_find(MPI_Comm comm);

/* Whether any thread communicator lives: where none does, every call goes
 * to the host. */
static inline bool thread_comms_exist(void)
{
    return atomic_load_explicit(&thread_comms_live, memory_order_relaxed) != 0;
}

/* The thread communicator comm names, or NULL (at once where none lives). */
static inline thread_comm *thread_owns(MPI_Comm comm) { return thread_comms_exist() ? thread_comm_find(comm) : 0; }

/* True when some request may be a thread communicator's: the wait family
 * must route it. */
static inline bool thread_requests_pending(void)
{
    return atomic_load_explicit(&thread_requests_live, memory_order_relaxed) != 0;
}

/* Communicator queries and MPI_Comm_free on a thread communicator. */
int thread_comm_rank(thread_comm *tc, int *rank);
int thread_comm_size(thread_comm *tc, int *size);
int thread_comm_free_handle(thread_comm *tc, MPI_Comm *comm);
/* Inside the parallel region, by every thread of tc: new thread
 * communicators (MPI_Comm_free ends them), ranks of one or several
 * processes; a split must keep each process's ranks consecutive. */
int thread_comm_dup(thread_comm *tc, MPI_Comm *newcomm);
int thread_comm_split(thread_comm *tc, int colour, int key, MPI_Comm *newcomm);
int thread_comm_split_type(thread_comm *tc, int type, int key, MPI_Comm *newcomm);
/* MPI_Comm_idup: a dup, blocking until every thread of tc calls it, and a
 * request complete already. */
int thread_comm_idup(thread_comm *tc, MPI_Comm *newcomm, MPI_Request *request);
/* A call shoal does not serve on a thread communicator: MPI_ERR_OTHER
 * through its error handler, and a warning (once per process). */
int thread_refuse(thread_comm *tc, const char *call);
/* A large-count call's count beyond an int: MPI_ERR_COUNT through tc's
 * error handler. */
int thread_count_too_large(thread_comm *tc, const char *call);
/* Attributes: a started thread's own, as MPICH keeps them. */
int thread_comm_set_attr(thread_comm *tc, int keyval, void *value);
int thread_comm_get_attr(thread_comm *tc, int keyval, void *value, int *flag);
int thread_comm_delete_attr(thread_comm *tc, int keyval);

/* Send modes: MPI_Send and MPI_Rsend (standard), MPI_Ssend (done once a
 * receive has taken the message), MPI_Bsend (never waits for the receiver:
 * the message is copied aside where no receive is posted). */
typedef enum { THREAD_SEND_STANDARD, THREAD_SEND_SYNC, THREAD_SEND_BUFFERED } thread_send_mode;

/* Point-to-point, with MPI's semantics. */
int thread_send(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                thread_send_mode mode);
int thread_isend(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                 thread_send_mode mode, MPI_Request *request);
int thread_recv(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Status *status);
int thread_irecv(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Request *request);
int thread_sendrecv(thread_comm *tc, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                    int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Status *status);
/* MPI_Sendrecv_replace: the send goes from a copy of buf. */
int thread_sendrecv_replace(thread_comm *tc, void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                            int rtag, MPI_Status *status);
int thread_probe(thread_comm *tc, int source, int tag, MPI_Status *status);
int thread_iprobe(thread_comm *tc, int source, int tag, int *flag, MPI_Status *status);

/* Matched probes: a message MPI_Improbe or MPI_Mprobe took stays aside,
 * under a handle of its own, until MPI_Mrecv or MPI_Imrecv receives it
 * (those return false, having done nothing, for a host message). */
extern _Atomic int thread_messages_live;
static inline bool thread_messages_pending(void)
{
    return atomic_load_explicit(&thread_messages_live, memory_order_relaxed) != 0;
}
int thread_improbe(thread_comm *tc, int source, int tag, int *flag, MPI_Message *message, MPI_Status *status);
int thread_mprobe(thread_comm *tc, int source, int tag, MPI_Message *message, MPI_Status *status);
bool thread_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status, int *rc);
bool thread_imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request, int *rc);
/* A request of tc that is complete already. */
int thread_request_done(thread_comm *tc, MPI_Request *request);

/* MPI_Isendrecv and MPI_Isendrecv_replace: one request, done once both the
 * send and the receive are, with the receive's status. */
int thread_isendrecv(thread_comm *tc, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                     int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Request *request);
int thread_isendrecv_replace(thread_comm *tc, void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                             int rtag, MPI_Request *request);

/* Persistent requests (MPI_Send_init and its kin, MPI_Recv_init): inactive
 * until MPI_Start, inactive again once the wait family has returned the
 * operation; MPI_Request_free ends them. Their handles are the host's
 * (generalized requests that never complete), so the host's own calls take
 * them without harm; while any lives, MPI_Start and MPI_Startall look for
 * them (thread_start: false, having done nothing, for a host request). */
extern _Atomic int thread_persistent_live;
static inline bool thread_persistent_pending(void)
{
    return atomic_load_explicit(&thread_persistent_live, memory_order_relaxed) != 0;
}
int thread_send_init(thread_comm *tc, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     thread_send_mode mode, MPI_Request *request);
int thread_recv_init(thread_comm *tc, void *buf, int count, MPI_Datatype type, int source, int tag,
                     MPI_Request *request);
bool thread_start(MPI_Request *request, int *rc);
/* Starts each request by its kind: a thread communicator's here, a host's
 * by the host. */
int thread_startall(int n, MPI_Request requests[]);

/* The wait family over arrays that may mix the host's requests and thread
 * communicators' (generalized requests of the host, completed here). */
int thread_waitall(int n, MPI_Request requests[], MPI_Status statuses[]);
int thread_testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int thread_waitany(int n, MPI_Request requests[], int *index, MPI_Status *status);
int thread_testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int thread_waitsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
int thread_testsome(int n, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]);
/* MPI_Request_free and MPI_Cancel, on either kind of request (a persistent
 * one's: its active operation's, if any). */
int thread_request_free(MPI_Request *request);
int thread_cancel(MPI_Request *request);
/* MPI_Request_get_status, on either kind. */
int thread_request_get_status(MPI_Request request, int *flag, MPI_Status *status);

/* Collectives on a thread communicator: thread_<MPI name>, with the MPI
 * function's parameters (thread_coll.c): every blocking collective but the
 * neighbourhood ones, in both bindings. */
#define THREAD_COLL_DECLARE(S, C, CA, DA)                                                                              \
    int thread_MPI_Bcast##S(void *buf, C count, MPI_Datatype type, int root, MPI_Comm comm);                           \
    int thread_MPI_Reduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, int root,            \
                             MPI_Comm comm);                                                                           \
    int thread_MPI_Allreduce##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);   \
    int thread_MPI_Reduce_scatter_block##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op,        \
                                           MPI_Comm comm);                                                             \
    int thread_MPI_Reduce_scatter##S(const void *sbuf, void *rbuf, const CA rcounts[], MPI_Datatype type, MPI_Op op,   \
                                     MPI_Comm comm);                                                                   \
    int thread_MPI_Gather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, \
                             int root, MPI_Comm comm);                                                                 \
    int thread_MPI_Gatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],          \
                              const DA displs[], MPI_Datatype rtype, int root, MPI_Comm comm);                         \
    int thread_MPI_Allgather##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                  \
                                MPI_Datatype rtype, MPI_Comm comm);                                                    \
    int thread_MPI_Allgatherv##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[],       \
                                 const DA displs[], MPI_Datatype rtype, MPI_Comm comm);                                \
    int thread_MPI_Scatter##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                    \
                              MPI_Datatype rtype, int root, MPI_Comm comm);                                            \
    int thread_MPI_Scatterv##S(const void *sbuf, const CA scounts[], const DA displs[], MPI_Datatype stype,            \
                               void *rbuf, C rcount, MPI_Datatype rtype, int root, MPI_Comm comm);                     \
    int thread_MPI_Alltoall##S(const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount,                   \
                               MPI_Datatype rtype, MPI_Comm comm);                                                     \
    int thread_MPI_Alltoallv##S(const void *sbuf, const CA scounts[], const DA sdispls[], MPI_Datatype stype,          \
                                void *rbuf, const CA rcounts[], const DA rdispls[], MPI_Datatype rtype,                \
                                MPI_Comm comm);                                                                        \
    int thread_MPI_Alltoallw##S(const void *sbuf, const CA scounts[], const DA sdispls[], const MPI_Datatype stypes[], \
                                void *rbuf, const CA rcounts[], const DA rdispls[], const MPI_Datatype rtypes[],       \
                                MPI_Comm comm);                                                                        \
    int thread_MPI_Scan##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);        \
    int thread_MPI_Exscan##S(const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

THREAD_COLL_DECLARE(, int, int, int)
#if MPI_VERSION >= 4
THREAD_COLL_DECLARE(_c, MPI_Count, MPI_Count, MPI_Aint)
#endif
int thread_MPI_Barrier(MPI_Comm comm);

/* Non-blocking collectives (thread_nbc.c): the call returns at once; the
 * request completes through the wait family. */
int thread_MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request);
int thread_MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request);
int thread_MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int root, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                          MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         MPI_Comm comm, MPI_Request *request);
int thread_MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                         int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                          MPI_Request *request);
int thread_MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                          void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                          MPI_Comm comm, MPI_Request *request);
int thread_MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request);
int thread_MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                     MPI_Request *request);
int thread_MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request);

/* A collective described by its call's arguments (thread_pcoll.c), for
 * MPI-4's persistent collectives (MPI_<name>_init) and the large-count
 * non-blocking v and w forms. A bcast or reduction's buffer, count and
 * datatype are rbuf, rcount and rtype; arrays are ints, or (large)
 * MPI_Count counts and MPI_Aint displacements. */
typedef enum {
    THREAD_BARRIER,
    THREAD_BCAST,
    THREAD_REDUCE,
    THREAD_ALLREDUCE,
    THREAD_REDUCE_SCATTER,
    THREAD_REDUCE_SCATTER_BLOCK,
    THREAD_SCAN,
    THREAD_EXSCAN,
    THREAD_GATHER,
    THREAD_GATHERV,
    THREAD_SCATTER,
    THREAD_SCATTERV,
    THREAD_ALLGATHER,
    THREAD_ALLGATHERV,
    THREAD_ALLTOALL,
    THREAD_ALLTOALLV,
    THREAD_ALLTOALLW
} thread_coll_kind;

typedef struct thread_coll_call {
    thread_coll_kind kind;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    const void *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    int root;
    bool large;
} thread_coll_call;

/* A persistent collective: a persistent request (MPI_Start, the wait
 * family, MPI_Request_free once inactive) whose every start runs the
 * matching non-blocking collective. Counts beyond an int: MPI_ERR_COUNT. */
int thread_coll_init(MPI_Comm comm, const thread_coll_call *call, MPI_Request *request, const char *name);
/* A large-count non-blocking collective on the int form's path. */
int thread_coll_large(MPI_Comm comm, const thread_coll_call *call, MPI_Request *request, const char *name);

/* Partitioned communication (thread_part.c): a persistent send of
 * partitions * count elements that leaves once every partition is ready,
 * and a persistent receive whose partitions arrive all at once, with the
 * message. thread_pready and thread_parrived return false, having done
 * nothing, for a request that is not a thread communicator's. */
int thread_psend_init(thread_comm *tc, const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest,
                      int tag, MPI_Request *request);
int thread_precv_init(thread_comm *tc, void *buf, int partitions, MPI_Count count, MPI_Datatype type, int source,
                      int tag, MPI_Request *request);
/* MPI_Pready and its kin: partitions low..high ready, or (list) the
 * length partitions it names. */
bool thread_pready(MPI_Request request, int low, int high, const int *list, int length, int *rc);
bool thread_parrived(MPI_Request request, int partition, int *flag, int *rc);

#endif
