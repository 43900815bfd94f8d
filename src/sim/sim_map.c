#include "sim_map.h"

#include "sim_load.h"
#include "sim_rng.h"
#include "sim_traffic.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Incremental link weights of every phase of an all-to-all. */
typedef struct {
    const sim_topo *t;
    sim_router_fn rf;
    int N, S, L;   /* nodes, phases (N-1), router-to-router links */
    int32_t *load; /* S * L */
    int32_t *hist; /* S * (N + 1): links of each weight, per phase */
    int32_t *maxw; /* S */
    /* paths between physical nodes, as dense link indices (CSR), or traced on
   * the fly when the table would be too big */
    int32_t *path_off; /* N * N + 1 */
    int32_t *path_link;
    int32_t *scratch;
    int scratch_max;
    int64_t sum_w;   /* sum over phases of max(1, maxw) */
    int64_t sum_cnt; /* sum over phases of the number of links at the maximum */
    /* scratch of the move evaluation: net change per link, the links touched */
    int32_t *net;  /* L, all zero between evaluations */
    int32_t *mark; /* L: evaluation stamp of the last time a link was listed */
    int32_t stamp;
    int32_t *touched;
    int touched_max;
} wstate;

static void ws_free(wstate *w)
{
    free(w->load), free(w->hist), free(w->maxw), free(w->path_off), free(w->path_link), free(w->scratch);
    free(w->net), free(w->mark), free(w->touched);
    memset(w, 0, sizeof *w);
}

static int ws_init(wstate *w, const sim_topo *t, const sim_params *p, sim_err *err)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    sim_route_init(&w->rf, t, p);
    w->N = t->nnodes;
    w->S = t->nnodes - 1;
    w->L = t->ninter;
    double cells = (double)w->S * (double)w->L;
    if (cells > 64e6)
        return sim_fail(err, SIM_EINVAL,
                        "field 'topo': %s is too large for the mapper (%.0f phase-link weights to keep); map a smaller "
                        "network",
                        t->name, cells);
    w->load = sim_calloc((size_t)w->S * w->L, sizeof *w->load, "mapper weights", err);
    w->hist = sim_calloc((size_t)w->S * (w->N + 1), sizeof *w->hist, "mapper histograms", err);
    w->maxw = sim_calloc((size_t)w->S, sizeof *w->maxw, "mapper maxima", err);
    w->scratch_max = sim_topo_diameter(t) + 4;
    w->scratch = sim_calloc((size_t)w->scratch_max, sizeof *w->scratch, "path scratch", err);
    w->net = sim_calloc((size_t)w->L + 1, sizeof *w->net, "mapper scratch", err);
    w->mark = sim_calloc((size_t)w->L + 1, sizeof *w->mark, "mapper scratch", err);
    w->touched_max = 8 * w->scratch_max + 8;
    w->touched = sim_calloc((size_t)w->touched_max, sizeof *w->touched, "mapper scratch", err);
    if (!w->load || !w->hist || !w->maxw || !w->scratch || !w->net || !w->mark || !w->touched)
        return -1;
    for (int s = 0; s < w->S; s++)
        w->hist[(size_t)s * (w->N + 1)] = w->L;
    double table = (double)w->N * w->N * (sim_topo_diameter(t) + 1);
    if (table <= 32e6) {
        w->path_off = sim_calloc((size_t)w->N * w->N + 1, sizeof *w->path_off, "path table", err);
        if (!w->path_off)
            return -1;
        int64_t total = 0;
        for (int a = 0; a < w->N; a++)
            for (int b = 0; b < w->N; b++) {
                int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max);
                for (int i = 0; i < n; i++)
                    total += t->inter_index[w->scratch[i]] >= 0;
            }
        w->path_link = sim_calloc((size_t)total + 1, sizeof *w->path_link, "path table", err);
        if (!w->path_link)
            return -1;
        int32_t at = 0;
        for (int a = 0; a < w->N; a++)
            for (int b = 0; b < w->N; b++) {
                w->path_off[a * w->N + b] = at;
                int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max);
                for (int i = 0; i < n; i++) {
                    int idx = t->inter_index[w->scratch[i]];
                    if (idx >= 0)
                        w->path_link[at++] = idx;
                }
            }
        w->path_off[w->N * w->N] = at;
    }
    return 0;
}

