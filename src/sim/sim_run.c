#include "sim_run.h"

#include "sim_traffic.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_alltoall_result_free(sim_alltoall_result *res)
{
    free(res->ph);
    free(res->chan_flits);
    free(res->chan_msgs);
    memset(res, 0, sizeof *res);
}

void sim_alltoall_summarise(const sim_params *p, sim_alltoall_result *res)
{
    double wsum = 0, tsum = 0;
    int64_t ideal = 0, cyc = 0, hops = 0;
    int sim = 0;
    for (int i = 0; i < res->nphases; i++) {
        sim_phase_result *ph = &res->ph[i];
        wsum += ph->load.W;
        if (!ph->simulated)
            continue;
        sim++;
        ideal += ph->ideal;
        cyc += ph->cycles;
        hops += ph->flit_hops;
        if (p->barrier) {
            ph->throughput = ph->cycles > 0 ? (double)ph->ideal / (double)ph->cycles : 0.0;
            tsum += ph->throughput;
        }
    }
    res->mean_W = res->nphases ? wsum / res->nphases : 0.0;
    res->simulated = sim;
    res->ideal_sum = ideal;
    res->flit_hops = hops;
    if (p->barrier) {
        res->total_cycles = sim ? cyc + p->barrier_latency * (sim - 1) : 0;
        res->mean_throughput = sim ? tsum / sim : 0.0;
    } else {
        res->mean_throughput = 0.0; /* phases overlap: only the whole run has a throughput */
    }
    res->whole_throughput = res->total_cycles > 0 ? (double)ideal / (double)res->total_cycles : 0.0;
}

/* ---- barrier mode: independent phases over a thread pool ------------------ */

typedef struct {
    const sim_topo *t;
    const sim_params *p;
    const int32_t *map;
    const int *todo; /* strides to simulate */
    int ntodo;
    sim_alltoall_result *res;
    atomic_int next;
    atomic_int failed;
    pthread_mutex_t lock;
    sim_err err;
} phase_job;

static void job_fail(phase_job *job, const sim_err *err)
{
    pthread_mutex_lock(&job->lock);
    if (!atomic_load(&job->failed)) {
        job->err = *err;
        atomic_store(&job->failed, 1);
    }
    pthread_mutex_unlock(&job->lock);
}

static void *phase_worker(void *arg)
{
    phase_job *job = arg;
    const sim_topo *t = job->t;
    const int n = t->nnodes, nchan = sim_topo_nchan(t);
    sim_err err;
    memset(&err, 0, sizeof err);
    int32_t *src = malloc(sizeof(int32_t) * (size_t)n), *dst = malloc(sizeof(int32_t) * (size_t)n);
    int64_t *flits = calloc((size_t)nchan, sizeof(int64_t));
    sim_flit_engine *e = src && dst && flits ? sim_flit_create(t, job->p, &err) : NULL;
    if (!e) {
        if (!err.msg[0])
            sim_fail(&err, SIM_ENOMEM, "out of memory starting a phase worker");
        job_fail(job, &err);
        free(src), free(dst), free(flits);
        return NULL;
    }
    for (;;) {
        if (atomic_load(&job->failed))
            break;
        int k = atomic_fetch_add(&job->next, 1);
        if (k >= job->ntodo)
            break;
        int s = job->todo[k];
        sim_flit_reset(e);
        int m = sim_stride_pairs(job->map, n, s, src, dst);
        int rc = 0;
        for (int i = 0; i < m && !rc; i++)
            rc = sim_flit_add_message(e, src[i], dst[i], job->p->msg, 0, &err) < 0;
        if (!rc)
            rc = sim_flit_run(e, &err);
        if (rc) {
            char msg[SIM_ERR_LEN];
            snprintf(msg, sizeof msg, "%s", err.msg);
            snprintf(err.msg, sizeof err.msg, "phase %d: %.3900s", s, msg);
            job_fail(job, &err);
            break;
        }
        sim_flit_stats st;
        sim_flit_get_stats(e, &st);
        sim_phase_result *ph = &job->res->ph[s - 1];
        ph->simulated = 1;
        ph->cycles = st.cycles;
        ph->flit_hops = st.flit_hops;
        const int64_t *cf = sim_flit_chan_flits(e);
        for (int c = 0; c < nchan; c++)
            flits[c] += cf[c];
    }
    pthread_mutex_lock(&job->lock);
    for (int c = 0; c < nchan; c++)
        job->res->chan_flits[c] += flits[c];
    pthread_mutex_unlock(&job->lock);
    sim_flit_destroy(e);
    free(src), free(dst), free(flits);
    return NULL;
}

