/* shim_thread_mpi4: MPI-4's calls on thread communicators (src/thread):
 * persistent collectives (MPI_<name>_init), partitioned communication, and
 * the large-count calls shim_thread.c leaves: MPI_Sendrecv(_replace)_c,
 * MPI_Mrecv_c, MPI_Imrecv_c and the non-blocking v and w forms. Each sends
 * a thread communicator's call to the thread layer and any other to the
 * host unchanged. Compiled where the host's header declares them (MPICH 4
 * and later, Open MPI 5; the `_c` forms: MPI_VERSION 4 and later).
 *
 * May call: the thread layer, and PMPI. */
#include <mpi.h>
#include <stddef.h>

#include "shim_thread.h"
#include "thread.h"

/* A collective described for the thread layer (thread_call:
 * thread_coll_init or thread_coll_large), the host's otherwise. */
#define DESCRIBED(Name, params, args, thread_call, ...)  \
    int Name params                                      \
    {                                                    \
        if (!thread_owns(comm))                          \
            return P##Name args;                         \
        thread_coll_call call = {__VA_ARGS__};           \
        return thread_call(comm, &call, request, #Name); \
    }

#ifdef SHOAL_HOST_HAS_MPI4_CALLS

DESCRIBED(MPI_Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request), (comm, info, request),
          thread_coll_init, .kind = THREAD_BARRIER)

/* The persistent collectives of one binding: S the names' suffix, C the
 * count type, CA and DA the count and displacement arrays' types, L
 * whether those are the large-count binding's. */