/* The links of the path a -> b; returns their count and sets *links. */
static inline int ws_path(wstate *w, int a, int b, const int32_t **links)
{
    if (w->path_off) {
        int32_t o = w->path_off[a * w->N + b];
        *links = w->path_link + o;
        return w->path_off[a * w->N + b + 1] - o;
    }
    int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max), m = 0;
    for (int i = 0; i < n; i++) {
        int idx = w->t->inter_index[w->scratch[i]];
        if (idx >= 0)
            w->scratch[m++] = idx;
    }
    *links = w->scratch;
    return m;
}

static inline int32_t phase_w(const wstate *w, int s) { return w->maxw[s] > 1 ? w->maxw[s] : 1; }
static inline int32_t phase_cnt(const wstate *w, int s)
{
    return w->maxw[s] > 0 ? w->hist[(size_t)s * (w->N + 1) + w->maxw[s]] : 0;
}

/* Adds (+1) or removes (-1) the message a -> b in phase index s, keeping the
 * histogram, the phase maximum and the sums current. */
static void ws_apply(wstate *w, int s, int a, int b, int sign)
{
    if (a == b)
        return;
    w->sum_w -= phase_w(w, s);
    w->sum_cnt -= phase_cnt(w, s);
    const int32_t *links;
    int n = ws_path(w, a, b, &links);
    int32_t *load = w->load + (size_t)s * w->L;
    int32_t *hist = w->hist + (size_t)s * (w->N + 1);
    for (int i = 0; i < n; i++) {
        int32_t old = load[links[i]];
        int32_t now = old + sign;
        load[links[i]] = now;
        hist[old]--;
        hist[now]++;
        if (now > w->maxw[s])
            w->maxw[s] = now;
        else if (old == w->maxw[s] && hist[old] == 0)
            w->maxw[s] = old - 1;
    }
    w->sum_w += phase_w(w, s);
    w->sum_cnt += phase_cnt(w, s);
}

static void ws_load_all(wstate *w, const int32_t *map)
{
    memset(w->load, 0, sizeof *w->load * (size_t)w->S * w->L);
    memset(w->hist, 0, sizeof *w->hist * (size_t)w->S * (w->N + 1));
    memset(w->maxw, 0, sizeof *w->maxw * (size_t)w->S);
    for (int s = 0; s < w->S; s++)
        w->hist[(size_t)s * (w->N + 1)] = w->L;
    w->sum_w = w->S; /* every phase counts at least 1 */
    w->sum_cnt = 0;
    for (int s = 0; s < w->S; s++)
        w->sum_cnt += phase_cnt(w, s);
    for (int s = 0; s < w->S; s++)
        for (int k = 0; k < w->N; k++)
            ws_apply(w, s, map[k], map[(k + s + 1) % w->N], +1);
}

/* Energy for annealing: sum of W_i, plus a fraction below 1 per phase that
 * rewards fewer links at the maximum (a slope on W's plateaus). */
static inline double ws_energy(const wstate *w) { return (double)w->sum_w + (double)w->sum_cnt / ((double)w->L + 1.0); }

int sim_map_eval(const sim_topo *t, const sim_params *p, const int32_t *map, double *W, sim_err *err)
{
    sim_router_fn rf;
    sim_route_init(&rf, t, p);
    sim_load_phase *ph = sim_calloc((size_t)t->nnodes, sizeof *ph, "phase loads", err);
    if (!ph)
        return -1;
    if (sim_load_alltoall(&rf, map, (int)p->threads, ph, NULL, err)) {
        free(ph);
        return -1;
    }
    double sum = 0;
    for (int s = 0; s < t->nnodes - 1; s++)
        sum += ph[s].W;
    *W = t->nnodes > 1 ? sum / (t->nnodes - 1) : 0.0;
    free(ph);
    return 0;
}

/* Senders whose message changes when ranks i and j swap nodes, in phase with
 * stride st: i, j and the ranks that send to them. */
static int affected(int N, int i, int j, int st, int *out)
{
    int cand[4] = {i, j, ((i - st) % N + N) % N, ((j - st) % N + N) % N};
    int n = 0;
    for (int c = 0; c < 4; c++) {
        int dup = 0;
        for (int d = 0; d < n; d++)
            dup |= out[d] == cand[c];
        if (!dup)
            out[n++] = cand[c];
    }
    return n;
}

/* Node of rank x once ranks i and j have exchanged nodes. */
static inline int32_t swapped(const int32_t *map, int i, int j, int x)
{
    return x == i ? map[j] : x == j ? map[i] : map[x];
}

