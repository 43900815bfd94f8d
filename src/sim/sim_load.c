#include "sim_load.h"
#include "sim_traffic.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int sim_load_ctx_init(sim_load_ctx *c, const sim_router_fn *rf, sim_err *err)
{
    memset(c, 0, sizeof *c);
    const sim_topo *t = rf->topo;
    c->rf = rf;
    c->load = sim_calloc((size_t)t->ninter + 1, sizeof *c->load, "link weights", err);
    if (!c->load)
        return -1;
    c->path_max = sim_topo_diameter(t) + 4;
    c->path = sim_calloc((size_t)c->path_max, sizeof *c->path, "path scratch", err);
    if (!c->path)
        return -1;
    c->fast = t->kind != SIM_TOPO_FATTREE;
    if (c->fast) {
        int64_t off = 0;
        for (int d = 0; d < t->ndims; d++) {
            int64_t lines = t->nnodes / t->radix[d];
            for (int dir = 0; dir < 2; dir++) {
                c->diff_off[2 * d + dir] = off;
                off += lines * (t->radix[d] + 1);
            }
        }
        c->diff_off[2 * t->ndims] = off;
        c->diff = sim_calloc((size_t)off, sizeof *c->diff, "difference arrays", err);
        if (!c->diff)
            return -1;
    }
    return 0;
}

void sim_load_ctx_free(sim_load_ctx *c)
{
    free(c->load);
    free(c->diff);
    free(c->path);
    memset(c, 0, sizeof *c);
}

static void summarise(const sim_topo *t, const int32_t *load, sim_load_phase *out)
{
    int32_t w = 0, nmax = 0;
    for (int i = 0; i < t->ninter; i++) {
        if (load[i] > w)
            w = load[i], nmax = 1;
        else if (load[i] == w)
            nmax++;
    }
    if (out->nmsg > 0 && w < 1)
        w = 1, nmax = 0; /* only injection/ejection links carry traffic */
    out->W = w;
    out->nmax = nmax;
}

void sim_load_pairs_traced(sim_load_ctx *c, int nmsg, const int32_t *src, const int32_t *dst, sim_load_phase *out)
{
    const sim_topo *t = c->rf->topo;
    memset(c->load, 0, sizeof *c->load * (size_t)t->ninter);
    memset(out, 0, sizeof *out);
    for (int m = 0; m < nmsg; m++) {
        int n = sim_route_path(c->rf, src[m], dst[m], c->path, c->path_max);
        if (n <= 0)
            continue;
        out->nmsg++;
        if (n > out->max_routers)
            out->max_routers = n;
        for (int i = 0; i < n; i++) {
            int idx = t->inter_index[c->path[i]];
            if (idx >= 0) {
                c->load[idx]++;
                out->hops++;
            }
        }
    }
    summarise(t, c->load, out);
}

/* Adds 1 on positions [a, a+len) of a ring line of K positions (wrapping). */
static inline void range_add(int32_t *line, int K, int a, int len)
{
    if (a + len <= K) {
        line[a]++;
        line[a + len]--;
    } else {
        line[a]++;
        line[K]--;
        line[0]++;
        line[a + len - K]--;
    }
}

void sim_load_pairs(sim_load_ctx *c, int nmsg, const int32_t *src, const int32_t *dst, sim_load_phase *out)
{
    if (!c->fast) {
        sim_load_pairs_traced(c, nmsg, src, dst, out);
        return;
    }
    const sim_topo *t = c->rf->topo;
    const int nd = t->ndims, P = t->nports;
    memset(c->diff, 0, sizeof *c->diff * (size_t)c->diff_off[2 * nd]);
    memset(out, 0, sizeof *out);
    int stride[SIM_MAX_DIMS];
    stride[0] = 1;
    for (int d = 1; d < nd; d++)
        stride[d] = stride[d - 1] * t->radix[d - 1];
    for (int m = 0; m < nmsg; m++) {
        int s = src[m], e = dst[m];
        if (s == e)
            continue;
        out->nmsg++;
        const int32_t *sc = t->coords + (size_t)s * nd, *ec = t->coords + (size_t)e * nd;
        int cur = s; /* the node where the packet starts moving along dimension d */
        int hops = 0;
        for (int d = 0; d < nd; d++) {
            if (sc[d] == ec[d])
                continue;
            int K = t->radix[d];
            int dir = sim_route_dir(c->rf, s, e, d);
            int len = dir > 0 ? (ec[d] - sc[d] + K) % K : (sc[d] - ec[d] + K) % K;
            /* line id: the node index with coordinate d removed */
            int line = cur % stride[d] + (cur / (stride[d] * K)) * stride[d];
            int32_t *arr = c->diff + c->diff_off[2 * d + (dir < 0)] + (int64_t)line * (K + 1);
            /* + links used: those leaving x = s, s+1, ..., s+len-1; - links: those
       * leaving x = s, s-1, ..., s-len+1, i.e. the range [s-len+1, s] */
            int a = dir > 0 ? sc[d] : ((sc[d] - len + 1) % K + K) % K;
            range_add(arr, K, a, len);
            hops += len;
            cur += (ec[d] - sc[d]) * stride[d];
        }
        out->hops += hops;
        if (hops + 1 > out->max_routers)
            out->max_routers = hops + 1;
    }
    /* prefix sums back into per-link weights */
    for (int d = 0; d < nd; d++) {
        int K = t->radix[d];
        int lines = t->nnodes / K;
        for (int dir = 0; dir < 2; dir++) {
            int port = 1 + 2 * d + dir;
            for (int line = 0; line < lines; line++) {
                int32_t *arr = c->diff + c->diff_off[2 * d + dir] + (int64_t)line * (K + 1);
                int base = line % stride[d] + (line / stride[d]) * stride[d] * K;
                int32_t run = 0;
                for (int x = 0; x < K; x++) {
                    run += arr[x];
                    int node = base + x * stride[d];
                    int idx = t->inter_index[node * P + port];
                    if (idx >= 0)
                        c->load[idx] = run;
                }
            }
        }
    }
    summarise(t, c->load, out);
}

