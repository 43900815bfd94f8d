/* What shoal tune and shoal evaluate share: timing on every rank alike,
 * forcing a choice, running one collective through shoal's MPI entry points.
 * Every function here is collective over MPI_COMM_WORLD unless it says not. */
#ifndef SHOAL_CLI_MEASURE_H
#define SHOAL_CLI_MEASURE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "shim_comm.h"
#include "shim_probe.h"

/* Timing is the library's (shim_timing, shim_time_ns: src/mpi/shim_probe.h), over
 * MPI_COMM_WORLD: every rank starts a batch together, a batch's time is the
 * slowest rank's, the median over batches is kept, and ranks sitting out
 * sleep so that with more ranks than cores the cores go to the measured. */
static inline shim_timing measure_timing(int batches, double batch_ns)
{
    return (shim_timing){.comm = MPI_COMM_WORLD, .batches = batches, .batch_ns = batch_ns};
}

/* SHOAL_ALGO / SHOAL_LANES for the next calls (NULL or "" clears). */
void measure_force(const char *algo_spec, const char *lane);

/* Buffers large enough for one collective of `bytes` per rank on n ranks. */
typedef struct coll_buffers {
    char *send, *recv;
    size_t size;
} coll_buffers;
void coll_buffers_reserve(coll_buffers *b, size_t bytes, int n);
void coll_buffers_free(coll_buffers *b);

/* One call of coll on comm with the planner's per-rank payload `bytes`
 * (reductions: floats summed, bytes rounded down to whole floats), through
 * MPI_* so that it takes shoal's path. Root 0. Nothing on MPI_COMM_NULL. */
void run_collective(MPI_Comm comm, core_coll coll, size_t bytes, coll_buffers *b);

/* From this payload on, a collective's time depends on where its data
 * sits: measure_candidates times such calls on inputs written just before
 * each call (in the caller's cache, dirty) with the results read after, as
 * programs use collectives, rather than back to back on buffers that the
 * previous call left in cache. */
#define MEASURE_FRESH_MIN (64 * 1024)

/* Times coll of `bytes` on MPI_COMM_WORLD forced to each of the k
 * candidates in turn, their batches interleaved (a, b, c, a, b, c ...) so
 * that a slow spell of the machine falls on all of them alike. Per
 * candidate: ran[i] false, alike on every rank, when shoal did not run it
 * as forced; else ns[i] its median batch time and model_ns[i] (when
 * model_ns is not NULL) the planner's price of it. With host_ns, the host
 * MPI's own run of coll (shoal leaving it alone) is timed among them the
 * same way, its median there. Forcing is cleared afterwards. */
void measure_candidates(const shim_timing *o, core_coll coll, const plan_candidate *cand, int k, size_t bytes,
                        coll_buffers *b, bool *ran, double *ns, double *model_ns, double *host_ns);

/* Candidate cand of coll and the host MPI's own run, timed as
 * measure_candidates does but on unchanged inputs at every size, as OSU's
 * benchmarks run: the same buffers call after call, nothing written or
 * read between calls, a barrier (not timed) before each call, so that a
 * call that returns before its peers are done gains nothing by it. *host_ns is the host's median; *ns the host's
 * median times the median ratio of the two's batches round by round (a
 * slow spell falls on both of a round). False, alike on every rank, when
 * shoal did not run cand as forced (then *ns is not set). */
bool measure_repeats(const shim_timing *o, core_coll coll, const plan_candidate *cand, size_t bytes, coll_buffers *b,
                     double *ns, double *host_ns);

/* The collectives that shoal plans by size. */
extern const core_coll measure_colls[];
extern const int measure_ncolls;

/* The query the planner gets for coll on the team of sc. */
plan_query world_query(shim_comm *sc, core_coll coll, size_t bytes);

/* Most candidates a point of tune or evaluate times. */
#define MEASURE_MAX_CANDIDATES 32
/* The distinct (algorithm, lane) pairs among q's candidates; returns how many. */
int distinct_candidates(const plan_query *q, plan_candidate *out, int max);

/* A fatal error seen by this rank alone: printed here, then the job aborts. */
_Noreturn void measure_fail(const char *fmt, ...);
/* A fatal error every rank reaches together: printed once, by rank 0. */
_Noreturn void measure_fail_all(const char *fmt, ...);

#endif