/* Exchanges the nodes of ranks i and j, updating every phase's weights. */
static void swap_ranks(wstate *w, int32_t *map, int i, int j)
{
    int snd[4];
    for (int s = 0; s < w->S; s++) {
        int st = s + 1;
        int n = affected(w->N, i, j, st, snd);
        for (int k = 0; k < n; k++)
            ws_apply(w, s, map[snd[k]], map[(snd[k] + st) % w->N], -1);
        for (int k = 0; k < n; k++)
            ws_apply(w, s, swapped(map, i, j, snd[k]), swapped(map, i, j, (snd[k] + st) % w->N), +1);
    }
    int32_t tmp = map[i];
    map[i] = map[j];
    map[j] = tmp;
}

/* Adds sign along the path a -> b to the scratch net changes. */
static inline void net_path(wstate *w, int a, int b, int sign, int *nt)
{
    if (a == b)
        return;
    const int32_t *links;
    int n = ws_path(w, a, b, &links);
    for (int i = 0; i < n; i++) {
        int l = links[i];
        if (w->mark[l] != w->stamp) {
            w->mark[l] = w->stamp;
            w->touched[(*nt)++] = l;
        }
        w->net[l] += sign;
    }
}

/* Links of phase s that would carry v messages after the changes in net. */
static inline int32_t count_after(const wstate *w, int s, int nt, int32_t v)
{
    const int32_t *load = w->load + (size_t)s * w->L;
    int32_t c = v >= 0 && v <= w->N ? w->hist[(size_t)s * (w->N + 1) + v] : 0;
    for (int k = 0; k < nt; k++) {
        int l = w->touched[k];
        c -= load[l] == v;
        c += load[l] + w->net[l] == v;
    }
    return c;
}

/* Energy change of exchanging the nodes of ranks i and j, computed without
 * touching the state: per phase, the net change of the few links on the
 * affected paths, then the new maximum from the phase's histogram. Most moves
 * are rejected, so this is what the annealing spends its time on. */
static double swap_delta(wstate *w, const int32_t *map, int i, int j)
{
    int snd[4];
    int64_t dw = 0, dcnt = 0; /* integer parts summed exactly: a neutral move is exactly 0 */
    for (int s = 0; s < w->S; s++) {
        int st = s + 1, nt = 0;
        int n = affected(w->N, i, j, st, snd);
        if (++w->stamp == INT32_MAX) { /* stamps wrapped: forget every mark */
            memset(w->mark, 0, sizeof *w->mark * (size_t)w->L);
            w->stamp = 1;
        }
        for (int k = 0; k < n; k++) {
            net_path(w, map[snd[k]], map[(snd[k] + st) % w->N], -1, &nt);
            net_path(w, swapped(map, i, j, snd[k]), swapped(map, i, j, (snd[k] + st) % w->N), +1, &nt);
        }
        const int32_t *load = w->load + (size_t)s * w->L;
        const int32_t old_max = w->maxw[s];
        int32_t peak = -1;
        for (int k = 0; k < nt; k++) {
            int32_t v = load[w->touched[k]] + w->net[w->touched[k]];
            if (v > peak)
                peak = v;
        }
        /* one pass for the counts the three cases below need */
        int32_t old_at_max = 0, new_at_max = 0, new_at_peak = 0;
        for (int k = 0; k < nt; k++) {
            int32_t o = load[w->touched[k]], v = o + w->net[w->touched[k]];
            old_at_max += o == old_max;
            new_at_max += v == old_max;
            new_at_peak += v == peak;
        }
        int32_t at_max_after = w->hist[(size_t)s * (w->N + 1) + old_max] - old_at_max + new_at_max;
        int32_t new_max, new_cnt;
        if (peak > old_max) { /* a link climbs above the old maximum: it and its equals are the new maximum */
            new_max = peak;
            new_cnt = new_at_peak;
        } else if (at_max_after > 0) { /* the old maximum survives somewhere */
            new_max = old_max;
            new_cnt = at_max_after;
        } else {                   /* every link at the maximum came down: look lower (rare) */
            new_max = old_max - 1; /* some touched link ends at peak, so this stops there */
            while (new_max > peak && count_after(w, s, nt, new_max) == 0)
                new_max--;
            new_cnt = new_max > 0 ? count_after(w, s, nt, new_max) : 0;
        }
        dw += (new_max > 1 ? new_max : 1) - phase_w(w, s);
        dcnt += new_cnt - phase_cnt(w, s);
        for (int k = 0; k < nt; k++)
            w->net[w->touched[k]] = 0;
    }
    return (double)dw + (double)dcnt / ((double)w->L + 1.0);
}

