/* shim_thread_refused: the calls that take a communicator which shoal
 * neither serves on a thread communicator nor may pass to the host with its
 * handle (the host would take them for the process ranks of the parent
 * under it, from several threads at once), refused there with an MPI error
 * through the communicator's error handler, and a few small ones served
 * here (MPI_Topo_test, MPI_Comm_compare of a communicator with itself, the
 * MPI-1 attribute calls, MPI_Comm_idup_with_info, MPIX_Comm_test_threadcomm).
 * Any other communicator's calls go to the host unchanged. README's
 * "Thread ranks" section lists what is refused; what a thread communicator
 * passes to the host (names, error handlers, MPI_Comm_get_info, packing,
 * MPI_Abort, buffer attachment) reaches its handle's duplicate of the
 * parent, where it means the same.
 *
 * May call: the thread layer, and PMPI. */
#include <mpi.h>
#include <stddef.h>

#include "shim_thread.h"
#include "thread.h"

/* A thread communicator has no topology: its handle's (a duplicate of the
 * parent's) would be the processes'. */
int MPI_Topo_test(MPI_Comm comm, int *status)
{
    if (!thread_owns(comm))
        return PMPI_Topo_test(comm, status);
    *status = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Its group is not its handle's: only the same handle compares. */
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    thread_comm *tc = thread_owns(comm1);
    if (!tc)
        tc = thread_owns(comm2);
    if (!tc)
        return PMPI_Comm_compare(comm1, comm2, result);
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    return thread_refuse(tc, "MPI_Comm_compare with another communicator");
}

/* MPI-1's attribute calls: each thread's own, as MPI_Comm_set_attr's
 * (deprecated, so the host's header may say so of PMPI_Attr_*). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
int MPI_Attr_put(MPI_Comm comm, int keyval, void *value)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_set_attr(tc, keyval, value) : PMPI_Attr_put(comm, keyval, value);
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *value, int *flag)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_get_attr(tc, keyval, value, flag) : PMPI_Attr_get(comm, keyval, value, flag);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_delete_attr(tc, keyval) : PMPI_Attr_delete(comm, keyval);
}
#pragma GCC diagnostic pop

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    thread_comm *tc = comm ? thread_owns(*comm) : NULL;
    return tc ? thread_refuse(tc, "MPI_Comm_disconnect") : PMPI_Comm_disconnect(comm);
}

/* Topology queries: a thread communicator has no topology. */
REFUSED(MPI_Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]), (comm, rank, maxdims, coords))
REFUSED(MPI_Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]),
        (comm, maxdims, dims, periods, coords))
REFUSED(MPI_Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank),
        (comm, ndims, dims, periods, newrank))
REFUSED(MPI_Cart_rank, (MPI_Comm comm, const int coords[], int *rank), (comm, coords, rank))
REFUSED(MPI_Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest),
        (comm, direction, disp, rank_source, rank_dest))
REFUSED(MPI_Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm), (comm, remain_dims, newcomm))
REFUSED(MPI_Cartdim_get, (MPI_Comm comm, int *ndims), (comm, ndims))
REFUSED(MPI_Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]),
        (comm, maxindex, maxedges, indx, edges))
REFUSED(MPI_Graph_map, (MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank),
        (comm, nnodes, indx, edges, newrank))
REFUSED(MPI_Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]),
        (comm, rank, maxneighbors, neighbors))
REFUSED(MPI_Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors), (comm, rank, nneighbors))
REFUSED(MPI_Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges), (comm, nnodes, nedges))
REFUSED(MPI_Dist_graph_neighbors,
        (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[],
         int destweights[]),
        (comm, maxindegree, sources, sourceweights, maxoutdegree, destinations, destweights))
REFUSED(MPI_Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted),
        (comm, indegree, outdegree, weighted))

