/* shim_thread.h: what the MPI entry points for thread communicators
 * (shim_thread.c, shim_thread_mpi4.c, shim_thread_refused.c) share.
 *
 * May call: the thread layer, and PMPI. */
#ifndef SHOAL_SHIM_THREAD_H
#define SHOAL_SHIM_THREAD_H

#include <limits.h>
#include <mpi.h>

#include "thread.h"

/* A call shoal does not serve on a thread communicator: on one, an error
 * through its error handler; the host would take it for the process ranks
 * under the handle, several threads at once. Any other communicator's goes
 * to the host unchanged. */
#define REFUSED(Name, params, args)                          \
    int Name params                                          \
    {                                                        \
        thread_comm *tc = thread_owns(comm);                 \
        return tc ? thread_refuse(tc, #Name) : P##Name args; \
    }

/* A large-count binding's count that the int binding's path takes. */
#define FITS(count) ((count) >= 0 && (count) <= INT_MAX)

/* MPI-4's persistent collectives, partitioned communication and
 * MPI_Isendrecv: in MPICH 4 and later, and in Open MPI 5 (which says
 * MPI 3.1). */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define SHOAL_HOST_HAS_MPI4_CALLS 1
#endif

#endif