typedef struct {
    const sim_router_fn *rf;
    const int32_t *map;
    sim_load_phase *phases;
    int64_t *chan_total;
    pthread_mutex_t lock;
    atomic_int next;
    int failed;
    sim_err err;
} alltoall_job;

static void *alltoall_worker(void *arg)
{
    alltoall_job *job = arg;
    const sim_topo *t = job->rf->topo;
    int n = t->nnodes;
    sim_load_ctx c;
    sim_err err;
    int32_t *src = malloc(sizeof(int32_t) * (size_t)n), *dst = malloc(sizeof(int32_t) * (size_t)n);
    int64_t *total = job->chan_total ? calloc((size_t)t->ninter + 1, sizeof(int64_t)) : NULL;
    if (!src || !dst || (job->chan_total && !total) || sim_load_ctx_init(&c, job->rf, &err) != 0) {
        pthread_mutex_lock(&job->lock);
        job->failed = 1;
        sim_fail(&job->err, SIM_ENOMEM, "out of memory in the link-load engine");
        pthread_mutex_unlock(&job->lock);
        free(src), free(dst), free(total);
        return NULL;
    }
    for (;;) {
        int s = atomic_fetch_add(&job->next, 1);
        if (s >= n)
            break;
        int m = sim_stride_pairs(job->map, n, s, src, dst);
        sim_load_pairs(&c, m, src, dst, &job->phases[s - 1]);
        job->phases[s - 1].phase = s;
        if (total)
            for (int i = 0; i < t->ninter; i++)
                total[i] += c.load[i];
    }
    if (total) {
        pthread_mutex_lock(&job->lock);
        for (int i = 0; i < t->ninter; i++)
            job->chan_total[i] += total[i];
        pthread_mutex_unlock(&job->lock);
    }
    sim_load_ctx_free(&c);
    free(src), free(dst), free(total);
    return NULL;
}

int sim_load_alltoall(const sim_router_fn *rf, const int32_t *map, int threads, sim_load_phase *phases,
                      int64_t *chan_total, sim_err *err)
{
    alltoall_job job;
    memset(&job, 0, sizeof job);
    job.rf = rf;
    job.map = map;
    job.phases = phases;
    job.chan_total = chan_total;
    atomic_init(&job.next, 1);
    pthread_mutex_init(&job.lock, NULL);
    if (chan_total)
        memset(chan_total, 0, sizeof *chan_total * (size_t)rf->topo->ninter);
    if (threads < 1)
        threads = 1;
    if (threads > rf->topo->nnodes)
        threads = rf->topo->nnodes;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!tid)
        return sim_fail(err, SIM_ENOMEM, "out of memory starting threads");
    int started = 0;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&tid[i], NULL, alltoall_worker, &job) == 0)
            started = i;
        else
            break;
    alltoall_worker(&job);
    for (int i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    pthread_mutex_destroy(&job.lock);
    if (job.failed) {
        if (err)
            *err = job.err;
        return -1;
    }
    return 0;
}

double sim_load_paper_estimate(const sim_topo *t)
{
    int K = sim_topo_max_radix(t);
    if (K == 0)
        return 1.0;
    double e = 4.0 / K;
    return e < 1.0 ? e : 1.0;
}

double sim_load_avg_bound(const sim_topo *t, const sim_load_phase *ph)
{
    if (ph->hops <= 0)
        return 1.0;
    double b = (double)t->ninter / (double)ph->hops;
    return b < 1.0 ? b : 1.0;
}
