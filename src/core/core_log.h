/* core_log: messages to stderr, each prefixed "shoal[<rank>]".
 *
 * Levels: errors always print; warnings print once per key; SHOAL_VERBOSE=1
 * adds each decision once (core_log_decision), SHOAL_VERBOSE=2 everything. */
#ifndef SHOAL_CORE_LOG_H
#define SHOAL_CORE_LOG_H

#include <stdarg.h>

#define CORE_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Rank shown in every message; -1 until the MPI layer knows it. */
void core_log_set_rank(int rank);
void core_log_set_verbosity(int level);
int core_log_verbosity(void);

void core_log_error(const char *fmt, ...) CORE_PRINTF(1, 2);
/* Prints when SHOAL_VERBOSE >= 1, once per distinct formatted message. */
void core_log_once(const char *fmt, ...) CORE_PRINTF(1, 2);
/* Prints when SHOAL_VERBOSE >= level. */
void core_log_debug(int level, const char *fmt, ...) CORE_PRINTF(2, 3);
/* A warning shown at most once per process whatever the verbosity. */
void core_log_warn_once(const char *fmt, ...) CORE_PRINTF(1, 2);

/* What core_fatal calls after printing; the MPI layer installs an abort of
 * the job. Without one, the process exits with status 1. */
typedef void (*core_fatal_handler)(void);
void core_set_fatal_handler(core_fatal_handler handler);
_Noreturn void core_fatal(const char *fmt, ...) CORE_PRINTF(1, 2);

/* Before a job is aborted: flushes stdout and stderr and waits a moment so
 * the launcher forwards what was printed. Hydra (MPICH) tears the job down
 * on MPI_Abort without draining the ranks' pipes, and the message that said
 * why was lost about one run in 40. */
void core_log_settle(void);

#endif