/* Neighbourhood collectives. */
REFUSED(MPI_Neighbor_allgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
REFUSED(MPI_Ineighbor_allgather,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
REFUSED(MPI_Neighbor_allgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
         const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
REFUSED(MPI_Ineighbor_allgatherv,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
         const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
REFUSED(MPI_Neighbor_alltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
REFUSED(MPI_Ineighbor_alltoall,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
REFUSED(MPI_Neighbor_alltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
REFUSED(MPI_Ineighbor_alltoallv,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))
REFUSED(MPI_Neighbor_alltoallw,
        (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
         MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
REFUSED(MPI_Ineighbor_alltoallw,
        (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))

/* Dynamic processes, files, and info that would be set on the processes. */
REFUSED(MPI_Comm_spawn,
        (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
         int array_of_errcodes[]),
        (command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes))
REFUSED(MPI_Comm_spawn_multiple,
        (int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
         const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
        (count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm, intercomm,
         array_of_errcodes))
REFUSED(MPI_Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm),
        (port_name, info, root, comm, newcomm))
REFUSED(MPI_Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm),
        (port_name, info, root, comm, newcomm))
REFUSED(MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
        (comm, filename, amode, info, fh))
REFUSED(MPI_Comm_set_info, (MPI_Comm comm, MPI_Info info), (comm, info))

#ifdef SHOAL_HOST_HAS_MPI4_CALLS
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    thread_comm *tc = thread_owns(comm);
    return tc ? thread_comm_idup(tc, newcomm, request) : PMPI_Comm_idup_with_info(comm, info, newcomm, request);
}

REFUSED(MPI_Neighbor_allgather_init,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_allgatherv_init,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
         const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoall_init,
        (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoallv_init,
        (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoallw_init,
        (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
         MPI_Info info, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request))
#endif

#if MPI_VERSION >= 4
REFUSED(MPI_Neighbor_allgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
REFUSED(MPI_Ineighbor_allgather_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
REFUSED(MPI_Neighbor_allgather_init_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_allgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
REFUSED(MPI_Ineighbor_allgatherv_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
REFUSED(MPI_Neighbor_allgatherv_init_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
         const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
REFUSED(MPI_Ineighbor_alltoall_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
REFUSED(MPI_Neighbor_alltoall_init_c,
        (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
REFUSED(MPI_Ineighbor_alltoallv_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
         MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))
REFUSED(MPI_Neighbor_alltoallv_init_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
         MPI_Info info, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request))
REFUSED(MPI_Neighbor_alltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
         MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
REFUSED(MPI_Ineighbor_alltoallw_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
         MPI_Comm comm, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))
REFUSED(MPI_Neighbor_alltoallw_init_c,
        (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
         MPI_Comm comm, MPI_Info info, MPI_Request *request),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request))
#endif

#ifdef MPICH_NUMVERSION
/* MPICH's fault tolerance (ULFM) calls. */
REFUSED(MPIX_Comm_agree, (MPI_Comm comm, int *flag), (comm, flag))
REFUSED(MPIX_Comm_failure_ack, (MPI_Comm comm), (comm))
REFUSED(MPIX_Comm_failure_get_acked, (MPI_Comm comm, MPI_Group *failedgrp), (comm, failedgrp))
REFUSED(MPIX_Comm_revoke, (MPI_Comm comm), (comm))
REFUSED(MPIX_Comm_shrink, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm))
#endif

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 50000000
/* MPICH 5's: a thread communicator says so; streams refused. */
int MPIX_Comm_test_threadcomm(MPI_Comm comm, int *flag)
{
    if (!thread_owns(comm))
        return PMPIX_Comm_test_threadcomm(comm, flag);
    *flag = 1;
    return MPI_SUCCESS;
}

REFUSED(MPIX_Comm_get_failed, (MPI_Comm comm, MPI_Group *failedgrp), (comm, failedgrp))
REFUSED(MPIX_Comm_get_stream, (MPI_Comm comm, int idx, MPIX_Stream *stream), (comm, idx, stream))
REFUSED(MPIX_Stream_comm_create, (MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm), (comm, stream, newcomm))
REFUSED(MPIX_Stream_comm_create_multiplex,
        (MPI_Comm comm, int count, MPIX_Stream array_of_streams[], MPI_Comm *newcomm),
        (comm, count, array_of_streams, newcomm))
REFUSED(MPIX_Stream_send,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index),
        (buf, count, datatype, dest, tag, comm, source_stream_index, dest_stream_index))
REFUSED(MPIX_Stream_send_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         int source_stream_index, int dest_stream_index),
        (buf, count, datatype, dest, tag, comm, source_stream_index, dest_stream_index))
REFUSED(MPIX_Stream_isend,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index, MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, source_stream_index, dest_stream_index, request))
REFUSED(MPIX_Stream_isend_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         int source_stream_index, int dest_stream_index, MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, source_stream_index, dest_stream_index, request))
REFUSED(MPIX_Stream_recv,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index, MPI_Status *status),
        (buf, count, datatype, source, tag, comm, source_stream_index, dest_stream_index, status))
REFUSED(MPIX_Stream_recv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index, MPI_Status *status),
        (buf, count, datatype, source, tag, comm, source_stream_index, dest_stream_index, status))
REFUSED(MPIX_Stream_irecv,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index, MPI_Request *request),
        (buf, count, datatype, source, tag, comm, source_stream_index, dest_stream_index, request))
REFUSED(MPIX_Stream_irecv_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, int source_stream_index,
         int dest_stream_index, MPI_Request *request),
        (buf, count, datatype, source, tag, comm, source_stream_index, dest_stream_index, request))
REFUSED(MPIX_Send_enqueue, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
REFUSED(MPIX_Send_enqueue_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
        (buf, count, datatype, dest, tag, comm))
REFUSED(MPIX_Recv_enqueue,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status),
        (buf, count, datatype, source, tag, comm, status))
REFUSED(MPIX_Recv_enqueue_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status),
        (buf, count, datatype, source, tag, comm, status))
REFUSED(MPIX_Isend_enqueue,
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
REFUSED(MPIX_Isend_enqueue_c,
        (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         MPI_Request *request),
        (buf, count, datatype, dest, tag, comm, request))
REFUSED(MPIX_Irecv_enqueue,
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request),
        (buf, count, datatype, source, tag, comm, request))
REFUSED(MPIX_Irecv_enqueue_c,
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request),
        (buf, count, datatype, source, tag, comm, request))
REFUSED(MPIX_Allreduce_enqueue,
        (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
REFUSED(MPIX_Allreduce_enqueue_c,
        (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm))
#endif
