/* shim_thread: the MPI_* entry points that only thread communicators need
 * (src/thread): communicator rank and size, dup, attributes, point-to-point
 * (persistent requests and MPI_Start among it), probes, the wait family, and
 * the collectives shim_bindings.c does not define. Each sends a thread
 * communicator's call to the thread layer and any other call to the host
 * unchanged; where no thread communicator (or none of their requests)
 * lives, that costs one relaxed atomic load.
 * The other collectives route through shim_bindings.c's entry points.
 *
 * May call: every lower layer, and PMPI. */
#include <limits.h>
#include <mpi.h>

#include "shim_thread.h"
#include "thread.h"

/* The entry point Name of a call made once a message or more (a send, a
 * receive, a probe, a rank query): the host's call at once where no thread
 * communicator lives, else Name##_routed, out of line, whose body follows
 * the macro (and looks the communicator up: the count was just read). So the common case is a load and a tail call, with no frame:
 * with the routing inline, the compiler saved six registers and the stack
 * argument before the check, and OSU's osu_bw at 16-32 B under Open MPI
 * 4.1.4 ran at 0.66-0.70 of its rate without shoal (its fast path turned
 * slow past that few nanoseconds more a call; lean, as without shoal). */
#define HOT_ENTRY(Name, params, args)                                                    \
    static __attribute__((noinline)) int Name##_routed params;                           \
    int Name params { return thread_comms_exist() ? Name##_routed args : P##Name args; } \
    static int Name##_routed params

HOT_ENTRY(MPI_Comm_rank, (MPI_Comm comm, int *rank), (comm, rank))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_comm_rank(tc, rank) : PMPI_Comm_rank(comm, rank);
}

HOT_ENTRY(MPI_Comm_size, (MPI_Comm comm, int *size), (comm, size))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_comm_size(tc, size) : PMPI_Comm_size(comm, size);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_dup(tc, newcomm) : PMPI_Comm_dup(comm, newcomm);
}

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_set_attr(tc, keyval, value) : PMPI_Comm_set_attr(comm, keyval, value);
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_get_attr(tc, keyval, value, flag) : PMPI_Comm_get_attr(comm, keyval, value, flag);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_delete_attr(tc, keyval) : PMPI_Comm_delete_attr(comm, keyval);
}

/* The blocking and non-blocking sends of each mode (MPI_Rsend's receive is
 * posted already, so it is a standard send). */
#define SEND(Name, mode)                                                                                             \
    HOT_ENTRY(Name, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),               \
              (buf, count, type, dest, tag, comm))                                                                   \
    {                                                                                                                \
        thread_comm *tc = thread_comm_find(comm);                                                                    \
        return tc ? thread_send(tc, buf, count, type, dest, tag, mode) : P##Name(buf, count, type, dest, tag, comm); \
    }
/* The non-blocking sends and the persistent ones' inits (thread_isend or
 * thread_send_init) share their parameters. */
#define SEND_REQUEST(Name, mode, thread_call)                                                                          \
    HOT_ENTRY(Name,                                                                                                    \
              (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request), \
              (buf, count, type, dest, tag, comm, request))                                                            \
    {                                                                                                                  \
        thread_comm *tc = thread_comm_find(comm);                                                                      \
        return tc ? thread_call(tc, buf, count, type, dest, tag, mode, request)                                        \
                  : P##Name(buf, count, type, dest, tag, comm, request);                                               \
    }
#define ISEND(Name, mode) SEND_REQUEST(Name, mode, thread_isend)

SEND(MPI_Send, THREAD_SEND_STANDARD)
SEND(MPI_Rsend, THREAD_SEND_STANDARD)
SEND(MPI_Ssend, THREAD_SEND_SYNC)
SEND(MPI_Bsend, THREAD_SEND_BUFFERED)
ISEND(MPI_Isend, THREAD_SEND_STANDARD)
ISEND(MPI_Irsend, THREAD_SEND_STANDARD)
ISEND(MPI_Issend, THREAD_SEND_SYNC)
ISEND(MPI_Ibsend, THREAD_SEND_BUFFERED)