static int run_phases_parallel(const sim_topo *t, const sim_params *p, const int32_t *map, const int *todo, int ntodo,
                               sim_alltoall_result *res, sim_err *err)
{
    phase_job job;
    memset(&job, 0, sizeof job);
    job.t = t;
    job.p = p;
    job.map = map;
    job.todo = todo;
    job.ntodo = ntodo;
    job.res = res;
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    pthread_mutex_init(&job.lock, NULL);
    int threads = (int)p->threads;
    if (threads > ntodo)
        threads = ntodo > 0 ? ntodo : 1;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!tid)
        return sim_fail(err, SIM_ENOMEM, "out of memory starting threads");
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[i], NULL, phase_worker, &job) != 0)
            break;
        started = i;
    }
    phase_worker(&job);
    for (int i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    pthread_mutex_destroy(&job.lock);
    if (atomic_load(&job.failed)) {
        if (err)
            *err = job.err;
        return -1;
    }
    return 0;
}

/* ---- no barrier: every phase's messages queued at once, one run ----------- */

static int run_phases_together(const sim_topo *t, const sim_params *p, const int32_t *map, const int *todo, int ntodo,
                               sim_alltoall_result *res, sim_err *err)
{
    const int n = t->nnodes;
    sim_flit_engine *e = sim_flit_create(t, p, err);
    if (!e)
        return -1;
    int32_t *src = malloc(sizeof(int32_t) * (size_t)n), *dst = malloc(sizeof(int32_t) * (size_t)n);
    int *first_msg = malloc(sizeof(int) * (size_t)(ntodo + 1));
    int rc = 0;
    if (!src || !dst || !first_msg)
        rc = sim_fail(err, SIM_ENOMEM, "out of memory queueing phases");
    /* Each node sends its phase messages in phase order; queueing phase by
   * phase keeps every node's injection queue in that order. */
    int nq = 0;
    for (int k = 0; k < ntodo && !rc; k++) {
        first_msg[k] = nq;
        int m = sim_stride_pairs(map, n, todo[k], src, dst);
        for (int i = 0; i < m && !rc; i++, nq++)
            rc = sim_flit_add_message(e, src[i], dst[i], p->msg, 0, err) < 0;
    }
    if (!rc)
        first_msg[ntodo] = nq;
    if (!rc)
        rc = sim_flit_run(e, err);
    if (!rc) {
        sim_flit_stats st;
        sim_flit_get_stats(e, &st);
        for (int k = 0; k < ntodo; k++) {
            int64_t fin = 0;
            for (int m = first_msg[k]; m < first_msg[k + 1]; m++) {
                int64_t d = sim_flit_message_done(e, m);
                if (d > fin)
                    fin = d;
            }
            sim_phase_result *ph = &res->ph[todo[k] - 1];
            ph->simulated = 1;
            ph->cycles = fin;
        }
        res->ph[todo[0] - 1].flit_hops = st.flit_hops; /* the run's hops, booked once */
        res->total_cycles = st.cycles;
        const int64_t *cf = sim_flit_chan_flits(e);
        for (int c = 0; c < sim_topo_nchan(t); c++)
            res->chan_flits[c] += cf[c];
    }
    sim_flit_destroy(e);
    free(src), free(dst), free(first_msg);
    return rc;
}

/* Longest first: phases with more conflicts (W_i), then more link
 * traversals, take longer; handing them out first lets the threads finish
 * together. */
typedef struct {
    int32_t W;
    int64_t hops;
    int phase;
} phase_key;

static int longer_first(const void *a, const void *b)
{
    const phase_key *x = a, *y = b;
    if (x->W != y->W)
        return y->W - x->W;
    if (x->hops != y->hops)
        return y->hops > x->hops ? 1 : -1;
    return x->phase - y->phase;
}

static void order_longest_first(const sim_phase_result *ph, int *todo, int ntodo)
{
    phase_key *keys = malloc(sizeof *keys * (size_t)ntodo);
    if (!keys)
        return; /* the order is only an optimisation */
    for (int k = 0; k < ntodo; k++)
        keys[k] = (phase_key){ph[todo[k] - 1].load.W, ph[todo[k] - 1].load.hops, todo[k]};
    qsort(keys, (size_t)ntodo, sizeof *keys, longer_first);
    for (int k = 0; k < ntodo; k++)
        todo[k] = keys[k].phase;
    free(keys);
}

