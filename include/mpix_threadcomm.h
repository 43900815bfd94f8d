/* Thread ranks: MPICH's MPIX_Threadcomm interface, served by shoal under any
 * host MPI (src/thread). Under MPICH 5, whose mpi.h declares the same
 * functions, libshoal's definitions take over the host's.
 *
 *     MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, &tcomm);  outside the parallel region
 *     #pragma omp parallel num_threads(nthreads)
 *     {
 *         MPIX_Threadcomm_start(tcomm);    every thread: its rank is its process's
 *         ... MPI calls on tcomm ...       offset plus its order of arrival here
 *         MPIX_Threadcomm_finish(tcomm);
 *     }
 *     MPIX_Threadcomm_free(&tcomm);        outside the parallel region
 *
 * The size of tcomm is the sum of every process's nthreads. */
#ifndef SHOAL_MPIX_THREADCOMM_H
#define SHOAL_MPIX_THREADCOMM_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *newthreadcomm);
int MPIX_Threadcomm_start(MPI_Comm threadcomm);
int MPIX_Threadcomm_finish(MPI_Comm threadcomm);
int MPIX_Threadcomm_free(MPI_Comm *threadcomm);

#ifdef __cplusplus
}
#endif
#endif