HOT_ENTRY(MPI_Recv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status),
          (buf, count, type, source, tag, comm, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_recv(tc, buf, count, type, source, tag, status)
              : PMPI_Recv(buf, count, type, source, tag, comm, status);
}

HOT_ENTRY(MPI_Irecv,
          (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request),
          (buf, count, type, source, tag, comm, request))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_irecv(tc, buf, count, type, source, tag, request)
              : PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

HOT_ENTRY(MPI_Sendrecv,
          (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
           MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status),
          (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_sendrecv(tc, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, status)
              : PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

HOT_ENTRY(MPI_Sendrecv_replace,
          (void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag, MPI_Comm comm,
           MPI_Status *status),
          (buf, count, type, dest, stag, source, rtag, comm, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_sendrecv_replace(tc, buf, count, type, dest, stag, source, rtag, status)
              : PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
}

/* Persistent point-to-point: a thread communicator's persistent requests
 * are started by the thread layer, any other by the host. */
#define SEND_INIT(Name, mode) SEND_REQUEST(Name, mode, thread_send_init)

SEND_INIT(MPI_Send_init, THREAD_SEND_STANDARD)
SEND_INIT(MPI_Rsend_init, THREAD_SEND_STANDARD)
SEND_INIT(MPI_Ssend_init, THREAD_SEND_SYNC)
SEND_INIT(MPI_Bsend_init, THREAD_SEND_BUFFERED)

HOT_ENTRY(MPI_Recv_init,
          (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request),
          (buf, count, type, source, tag, comm, request))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_recv_init(tc, buf, count, type, source, tag, request)
              : PMPI_Recv_init(buf, count, type, source, tag, comm, request);
}

int MPI_Start(MPI_Request *request)
{
    int rc;
    if (thread_persistent_pending() && thread_start(request, &rc))
        return rc;
    return PMPI_Start(request);
}

int MPI_Startall(int count, MPI_Request requests[])
{
    return thread_persistent_pending() ? thread_startall(count, requests) : PMPI_Startall(count, requests);
}

/* MPI-4's MPI_Isendrecv(_replace), where the host has it. */
#ifdef SHOAL_HOST_HAS_MPI4_CALLS
int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_isendrecv(tc, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, request)
              : PMPI_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                          MPI_Comm comm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_isendrecv_replace(tc, buf, count, type, dest, stag, source, rtag, request)
              : PMPI_Isendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, request);
}
#endif

HOT_ENTRY(MPI_Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status), (source, tag, comm, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_probe(tc, source, tag, status) : PMPI_Probe(source, tag, comm, status);
}