#define PERSISTENT_COLLECTIVES(S, C, CA, DA, L)                                                                        \
    DESCRIBED(MPI_Bcast_init##S,                                                                                       \
              (void *buf, C count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),   \
              (buf, count, type, root, comm, info, request), thread_coll_init, .kind = THREAD_BCAST, .rbuf = buf,      \
              .rcount = count, .rtype = type, .root = root, .large = L)                                                \
    DESCRIBED(MPI_Reduce_init##S,                                                                                      \
              (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,           \
               MPI_Info info, MPI_Request *request),                                                                   \
              (sbuf, rbuf, count, type, op, root, comm, info, request), thread_coll_init, .kind = THREAD_REDUCE,       \
              .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = type, .op = op, .root = root, .large = L)          \
    DESCRIBED(MPI_Allreduce_init##S,                                                                                   \
              (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,      \
               MPI_Request *request),                                                                                  \
              (sbuf, rbuf, count, type, op, comm, info, request), thread_coll_init, .kind = THREAD_ALLREDUCE,          \
              .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = type, .op = op, .large = L)                        \
    DESCRIBED(MPI_Reduce_scatter_block_init##S,                                                                        \
              (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,      \
               MPI_Request *request),                                                                                  \
              (sbuf, rbuf, count, type, op, comm, info, request), thread_coll_init,                                    \
              .kind = THREAD_REDUCE_SCATTER_BLOCK, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = type,         \
              .op = op, .large = L)                                                                                    \
    DESCRIBED(MPI_Reduce_scatter_init##S,                                                                              \
              (const void *sbuf, void *rbuf, const CA rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm,          \
               MPI_Info info, MPI_Request *request),                                                                   \
              (sbuf, rbuf, rcounts, type, op, comm, info, request), thread_coll_init, .kind = THREAD_REDUCE_SCATTER,   \
              .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts, .rtype = type, .op = op, .large = L)                     \
    DESCRIBED(MPI_Scan_init##S,                                                                                        \
              (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,      \
               MPI_Request *request),                                                                                  \
              (sbuf, rbuf, count, type, op, comm, info, request), thread_coll_init, .kind = THREAD_SCAN, .sbuf = sbuf, \
              .rbuf = rbuf, .rcount = count, .rtype = type, .op = op, .large = L)                                      \
    DESCRIBED(MPI_Exscan_init##S,                                                                                      \
              (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,      \
               MPI_Request *request),                                                                                  \
              (sbuf, rbuf, count, type, op, comm, info, request), thread_coll_init, .kind = THREAD_EXSCAN,             \
              .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rtype = type, .op = op, .large = L)                        \
    DESCRIBED(MPI_Gather_init##S,                                                                                      \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, int root,     \
               MPI_Comm comm, MPI_Info info, MPI_Request *request),                                                    \
              (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, request), thread_coll_init,                 \
              .kind = THREAD_GATHER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,   \
              .rtype = rtype, .root = root, .large = L)                                                                \
    DESCRIBED(MPI_Gatherv_init##S,                                                                                     \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[], const DA displs[],      \
               MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),                      \
              (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, info, request), thread_coll_init,        \
              .kind = THREAD_GATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,                    \
              .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .root = root, .large = L)                         \
    DESCRIBED(MPI_Scatter_init##S,                                                                                     \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, int root,     \
               MPI_Comm comm, MPI_Info info, MPI_Request *request),                                                    \
              (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, request), thread_coll_init,                 \
              .kind = THREAD_SCATTER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,  \
              .rtype = rtype, .root = root, .large = L)                                                                \
    DESCRIBED(MPI_Scatterv_init##S,                                                                                    \
              (const void *sbuf, const CA scounts[], const DA displs[], MPI_Datatype stype, void *rbuf, C rcount,      \
               MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),                      \
              (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, info, request), thread_coll_init,        \
              .kind = THREAD_SCATTERV, .sbuf = sbuf, .scounts = scounts, .sdispls = displs, .stype = stype,            \
              .rbuf = rbuf, .rcount = rcount, .rtype = rtype, .root = root, .large = L)                                \
    DESCRIBED(MPI_Allgather_init##S,                                                                                   \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype,               \
               MPI_Comm comm, MPI_Info info, MPI_Request *request),                                                    \
              (sbuf, scount, stype, rbuf, rcount, rtype, comm, info, request), thread_coll_init,                       \
              .kind = THREAD_ALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,                  \
              .rcount = rcount, .rtype = rtype, .large = L)                                                            \
    DESCRIBED(MPI_Allgatherv_init##S,                                                                                  \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[], const DA displs[],      \
               MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),                                \
              (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, info, request), thread_coll_init,              \
              .kind = THREAD_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,                 \
              .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .large = L)                                       \
    DESCRIBED(MPI_Alltoall_init##S,                                                                                    \
              (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype,               \
               MPI_Comm comm, MPI_Info info, MPI_Request *request),                                                    \
              (sbuf, scount, stype, rbuf, rcount, rtype, comm, info, request), thread_coll_init,                       \
              .kind = THREAD_ALLTOALL, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount, \
              .rtype = rtype, .large = L)                                                                              \
    DESCRIBED(MPI_Alltoallv_init##S,                                                                                   \
              (const void *sbuf, const CA scounts[], const DA sdispls[], MPI_Datatype stype, void *rbuf,               \
               const CA rcounts[], const DA rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,               \
               MPI_Request *request),                                                                                  \
              (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, info, request), thread_coll_init,   \
              .kind = THREAD_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stype = stype,          \
              .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype, .large = L)                        \
    DESCRIBED(MPI_Alltoallw_init##S,                                                                                   \
              (const void *sbuf, const CA scounts[], const DA sdispls[], const MPI_Datatype stypes[], void *rbuf,      \
               const CA rcounts[], const DA rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Info info,      \
               MPI_Request *request),                                                                                  \
              (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, info, request), thread_coll_init, \
              .kind = THREAD_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stypes = stypes,        \
              .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtypes = rtypes, .large = L)

PERSISTENT_COLLECTIVES(, int, int, int, false)
#if MPI_VERSION >= 4
PERSISTENT_COLLECTIVES(_c, MPI_Count, MPI_Count, MPI_Aint, true)
#endif

/* Partitioned communication: a thread communicator's requests are
 * recognised by their handles. */
int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_psend_init(tc, buf, partitions, count, type, dest, tag, request)
              : PMPI_Psend_init(buf, partitions, count, type, dest, tag, comm, info, request);
}

int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_precv_init(tc, buf, partitions, count, type, source, tag, request)
              : PMPI_Precv_init(buf, partitions, count, type, source, tag, comm, info, request);
}

int MPI_Pready(int partition, MPI_Request request)
{
    int rc;
    if (thread_persistent_pending() && thread_pready(request, partition, partition, NULL, 0, &rc))
        return rc;
    return PMPI_Pready(partition, request);
}

int MPI_Pready_range(int low, int high, MPI_Request request)
{
    int rc;
    if (thread_persistent_pending() && thread_pready(request, low, high, NULL, 0, &rc))
        return rc;
    return PMPI_Pready_range(low, high, request);
}

