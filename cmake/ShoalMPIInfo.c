/* Compiled and linked, never run, when a tree is configured
 * (cmake/HostMPI.cmake): the strings below, read back from the binary, say
 * whose mpi.h this is. The flavour decides the ABI libshoal is built for. */
#include <mpi.h>

#define SHOAL_STR_(x) #x
#define SHOAL_STR(x) SHOAL_STR_(x)

#if defined(MPI_ABI_VERSION)
/* The MPI-5 standard ABI (mpicc_abi's -DMPI_ABI): one binary runs under
 * every MPI library that implements it, whoever made the header. */
#define SHOAL_FLAVOUR "abi"
#define SHOAL_VARIANT "mpi-abi"
#define SHOAL_LIB_VERSION SHOAL_STR(MPI_ABI_VERSION) "." SHOAL_STR(MPI_ABI_SUBVERSION)
#elif defined(OPEN_MPI)
#define SHOAL_FLAVOUR "openmpi"
#define SHOAL_VARIANT "openmpi"
#define SHOAL_LIB_VERSION \
    SHOAL_STR(OMPI_MAJOR_VERSION) "." SHOAL_STR(OMPI_MINOR_VERSION) "." SHOAL_STR(OMPI_RELEASE_VERSION)
#elif defined(I_MPI_VERSION)
/* Intel MPI is MPICH's ABI under its own name. */
#define SHOAL_FLAVOUR "mpich"
#define SHOAL_VARIANT "intel"
#define SHOAL_LIB_VERSION I_MPI_VERSION
#elif defined(MVAPICH2_VERSION)
#define SHOAL_FLAVOUR "mpich"
#define SHOAL_VARIANT "mvapich"
#define SHOAL_LIB_VERSION MVAPICH2_VERSION
#elif defined(MPICH_VERSION)
#define SHOAL_FLAVOUR "mpich"
#define SHOAL_VARIANT "mpich"
#define SHOAL_LIB_VERSION MPICH_VERSION
#elif defined(MPICH_NAME)
#define SHOAL_FLAVOUR "mpich"
#define SHOAL_VARIANT "mpich"
#define SHOAL_LIB_VERSION "unknown"
#else
#define SHOAL_FLAVOUR "other"
#define SHOAL_VARIANT "other"
#define SHOAL_LIB_VERSION "MPI-" SHOAL_STR(MPI_VERSION) "." SHOAL_STR(MPI_SUBVERSION)
#endif

const char *const shoal_mpi_info[] = {"SHOAL_MPI_INFO:flavour=" SHOAL_FLAVOUR, "SHOAL_MPI_INFO:variant=" SHOAL_VARIANT,
                                      "SHOAL_MPI_INFO:version=" SHOAL_LIB_VERSION};

int main(int argc, char **argv)
{
    (void)argv;
    return shoal_mpi_info[argc % 3][0];
}
