/* Fortran entry points, where the host MPI's own Fortran bindings would
 * not reach the C functions shoal intercepts.
 *
 * - Open MPI 4.1: mpif.h, `use mpi` and `use mpi_f08` all end in
 *   ompi_<name>_f, which calls PMPI_<Name> directly. shoal defines
 *   ompi_<name>_f, and the mpi_<name>_ spellings that alias it, for every
 *   function it intercepts. Each does what the host's does (handles through
 *   PMPI_*_f2c; the Fortran MPI_IN_PLACE and MPI_BOTTOM markers to the C
 *   ones, on the same arguments; the error code into ierr) and then calls
 *   shoal's C entry point, which handles the call or passes it to PMPI as
 *   for a C program.
 * - MPICH 4.0: its Fortran bindings call MPI_<Name>, except those of
 *   `use mpi_f08` without a choice buffer, which call PMPI_<Name>: shoal
 *   defines MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Comm_free and
 *   MPI_Barrier there, as gfortran names them (mpi_<name>_f08_).
 *
 * - The MPI-5 standard ABI (mpi_abi.h) and other MPIs: none. The ABI's C
 *   header has no Fortran handle type (MPI_Fint); its Fortran bindings are
 *   the implementation's own.
 *
 * Initialisation, finalisation and MPI_Comm_free run the host's own binding
 * (the next definition of the same symbol) with shoal's part before or after
 * it, so whatever the host does for Fortran still happens. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "shim_comm.h"
#include "shim_init.h"

#if defined(OPEN_MPI) || defined(MPICH)

/* The host's definition of a Fortran entry point shoal also defines, looked
 * up once. */
static void *host_binding(const char *name, void *_Atomic *cache)
{
    void *fn = atomic_load_explicit(cache, memory_order_relaxed);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        if (!fn)
            core_fatal("the host MPI's Fortran entry point %s is not loaded after libshoal", name);
        atomic_store_explicit(cache, fn, memory_order_relaxed);
    }
    return fn;
}

#define HOST(type, name)                     \
    ({                                       \
        static void *_Atomic cache_;         \
        (type *)host_binding(name, &cache_); \
    })

/* After the host's Fortran MPI_Init*: shoal starts as after C's. */
static void start_if_initialized(void)
{
    int flag = 0;
    PMPI_Initialized(&flag);
    if (flag)
        shim_start();
}

/* Fortran handles, passed by reference, as C's. */
#define COMM(f) PMPI_Comm_f2c(*(f))
#define TYPE(f) PMPI_Type_f2c(*(f))
#define OP(f) PMPI_Op_f2c(*(f))

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) /* an absent optional argument in mpi_f08 */
        *ierr = (MPI_Fint)rc;
}

