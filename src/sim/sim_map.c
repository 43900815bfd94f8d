#include "sim_map.h"

#include "sim_load.h"
#include "sim_rng.h"
#include "sim_traffic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Incremental link weights of every phase of an all-to-all. */
typedef struct {
  const sim_topo *t;
  sim_router_fn rf;
  int N, S, L;        /* nodes, phases (N-1), router-to-router links */
  int32_t *load;      /* S * L */
  int32_t *hist;      /* S * (N + 1): links of each weight, per phase */
  int32_t *maxw;      /* S */
  /* paths between physical nodes, as dense link indices (CSR), or traced on
   * the fly when the table would be too big */
  int32_t *path_off;  /* N * N + 1 */
  int32_t *path_link;
  int32_t *scratch;
  int scratch_max;
  int64_t sum_w;      /* sum over phases of max(1, maxw) */
  int64_t sum_cnt;    /* sum over phases of the number of links at the maximum */
} wstate;

static void ws_free(wstate *w) {
  free(w->load), free(w->hist), free(w->maxw), free(w->path_off), free(w->path_link), free(w->scratch);
  memset(w, 0, sizeof *w);
}

static int ws_init(wstate *w, const sim_topo *t, const sim_params *p, sim_err *err) {
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
  if (!w->load || !w->hist || !w->maxw || !w->scratch) return -1;
  for (int s = 0; s < w->S; s++) w->hist[(size_t)s * (w->N + 1)] = w->L;
  double table = (double)w->N * w->N * (sim_topo_diameter(t) + 1);
  if (table <= 32e6) {
    w->path_off = sim_calloc((size_t)w->N * w->N + 1, sizeof *w->path_off, "path table", err);
    if (!w->path_off) return -1;
    int64_t total = 0;
    for (int a = 0; a < w->N; a++)
      for (int b = 0; b < w->N; b++) {
        int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max);
        for (int i = 0; i < n; i++) total += t->inter_index[w->scratch[i]] >= 0;
      }
    w->path_link = sim_calloc((size_t)total + 1, sizeof *w->path_link, "path table", err);
    if (!w->path_link) return -1;
    int32_t at = 0;
    for (int a = 0; a < w->N; a++)
      for (int b = 0; b < w->N; b++) {
        w->path_off[a * w->N + b] = at;
        int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max);
        for (int i = 0; i < n; i++) {
          int idx = t->inter_index[w->scratch[i]];
          if (idx >= 0) w->path_link[at++] = idx;
        }
      }
    w->path_off[w->N * w->N] = at;
  }
  return 0;
}

/* The links of the path a -> b; returns their count and sets *links. */
static inline int ws_path(wstate *w, int a, int b, const int32_t **links) {
  if (w->path_off) {
    int32_t o = w->path_off[a * w->N + b];
    *links = w->path_link + o;
    return w->path_off[a * w->N + b + 1] - o;
  }
  int n = sim_route_path(&w->rf, a, b, w->scratch, w->scratch_max), m = 0;
  for (int i = 0; i < n; i++) {
    int idx = w->t->inter_index[w->scratch[i]];
    if (idx >= 0) w->scratch[m++] = idx;
  }
  *links = w->scratch;
  return m;
}

static inline int32_t phase_w(const wstate *w, int s) { return w->maxw[s] > 1 ? w->maxw[s] : 1; }
static inline int32_t phase_cnt(const wstate *w, int s) {
  return w->maxw[s] > 0 ? w->hist[(size_t)s * (w->N + 1) + w->maxw[s]] : 0;
}

/* Adds (+1) or removes (-1) the message a -> b in phase index s, keeping the
 * histogram, the phase maximum and the sums current. */
static void ws_apply(wstate *w, int s, int a, int b, int sign) {
  if (a == b) return;
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
    if (now > w->maxw[s]) w->maxw[s] = now;
    else if (old == w->maxw[s] && hist[old] == 0) w->maxw[s] = old - 1;
  }
  w->sum_w += phase_w(w, s);
  w->sum_cnt += phase_cnt(w, s);
}

static void ws_load_all(wstate *w, const int32_t *map) {
  memset(w->load, 0, sizeof *w->load * (size_t)w->S * w->L);
  memset(w->hist, 0, sizeof *w->hist * (size_t)w->S * (w->N + 1));
  memset(w->maxw, 0, sizeof *w->maxw * (size_t)w->S);
  for (int s = 0; s < w->S; s++) w->hist[(size_t)s * (w->N + 1)] = w->L;
  w->sum_w = w->S; /* every phase counts at least 1 */
  w->sum_cnt = 0;
  for (int s = 0; s < w->S; s++) w->sum_cnt += phase_cnt(w, s);
  for (int s = 0; s < w->S; s++)
    for (int k = 0; k < w->N; k++) ws_apply(w, s, map[k], map[(k + s + 1) % w->N], +1);
}

