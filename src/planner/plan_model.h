/* plan_model: the measured cost model the planner prices candidates with.
 *
 * Per lane, moving s bytes while ppn processes of the node move data at once
 * takes (lane_cost in src/lanes/lane.h)
 *     latency + overhead + s * per_byte + s / (bw_dedicated + bw_shared / ppn)
 * and the machine adds a few figures of its own: the time for a post to be
 * seen by a waiting rank, the copy and reduction bandwidths of one core, and
 * the copy bandwidth of one core between buffers several times its cache
 * (a copy whose buffers only partly fit the core's cache, cache_bytes, read
 * from the machine, runs at a blend of the two).
 * When the node's processes outnumber its cores (oversubscription), each
 * mover gets cores/ppn of a core, so a transfer takes ppn/cores as long,
 * and every step in which a rank waits for one particular peer costs the
 * peer's wait for a core as well: oversub_step_ns * ppn / cores.
 * Algorithm formulas (plan.c) combine these; a calibration factor per
 * (collective, algorithm, lane, size, team size), measured by `shoal tune`,
 * corrects what the formulas leave out.
 *
 * The figures come from the tuning file ($SHOAL_TUNING_FILE, else
 * $XDG_CACHE_HOME/shoal/tuning.json, else ~/.cache/shoal/tuning.json), or
 * built-in defaults. A corrupt file, one written on another machine, or of
 * another version is reported once and ignored. */
#ifndef SHOAL_PLAN_MODEL_H
#define SHOAL_PLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "lane.h"

#define PLAN_TUNING_VERSION 10
#define PLAN_MAX_FACTORS 4096
/* Size classes of the collectives shoal tune --link times across nodes:
 * class k is 2^k to 2^(k+1)-1 bytes a rank (0 also none), as the node
 * routes count them; 40 and above are priced as 40. */
#define PLAN_LINK_CLASSES 41

/* The host MPI's own run of a collective, measured by shoal tune: its
 * time for `coll` at 2^size_b bytes (per rank or block) on a team of
 * 2^team_b ... ranks (the bucket plan_factor_key names). A time of 0: not
 * measured. */
#define PLAN_MAX_HOST_TIMES 1024
typedef struct plan_host_time {
    int coll, size_b, team_b;
    double ns; /* fresh inputs, as a program writes them ("host_ns") */
    /* The same buffers call after call, nothing written between calls, as
     * OSU's benchmarks run ("host_repeat_ns"), and shoal's own choice for
     * such a repeat timed the same way beside it ("shoal_repeat_ns"). */
    double repeat_ns, shoal_repeat_ns;
} plan_host_time;

typedef struct plan_factor {
    char key[64];  /* "allreduce/sliced/cma/b20/n4" (plan_factor_key) */
    double factor; /* measured / modelled */
} plan_factor;

/* Where a model's figures come from. */
typedef enum {
    PLAN_ORIGIN_DEFAULTS, /* built in: one machine's figures, not this one's */
    PLAN_ORIGIN_FILE,     /* the tuning file */
    PLAN_ORIGIN_MEASURED, /* measured by this job (MPI_Init's probe, shoal tune) */
} plan_model_origin;

typedef struct plan_model {
    plan_model_origin origin;
    uint64_t fingerprint; /* plan_model_fingerprint, set when the model comes into use
                                 (plan_model_get's): teams compare it at every set-up */
    lane_cost lane[LANE_COUNT];
    /* A single-copy lane's figures (lane) are timed on the bytes the
     * transfer before moved, which its reader may still cache. Bytes their
     * owner has just written cross from the owner's cache instead: these
     * are the lane's figures for them, where measured (bw_dedicated 0: not
     * measured; lane then prices fresh bytes, and lane_time estimates the
     * cache's saving on unchanged ones). */
    lane_cost lane_written[LANE_COUNT];
    double sync_ns;          /* one rank sees another's post */
    double sync_per_peer_ns; /* more per extra rank waited for */
    double oversub_step_ns;  /* a dependent step, oversubscribed, per ppn/cores */
    double copy_bw;          /* memcpy, bytes per ns, one core, in cache */
    double copy_mem_bw;      /* memcpy, bytes per ns, one core, between buffers of 4 caches each
                                 (a file without it: copy_bw, as before the figure existed) */
    double cache_bytes;      /* a core's own cache (L2), from the machine, not the file */
    double reduce_bw;        /* reduction output, bytes per ns, one core */
    /* The link between nodes, as the host MPI's point-to-point crosses it
     * for one sender per node: a message of s bytes takes
     * link_latency_ns + s / link_bw. */
    double link_latency_ns;
    double link_bw;
    double link_bw_node; /* bytes per ns a node's link carries while every rank of it sends (shoal tune
                            --link; not priced yet); 0: not measured */
    /* Collectives across nodes as shoal tune --link timed them on the
     * layout it ran on (node sizes in node order, "4,4,4,4"; "" none): per
     * collective, one letter per size class, 'h' where the host's flat run
     * was as fast or faster, 's' where shoal's two levels were, '-' not
     * timed. Where a communicator has that layout they route its calls
     * (plan_node_choose), not the prices. */
    char link_layout[256];
    char link_timed[CORE_COLL_COUNT][PLAN_LINK_CLASSES + 1];
    plan_factor factors[PLAN_MAX_FACTORS]; /* sorted by key */
    int nfactors;
    plan_host_time host[PLAN_MAX_HOST_TIMES]; /* the host's own collectives ("host_ns" in the file) */
    int nhost;
    double fit_error[LANE_COUNT]; /* relative rms error of the lane fits */
    char source[256];             /* "built-in defaults" or the file's path */
    char machine[256];            /* the file's machine description */
} plan_model;

