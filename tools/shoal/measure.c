#include "core_sys.h"
#include "measure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "shim_comm.h"
#include "shim_probe.h"

const core_coll measure_colls[] = {
    CORE_COLL_BARRIER,   CORE_COLL_BCAST,    CORE_COLL_REDUCE,
    CORE_COLL_ALLREDUCE, CORE_COLL_GATHER,   CORE_COLL_ALLGATHER,
    CORE_COLL_SCATTER,   CORE_COLL_ALLTOALL, CORE_COLL_REDUCE_SCATTER_BLOCK,
};
const int measure_ncolls = (int)(sizeof measure_colls / sizeof measure_colls[0]);

static _Noreturn void fail_v(bool print, const char *fmt, va_list ap)
{
    if (print) {
        fprintf(stderr, "shoal: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        fflush(stderr);
        /* Give the launcher time to forward the message: MPICH's hydra,
         * under load, tore its I/O down at the abort with the line unsent. */
        struct timespec forward = {0, 300000000L};
        nanosleep(&forward, NULL);
    }
    PMPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

_Noreturn void measure_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(true, fmt, ap);
}

_Noreturn void measure_fail_all(const char *fmt, ...)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        /* Rank 0 prints and aborts; an early abort from here could have the
         * launcher kill rank 0 before its message is out. */
        struct timespec pause = {10, 0};
        nanosleep(&pause, NULL);
    }
    va_list ap;
    va_start(ap, fmt);
    fail_v(rank == 0, fmt, ap);
}

/* SHOAL_DISABLE_COLL as the user set it, or NULL: a host run sets it for
 * its collective, and every forcing puts it back. */
static char *user_disabled;
static bool user_disabled_read;

void measure_force(const char *algo_spec, const char *lane)
{
    if (!user_disabled_read) {
        const char *v = getenv("SHOAL_DISABLE_COLL");
        user_disabled = v ? strdup(v) : NULL;
        user_disabled_read = true;
    }
    if (user_disabled)
        setenv("SHOAL_DISABLE_COLL", user_disabled, 1);
    else
        unsetenv("SHOAL_DISABLE_COLL");
    if (algo_spec && *algo_spec)
        setenv("SHOAL_ALGO", algo_spec, 1);
    else
        unsetenv("SHOAL_ALGO");
    if (lane && *lane)
        setenv("SHOAL_LANES", lane, 1);
    else
        unsetenv("SHOAL_LANES");
    core_config_reload();
}

void coll_buffers_reserve(coll_buffers *b, size_t bytes, int n)
{
    size_t need = bytes * (size_t)n + 64;
    if (need <= b->size)
        return;
    coll_buffers_free(b);
    b->send = malloc(need);
    b->recv = malloc(need);
    if (!b->send || !b->recv)
        measure_fail("out of memory for %zu-byte buffers", need);
    /* Small floats: sums stay exact and finite whatever the repetitions. */
    float *f = (float *)b->send;
    for (size_t i = 0; i < need / sizeof(float); i++)
        f[i] = (float)(i % 7);
    memset(b->recv, 0, need);
    b->size = need;
}

void coll_buffers_free(coll_buffers *b)
{
    free(b->send);
    free(b->recv);
    *b = (coll_buffers){0};
}

void run_collective(MPI_Comm w, core_coll coll, size_t bytes, coll_buffers *b)
{
    if (w == MPI_COMM_NULL)
        return;
    int floats = (int)(bytes / sizeof(float)), nbytes = (int)bytes;
    switch (coll) {
    case CORE_COLL_BARRIER: MPI_Barrier(w); break;
    case CORE_COLL_BCAST: MPI_Bcast(b->send, nbytes, MPI_BYTE, 0, w); break;
    case CORE_COLL_REDUCE: MPI_Reduce(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, 0, w); break;
    case CORE_COLL_ALLREDUCE: MPI_Allreduce(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, w); break;
    case CORE_COLL_GATHER: MPI_Gather(b->send, nbytes, MPI_BYTE, b->recv, nbytes, MPI_BYTE, 0, w); break;
    case CORE_COLL_ALLGATHER: MPI_Allgather(b->send, nbytes, MPI_BYTE, b->recv, nbytes, MPI_BYTE, w); break;
    case CORE_COLL_SCATTER: MPI_Scatter(b->send, nbytes, MPI_BYTE, b->recv, nbytes, MPI_BYTE, 0, w); break;
    case CORE_COLL_ALLTOALL: MPI_Alltoall(b->send, nbytes, MPI_BYTE, b->recv, nbytes, MPI_BYTE, w); break;
    case CORE_COLL_REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(b->send, b->recv, floats, MPI_FLOAT, MPI_SUM, w);
        break;
    default: measure_fail("internal: %s is not measured", core_coll_name(coll));
    }
}

