/* shim_coll: the per-collective paths (shim_coll.c), which the MPI_* entry
 * points (shim_bindings.c) call, the classic and the large-count binding of
 * a collective alike.
 *
 * Rule: a call goes to PMPI unchanged unless every argument is valid and
 * shoal handles the case; then the host MPI never sees it. Invalid
 * arguments therefore meet the host MPI's own error handling.
 *
 * Each shim_<name>_by_shoal runs the call on the communicator's team and
 * returns true, or returns false having done nothing (the entry point then
 * calls PMPI). Counts take the wider type of the two bindings, count and
 * displacement arrays come as shim_array (shim_bytes.h); name is the entry
 * point's, for messages.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_COLL_H
#define SHOAL_SHIM_COLL_H

#include <mpi.h>
#include <stdbool.h>

#include "shim_bytes.h"

bool shim_barrier_by_shoal(MPI_Comm comm, const char *name);
bool shim_bcast_by_shoal(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, const char *name);
bool shim_reduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm, const char *name);
bool shim_allreduce_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             const char *name);
bool shim_reduce_scatter_block_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                                        MPI_Comm comm, const char *name);
bool shim_reduce_scatter_by_shoal(const void *sbuf, void *rbuf, shim_array rcounts, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm, const char *name);
/* inclusive: MPI_Scan; else MPI_Exscan. */
bool shim_scan_by_shoal(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        bool inclusive, const char *name);
bool shim_gather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, int root, MPI_Comm comm, const char *name);
bool shim_gatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                           shim_array displs, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name);
bool shim_allgather_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                             MPI_Datatype rtype, MPI_Comm comm, const char *name);
bool shim_allgatherv_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, shim_array rcounts,
                              shim_array displs, MPI_Datatype rtype, MPI_Comm comm, const char *name);
bool shim_scatter_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm, const char *name);
bool shim_scatterv_by_shoal(const void *sbuf, shim_array scounts, shim_array displs, MPI_Datatype stype, void *rbuf,
                            MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, const char *name);
bool shim_alltoall_by_shoal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                            MPI_Datatype rtype, MPI_Comm comm, const char *name);
bool shim_alltoallv_by_shoal(const void *sbuf, shim_array scounts, shim_array sdispls, MPI_Datatype stype, void *rbuf,
                             shim_array rcounts, shim_array rdispls, MPI_Datatype rtype, MPI_Comm comm,
                             const char *name);

#endif