/* Greedy construction: rank 0 on the node the start mapping gives it, then
 * each next rank on the free node that adds the least energy with the ranks
 * already placed (ties: fewer hops, then the lower node number). */
static int greedy(wstate *w, const int32_t *start, int32_t *out, sim_err *err)
{
    const int N = w->N;
    uint8_t *used = sim_calloc((size_t)N, 1, "greedy flags", err);
    if (!used)
        return -1;
    ws_load_all(w, start); /* sizes the arrays; then empty them */
    memset(w->load, 0, sizeof *w->load * (size_t)w->S * w->L);
    memset(w->hist, 0, sizeof *w->hist * (size_t)w->S * (N + 1));
    memset(w->maxw, 0, sizeof *w->maxw * (size_t)w->S);
    for (int s = 0; s < w->S; s++)
        w->hist[(size_t)s * (N + 1)] = w->L;
    w->sum_w = w->S;
    w->sum_cnt = 0;
    out[0] = start[0];
    used[start[0]] = 1;
    for (int i = 1; i < N; i++) {
        int best = -1;
        double best_e = 0;
        int64_t best_h = 0;
        for (int v = 0; v < N; v++) {
            if (used[v])
                continue;
            double e0 = ws_energy(w);
            int64_t hops = 0;
            const int32_t *links;
            for (int s = 0; s < w->S; s++) {
                int st = s + 1, to = (i + st) % N, from = ((i - st) % N + N) % N;
                if (to < i)
                    ws_apply(w, s, v, out[to], +1), hops += ws_path(w, v, out[to], &links);
                if (from < i)
                    ws_apply(w, s, out[from], v, +1), hops += ws_path(w, out[from], v, &links);
            }
            double de = ws_energy(w) - e0;
            for (int s = 0; s < w->S; s++) {
                int st = s + 1, to = (i + st) % N, from = ((i - st) % N + N) % N;
                if (to < i)
                    ws_apply(w, s, v, out[to], -1);
                if (from < i)
                    ws_apply(w, s, out[from], v, -1);
            }
            if (best < 0 || de < best_e - 1e-12 || (de < best_e + 1e-12 && hops < best_h)) {
                best = v;
                best_e = de;
                best_h = hops;
            }
        }
        out[i] = best;
        used[best] = 1;
        for (int s = 0; s < w->S; s++) {
            int st = s + 1, to = (i + st) % N, from = ((i - st) % N + N) % N;
            if (to < i)
                ws_apply(w, s, best, out[to], +1);
            if (from < i)
                ws_apply(w, s, out[from], best, +1);
        }
    }
    free(used);
    return 0;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    const sim_topo *t;
    const sim_params *p;
    const int32_t *start;
    int32_t *best; /* chains * N */
    int64_t *best_w, *best_cnt, *moves, *accepted, *improved;
    int chains;
    atomic_int next;
    atomic_int failed;
    sim_err err;
} chain_job;

/* One annealing chain from job->start with its own seed. Keeps the best
 * mapping it visits, ordered by (sum of W_i, links at the maxima). */