typedef struct coll_arg {
    core_coll coll;
    size_t bytes;
    coll_buffers *b;
} coll_arg;

static void coll_once(void *p)
{
    coll_arg *a = p;
    run_collective(MPI_COMM_WORLD, a->coll, a->bytes, a->b);
}

/* What a rank of a root-0 collective of `bytes` per rank reads and writes:
 * its input and its result, as lengths from the start of b->send and
 * b->recv (bcast's buffer is b->send on every rank). */
static void coll_footprint(core_coll coll, size_t bytes, int n, int rank, size_t *input, size_t *result)
{
    size_t all = bytes * (size_t)n;
    bool root = rank == 0;
    switch (coll) {
    case CORE_COLL_BCAST: *input = root ? bytes : 0, *result = root ? 0 : bytes; break;
    case CORE_COLL_REDUCE: *input = bytes, *result = root ? bytes : 0; break;
    case CORE_COLL_GATHER: *input = bytes, *result = root ? all : 0; break;
    case CORE_COLL_SCATTER: *input = root ? all : 0, *result = bytes; break;
    case CORE_COLL_ALLGATHER: *input = bytes, *result = all; break;
    case CORE_COLL_ALLTOALL: *input = all, *result = all; break;
    case CORE_COLL_REDUCE_SCATTER_BLOCK: *input = all, *result = bytes; break;
    case CORE_COLL_ALLREDUCE: *input = bytes, *result = bytes; break;
    default: *input = *result = 0; break;
    }
}

/* Per-call time of `iters` calls, each between barriers (not timed), the
 * slowest rank's average. With `fresh`, each call finds its input just
 * written and its result is read afterwards, as in a program that computes
 * what it reduces and uses what it gets (inputs rewritten with 1.0f, so
 * sums stay exact; neither the writes nor the reads are timed). Without,
 * the same buffers are left as they are, call after call: OSU's method. */
static double timed_apart_batch(coll_arg *a, long iters, bool fresh)
{
    int n = 1, rank = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t input, result;
    coll_footprint(a->coll, a->bytes, n, rank, &input, &result);
    float *in = (float *)a->b->send;
    const float *out = (const float *)(a->coll == CORE_COLL_BCAST ? a->b->send : a->b->recv);
    volatile float sink = 0;
    uint64_t spent = 0;
    if (!fresh)
        input = result = 0;
    for (long i = 0; i < iters; i++) {
        for (size_t k = 0; k < input / sizeof(float); k++)
            in[k] = 1.0f;
        PMPI_Barrier(MPI_COMM_WORLD);
        uint64_t t0 = core_now_ns();
        coll_once(a);
        spent += core_now_ns() - t0;
        float sum = 0;
        for (size_t k = 0; k < result / sizeof(float); k++)
            sum += out[k];
        sink = sum;
    }
    (void)sink;
    double mine = (double)spent / (double)iters, slowest = 0;
    PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Forces candidate c of coll and runs it once (a warm-up, and the plan
 * made); true, alike on every rank, when shoal ran it as forced. */
static bool force_candidate(core_coll coll, const plan_candidate *c, size_t bytes, coll_buffers *b, double *model_ns)
{
    char spec[96];
    snprintf(spec, sizeof spec, "%s:%s", core_coll_name(coll), plan_algo_name(c->algo));
    measure_force(spec, coll == CORE_COLL_BARRIER ? NULL : plan_lanes_label(c->lane, c->stripe));
    run_collective(MPI_COMM_WORLD, coll, bytes, b);
    const coll_ran *ran = coll_last_choice();
    int ok = ran && ran->algo == c->algo &&
             (coll == CORE_COLL_BARRIER || (ran->lane == c->lane && ran->stripe == c->stripe));
    int all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all_ok && model_ns)
        *model_ns = ran->model_ns;
    return all_ok;
}

/* The host MPI's own run of coll: shoal leaves it alone (as
 * SHOAL_DISABLE_COLL=coll does) and runs it once. */
static void force_host(core_coll coll, size_t bytes, coll_buffers *b)
{
    measure_force(NULL, NULL);
    char disabled[256];
    snprintf(disabled, sizeof disabled, "%s%s%s", user_disabled ? user_disabled : "", user_disabled ? "," : "",
             core_coll_name(coll));
    setenv("SHOAL_DISABLE_COLL", disabled, 1);
    core_config_reload();
    run_collective(MPI_COMM_WORLD, coll, bytes, b);
}

