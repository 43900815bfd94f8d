/* core_config: every SHOAL_* environment variable the library reads, in one
 * table (core_settings: name, kind, default, range, documentation, whether
 * ranks must agree on it) that parses, validates and documents them.
 * README.md's Configuration table is `shoal settings --markdown`, and a test
 * checks the two agree. A malformed value is reported once and its default
 * used.
 *
 * A new setting: a field of core_config and a row of the table in
 * core_config.c; nothing else parses it.
 *
 * May call: core_log, core_sys, libc. */
#ifndef SHOAL_CORE_CONFIG_H
#define SHOAL_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    CORE_COLL_SCAN,
    CORE_COLL_EXSCAN,
    CORE_COLL_COUNT
} core_coll;

const char *core_coll_name(core_coll c);
/* -1 when the name is not a collective. */
int core_coll_from_name(const char *name);

typedef enum { CORE_CMA_AUTO, CORE_CMA_OFF } core_cma_mode;
/* Who receives a bcast for a node across nodes: as the planner says, the
 * node's fixed leader, or its first rank to arrive. */
/* Communicators spanning nodes: left to the host MPI; two levels where
 * they are priced cheaper than the host's flat run; two levels always. */
typedef enum { CORE_ACROSS_NODES_OFF, CORE_ACROSS_NODES_PRICED, CORE_ACROSS_NODES_TWO } core_across_nodes;
typedef enum { CORE_CLIQUES_MODULO, CORE_CLIQUES_BLOCKS } core_clique_order;
typedef enum {
    CORE_NODE_BCAST_AUTO,
    CORE_NODE_BCAST_LEADER,
    CORE_NODE_BCAST_FIRST,
    CORE_NODE_BCAST_RAILS
} core_node_bcast;
/* How a reduce or an allreduce crosses nodes: as the planner prices it,
 * through each node's leader, or on rails (every rank of a node owns a
 * slice). */
typedef enum { CORE_NODE_FORM_AUTO, CORE_NODE_FORM_LEADERS, CORE_NODE_FORM_RAILS } core_node_form;

/* A communicator's state (a shared-memory segment with every page reserved)
 * costs about half a millisecond to build and free at 2 ranks, more with
 * more: communicators used for a handful of collectives are cheaper left to
 * the host MPI. MPICH waits for 5 calls before its shared-memory collectives
 * for the same reason. */
#define CORE_COMM_WARMUP_DEFAULT 8

typedef struct core_config {
    bool disabled;                  /* SHOAL_DISABLE=1: pure pass-through */
    unsigned disabled_colls;        /* SHOAL_DISABLE_COLL=bcast,allreduce,... */
    int verbose;                    /* SHOAL_VERBOSE=0|1|2 */
    size_t shm_size;                /* SHOAL_SHM_SIZE, bytes per node segment; 0 = automatic */
    core_cma_mode cma;              /* SHOAL_CMA=auto|off */
    long spin;                      /* SHOAL_SPIN: polls before yielding; -1 = automatic */
    double timeout_s;               /* SHOAL_TIMEOUT: abort after this long without progress; 0 = never */
    long comm_warmup;               /* SHOAL_COMM_WARMUP: a communicator's collectives left to the host before
                                    shoal builds its state */
    core_across_nodes across_nodes; /* SHOAL_ACROSS_NODES=0|1|two: communicators spanning nodes in two levels */
    long node_cliques;              /* SHOAL_NODE_CLIQUES: split each node's ranks into this many pretend nodes */
    core_clique_order clique_order; /* SHOAL_NODE_CLIQUE_ORDER: which ranks each pretend node holds */
    core_node_bcast node_bcast;     /* SHOAL_NODE_BCAST=auto|leader|first|rails */
    core_node_form node_reduce;     /* SHOAL_NODE_REDUCE=auto|leaders|rails */
    core_node_form node_allreduce;  /* SHOAL_NODE_ALLREDUCE=auto|leaders|rails */
    size_t node_segment;            /* SHOAL_NODE_SEGMENT: bytes per segment of a long message across nodes;
                                    0 = the planner's */
    char lanes[64];                 /* SHOAL_LANES: force a lane ("cells", "cma"); empty = planner */
    char algo[1024];                /* SHOAL_ALGO: "coll:algo,..." forced algorithms; empty = planner */
    char alltoall_map[1024];        /* SHOAL_ALLTOALL_MAP: a node-list file ordering the leaders' all-to-all phases */
    char tuning_file[1024];         /* SHOAL_TUNING_FILE: the cost model's figures; empty = the usual place */
    bool probe;                     /* SHOAL_PROBE: without a tuning file, MPI_Init measures the node */
    bool shmem_globals;             /* SHOAL_SHMEM_GLOBALS: OpenSHMEM PEs share their global data */
    size_t thread_handoff; /* SHOAL_THREAD_HANDOFF_BYTES: thread ranks hand a message this long over by address */
    uint64_t fingerprint;  /* core_config_fingerprint of the above, set at each (re)load */
} core_config;

/* How a setting's text is read. */
typedef enum core_setting_kind {
    CORE_SETTING_BOOL,    /* 1, yes, on, true / 0, no, off, false */
    CORE_SETTING_INT,     /* a decimal integer in [lo, hi] (a long field) */
    CORE_SETTING_SIZE,    /* bytes: 4096, 64K, 8M, 1G (a size_t field) */
    CORE_SETTING_SECONDS, /* a number >= 0 (a double field) */
    CORE_SETTING_CHOICE,  /* one of the words of its list (an int field) */
    CORE_SETTING_COLLS,   /* collective names or all, as bits (an unsigned field) */
    CORE_SETTING_TEXT,    /* kept as it is, read by its user (a char array) */
} core_setting_kind;

/* A word a CHOICE setting accepts, and the value it stands for. */
typedef struct core_setting_word {
    const char *word;
    int value;
} core_setting_word;

/* A row of the settings table. */
typedef struct core_setting {
    const char *name; /* SHOAL_... */
    core_setting_kind kind;
    size_t offset, size;            /* the core_config field it fills */
    double value;                   /* default (BOOL, INT, SIZE, SECONDS, CHOICE) */
    long lo, hi;                    /* INT: the range */
    const core_setting_word *words; /* CHOICE: accepted words, ended by a NULL word */
    const char *expects;            /* what a malformed value is told it is not */
    const char *fallback;           /* what a malformed value gives, said in the warning */
    bool shared;                    /* every rank must agree: part of the fingerprint */
    const char *default_text;       /* the default, as README says it */
    const char *description;        /* what it does, in README's words (Markdown) */
} core_setting;

/* The table, in README's order; *count rows. */
const core_setting *core_settings(int *count);
/* NULL when name is no setting. */
const core_setting *core_setting_find(const char *name);
/* The setting's value in c, as text that reads back to it ("" for an empty
 * text, "auto" for a CHOICE's first word of that value, a COLLS list as names). */
void core_setting_format(const core_setting *s, const core_config *c, char *buf, size_t len);
/* README's Configuration table, generated from the rows. */
void core_settings_markdown(FILE *out);

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