/* Energy for annealing: sum of W_i, plus a fraction below 1 per phase that
 * rewards fewer links at the maximum (a slope on W's plateaus). */
static inline double ws_energy(const wstate *w) {
  return (double)w->sum_w + (double)w->sum_cnt / ((double)w->L + 1.0);
}

int sim_map_eval(const sim_topo *t, const sim_params *p, const int32_t *map, double *W, sim_err *err) {
  sim_router_fn rf;
  sim_route_init(&rf, t, p);
  sim_load_phase *ph = sim_calloc((size_t)t->nnodes, sizeof *ph, "phase loads", err);
  if (!ph) return -1;
  if (sim_load_alltoall(&rf, map, (int)p->threads, ph, NULL, err)) {
    free(ph);
    return -1;
  }
  double sum = 0;
  for (int s = 0; s < t->nnodes - 1; s++) sum += ph[s].W;
  *W = t->nnodes > 1 ? sum / (t->nnodes - 1) : 0.0;
  free(ph);
  return 0;
}

/* Senders whose message changes when ranks i and j swap nodes, in phase with
 * stride st: i, j and the ranks that send to them. */
static int affected(int N, int i, int j, int st, int *out) {
  int cand[4] = {i, j, ((i - st) % N + N) % N, ((j - st) % N + N) % N};
  int n = 0;
  for (int c = 0; c < 4; c++) {
    int dup = 0;
    for (int d = 0; d < n; d++) dup |= out[d] == cand[c];
    if (!dup) out[n++] = cand[c];
  }
  return n;
}

/* Node of rank x once ranks i and j have exchanged nodes. */
static inline int32_t swapped(const int32_t *map, int i, int j, int x) {
  return x == i ? map[j] : x == j ? map[i] : map[x];
}

/* Exchanges the nodes of ranks i and j, updating every phase's weights. */
static void swap_ranks(wstate *w, int32_t *map, int i, int j) {
  int snd[4];
  for (int s = 0; s < w->S; s++) {
    int st = s + 1;
    int n = affected(w->N, i, j, st, snd);
    for (int k = 0; k < n; k++) ws_apply(w, s, map[snd[k]], map[(snd[k] + st) % w->N], -1);
    for (int k = 0; k < n; k++)
      ws_apply(w, s, swapped(map, i, j, snd[k]), swapped(map, i, j, (snd[k] + st) % w->N), +1);
  }
  int32_t tmp = map[i];
  map[i] = map[j];
  map[j] = tmp;
}

/* Greedy construction: rank 0 on the node the start mapping gives it, then
 * each next rank on the free node that adds the least energy with the ranks
 * already placed (ties: fewer hops, then the lower node number). */