static int anneal(chain_job *job, int c, sim_err *err)
{
    const sim_params *p = job->p;
    const int N = job->t->nnodes;
    wstate w;
    if (ws_init(&w, job->t, p, err)) {
        ws_free(&w);
        return -1;
    }
    int32_t *cur = malloc(sizeof(int32_t) * (size_t)N), *best = job->best + (size_t)c * N;
    if (!cur) {
        ws_free(&w);
        return sim_fail(err, SIM_ENOMEM, "out of memory in the mapper");
    }
    memcpy(cur, job->start, sizeof(int32_t) * (size_t)N);
    memcpy(best, cur, sizeof(int32_t) * (size_t)N);
    int32_t *rank_on = malloc(sizeof(int32_t) * (size_t)N); /* node -> rank, for neighbour moves */
    if (!rank_on) {
        free(cur);
        ws_free(&w);
        return sim_fail(err, SIM_ENOMEM, "out of memory in the mapper");
    }
    for (int k = 0; k < N; k++)
        rank_on[cur[k]] = k;
    /* neighbour moves need one router per node (tori and meshes) */
    const sim_topo *t = job->t;
    const double near = t->kind == SIM_TOPO_FATTREE ? 0.0 : p->map_near;
    ws_load_all(&w, cur);
    int64_t best_w = w.sum_w, best_cnt = w.sum_cnt, acc = 0, imp = 0;
    sim_rng rng;
    /* chain 0 uses the seed itself, so one chain is the plain seeded search */
    sim_rng_seed(&rng, (uint64_t)p->seed + (uint64_t)c * UINT64_C(0x9E3779B97F4A7C15));
    double temp = p->map_t0;
    double t_end = p->map_t1 > 0 ? p->map_t1 : 1e-6;
    double alpha = p->map_iters > 0 && temp > 0 ? pow(t_end / temp, 1.0 / (double)p->map_iters) : 1.0;
    for (int64_t it = 0; it < p->map_iters; it++, temp *= alpha) {
        int i = (int)sim_rng_below(&rng, (uint32_t)N), j;
        if (near > 0 && (near >= 1 || sim_rng_uniform(&rng) < near)) {
            /* the rank on a neighbouring node: small moves keep the structure
       * that good mappings have, random pairs mostly break it */
            int r = t->node_router[cur[i]];
            int port = 1 + (int)sim_rng_below(&rng, (uint32_t)(t->nports - 1));
            if (t->out_kind[r * t->nports + port] != SIM_PORT_ROUTER)
                continue; /* a mesh edge: no move */
            j = rank_on[t->out_peer[r * t->nports + port]];
        } else {
            j = (int)sim_rng_below(&rng, (uint32_t)(N - 1));
            if (j >= i)
                j++;
        }
        double de = swap_delta(&w, cur, i, j);
        if (de <= 0 || (temp > 0 && sim_rng_uniform(&rng) < exp(-de / temp))) {
            swap_ranks(&w, cur, i, j);
            rank_on[cur[i]] = i;
            rank_on[cur[j]] = j;
            acc++;
            if (w.sum_w < best_w || (w.sum_w == best_w && w.sum_cnt < best_cnt)) {
                best_w = w.sum_w;
                best_cnt = w.sum_cnt;
                memcpy(best, cur, sizeof(int32_t) * (size_t)N);
                imp++;
            }
        }
    }
    job->best_w[c] = best_w;
    job->best_cnt[c] = best_cnt;
    job->moves[c] = p->map_iters;
    job->accepted[c] = acc;
    job->improved[c] = imp;
    free(cur);
    free(rank_on);
    ws_free(&w);
    return 0;
}

static void *chain_worker(void *arg)
{
    chain_job *job = arg;
    sim_err err;
    for (;;) {
        int c = atomic_fetch_add(&job->next, 1);
        if (c >= job->chains || atomic_load(&job->failed))
            break;
        if (anneal(job, c, &err)) {
            if (!atomic_exchange(&job->failed, 1))
                job->err = err;
            break;
        }
    }
    return NULL;
}