HOT_ENTRY(MPI_Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
          (source, tag, comm, flag, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_iprobe(tc, source, tag, flag, status) : PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!thread_requests_pending())
        return PMPI_Wait(request, status);
    return thread_waitall(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!thread_requests_pending())
        return PMPI_Test(request, flag, status);
    return thread_testall(1, request, flag, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (!thread_requests_pending())
        return PMPI_Waitall(count, requests, statuses);
    return thread_waitall(count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (!thread_requests_pending())
        return PMPI_Testall(count, requests, flag, statuses);
    return thread_testall(count, requests, flag, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (!thread_requests_pending())
        return PMPI_Waitany(count, requests, index, status);
    return thread_waitany(count, requests, index, status);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    if (!thread_requests_pending())
        return PMPI_Testany(count, requests, index, flag, status);
    return thread_testany(count, requests, index, flag, status);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    if (!thread_requests_pending())
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    return thread_waitsome(incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    if (!thread_requests_pending())
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    return thread_testsome(incount, requests, outcount, indices, statuses);
}

/* Collectives shoal serves on thread communicators only (the others are in
 * shim_bindings.c), in each binding the host has. */
#define THREAD_ONLY_COLLECTIVES(S, C, CA, DA)                                                                      \
    int MPI_Alltoallw##S(const void *sbuf, const CA scounts[], const DA sdispls[], const MPI_Datatype stypes[],    \
                         void *rbuf, const CA rcounts[], const DA rdispls[], const MPI_Datatype rtypes[],          \
                         MPI_Comm comm)                                                                            \
    {                                                                                                              \
        return thread_owns(comm)                                                                                   \
                   ? thread_MPI_Alltoallw##S(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm) \
                   : PMPI_Alltoallw##S(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);      \
    }

THREAD_ONLY_COLLECTIVES(, int, int, int)
#if MPI_VERSION >= 4
THREAD_ONLY_COLLECTIVES(_c, MPI_Count, MPI_Count, MPI_Aint)
#endif

int MPI_Request_free(MPI_Request *request)
{
    return thread_requests_pending() ? thread_request_free(request) : PMPI_Request_free(request);
}

int MPI_Cancel(MPI_Request *request)
{
    return thread_requests_pending() ? thread_cancel(request) : PMPI_Cancel(request);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return thread_requests_pending() ? thread_request_get_status(request, flag, status)
                                     : PMPI_Request_get_status(request, flag, status);
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_idup(tc, newcomm, request) : PMPI_Comm_idup(comm, newcomm, request);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_mprobe(tc, source, tag, message, status) : PMPI_Mprobe(source, tag, comm, message, status);
}

HOT_ENTRY(MPI_Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status),
          (source, tag, comm, flag, message, status))
{
    thread_comm *tc = thread_comm_find(comm);
    return tc ? thread_improbe(tc, source, tag, flag, message, status)
              : PMPI_Improbe(source, tag, comm, flag, message, status);
}

/* A matched message is recognised by its handle: these have no communicator. */
int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    int rc;
    if (thread_messages_pending() && thread_mrecv(buf, count, type, message, status, &rc))
        return rc;
    return PMPI_Mrecv(buf, count, type, message, status);
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    int rc;
    if (thread_messages_pending() && thread_imrecv(buf, count, type, message, request, &rc))
        return rc;
    return PMPI_Imrecv(buf, count, type, message, request);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_dup(tc, newcomm) : PMPI_Comm_dup_with_info(comm, info, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_split(tc, color, key, newcomm) : PMPI_Comm_split(comm, color, key, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_split_type(tc, type, key, newcomm) : PMPI_Comm_split_type(comm, type, key, info, newcomm);
}

/* Calls shoal does not serve on a thread communicator (REFUSED). */
REFUSED(MPI_Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm), (comm, group, newcomm))
/* Its group would be the processes', not the threads'. */
REFUSED(MPI_Comm_group, (MPI_Comm comm, MPI_Group *group), (comm, group))
/* The window constructors: in shim_bindings.c, which counts windows. */

/* The non-blocking collectives shoal serves on a thread communicator. */
#define ROUTED(Name, params, args) \
    int Name params { return thread_owns(comm) ? thread_##Name args : P##Name args; }

ROUTED(MPI_Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request))
ROUTED(MPI_Ibcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request),
       (buf, count, type, root, comm, request))
ROUTED(MPI_Ireduce,
       (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
        MPI_Request *request),
       (sbuf, rbuf, count, type, op, root, comm, request))
ROUTED(MPI_Iallreduce,
       (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       (sbuf, rbuf, count, type, op, comm, request))
ROUTED(MPI_Igather,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
        MPI_Comm comm, MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request))
ROUTED(MPI_Iscatter,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
        MPI_Comm comm, MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request))
ROUTED(MPI_Iallgather,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
        MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcount, rtype, comm, request))
ROUTED(MPI_Ialltoall,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
        MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcount, rtype, comm, request))

ROUTED(MPI_Igatherv,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, request))
ROUTED(MPI_Iscatterv,
       (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request),
       (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, request))
ROUTED(MPI_Iallgatherv,
       (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
        MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request),
       (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request))
