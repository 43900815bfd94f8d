/* shim_bindings: the MPI_* entry points of the collectives shoal
 * intercepts, MPI_Comm_free, and those that make and free RMA windows
 * (counted: shim_after_collective). Each collective runs its path
 * (shim_<name>_by_shoal, shim_coll.c) and, when that returns false having
 * done nothing, calls the host's PMPI_* with its arguments unchanged.
 *
 * A collective's two bindings have one shape: the classic one (int counts
 * and displacements) and MPI-4's large-count MPI_<Name>_c (MPI_Count counts,
 * MPI_Aint displacements), where the host has it. So each shape is written
 * once, as a macro of the binding's suffix and types, and ALL_BINDINGS
 * defines every collective's entry point for one binding.
 *
 * May call: every lower layer, and PMPI. */
#include <mpi.h>

#include "shim_bytes.h"
#include "shim_coll.h"
#include "shim_comm.h"
#include "shim_init.h"
#include "thread.h"

int MPI_Barrier(MPI_Comm comm)
{
    if (thread_owns(comm))
        return thread_MPI_Barrier(comm);
    if (shim_barrier_by_shoal(comm, "MPI_Barrier")) {
        shim_after_collective();
        return MPI_SUCCESS;
    }
    return PMPI_Barrier(comm);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    thread_comm *tc = comm ? thread_owns(*comm) : NULL;
    if (tc)
        return thread_comm_free_handle(tc, comm);
    if (shim_active && comm)
        shim_comm_forget(*comm);
    return PMPI_Comm_free(comm);
}

/* Windows, counted: a window made by the host's own Fortran binding (Open
 * MPI's, which calls PMPI_*) is not, and freeing one never counts below 0.
 * On a thread communicator they are refused: the host would make a window
 * from several threads of one process at once. */
#define REFUSE_ON_THREAD_COMM(name)          \
    do {                                     \
        thread_comm *tc = thread_owns(comm); \
        if (tc)                              \
            return thread_refuse(tc, name);  \
    } while (0)

static int counted_window(int rc)
{
    if (rc == MPI_SUCCESS)
        atomic_fetch_add_explicit(&shim_open_windows, 1, memory_order_relaxed);
    return rc;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_create");
    return counted_window(PMPI_Win_create(base, size, disp_unit, info, comm, win));
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_allocate");
    return counted_window(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_allocate_shared");
    return counted_window(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_create_dynamic");
    return counted_window(PMPI_Win_create_dynamic(info, comm, win));
}

#if MPI_VERSION >= 4
int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_create_c");
    return counted_window(PMPI_Win_create_c(base, size, disp_unit, info, comm, win));
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_allocate_c");
    return counted_window(PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win));
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win)
{
    REFUSE_ON_THREAD_COMM("MPI_Win_allocate_shared_c");
    return counted_window(PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win));
}
#endif