/* Its array is const in MPICH 5's header, not in MPICH 4.0's nor Open
 * MPI 5's (CMake's feature test). */
#ifdef SHOAL_PREADY_LIST_CONST
#define PREADY_LIST_CONST const
#else
#define PREADY_LIST_CONST
#endif

int MPI_Pready_list(int length, PREADY_LIST_CONST int partitions[], MPI_Request request)
{
    int rc;
    if (thread_persistent_pending() && thread_pready(request, 0, 0, partitions, length, &rc))
        return rc;
    return PMPI_Pready_list(length, partitions, request);
}

int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    int rc;
    if (thread_persistent_pending() && thread_parrived(request, partition, flag, &rc))
        return rc;
    return PMPI_Parrived(request, partition, flag);
}

#endif /* SHOAL_HOST_HAS_MPI4_CALLS */

#if MPI_VERSION >= 4
/* The large-count non-blocking v and w forms: the int forms' path on
 * copies of their arrays. */
DESCRIBED(MPI_Igatherv_c,
          (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
           const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, request), thread_coll_large,
          .kind = THREAD_GATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcounts = rcounts,
          .rdispls = displs, .rtype = rtype, .root = root, .large = true)
DESCRIBED(MPI_Iscatterv_c,
          (const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype, void *rbuf,
           MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request),
          (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, request), thread_coll_large,
          .kind = THREAD_SCATTERV, .sbuf = sbuf, .scounts = scounts, .sdispls = displs, .stype = stype, .rbuf = rbuf,
          .rcount = rcount, .rtype = rtype, .root = root, .large = true)
DESCRIBED(MPI_Iallgatherv_c,
          (const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
           const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request), thread_coll_large,
          .kind = THREAD_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcounts = rcounts,
          .rdispls = displs, .rtype = rtype, .large = true)
DESCRIBED(MPI_Ialltoallv_c,
          (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype, void *rbuf,
           const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm,
           MPI_Request *request),
          (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, request), thread_coll_large,
          .kind = THREAD_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stype = stype, .rbuf = rbuf,
          .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype, .large = true)
DESCRIBED(MPI_Ialltoallw_c,
          (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[],
           void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
           MPI_Request *request),
          (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, request), thread_coll_large,
          .kind = THREAD_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stypes = stypes,
          .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtypes = rtypes, .large = true)
DESCRIBED(MPI_Ireduce_scatter_c,
          (const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           MPI_Request *request),
          (sbuf, rbuf, rcounts, type, op, comm, request), thread_coll_large, .kind = THREAD_REDUCE_SCATTER,
          .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts, .rtype = type, .op = op, .large = true)

/* MPI_Sendrecv(_replace)_c: the int path where the counts fit. */
int MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Sendrecv_c(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    return FITS(scount) && FITS(rcount) ? thread_sendrecv(tc, sbuf, (int)scount, stype, dest, stag, rbuf, (int)rcount,
                                                          rtype, source, rtag, status)
                                        : thread_count_too_large(tc, "MPI_Sendrecv_c");
}

int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                           MPI_Comm comm, MPI_Status *status)
{
    thread_comm *tc = thread_owns(comm);
    if (!tc)
        return PMPI_Sendrecv_replace_c(buf, count, type, dest, stag, source, rtag, comm, status);
    return FITS(count) ? thread_sendrecv_replace(tc, buf, (int)count, type, dest, stag, source, rtag, status)
                       : thread_count_too_large(tc, "MPI_Sendrecv_replace_c");
}

/* A matched message of a thread communicator is never longer than an int
 * of elements (its send's count was one): a receive's room beyond that is
 * room it does not need. */
static int room_of(MPI_Count count) { return count < 0 ? -1 : count > INT_MAX ? INT_MAX : (int)count; }

int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    int rc;
    if (thread_messages_pending() && thread_mrecv(buf, room_of(count), type, message, status, &rc))
        return rc;
    return PMPI_Mrecv_c(buf, count, type, message, status);
}

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    int rc;
    if (thread_messages_pending() && thread_imrecv(buf, room_of(count), type, message, request, &rc))
        return rc;
    return PMPI_Imrecv_c(buf, count, type, message, request);
}
#endif