/* Whether lane figures were set: lane_written's are zero where not measured. */
static inline bool plan_lane_measured(const lane_cost *c) { return c->bw_dedicated + c->bw_shared > 0; }

/* The model in use: read from the tuning file once, else the defaults. */
const plan_model *plan_model_get(void);
/* A hash of every figure and factor that prices a candidate: two ranks
 * whose models have the same fingerprint choose alike. */
uint64_t plan_model_fingerprint(const plan_model *m);

/* Re-reads the environment and the file (tests, shoal explain). */
void plan_model_reload(void);
/* Grows at each reload, like core_config_generation(). */
unsigned plan_model_generation(void);
/* Uses m from now on instead of what the file said (shoal tune). */
void plan_model_use(const plan_model *m);

void plan_model_defaults(plan_model *m);

/* The cache of one core (its L2; else the largest level sysfs lists, else
 * 1 MiB), bytes. */
size_t plan_core_cache_bytes(void);

/* Time for one core to copy `bytes` while the buffers it streams through
 * total `footprint` bytes: the part of the footprint its cache holds runs
 * at copy_bw, the rest at copy_mem_bw. */
double plan_copy_ns(const plan_model *m, double bytes, double footprint);

/* This machine, as tuning files record it: "<cpu model>, <n> cores". */
void plan_machine_description(char *buf, size_t len);

/* Reads a tuning file into m (starting from the defaults). Returns 0, or -1
 * with the reason in why: unreadable, corrupt, version or machine mismatch.
 * Unknown fields are ignored; missing ones keep their defaults. */
int plan_model_load(plan_model *m, const char *path, bool check_machine, char *why, size_t whylen);
/* Writes m as a tuning file for this machine. 0, or an errno value. */
int plan_model_save(const plan_model *m, const char *path);
/* Where the tuning file is looked for. */
void plan_tuning_path(char *buf, size_t len);

/* Modelled time of moving bytes on lane c with ppn movers at once, each on
 * a core of its own. */
double plan_lane_time(const lane_cost *c, double bytes, int ppn);
/* A lane's rate in GB/s (bytes per ns) for a 1 MiB transfer while ppn
 * ranks each move one: what its figures mean at that load. */
double plan_lane_rate(const lane_cost *c, int ppn);
/* Whether measured figures of a lane are implausible enough to replace by
 * builtin: a 1 MiB rate (at 2 movers, the probe's load) below a fifth of
 * a core's memcpy beyond the cache (copy_mem_bw), where the built-in
 * figures price the lane faster. A lane moves data at a sizeable share of
 * memcpy; a figure below that describes a moment of the machine (a
 * descheduled core, a neighbour's burst), not the machine. */
#define PLAN_PLAUSIBLE_SHARE_OF_COPY 0.2
bool plan_lane_implausible(const lane_cost *measured, const lane_cost *builtin, double copy_mem_bw);
/* Whether an implausible lane's rate held over repeated tries (the best,
 * best_rate, within PLAN_STEADY_SPREAD of the worst, low_rate): then it is
 * what the node does now (a VM whose cores exchange cache lines 3x slower
 * for minutes; two busy programs beside the job), not a moment of it. */
#define PLAN_STEADY_SPREAD 1.25
bool plan_lane_steady(double best_rate, double low_rate);
/* Whether one core's measured rates (copy_bw, copy_mem_bw, reduce_bw) are
 * implausible: one farther than a factor PLAN_PLAUSIBLE_CORE_SPREAD below
 * the built-in figure, or ten times that above it. A core copies and sums
 * at GB/s on any machine shoal runs on; 0.05 GB/s is a probe that met a
 * descheduled rank every time (once in CI, under TSan in a slow spell). */
#define PLAN_PLAUSIBLE_CORE_SPREAD 20.0
bool plan_core_rates_implausible(const plan_model *measured, const plan_model *builtin);
/* How much longer work takes when `movers` processes share `cores` cores
 * (cores 0: unknown, taken as enough): 1, or movers / cores. */
double plan_cpu_share(int movers, int cores);
/* What a dependent step costs beyond sync_ns when ppn processes share
 * `cores` cores: 0 unless oversubscribed. */
double plan_oversub_ns(const plan_model *m, int ppn, int cores);
/* The calibration factor for key, 1 when none was measured. */
double plan_model_factor(const plan_model *m, const char *key);
/* The same, saying whether one was measured. */
bool plan_model_find_factor(const plan_model *m, const char *key, double *factor);
void plan_model_set_factor(plan_model *m, const char *key, double factor);
/* The host MPI's time for collective c at size bucket size_b and team
 * bucket team_b (replacing one there), and its key in the file
 * ("bcast/b17/n2"). */
void plan_model_set_host_ns(plan_model *m, core_coll c, int size_b, int team_b, double ns);
/* The host's and shoal's times there on unchanged inputs (either 0: keeps
 * what was there). */
void plan_model_set_repeat_ns(plan_model *m, core_coll c, int size_b, int team_b, double host_ns, double shoal_ns);
void plan_host_key(char *buf, size_t len, const plan_host_time *t);

#endif