/* The host's bindings that shoal runs with its own part before or after. */
typedef void fortran_ierr_fn(MPI_Fint *ierr);
typedef void fortran_init_thread_fn(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
typedef void fortran_comm_free_fn(MPI_Fint *comm, MPI_Fint *ierr);

static void init_via(fortran_ierr_fn *host, MPI_Fint *ierr)
{
    host(ierr);
    start_if_initialized();
}

static void init_thread_via(fortran_init_thread_fn *host, MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    host(required, provided, ierr);
    start_if_initialized();
}

static void finalize_via(fortran_ierr_fn *host, MPI_Fint *ierr)
{
    shim_stop();
    host(ierr);
}

/* A Fortran handle is an integer in either binding (mpi_f08's MPI_Comm
 * holds just that integer). */
static void comm_free_via(fortran_comm_free_fn *host, MPI_Fint *comm, MPI_Fint *ierr)
{
    if (shim_active && comm)
        shim_comm_forget(COMM(comm));
    host(comm, ierr);
}

static void barrier_of(MPI_Fint *comm, MPI_Fint *ierr) { set_ierr(ierr, MPI_Barrier(COMM(comm))); }

#if defined(OPEN_MPI)

/* ---- Open MPI: MPI_IN_PLACE and MPI_BOTTOM from Fortran ---- */

/* Fortran passes these markers by address: common blocks whose symbol name
 * depends on the compiler's convention, so every spelling the host may
 * define is a marker. */
#define MARKER_NAMES(lower, upper)          \
    {                                       \
        upper, lower, lower "_", lower "__" \
    }
static const void *in_place_markers[4], *bottom_markers[4];
static pthread_once_t markers_once = PTHREAD_ONCE_INIT;

static void find_markers(void)
{
    static const char *in_place[4] = MARKER_NAMES("mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE");
    static const char *bottom[4] = MARKER_NAMES("mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM");
    for (int i = 0; i < 4; i++) {
        in_place_markers[i] = dlsym(RTLD_DEFAULT, in_place[i]);
        bottom_markers[i] = dlsym(RTLD_DEFAULT, bottom[i]);
    }
}

static bool is_marker(const void *const markers[4], const void *buf)
{
    pthread_once(&markers_once, find_markers);
    for (int i = 0; i < 4; i++)
        if (markers[i] && buf == markers[i])
            return true;
    return false;
}

/* A buffer that may be MPI_BOTTOM. */
static void *f2c_bottom(void *buf) { return is_marker(bottom_markers, buf) ? MPI_BOTTOM : buf; }

/* A buffer that may be MPI_IN_PLACE or MPI_BOTTOM. */
static void *f2c_in_place(void *buf) { return is_marker(in_place_markers, buf) ? MPI_IN_PLACE : f2c_bottom(buf); }

/* Fortran INTEGER arrays are read as C int arrays where the two agree;
 * elsewhere the v-variants go to the host's binding. */
#define FINT_IS_INT (sizeof(MPI_Fint) == sizeof(int))

/* ompi_<lower>_f and its aliases mpi_<lower>_, mpi_<lower>__ and
 * MPI_<UPPER>; the body follows. The host also defines mpi_<lower> (for
 * compilers that add no underscore, such as IBM XL): shoal does not, because
 * a C program's own helper of that name (mpi_init, mpi_barrier) in a shared
 * library would bind to it. Such compilers' calls go to the host. */
#define ALIAS(name, target, params) void name params __attribute__((alias(#target)))
#define FORTRAN_ENTRY(lower, UPPER, params)           \
    void ompi_##lower##_f params;                     \
    ALIAS(mpi_##lower##_, ompi_##lower##_f, params);  \
    ALIAS(mpi_##lower##__, ompi_##lower##_f, params); \
    ALIAS(MPI_##UPPER, ompi_##lower##_f, params);     \
    void ompi_##lower##_f params

/* ---- initialisation, finalisation, communicators ---- */

FORTRAN_ENTRY(init, INIT, (MPI_Fint * ierr)) { init_via(HOST(fortran_ierr_fn, "ompi_init_f"), ierr); }

FORTRAN_ENTRY(init_thread, INIT_THREAD, (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr))
{
    init_thread_via(HOST(fortran_init_thread_fn, "ompi_init_thread_f"), required, provided, ierr);
}

FORTRAN_ENTRY(finalize, FINALIZE, (MPI_Fint * ierr)) { finalize_via(HOST(fortran_ierr_fn, "ompi_finalize_f"), ierr); }

FORTRAN_ENTRY(comm_free, COMM_FREE, (MPI_Fint * comm, MPI_Fint *ierr))
{
    comm_free_via(HOST(fortran_comm_free_fn, "ompi_comm_free_f"), comm, ierr);
}

/* ---- collectives ---- */

FORTRAN_ENTRY(barrier, BARRIER, (MPI_Fint * comm, MPI_Fint *ierr)) { barrier_of(comm, ierr); }

FORTRAN_ENTRY(bcast, BCAST,
              (char *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Bcast(f2c_bottom(buf), (int)*count, TYPE(type), (int)*root, COMM(comm)));
}

FORTRAN_ENTRY(reduce, REDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *ierr))
{
    set_ierr(ierr,
             MPI_Reduce(f2c_in_place(sbuf), f2c_bottom(rbuf), (int)*count, TYPE(type), OP(op), (int)*root, COMM(comm)));
}

FORTRAN_ENTRY(allreduce, ALLREDUCE,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Allreduce(f2c_in_place(sbuf), f2c_bottom(rbuf), (int)*count, TYPE(type), OP(op), COMM(comm)));
}

FORTRAN_ENTRY(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Reduce_scatter_block(f2c_in_place(sbuf), f2c_bottom(rbuf), (int)*count, TYPE(type), OP(op),
                                            COMM(comm)));
}

FORTRAN_ENTRY(scan, SCAN,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Scan(f2c_in_place(sbuf), f2c_bottom(rbuf), (int)*count, TYPE(type), OP(op), COMM(comm)));
}

FORTRAN_ENTRY(exscan, EXSCAN,
              (char *sbuf, char *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Exscan(f2c_in_place(sbuf), f2c_bottom(rbuf), (int)*count, TYPE(type), OP(op), COMM(comm)));
}