int MPI_Win_free(MPI_Win *win)
{
    int rc = PMPI_Win_free(win);
    int open = atomic_load_explicit(&shim_open_windows, memory_order_relaxed);
    while (rc == MPI_SUCCESS && open > 0 &&
           !atomic_compare_exchange_weak_explicit(&shim_open_windows, &open, open - 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
    return rc;
}

/* Defines Name (MPI_<Name> and suffix S: empty or _c) with these params:
 * a thread communicator's call to the thread layer (thread_<Name>), else
 * shoal's path for the call (by_shoal, given the entry point's name for
 * messages), else PMPI_<Name> with args. */
#define ENTRY_POINT(Name, S, params, by_shoal, args) \
    int Name##S params                               \
    {                                                \
        if (thread_owns(comm))                       \
            return thread_##Name##S args;            \
        if (by_shoal) {                              \
            shim_after_collective();                 \
            return MPI_SUCCESS;                      \
        }                                            \
        return P##Name##S args;                      \
    }

/* The shapes. S: the binding's suffix; C: the type of a single count; CA and
 * DA: the element types of count and displacement arrays; CW and DW: what
 * makes a shim_array of each. */

#define BCAST(S, C)                                                                             \
    ENTRY_POINT(MPI_Bcast, S, (void *buf, C count, MPI_Datatype type, int root, MPI_Comm comm), \
                shim_bcast_by_shoal(buf, count, type, root, comm, "MPI_Bcast" #S), (buf, count, type, root, comm))

#define REDUCE(S, C)                                                                                            \
    ENTRY_POINT(MPI_Reduce, S,                                                                                  \
                (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm), \
                shim_reduce_by_shoal(sbuf, rbuf, count, type, op, root, comm, "MPI_Reduce" #S),                 \
                (sbuf, rbuf, count, type, op, root, comm))

#define ALLREDUCE(S, C)                                                                               \
    ENTRY_POINT(MPI_Allreduce, S,                                                                     \
                (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), \
                shim_allreduce_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Allreduce" #S),       \
                (sbuf, rbuf, count, type, op, comm))

#define REDUCE_SCATTER_BLOCK(S, C)                                                                                    \
    ENTRY_POINT(MPI_Reduce_scatter_block, S,                                                                          \
                (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),                 \
                shim_reduce_scatter_block_by_shoal(sbuf, rbuf, count, type, op, comm, "MPI_Reduce_scatter_block" #S), \
                (sbuf, rbuf, count, type, op, comm))

#define REDUCE_SCATTER(S, CA, CW)                                                                                \
    ENTRY_POINT(MPI_Reduce_scatter, S,                                                                           \
                (const void *sbuf, void *rbuf, const CA rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm), \
                shim_reduce_scatter_by_shoal(sbuf, rbuf, CW(rcounts), type, op, comm, "MPI_Reduce_scatter" #S),  \
                (sbuf, rbuf, rcounts, type, op, comm))

/* inclusive: MPI_Scan; else MPI_Exscan. */
#define SCAN(Name, S, C, inclusive)                                                                            \
    ENTRY_POINT(Name, S, (const void *sbuf, void *rbuf, C count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), \
                shim_scan_by_shoal(sbuf, rbuf, count, type, op, comm, inclusive, #Name #S),                    \
                (sbuf, rbuf, count, type, op, comm))

#define GATHER(S, C)                                                                                                 \
    ENTRY_POINT(MPI_Gather, S,                                                                                       \
                (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, int root, \
                 MPI_Comm comm),                                                                                     \
                shim_gather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Gather" #S),         \
                (sbuf, scount, stype, rbuf, rcount, rtype, root, comm))

#define GATHERV(S, C, CA, DA, CW, DW)                                                                               \
    ENTRY_POINT(MPI_Gatherv, S,                                                                                     \
                (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[], const DA displs[], \
                 MPI_Datatype rtype, int root, MPI_Comm comm),                                                      \
                shim_gatherv_by_shoal(sbuf, scount, stype, rbuf, CW(rcounts), DW(displs), rtype, root, comm,        \
                                      "MPI_Gatherv" #S),                                                            \
                (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))

#define ALLGATHER(S, C)                                                                                            \
    ENTRY_POINT(                                                                                                   \
        MPI_Allgather, S,                                                                                          \
        (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, MPI_Comm comm), \
        shim_allgather_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Allgather" #S),               \
        (sbuf, scount, stype, rbuf, rcount, rtype, comm))

#define ALLGATHERV(S, C, CA, DA, CW, DW)                                                                            \
    ENTRY_POINT(MPI_Allgatherv, S,                                                                                  \
                (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, const CA rcounts[], const DA displs[], \
                 MPI_Datatype rtype, MPI_Comm comm),                                                                \
                shim_allgatherv_by_shoal(sbuf, scount, stype, rbuf, CW(rcounts), DW(displs), rtype, comm,           \
                                         "MPI_Allgatherv" #S),                                                      \
                (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm))

#define SCATTER(S, C)                                                                                                \
    ENTRY_POINT(MPI_Scatter, S,                                                                                      \
                (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, int root, \
                 MPI_Comm comm),                                                                                     \
                shim_scatter_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, "MPI_Scatter" #S),       \
                (sbuf, scount, stype, rbuf, rcount, rtype, root, comm))

#define SCATTERV(S, C, CA, DA, CW, DW)                                                                              \
    ENTRY_POINT(MPI_Scatterv, S,                                                                                    \
                (const void *sbuf, const CA scounts[], const DA displs[], MPI_Datatype stype, void *rbuf, C rcount, \
                 MPI_Datatype rtype, int root, MPI_Comm comm),                                                      \
                shim_scatterv_by_shoal(sbuf, CW(scounts), DW(displs), stype, rbuf, rcount, rtype, root, comm,       \
                                       "MPI_Scatterv" #S),                                                          \
                (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))

#define ALLTOALL(S, C)                                                                                             \
    ENTRY_POINT(                                                                                                   \
        MPI_Alltoall, S,                                                                                           \
        (const void *sbuf, C scount, MPI_Datatype stype, void *rbuf, C rcount, MPI_Datatype rtype, MPI_Comm comm), \
        shim_alltoall_by_shoal(sbuf, scount, stype, rbuf, rcount, rtype, comm, "MPI_Alltoall" #S),                 \
        (sbuf, scount, stype, rbuf, rcount, rtype, comm))

#define ALLTOALLV(S, C, CA, DA, CW, DW)                                                                               \
    ENTRY_POINT(MPI_Alltoallv, S,                                                                                     \
                (const void *sbuf, const CA scounts[], const DA sdispls[], MPI_Datatype stype, void *rbuf,            \
                 const CA rcounts[], const DA rdispls[], MPI_Datatype rtype, MPI_Comm comm),                          \
                shim_alltoallv_by_shoal(sbuf, CW(scounts), DW(sdispls), stype, rbuf, CW(rcounts), DW(rdispls), rtype, \
                                        comm, "MPI_Alltoallv" #S),                                                    \
                (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))

/* Every collective's entry point for one binding. */
#define ALL_BINDINGS(S, C, CA, DA, CW, DW) \
    BCAST(S, C)                            \
    REDUCE(S, C)                           \
    ALLREDUCE(S, C)                        \
    REDUCE_SCATTER_BLOCK(S, C)             \
    REDUCE_SCATTER(S, CA, CW)              \
    SCAN(MPI_Scan, S, C, true)             \
    SCAN(MPI_Exscan, S, C, false)          \
    GATHER(S, C)                           \
    GATHERV(S, C, CA, DA, CW, DW)          \
    ALLGATHER(S, C)                        \
    ALLGATHERV(S, C, CA, DA, CW, DW)       \
    SCATTER(S, C)                          \
    SCATTERV(S, C, CA, DA, CW, DW)         \
    ALLTOALL(S, C)                         \
    ALLTOALLV(S, C, CA, DA, CW, DW)

/* The classic bindings. */
ALL_BINDINGS(, int, int, int, SHIM_INTS, SHIM_INTS)

/* MPI-4's large-count bindings, where the host has them. */
#if MPI_VERSION >= 4
ALL_BINDINGS(_c, MPI_Count, MPI_Count, MPI_Aint, SHIM_COUNTS, SHIM_AINTS)
#endif
