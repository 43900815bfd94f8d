/* C support for the Fortran tests, called through bind(C) interfaces
 * (tests/mpi/shoal_test.f90) with Fortran handles.
 *
 * host_<collective>: the host MPI's own result, for references. A Fortran
 * test cannot take it from the Fortran PMPI_ bindings: MPICH's (mpif.h,
 * `use mpi` and `use mpi_f08` alike) call the C MPI_ functions, which are
 * shoal's, so the "reference" would be shoal itself. These call PMPI_ in C.
 *
 * forget_last_choice: check_forget_last_choice (check_common.h), for Fortran. */
#include "check_common.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran count arrays are passed to C as they are");

#define COMM(c) MPI_Comm_f2c(*(c))
#define TYPE(t) MPI_Type_f2c(*(t))
#define OP(o) MPI_Op_f2c(*(o))

void host_allreduce(const void *s, void *r, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *op,
                    const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Allreduce(s, r, *count, TYPE(type), OP(op), COMM(comm));
}

void host_reduce(const void *s, void *r, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *op,
                 const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Reduce(s, r, *count, TYPE(type), OP(op), *root, COMM(comm));
}

void host_reduce_scatter_block(const void *s, void *r, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *op,
                               const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Reduce_scatter_block(s, r, *count, TYPE(type), OP(op), COMM(comm));
}

void host_scan(const void *s, void *r, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *op,
               const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Scan(s, r, *count, TYPE(type), OP(op), COMM(comm));
}

void host_exscan(const void *s, void *r, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *op,
                 const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Exscan(s, r, *count, TYPE(type), OP(op), COMM(comm));
}

void host_reduce_scatter(const void *s, void *r, const MPI_Fint *rcounts, const MPI_Fint *type, const MPI_Fint *op,
                         const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Reduce_scatter(s, r, rcounts, TYPE(type), OP(op), COMM(comm));
}

void host_bcast(void *buf, const MPI_Fint *count, const MPI_Fint *type, const MPI_Fint *root, const MPI_Fint *comm,
                MPI_Fint *ierr)
{
    *ierr = PMPI_Bcast(buf, *count, TYPE(type), *root, COMM(comm));
}

void host_gather(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcount,
                 const MPI_Fint *rtype, const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Gather(s, *scount, TYPE(stype), r, *rcount, TYPE(rtype), *root, COMM(comm));
}

void host_gatherv(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcounts,
                  const MPI_Fint *displs, const MPI_Fint *rtype, const MPI_Fint *root, const MPI_Fint *comm,
                  MPI_Fint *ierr)
{
    *ierr = PMPI_Gatherv(s, *scount, TYPE(stype), r, rcounts, displs, TYPE(rtype), *root, COMM(comm));
}

void host_allgather(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcount,
                    const MPI_Fint *rtype, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Allgather(s, *scount, TYPE(stype), r, *rcount, TYPE(rtype), COMM(comm));
}

void host_allgatherv(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcounts,
                     const MPI_Fint *displs, const MPI_Fint *rtype, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Allgatherv(s, *scount, TYPE(stype), r, rcounts, displs, TYPE(rtype), COMM(comm));
}

void host_scatter(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcount,
                  const MPI_Fint *rtype, const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Scatter(s, *scount, TYPE(stype), r, *rcount, TYPE(rtype), *root, COMM(comm));
}

void host_scatterv(const void *s, const MPI_Fint *scounts, const MPI_Fint *displs, const MPI_Fint *stype, void *r,
                   const MPI_Fint *rcount, const MPI_Fint *rtype, const MPI_Fint *root, const MPI_Fint *comm,
                   MPI_Fint *ierr)
{
    *ierr = PMPI_Scatterv(s, scounts, displs, TYPE(stype), r, *rcount, TYPE(rtype), *root, COMM(comm));
}

void host_alltoall(const void *s, const MPI_Fint *scount, const MPI_Fint *stype, void *r, const MPI_Fint *rcount,
                   const MPI_Fint *rtype, const MPI_Fint *comm, MPI_Fint *ierr)
{
    *ierr = PMPI_Alltoall(s, *scount, TYPE(stype), r, *rcount, TYPE(rtype), COMM(comm));
}

void host_alltoallv(const void *s, const MPI_Fint *scounts, const MPI_Fint *sdispls, const MPI_Fint *stype, void *r,
                    const MPI_Fint *rcounts, const MPI_Fint *rdispls, const MPI_Fint *rtype, const MPI_Fint *comm,
                    MPI_Fint *ierr)
{
    *ierr = PMPI_Alltoallv(s, scounts, sdispls, TYPE(stype), r, rcounts, rdispls, TYPE(rtype), COMM(comm));
}

void forget_last_choice(void) { check_forget_last_choice(); }