typedef void fortran_reduce_scatter_fn(char *, char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
FORTRAN_ENTRY(reduce_scatter, REDUCE_SCATTER,
              (char *sbuf, char *rbuf, MPI_Fint *rcounts, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
{
    if (!FINT_IS_INT) {
        HOST(fortran_reduce_scatter_fn, "ompi_reduce_scatter_f")(sbuf, rbuf, rcounts, type, op, comm, ierr);
        return;
    }
    set_ierr(ierr, MPI_Reduce_scatter(f2c_in_place(sbuf), f2c_bottom(rbuf), (const int *)rcounts, TYPE(type), OP(op),
                                      COMM(comm)));
}

FORTRAN_ENTRY(gather, GATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Gather(f2c_in_place(sbuf), (int)*scount, TYPE(stype), f2c_bottom(rbuf), (int)*rcount,
                              TYPE(rtype), (int)*root, COMM(comm)));
}

typedef void fortran_gatherv_fn(char *, MPI_Fint *, MPI_Fint *, char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                MPI_Fint *, MPI_Fint *);
FORTRAN_ENTRY(gatherv, GATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    if (!FINT_IS_INT) {
        HOST(fortran_gatherv_fn, "ompi_gatherv_f")(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, ierr);
        return;
    }
    set_ierr(ierr, MPI_Gatherv(f2c_in_place(sbuf), (int)*scount, TYPE(stype), f2c_bottom(rbuf), (const int *)rcounts,
                               (const int *)displs, TYPE(rtype), (int)*root, COMM(comm)));
}

FORTRAN_ENTRY(allgather, ALLGATHER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
               MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Allgather(f2c_in_place(sbuf), (int)*scount, TYPE(stype), f2c_bottom(rbuf), (int)*rcount,
                                 TYPE(rtype), COMM(comm)));
}

typedef void fortran_allgatherv_fn(char *, MPI_Fint *, MPI_Fint *, char *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                   MPI_Fint *, MPI_Fint *);
FORTRAN_ENTRY(allgatherv, ALLGATHERV,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
               MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr))
{
    if (!FINT_IS_INT) {
        HOST(fortran_allgatherv_fn, "ompi_allgatherv_f")(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr);
        return;
    }
    set_ierr(ierr, MPI_Allgatherv(f2c_in_place(sbuf), (int)*scount, TYPE(stype), f2c_bottom(rbuf), (const int *)rcounts,
                                  (const int *)displs, TYPE(rtype), COMM(comm)));
}

/* Scatter's MPI_IN_PLACE is the receive buffer. */
FORTRAN_ENTRY(scatter, SCATTER,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Scatter(f2c_bottom(sbuf), (int)*scount, TYPE(stype), f2c_in_place(rbuf), (int)*rcount,
                               TYPE(rtype), (int)*root, COMM(comm)));
}

typedef void fortran_scatterv_fn(char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, char *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                 MPI_Fint *, MPI_Fint *);
FORTRAN_ENTRY(scatterv, SCATTERV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount,
               MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
{
    if (!FINT_IS_INT) {
        HOST(fortran_scatterv_fn, "ompi_scatterv_f")
        (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, ierr);
        return;
    }
    set_ierr(ierr, MPI_Scatterv(f2c_bottom(sbuf), (const int *)scounts, (const int *)displs, TYPE(stype),
                                f2c_in_place(rbuf), (int)*rcount, TYPE(rtype), (int)*root, COMM(comm)));
}

FORTRAN_ENTRY(alltoall, ALLTOALL,
              (char *sbuf, MPI_Fint *scount, MPI_Fint *stype, char *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
               MPI_Fint *comm, MPI_Fint *ierr))
{
    set_ierr(ierr, MPI_Alltoall(f2c_in_place(sbuf), (int)*scount, TYPE(stype), f2c_bottom(rbuf), (int)*rcount,
                                TYPE(rtype), COMM(comm)));
}

typedef void fortran_alltoallv_fn(char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, char *, MPI_Fint *, MPI_Fint *,
                                  MPI_Fint *, MPI_Fint *, MPI_Fint *);
FORTRAN_ENTRY(alltoallv, ALLTOALLV,
              (char *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, char *rbuf, MPI_Fint *rcounts,
               MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr))
{
    if (!FINT_IS_INT) {
        HOST(fortran_alltoallv_fn, "ompi_alltoallv_f")
        (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr);
        return;
    }
    set_ierr(ierr,
             MPI_Alltoallv(f2c_in_place(sbuf), (const int *)scounts, (const int *)sdispls, TYPE(stype),
                           f2c_bottom(rbuf), (const int *)rcounts, (const int *)rdispls, TYPE(rtype), COMM(comm)));
}

#elif defined(MPICH)

void mpi_init_f08_(MPI_Fint *ierr);
void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
void mpi_finalize_f08_(MPI_Fint *ierr);
void mpi_comm_free_f08_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr);

void mpi_init_f08_(MPI_Fint *ierr) { init_via(HOST(fortran_ierr_fn, "mpi_init_f08_"), ierr); }

void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    init_thread_via(HOST(fortran_init_thread_fn, "mpi_init_thread_f08_"), required, provided, ierr);
}

void mpi_finalize_f08_(MPI_Fint *ierr) { finalize_via(HOST(fortran_ierr_fn, "mpi_finalize_f08_"), ierr); }

void mpi_comm_free_f08_(MPI_Fint *comm, MPI_Fint *ierr)
{
    comm_free_via(HOST(fortran_comm_free_fn, "mpi_comm_free_f08_"), comm, ierr);
}

void mpi_barrier_f08_(MPI_Fint *comm, MPI_Fint *ierr) { barrier_of(comm, ierr); }

#endif

#endif /* OPEN_MPI || MPICH */