static int greedy(wstate *w, const int32_t *start, int32_t *out, sim_err *err) {
  const int N = w->N;
  uint8_t *used = sim_calloc((size_t)N, 1, "greedy flags", err);
  if (!used) return -1;
  ws_load_all(w, start); /* sizes the arrays; then empty them */
  memset(w->load, 0, sizeof *w->load * (size_t)w->S * w->L);
  memset(w->hist, 0, sizeof *w->hist * (size_t)w->S * (N + 1));
  memset(w->maxw, 0, sizeof *w->maxw * (size_t)w->S);
  for (int s = 0; s < w->S; s++) w->hist[(size_t)s * (N + 1)] = w->L;
  w->sum_w = w->S;
  w->sum_cnt = 0;
  out[0] = start[0];
  used[start[0]] = 1;
  for (int i = 1; i < N; i++) {
    int best = -1;
    double best_e = 0;
    int64_t best_h = 0;
    for (int v = 0; v < N; v++) {
      if (used[v]) continue;
      double e0 = ws_energy(w);
      int64_t hops = 0;
      const int32_t *links;
      for (int s = 0; s < w->S; s++) {
        int st = s + 1, to = (i + st) % N, from = ((i - st) % N + N) % N;
        if (to < i) ws_apply(w, s, v, out[to], +1), hops += ws_path(w, v, out[to], &links);
        if (from < i) ws_apply(w, s, out[from], v, +1), hops += ws_path(w, out[from], v, &links);
      }
      double de = ws_energy(w) - e0;
      for (int s = 0; s < w->S; s++) {
        int st = s + 1, to = (i + st) % N, from = ((i - st) % N + N) % N;
        if (to < i) ws_apply(w, s, v, out[to], -1);
        if (from < i) ws_apply(w, s, out[from], v, -1);
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
      if (to < i) ws_apply(w, s, best, out[to], +1);
      if (from < i) ws_apply(w, s, out[from], best, +1);
    }
  }
  free(used);
  return 0;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sim_map_search(const sim_topo *t, const sim_params *p, int32_t *map, sim_map_result *res, sim_err *err) {
  memset(res, 0, sizeof *res);
  double t0s = seconds_now();
  const int N = t->nnodes;
  if (N < 3) return sim_fail(err, SIM_EINVAL, "field 'topo': the mapper needs at least 3 nodes");
  if (sim_check_permutation(map, N, "start mapping", err)) return -1;
  wstate w;
  if (ws_init(&w, t, p, err)) {
    ws_free(&w);
    return -1;
  }
  int32_t *cur = malloc(sizeof(int32_t) * (size_t)N), *best = malloc(sizeof(int32_t) * (size_t)N);
  int32_t *gmap = malloc(sizeof(int32_t) * (size_t)N);
  if (!cur || !best || !gmap) {
    free(cur), free(best), free(gmap);
    ws_free(&w);
    return sim_fail(err, SIM_ENOMEM, "out of memory in the mapper");
  }
  ws_load_all(&w, map);
  const double S = (double)w.S;
  int64_t start_w = w.sum_w, start_cnt = w.sum_cnt;
  res->W_start = (double)start_w / S;
  memcpy(cur, map, sizeof(int32_t) * (size_t)N);

  /* greedy start: O(N^3 * path) work, so only for networks up to 256 nodes */
  if (p->map_greedy && N <= 256) {
    if (greedy(&w, map, gmap, err)) {
      free(cur), free(best), free(gmap);
      ws_free(&w);
      return -1;
    }
    res->W_greedy = (double)w.sum_w / S;
    if (w.sum_w < start_w || (w.sum_w == start_w && w.sum_cnt < start_cnt)) {
      memcpy(cur, gmap, sizeof(int32_t) * (size_t)N);
      res->started_from_greedy = 1;
    }
  } else if (p->map_greedy) {
    res->greedy_skipped = 1;
  }
  ws_load_all(&w, cur);
  memcpy(best, cur, sizeof(int32_t) * (size_t)N);
  int64_t best_w = w.sum_w, best_cnt = w.sum_cnt;

  /* simulated annealing over swaps, geometric cooling from map_t0 to map_t1 */
  sim_rng rng;
  sim_rng_seed(&rng, (uint64_t)p->seed);
  double temp = p->map_t0;
  double t_end = p->map_t1 > 0 ? p->map_t1 : 1e-6;
  double alpha = p->map_iters > 0 && temp > 0 ? pow(t_end / temp, 1.0 / (double)p->map_iters) : 1.0;
  for (int64_t it = 0; it < p->map_iters; it++, temp *= alpha) {
    int i = (int)sim_rng_below(&rng, (uint32_t)N);
    int j = (int)sim_rng_below(&rng, (uint32_t)(N - 1));
    if (j >= i) j++;
    double e0 = ws_energy(&w);
    swap_ranks(&w, cur, i, j);
    double de = ws_energy(&w) - e0;
    res->moves++;
    if (de <= 0 || (temp > 0 && sim_rng_uniform(&rng) < exp(-de / temp))) {
      res->accepted++;
      if (w.sum_w < best_w || (w.sum_w == best_w && w.sum_cnt < best_cnt)) {
        best_w = w.sum_w;
        best_cnt = w.sum_cnt;
        memcpy(best, cur, sizeof(int32_t) * (size_t)N);
        res->improved++;
      }
    } else {
      swap_ranks(&w, cur, i, j);
    }
  }
  /* never hand back something worse than what we were given */
  if (best_w < start_w || (best_w == start_w && best_cnt <= start_cnt)) {
    memcpy(map, best, sizeof(int32_t) * (size_t)N);
    res->W_final = (double)best_w / S;
  } else {
    res->W_final = res->W_start;
  }
  free(cur), free(best), free(gmap);
  ws_free(&w);
  res->seconds = seconds_now() - t0s;
  return 0;
}