ROUTED(MPI_Ialltoallv,
       (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf, const int rcounts[],
        const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request),
       (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, request))
ROUTED(MPI_Ireduce_scatter_block,
       (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       (sbuf, rbuf, count, type, op, comm, request))
ROUTED(MPI_Iscan,
       (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       (sbuf, rbuf, count, type, op, comm, request))
ROUTED(MPI_Iexscan,
       (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       (sbuf, rbuf, count, type, op, comm, request))
ROUTED(MPI_Ireduce_scatter,
       (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm,
        MPI_Request *request),
       (sbuf, rbuf, rcounts, type, op, comm, request))
ROUTED(MPI_Ialltoallw,
       (const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void *rbuf,
        const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *request),
       (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, request))
/* Topologies and intercommunicators of a thread communicator's ranks. */
REFUSED(MPI_Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
        (comm, group, tag, newcomm))
REFUSED(MPI_Cart_create,
        (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm),
        (comm, ndims, dims, periods, reorder, newcomm))
REFUSED(MPI_Graph_create,
        (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm),
        (comm, nnodes, index, edges, reorder, newcomm))
REFUSED(MPI_Dist_graph_create,
        (MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[], const int weights[],
         MPI_Info info, int reorder, MPI_Comm *newcomm),
        (comm, n, sources, degrees, destinations, weights, info, reorder, newcomm))
REFUSED(MPI_Dist_graph_create_adjacent,
        (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
         const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *newcomm),
        (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, newcomm))
REFUSED(MPI_Intercomm_create,
        (MPI_Comm comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newcomm),
        (comm, local_leader, peer_comm, remote_leader, tag, newcomm))

#if MPI_VERSION >= 4
/* MPI-4's large-count point-to-point and non-blocking collectives on a
 * thread communicator: the int binding's path where every count fits an int
 * (MPI_ERR_COUNT otherwise). */
#define SEND_C(Name, mode)                                                                              \
    int Name##_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
    {                                                                                                   \
        thread_comm *tc = thread_owns(comm);                                                            \
        if (!tc)                                                                                        \
            return P##Name##_c(buf, count, type, dest, tag, comm);                                      \
        return FITS(count) ? thread_send(tc, buf, (int)count, type, dest, tag, mode)                    \
                           : thread_count_too_large(tc, #Name "_c");                                    \
    }
#define SEND_REQUEST_C(Name, mode, thread_call)                                                         \
    int Name##_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                 MPI_Request *request)                                                                  \
    {                                                                                                   \
        thread_comm *tc = thread_owns(comm);                                                            \
        if (!tc)                                                                                        \
            return P##Name##_c(buf, count, type, dest, tag, comm, request);                             \
        return FITS(count) ? thread_call(tc, buf, (int)count, type, dest, tag, mode, request)           \
                           : thread_count_too_large(tc, #Name "_c");                                    \
    }
#define ISEND_C(Name, mode) SEND_REQUEST_C(Name, mode, thread_isend)

SEND_C(MPI_Send, THREAD_SEND_STANDARD)
SEND_C(MPI_Rsend, THREAD_SEND_STANDARD)
SEND_C(MPI_Ssend, THREAD_SEND_SYNC)
SEND_C(MPI_Bsend, THREAD_SEND_BUFFERED)
ISEND_C(MPI_Isend, THREAD_SEND_STANDARD)
ISEND_C(MPI_Irsend, THREAD_SEND_STANDARD)
ISEND_C(MPI_Issend, THREAD_SEND_SYNC)
ISEND_C(MPI_Ibsend, THREAD_SEND_BUFFERED)

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Recv_c(buf, count, type, source, tag, comm, status);
    return FITS(count) ? thread_recv(tc, buf, (int)count, type, source, tag, status)
                       : thread_count_too_large(tc, "MPI_Recv_c");
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Irecv_c(buf, count, type, source, tag, comm, request);
    return FITS(count) ? thread_irecv(tc, buf, (int)count, type, source, tag, request)
                       : thread_count_too_large(tc, "MPI_Irecv_c");
}

#define SEND_INIT_C(Name, mode) SEND_REQUEST_C(Name, mode, thread_send_init)

SEND_INIT_C(MPI_Send_init, THREAD_SEND_STANDARD)
SEND_INIT_C(MPI_Rsend_init, THREAD_SEND_STANDARD)
SEND_INIT_C(MPI_Ssend_init, THREAD_SEND_SYNC)
SEND_INIT_C(MPI_Bsend_init, THREAD_SEND_BUFFERED)

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Recv_init_c(buf, count, type, source, tag, comm, request);
    return FITS(count) ? thread_recv_init(tc, buf, (int)count, type, source, tag, request)
                       : thread_count_too_large(tc, "MPI_Recv_init_c");
}

int MPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Isendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, request);
    return FITS(scount) && FITS(rcount) ? thread_isendrecv(tc, sbuf, (int)scount, stype, dest, stag, rbuf, (int)rcount,
                                                           rtype, source, rtag, request)
                                        : thread_count_too_large(tc, "MPI_Isendrecv_c");
}

int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                            MPI_Comm comm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Isendrecv_replace_c(buf, count, type, dest, stag, source, rtag, comm, request);
    return FITS(count) ? thread_isendrecv_replace(tc, buf, (int)count, type, dest, stag, source, rtag, request)
                       : thread_count_too_large(tc, "MPI_Isendrecv_replace_c");
}

