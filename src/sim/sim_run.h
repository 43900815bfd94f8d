/* sim_run: experiments built from the engines: a whole all-to-all (N-1
 * uniform-stride phases, with a barrier between phases, run as independent
 * simulations in parallel threads, or without, as one run), a single pattern
 * (one stride, or a user permutation), the uniform-random load sweep and the
 * zero-load latency probe. Results are deterministic whatever the thread count.
 * Owns: sim_phase_result, sim_alltoall_result, phase scheduling over threads
 * and over MPI ranks (rank/nranks select phases; the MPI calls themselves live
 * in sim_mpi).
 * May call: sim_flit, sim_load, sim_route, sim_traffic, sim_params, pthreads. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "sim_flit.h"
#include "sim_load.h"

typedef struct {
    int phase;         /* stride (1..N-1), 0 for a free pattern */
    int simulated;     /* 1 when the flit-level engine ran it */
    int64_t msg_flits; /* flits per message */
    int64_t ideal;     /* cycles the phase would take at full link rate along its longest path */
    int64_t cycles; /* simulated cycles (barrier: from the phase start; no barrier: finish time of its last message) */
    double throughput; /* ideal / cycles (barrier mode) */
    int64_t flit_hops;
    sim_load_phase load;
} sim_phase_result;

typedef struct {
    int nphases;          /* N-1 */
    sim_phase_result *ph; /* ph[s-1] for stride s */
    int64_t *chan_flits;  /* flits per channel (sim_topo_nchan), over simulated phases */
    int64_t *chan_msgs;   /* messages per router-to-router link over all phases (topo->ninter) */
    int64_t total_cycles; /* simulated phases + barriers, or the one no-barrier run */
    int64_t ideal_sum;    /* sum of ideal over simulated phases */
    int64_t flit_hops;
    int simulated;           /* phases simulated at flit level (by this rank) */
    double mean_W;           /* mean over all phases of W_i */
    double mean_throughput;  /* mean over simulated phases of their throughput */
    double whole_throughput; /* ideal_sum / total_cycles */
    double wall_seconds;     /* flit-level part */
} sim_alltoall_result;

typedef struct {
    int flit_level;   /* 0: link-load only */
    int rank, nranks; /* this process simulates the selected phases p with (index % nranks) == rank */
} sim_run_opts;

/* Runs all-to-all under `map`. Link-load results cover every phase; flit-level
 * results cover the phases selected by p->phases (and this rank's share). */
int sim_run_alltoall(const sim_topo *t, const sim_params *p, const int32_t *map, const sim_run_opts *opts,
                     sim_alltoall_result *res, sim_err *err);
void sim_alltoall_result_free(sim_alltoall_result *res);
/* Recomputes the derived fields (means, sums) from ph[] and total cycles. */
void sim_alltoall_summarise(const sim_params *p, sim_alltoall_result *res);

/* One pattern: messages src[i] -> dst[i] of p->msg bytes, both engines.
 * chan_flits (sim_topo_nchan entries, may be NULL) receives the flit counts. */
int sim_run_pattern(const sim_topo *t, const sim_params *p, int nmsg, const int32_t *src, const int32_t *dst,
                    int flit_level, sim_phase_result *res, int64_t *chan_flits, int32_t *link_weights, sim_err *err);

/* Uniform random traffic at each offered load (threads over load points). */
int sim_run_random(const sim_topo *t, const sim_params *p, const double *loads, int nloads, sim_random_result *res,
                   sim_err *err);

/* One packet of `flits` flits from src to dst through an empty network:
 * measured latency and the pipeline formula's value, and the routers passed. */
int sim_run_zero_load(const sim_topo *t, const sim_params *p, int src, int dst, int64_t flits, int64_t *measured,
                      int64_t *formula, int *routers, sim_err *err);

#endif