/* Calls per batch timed apart on unchanged buffers at most: a barrier
 * each makes small calls cost many times their own time, and OSU itself
 * averages 1,000 calls (9 batches of 100 here). */
#define OSU_ITERS 100

/* measure_candidates, and with `unchanged` measure_repeats: every batch
 * on the same buffers, nothing written between calls, whatever the size. */
static void time_slots(const shim_timing *o, core_coll coll, const plan_candidate *cand, int k, size_t bytes,
                       coll_buffers *b, bool *ran, double *ns, double *model_ns, double *host_ns, bool unchanged)
{
    coll_arg a = {coll, bytes, b};
    int slots = k + (host_ns != NULL); /* the host's run in the last slot */
    long iters[slots > 0 ? slots : 1];
    bool timed[slots > 0 ? slots : 1];
    for (int i = 0; i < k; i++) {
        timed[i] = ran[i] = force_candidate(coll, &cand[i], bytes, b, model_ns ? &model_ns[i] : NULL);
        if (ran[i])
            iters[i] = shim_time_iters(o, coll_once, &a, true);
    }
    if (host_ns) {
        force_host(coll, bytes, b);
        iters[k] = shim_time_iters(o, coll_once, &a, true);
        timed[k] = true;
    }
    int nb = shim_time_batches(o);
    double(*t)[SHIM_MAX_BATCHES] = malloc(sizeof *t * (size_t)(slots > 0 ? slots : 1));
    if (!t)
        measure_fail("out of memory");
    for (int r = 0; r < nb; r++)
        for (int j = 0; j < slots; j++) {
            int i = (j + r) % slots; /* each round starts elsewhere: no candidate always follows the same one */
            if (!timed[i])
                continue;
            if (i < k)
                force_candidate(coll, &cand[i], bytes, b, NULL);
            else
                force_host(coll, bytes, b);
            t[i][r] = unchanged ? timed_apart_batch(&a, iters[i] < OSU_ITERS ? iters[i] : OSU_ITERS, false)
                      : bytes >= MEASURE_FRESH_MIN ? timed_apart_batch(&a, iters[i], true)
                                                   : shim_time_batch(o, coll_once, &a, iters[i], true);
        }
    for (int i = 0; i < k; i++)
        if (ran[i])
            ns[i] = core_median(t[i], nb);
    if (host_ns)
        *host_ns = core_median(t[k], nb);
    if (unchanged && host_ns && k == 1 && ran[0]) {
        /* Shoal's against the host's round by round: a slow spell of a
         * loaded machine falls on both of a round, not on one median. */
        double ratio[SHIM_MAX_BATCHES];
        for (int r = 0; r < nb; r++)
            ratio[r] = t[0][r] / t[1][r];
        ns[0] = *host_ns * core_median(ratio, nb);
    }
    free(t);
    measure_force(NULL, NULL);
}

void measure_candidates(const shim_timing *o, core_coll coll, const plan_candidate *cand, int k, size_t bytes,
                        coll_buffers *b, bool *ran, double *ns, double *model_ns, double *host_ns)
{
    time_slots(o, coll, cand, k, bytes, b, ran, ns, model_ns, host_ns, false);
}

bool measure_repeats(const shim_timing *o, core_coll coll, const plan_candidate *cand, size_t bytes, coll_buffers *b,
                     double *ns, double *host_ns)
{
    bool ran = false;
    time_slots(o, coll, cand, 1, bytes, b, &ran, ns, NULL, host_ns, true);
    return ran;
}

plan_query world_query(shim_comm *sc, core_coll coll, size_t bytes)
{
    const coll_team *t = &sc->team;
    plan_query q = {.coll = coll,
                    .bytes = bytes,
                    .n = t->n,
                    .ppn = t->node_ranks,
                    .cores = t->node_cores,
                    .window = t->lane.stage_size};
    for (int l = 0; l < LANE_COUNT; l++)
        q.usable[l] = t->lanes[l] != NULL;
    return q;
}

int distinct_candidates(const plan_query *q, plan_candidate *out, int max)
{
    plan_candidate all[64];
    int k = plan_candidates(q, all, 64), d = 0;
    for (int i = 0; i < k; i++) {
        bool seen = false;
        for (int j = 0; j < d; j++)
            seen = seen || (out[j].algo == all[i].algo && out[j].lane == all[i].lane && out[j].stripe == all[i].stripe);
        /* Pushing is gather's single-copy variant only where the lane can put. */
        if (!seen && d < max && !(all[i].algo == PLAN_MOVE_PUSH && !lane_can(all[i].lane, LANE_CAP_PUT)))
            out[d++] = all[i];
    }
    return d;
}
