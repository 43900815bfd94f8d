/* Invalid arguments reach the host MPI's own error checking: with
 * MPI_ERRORS_RETURN, every bad call through shoal (MPI_*) returns the same
 * error class as the same call made straight to the host (PMPI_*), and the
 * communicator still works afterwards. Also checks shoal_enabled() against
 * what the environment asks for (--expect-enabled 0|1). */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "check_common.h"

static int failures;

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static void same_class(const char *what, int shoal_rc, int host_rc)
{
    if (error_class(shoal_rc) != error_class(host_rc)) {
        failures++;
        fprintf(stderr, "%s: shoal returned class %d, the host MPI %d\n", what, error_class(shoal_rc),
                error_class(host_rc));
    }
}

static int only = -1, case_no; /* --case K runs only the K-th check */

#define BOTH(what, call_args)                                    \
    do {                                                         \
        if (only < 0 || only == case_no)                         \
            same_class(what, MPI_##call_args, PMPI_##call_args); \
        case_no++;                                               \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* MPI-4 raises an error that has no valid communicator (MPI_COMM_NULL)
     * on MPI_COMM_SELF's handler (MPICH 5 does; earlier MPIs on world's). */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int expect_enabled = -1;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--expect-enabled"))
            expect_enabled = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--case"))
            only = atoi(argv[i + 1]);
    }
    if (expect_enabled >= 0) {
        int (*enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "shoal_enabled");
        int is = enabled ? enabled() : 0;
        if (is != expect_enabled) {
            failures++;
            fprintf(stderr, "shoal_enabled() is %d, expected %d\n", is, expect_enabled);
        }
    }

    int sbuf[64] = {1}, rbuf[64 * 16];
    int counts[16], displs[16];
    for (int i = 0; i < 16; i++)
        counts[i] = 1, displs[i] = i;

    /* Warm the communicator so shoal has its state (not the first call). */
    MPI_Barrier(comm);

    BOTH("bcast count -1", Bcast(sbuf, -1, MPI_INT, 0, comm));
    BOTH("bcast root = size", Bcast(sbuf, 1, MPI_INT, size, comm));
    BOTH("bcast root -5", Bcast(sbuf, 1, MPI_INT, -5, comm));
    BOTH("bcast datatype null", Bcast(sbuf, 1, MPI_DATATYPE_NULL, 0, comm));
    BOTH("bcast comm null", Bcast(sbuf, 1, MPI_INT, 0, MPI_COMM_NULL));
    /* MPICH 4.0.2 itself crashes on a negative count in these two (an
     * assertion in its pack code), so they are compared on other MPIs only. */
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    bool host_checks_counts = !strstr(version, "MPICH");
    if (host_checks_counts)
        BOTH("allreduce count -1", Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, comm));
    else if (rank == 0)
        printf("errors_check: not comparing negative counts in allreduce and reduce_scatter_block: the host "
               "MPI crashes on them\n");
    BOTH("allreduce op null", Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, comm));
    /* MPICH 5.0.2 asserts (dt_ptr, mpir_datatype.h) in PMPI_Allreduce and
     * PMPI_Reduce_scatter on MPI_DATATYPE_NULL instead of returning
     * MPI_ERR_TYPE, shoal or not: those two are not compared there. Told
     * from the library, whose header may be the standard ABI's. */
    const char *mpich = strstr(version, "MPICH Version:");
    bool host_checks_reduce_types = !mpich || atoi(mpich + strlen("MPICH Version:")) < 5;
    if (!host_checks_reduce_types && rank == 0)
        printf("errors_check: not comparing MPI_DATATYPE_NULL in allreduce and reduce_scatter: MPICH 5 asserts "
               "on it\n");
    if (host_checks_reduce_types)
        BOTH("allreduce datatype null", Allreduce(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, comm));
    BOTH("allreduce sum on c_bool", Allreduce(sbuf, rbuf, 1, MPI_C_BOOL, MPI_SUM, comm));
    BOTH("allreduce band on double", Allreduce(sbuf, rbuf, 1, MPI_DOUBLE, MPI_BAND, comm));
    BOTH("allreduce recvbuf in place", Allreduce(sbuf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm));
    BOTH("reduce root = size", Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, size, comm));
    BOTH("reduce comm null", Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL));
    BOTH("reduce_scatter op null", Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_OP_NULL, comm));
    if (host_checks_reduce_types)
        BOTH("reduce_scatter datatype null", Reduce_scatter(sbuf, rbuf, counts, MPI_DATATYPE_NULL, MPI_SUM, comm));
    BOTH("reduce_scatter comm null", Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    if (host_checks_counts)
        BOTH("reduce_scatter_block count -1", Reduce_scatter_block(sbuf, rbuf, -1, MPI_INT, MPI_SUM, comm));
    BOTH("scan op null", Scan(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, comm));
    BOTH("scan comm null", Scan(sbuf, rbuf, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    BOTH("exscan op null", Exscan(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, comm));
    if (host_checks_reduce_types)
        BOTH("exscan datatype null", Exscan(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, comm));
    if (host_checks_counts)
        BOTH("scan count -1", Scan(sbuf, rbuf, -1, MPI_INT, MPI_SUM, comm));
    BOTH("gather root -1", Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, -1, comm));
    BOTH("gather sendcount -1", Gather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, 0, comm));
    BOTH("gatherv root = size", Gatherv(sbuf, 1, MPI_INT, rbuf, counts, displs, MPI_INT, size, comm));
    BOTH("allgather recvcount -1", Allgather(sbuf, 1, MPI_INT, rbuf, -1, MPI_INT, comm));
    BOTH("allgather datatype null", Allgather(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT, comm));
    BOTH("allgatherv datatype null", Allgatherv(sbuf, 1, MPI_INT, rbuf, counts, displs, MPI_DATATYPE_NULL, comm));
    BOTH("scatter root = size", Scatter(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, size, comm));
    BOTH("scatterv root -1", Scatterv(sbuf, counts, displs, MPI_INT, rbuf, 1, MPI_INT, -1, comm));
    BOTH("alltoall sendcount -1", Alltoall(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, comm));
    BOTH("alltoall comm null", Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_NULL));
    BOTH("alltoallv datatype null",
         Alltoallv(sbuf, counts, displs, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT, comm));
    BOTH("barrier comm null", Barrier(MPI_COMM_NULL));