int sim_run_alltoall(const sim_topo *t, const sim_params *p, const int32_t *map, const sim_run_opts *opts,
                     sim_alltoall_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    const int n = t->nnodes;
    if (n < 2)
        return sim_fail(err, SIM_EINVAL, "field 'topo': all-to-all needs at least 2 nodes");
    if (opts->flit_level && sim_flit_check_params(t, p, err))
        return -1;
    res->nphases = n - 1;
    res->ph = sim_calloc((size_t)n, sizeof *res->ph, "phase results", err);
    res->chan_flits = sim_calloc((size_t)sim_topo_nchan(t), sizeof *res->chan_flits, "channel counters", err);
    res->chan_msgs = sim_calloc((size_t)t->ninter + 1, sizeof *res->chan_msgs, "link totals", err);
    uint8_t *sel = sim_calloc((size_t)n + 1, 1, "phase selection", err);
    int *todo = sim_calloc((size_t)n, sizeof *todo, "phase list", err);
    sim_load_phase *lp = sim_calloc((size_t)n, sizeof *lp, "phase loads", err);
    int rc = 0;
    if (!res->ph || !res->chan_flits || !res->chan_msgs || !sel || !todo || !lp)
        rc = -1;
    sim_router_fn rf;
    sim_route_init(&rf, t, p);
    if (!rc)
        rc = sim_load_alltoall(&rf, map, (int)p->threads, lp, res->chan_msgs, err);
    int64_t flits = sim_msg_flits(p, p->msg);
    for (int s = 1; s < n && !rc; s++) {
        sim_phase_result *ph = &res->ph[s - 1];
        ph->phase = s;
        ph->load = lp[s - 1];
        ph->msg_flits = flits;
        ph->ideal = sim_zero_load_latency(p, ph->load.max_routers, flits);
    }
    if (!rc && opts->flit_level) {
        int nsel = sim_phase_list_parse(p->phases, n - 1, sel, err);
        if (nsel < 0)
            rc = -1;
        int ntodo = 0, idx = 0;
        for (int s = 1; s < n && !rc; s++) {
            if (!sel[s])
                continue;
            if (idx++ % opts->nranks == opts->rank)
                todo[ntodo++] = s;
        }
        double t0 = now_seconds();
        if (!rc && ntodo > 0) {
            if (p->barrier) {
                if (p->threads > 1)
                    order_longest_first(res->ph, todo, ntodo);
                rc = run_phases_parallel(t, p, map, todo, ntodo, res, err);
            } else if (opts->rank == 0) {
                /* without barriers the phases interact: one run, one process */
                ntodo = 0;
                for (int s = 1; s < n; s++)
                    if (sel[s])
                        todo[ntodo++] = s;
                rc = run_phases_together(t, p, map, todo, ntodo, res, err);
            }
        }
        res->wall_seconds = now_seconds() - t0;
    }
    free(sel), free(todo), free(lp);
    if (rc) {
        sim_alltoall_result_free(res);
        return -1;
    }
    sim_alltoall_summarise(p, res);
    return 0;
}

int sim_run_pattern(const sim_topo *t, const sim_params *p, int nmsg, const int32_t *src, const int32_t *dst,
                    int flit_level, sim_phase_result *res, int64_t *chan_flits, int32_t *link_weights, sim_err *err)
{
    memset(res, 0, sizeof *res);
    sim_router_fn rf;
    sim_route_init(&rf, t, p);
    sim_load_ctx lc;
    if (sim_load_ctx_init(&lc, &rf, err))
        return -1;
    sim_load_pairs(&lc, nmsg, src, dst, &res->load);
    if (link_weights)
        memcpy(link_weights, lc.load, sizeof *lc.load * (size_t)t->ninter);
    sim_load_ctx_free(&lc);
    res->msg_flits = sim_msg_flits(p, p->msg);
    res->ideal = sim_zero_load_latency(p, res->load.max_routers, res->msg_flits);
    if (!flit_level)
        return 0;
    sim_flit_engine *e = sim_flit_create(t, p, err);
    if (!e)
        return -1;
    int rc = 0;
    for (int i = 0; i < nmsg && !rc; i++)
        rc = sim_flit_add_message(e, src[i], dst[i], p->msg, 0, err) < 0;
    if (!rc)
        rc = sim_flit_run(e, err);
    if (!rc)
        rc = sim_flit_check_idle(e, err);
    if (!rc) {
        sim_flit_stats st;
        sim_flit_get_stats(e, &st);
        res->simulated = 1;
        res->cycles = st.cycles;
        res->flit_hops = st.flit_hops;
        res->throughput = st.cycles > 0 ? (double)res->ideal / (double)st.cycles : 1.0;
        if (chan_flits)
            memcpy(chan_flits, sim_flit_chan_flits(e), sizeof(int64_t) * (size_t)sim_topo_nchan(t));
    }
    sim_flit_destroy(e);
    return rc;
}

