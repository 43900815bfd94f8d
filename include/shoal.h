/* shoal public API: what a program may call besides the MPI functions shoal
 * intercepts. Everything else in libshoal is hidden. */
#ifndef SHOAL_H
#define SHOAL_H

/* Thread ranks: MPIX_Threadcomm_init, _start, _finish, _free. */
#include "mpix_threadcomm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0" */
const char *shoal_version(void);
/* Short git commit the library was built from, stamped at each build;
 * "-dirty" appended where tracked files had uncommitted changes, "unknown"
 * outside a checkout. */
const char *shoal_commit(void);
/* 1 when shoal is active in this process (loaded and not SHOAL_DISABLE=1). */
int shoal_enabled(void);
/* What shoal did with the last collective this thread called among those
 * shoal intercepts: 1 and the algorithm and lane it chose ("sliced", "cma";
 * "cma+host" when striped), or 0 and ("host MPI", "-") when the call went to
 * the host MPI. Calls shoal never sees (MPI_Iallreduce, say) leave it as it
 * was. Either pointer may be NULL. */
int shoal_last_choice(const char **algorithm, const char **lane);

#ifdef __cplusplus
}
#endif
#endif