#if MPI_VERSION >= 4
    /* MPI-4's large-count bindings take the same path: bad arguments reach
     * the host's own _c call. */
    MPI_Count wide_counts[16];
    MPI_Aint wide_displs[16];
    for (int i = 0; i < 16; i++)
        wide_counts[i] = 1, wide_displs[i] = i;
    BOTH("bcast_c root = size", Bcast_c(sbuf, 1, MPI_INT, size, comm));
    BOTH("bcast_c datatype null", Bcast_c(sbuf, 1, MPI_DATATYPE_NULL, 0, comm));
    BOTH("allreduce_c op null", Allreduce_c(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, comm));
    BOTH("reduce_c root -1", Reduce_c(sbuf, rbuf, 1, MPI_INT, MPI_SUM, -1, comm));
    BOTH("reduce_scatter_c op null", Reduce_scatter_c(sbuf, rbuf, wide_counts, MPI_INT, MPI_OP_NULL, comm));
    BOTH("reduce_scatter_block_c comm null", Reduce_scatter_block_c(sbuf, rbuf, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    BOTH("gather_c root = size", Gather_c(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, size, comm));
    BOTH("gatherv_c root -1", Gatherv_c(sbuf, 1, MPI_INT, rbuf, wide_counts, wide_displs, MPI_INT, -1, comm));
    BOTH("allgather_c datatype null", Allgather_c(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT, comm));
    BOTH("allgatherv_c datatype null",
         Allgatherv_c(sbuf, 1, MPI_INT, rbuf, wide_counts, wide_displs, MPI_DATATYPE_NULL, comm));
    BOTH("scatter_c root = size", Scatter_c(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, size, comm));
    BOTH("scatterv_c root -1", Scatterv_c(sbuf, wide_counts, wide_displs, MPI_INT, rbuf, 1, MPI_INT, -1, comm));
    BOTH("alltoall_c comm null", Alltoall_c(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_NULL));
    BOTH("alltoallv_c datatype null",
         Alltoallv_c(sbuf, wide_counts, wide_displs, MPI_DATATYPE_NULL, rbuf, wide_counts, wide_displs, MPI_INT, comm));
#endif

    /* The communicator still works, through shoal, after all that. */
    int one = 1, total = 0;
    int rc = MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS || total != size) {
        failures++;
        fprintf(stderr, "allreduce after the errors: rc %d, total %d of %d\n", rc, total, size);
    }
    MPI_Comm_free(&comm);

    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("errors_check: %d ranks, %d mismatches\n", size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