typedef struct {
    const sim_topo *t;
    const sim_params *p;
    const double *loads;
    int nloads;
    sim_random_result *res;
    atomic_int next;
    atomic_int failed;
    pthread_mutex_t lock;
    sim_err err;
} random_job;

static void *random_worker(void *arg)
{
    random_job *job = arg;
    sim_err err;
    memset(&err, 0, sizeof err);
    sim_flit_engine *e = sim_flit_create(job->t, job->p, &err);
    for (;;) {
        if (!e || atomic_load(&job->failed))
            break;
        int k = atomic_fetch_add(&job->next, 1);
        if (k >= job->nloads)
            break;
        /* each load point has its own stream, so results do not depend on threads */
        uint64_t seed = (uint64_t)job->p->seed * UINT64_C(0x9E3779B97F4A7C15) + (uint64_t)k;
        if (sim_flit_run_random(e, job->loads[k], seed, &job->res[k], &err) || sim_flit_check_idle(e, &err)) {
            char msg[SIM_ERR_LEN];
            snprintf(msg, sizeof msg, "%s", err.msg);
            snprintf(err.msg, sizeof err.msg, "offered load %g: %.3900s", job->loads[k], msg);
            break;
        }
        err.msg[0] = 0;
    }
    if (!e || err.msg[0]) {
        pthread_mutex_lock(&job->lock);
        if (!atomic_load(&job->failed))
            job->err = err;
        atomic_store(&job->failed, 1);
        pthread_mutex_unlock(&job->lock);
    }
    sim_flit_destroy(e);
    return NULL;
}

int sim_run_random(const sim_topo *t, const sim_params *p, const double *loads, int nloads, sim_random_result *res,
                   sim_err *err)
{
    random_job job;
    memset(&job, 0, sizeof job);
    job.t = t;
    job.p = p;
    job.loads = loads;
    job.nloads = nloads;
    job.res = res;
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    pthread_mutex_init(&job.lock, NULL);
    int threads = (int)p->threads < nloads ? (int)p->threads : nloads;
    if (threads < 1)
        threads = 1;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!tid)
        return sim_fail(err, SIM_ENOMEM, "out of memory starting threads");
    int started = 0;
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&tid[i], NULL, random_worker, &job) != 0)
            break;
        started = i;
    }
    random_worker(&job);
    for (int i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    pthread_mutex_destroy(&job.lock);
    if (atomic_load(&job.failed)) {
        if (err)
            *err = job.err;
        return -1;
    }
    return 0;
}

int sim_run_zero_load(const sim_topo *t, const sim_params *p, int src, int dst, int64_t flits, int64_t *measured,
                      int64_t *formula, int *routers, sim_err *err)
{
    if (src == dst)
        return sim_fail(err, SIM_EINVAL, "zero-load probe: source and destination are both node %d", src);
    sim_params q = *p;
    if (flits > q.packet_flits)
        q.packet_flits = flits; /* one packet */
    if (q.flow_control == SIM_FC_VCT && q.vc_depth < q.packet_flits)
        q.vc_depth = q.packet_flits;
    sim_router_fn rf;
    sim_route_init(&rf, t, &q);
    int pmax = sim_topo_diameter(t) + 4;
    int32_t *path = sim_calloc((size_t)pmax, sizeof *path, "path", err);
    if (!path)
        return -1;
    int nr = sim_route_path(&rf, src, dst, path, pmax);
    free(path);
    if (nr <= 0)
        return sim_fail(err, SIM_EINVAL, "zero-load probe: no path from %d to %d", src, dst);
    sim_flit_engine *e = sim_flit_create(t, &q, err);
    if (!e)
        return -1;
    int rc = sim_flit_add_message(e, src, dst, flits * q.flit_size, 0, err) < 0;
    if (!rc)
        rc = sim_flit_run(e, err);
    if (!rc)
        rc = sim_flit_check_idle(e, err);
    if (!rc) {
        *measured = sim_flit_message_done(e, 0);
        *formula = sim_zero_load_latency(&q, nr, flits);
        if (routers)
            *routers = nr;
    }
    sim_flit_destroy(e);
    return rc;
}