/* A large-count collective whose counts (the condition) fit an int. */
#define ROUTED_C(Name, params, fits, args)                                           \
    int Name##_c params                                                              \
    {                                                                                \
        thread_comm *tc = thread_owns(comm);                                         \
        if (!tc)                                                                     \
            return P##Name##_c args;                                                 \
        return (fits) ? thread_##Name args : thread_count_too_large(tc, #Name "_c"); \
    }

ROUTED_C(MPI_Ibcast, (void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request),
         FITS(count), (buf, (int)count, type, root, comm, request))
ROUTED_C(MPI_Ireduce,
         (const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
          MPI_Request *request),
         FITS(count), (sbuf, rbuf, (int)count, type, op, root, comm, request))
ROUTED_C(MPI_Iallreduce,
         (const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
          MPI_Request *request),
         FITS(count), (sbuf, rbuf, (int)count, type, op, comm, request))
ROUTED_C(MPI_Ireduce_scatter_block,
         (const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
          MPI_Request *request),
         FITS(count), (sbuf, rbuf, (int)count, type, op, comm, request))
ROUTED_C(MPI_Iscan,
         (const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
          MPI_Request *request),
         FITS(count), (sbuf, rbuf, (int)count, type, op, comm, request))
ROUTED_C(MPI_Iexscan,
         (const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
          MPI_Request *request),
         FITS(count), (sbuf, rbuf, (int)count, type, op, comm, request))
ROUTED_C(MPI_Igather,
         (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
          int root, MPI_Comm comm, MPI_Request *request),
         FITS(scount) && FITS(rcount), (sbuf, (int)scount, stype, rbuf, (int)rcount, rtype, root, comm, request))
ROUTED_C(MPI_Iscatter,
         (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
          int root, MPI_Comm comm, MPI_Request *request),
         FITS(scount) && FITS(rcount), (sbuf, (int)scount, stype, rbuf, (int)rcount, rtype, root, comm, request))
ROUTED_C(MPI_Iallgather,
         (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
          MPI_Comm comm, MPI_Request *request),
         FITS(scount) && FITS(rcount), (sbuf, (int)scount, stype, rbuf, (int)rcount, rtype, comm, request))
ROUTED_C(MPI_Ialltoall,
         (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
          MPI_Comm comm, MPI_Request *request),
         FITS(scount) && FITS(rcount), (sbuf, (int)scount, stype, rbuf, (int)rcount, rtype, comm, request))

/* The v and w forms: shim_thread_mpi4.c. */
#endif