int sim_map_search(const sim_topo *t, const sim_params *p, int32_t *map, sim_map_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    double t0s = seconds_now();
    const int N = t->nnodes;
    if (N < 3)
        return sim_fail(err, SIM_EINVAL, "field 'topo': the mapper needs at least 3 nodes");
    if (sim_check_permutation(map, N, "start mapping", err))
        return -1;
    if (p->map_near > 1.0)
        return sim_fail(err, SIM_EINVAL, "field 'map_near': %g is not a share in [0, 1]", p->map_near);
    wstate w;
    if (ws_init(&w, t, p, err)) {
        ws_free(&w);
        return -1;
    }
    int chains = (int)p->map_chains;
    int32_t *start = malloc(sizeof(int32_t) * (size_t)N), *gmap = malloc(sizeof(int32_t) * (size_t)N);
    chain_job job;
    memset(&job, 0, sizeof job);
    job.best = malloc(sizeof(int32_t) * (size_t)N * (size_t)chains);
    job.best_w = calloc((size_t)chains, sizeof(int64_t));
    job.best_cnt = calloc((size_t)chains, sizeof(int64_t));
    job.moves = calloc((size_t)chains, sizeof(int64_t));
    job.accepted = calloc((size_t)chains, sizeof(int64_t));
    job.improved = calloc((size_t)chains, sizeof(int64_t));
    int rc = 0;
    if (!start || !gmap || !job.best || !job.best_w || !job.best_cnt || !job.moves || !job.accepted || !job.improved)
        rc = sim_fail(err, SIM_ENOMEM, "out of memory in the mapper");
    int64_t start_w = 0, start_cnt = 0;
    if (!rc) {
        ws_load_all(&w, map);
        start_w = w.sum_w;
        start_cnt = w.sum_cnt;
        res->W_start = (double)start_w / (double)w.S;
        memcpy(start, map, sizeof(int32_t) * (size_t)N);
        /* greedy start: O(N^3 * path) work, so only for networks up to 256 nodes */
        if (p->map_greedy && N <= 256) {
            rc = greedy(&w, map, gmap, err);
            if (!rc) {
                res->W_greedy = (double)w.sum_w / (double)w.S;
                if (w.sum_w < start_w || (w.sum_w == start_w && w.sum_cnt < start_cnt)) {
                    memcpy(start, gmap, sizeof(int32_t) * (size_t)N);
                    res->started_from_greedy = 1;
                }
            }
        } else if (p->map_greedy) {
            res->greedy_skipped = 1;
        }
    }
    int S = w.S;
    ws_free(&w);
    if (!rc) {
        /* independent chains over the threads; the winner depends only on the
     * seed and the number of chains, never on the number of threads */
        job.t = t;
        job.p = p;
        job.start = start;
        job.chains = chains;
        atomic_init(&job.next, 0);
        atomic_init(&job.failed, 0);
        int threads = (int)(p->threads < chains ? p->threads : chains);
        pthread_t tid[64];
        int started = 0;
        for (int i = 1; i < threads && i < 64; i++) {
            if (pthread_create(&tid[i], NULL, chain_worker, &job) != 0)
                break;
            started = i;
        }
        chain_worker(&job);
        for (int i = 1; i <= started; i++)
            pthread_join(tid[i], NULL);
        if (atomic_load(&job.failed)) {
            if (err)
                *err = job.err;
            rc = -1;
        }
    }
    if (!rc) {
        int win = 0;
        for (int c = 0; c < chains; c++) {
            res->moves += job.moves[c];
            res->accepted += job.accepted[c];
            res->improved += job.improved[c];
            if (job.best_w[c] < job.best_w[win] ||
                (job.best_w[c] == job.best_w[win] && job.best_cnt[c] < job.best_cnt[win]))
                win = c;
        }
        /* never hand back something worse than what we were given */
        if (job.best_w[win] < start_w || (job.best_w[win] == start_w && job.best_cnt[win] <= start_cnt)) {
            memcpy(map, job.best + (size_t)win * N, sizeof(int32_t) * (size_t)N);
            res->W_final = (double)job.best_w[win] / (double)S;
        } else {
            res->W_final = res->W_start;
        }
        res->best_chain = win;
    }
    free(start), free(gmap), free(job.best), free(job.best_w), free(job.best_cnt);
    free(job.moves), free(job.accepted), free(job.improved);
    res->seconds = seconds_now() - t0s;
    return rc;
}

int sim_map_selfcheck(const sim_topo *t, const sim_params *p, int moves, uint64_t seed, sim_err *err)
{
    const int N = t->nnodes;
    wstate w;
    if (ws_init(&w, t, p, err)) {
        ws_free(&w);
        return -1;
    }
    int32_t *map = malloc(sizeof(int32_t) * (size_t)N);
    if (!map) {
        ws_free(&w);
        return sim_fail(err, SIM_ENOMEM, "out of memory");
    }
    sim_mapping_identity(map, N);
    ws_load_all(&w, map);
    sim_rng rng;
    sim_rng_seed(&rng, seed);
    int bad = 0;
    for (int m = 0; m < moves; m++) {
        int i = (int)sim_rng_below(&rng, (uint32_t)N);
        int j = (int)sim_rng_below(&rng, (uint32_t)(N - 1));
        if (j >= i)
            j++;
        double predicted = swap_delta(&w, map, i, j);
        double e0 = ws_energy(&w);
        swap_ranks(&w, map, i, j);
        double actual = ws_energy(&w) - e0;
        if (fabs(predicted - actual) > 1e-9) {
            if (!bad)
                sim_fail(err, SIM_EINVAL, "move %d (swap %d,%d): predicted change %.6f, actual %.6f", m, i, j,
                         predicted, actual);
            bad++;
        }
    }
    free(map);
    ws_free(&w);
    return bad;
}
