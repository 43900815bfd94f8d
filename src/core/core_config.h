/* core_config: every SHOAL_* environment variable, parsed once.
 *
 * The table in README.md ("Configuration") documents each one; keep the two
 * in step. A malformed value is reported once and its default used. */
#ifndef SHOAL_CORE_CONFIG_H
#define SHOAL_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Collectives shoal intercepts, as bits for SHOAL_DISABLE_COLL. */
typedef enum {
    CORE_COLL_BARRIER,
    CORE_COLL_BCAST,
    CORE_COLL_REDUCE,
    CORE_COLL_ALLREDUCE,
    CORE_COLL_GATHER,
    CORE_COLL_GATHERV,
    CORE_COLL_ALLGATHER,
    CORE_COLL_ALLGATHERV,
    CORE_COLL_SCATTER,
    CORE_COLL_SCATTERV,
    CORE_COLL_ALLTOALL,
    CORE_COLL_ALLTOALLV,
    CORE_COLL_REDUCE_SCATTER_BLOCK,
    CORE_COLL_REDUCE_SCATTER,
    CORE_COLL_COUNT
} core_coll;

const char *core_coll_name(core_coll c);
/* -1 when the name is not a collective. */
int core_coll_from_name(const char *name);

typedef enum { CORE_CMA_AUTO, CORE_CMA_OFF } core_cma_mode;

/* A communicator's state (a shared-memory segment with every page reserved)
 * costs about half a millisecond to build and free at 2 ranks, more with
 * more: communicators used for a handful of collectives are cheaper left to
 * the host MPI. MPICH waits for 5 calls before its shared-memory collectives
 * for the same reason. */
#define CORE_COMM_WARMUP_DEFAULT 8

typedef struct core_config {
    bool disabled;           /* SHOAL_DISABLE=1: pure pass-through */
    unsigned disabled_colls; /* SHOAL_DISABLE_COLL=bcast,allreduce,... */
    int verbose;             /* SHOAL_VERBOSE=0|1|2 */
    size_t shm_size;         /* SHOAL_SHM_SIZE, bytes per node segment; 0 = automatic */
    core_cma_mode cma;       /* SHOAL_CMA=auto|off */
    long spin;               /* SHOAL_SPIN: polls before yielding; -1 = automatic */
    double timeout_s;        /* SHOAL_TIMEOUT: abort after this long without progress; 0 = never */
    long comm_warmup;        /* SHOAL_COMM_WARMUP: a communicator's collectives left to the host before
                                    shoal builds its state */
    char lanes[64];          /* SHOAL_LANES: force a lane ("cells", "cma"); empty = planner */
    char algo[256];          /* SHOAL_ALGO: "coll:algo,..." forced algorithms; empty = planner */
    bool probe;              /* SHOAL_PROBE: without a tuning file, MPI_Init measures the node */
    uint64_t fingerprint;    /* core_config_fingerprint of the above, set at each (re)load */
} core_config;

/* A hash of the settings every rank must share, since each decides alone
 * what all must do alike: whether shoal runs, which collectives it takes
 * and from which call on, the forced choices, whether MPI_Init probes.
 * Verbosity, spinning and the timeout may differ; the segment's size is the
 * creator's, and single copy is used only where every rank can. */
uint64_t core_config_fingerprint(const core_config *c);

/* Parses the environment the first time, then returns the same object. */
const core_config *core_config_get(void);
/* Grows at each reload: whoever caches decisions taken from the
 * configuration compares it. */
unsigned core_config_generation(void);
/* Re-reads the environment (tests). */
void core_config_reload(void);

/* Parses "4096", "64K", "8M", "1G", "2T". Returns false on anything else. */
bool core_parse_size(const char *text, size_t *out);

#endif
