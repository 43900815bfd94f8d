/* plan_search: the choice of a call's algorithm and lanes. Enumerates the
 * candidates of the algorithm table (plan_algorithms.c) on the usable lanes
 * that have what each needs, stripes large pulls, prices each with its
 * formula times the tuning file's calibration factor (interpolated between
 * calibrated sizes and team sizes), applies SHOAL_ALGO and SHOAL_LANES, and
 * takes the cheapest. Also the lane labels and factor keys tuning files use.
 *
 * May call: core, lanes, plan_model. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_cost.h"

/* v-variants: below this many bytes a rank's data travels with the sizes,
 * at least (v_eager_limit): where single copy's system call is most of a
 * transfer's time. */
#define EAGER_BYTES (8 * 1024)
/* The size at which a v-variant's lane for large data is priced. */
#define V_LARGE_BYTES (1 << 20)

const char *plan_lane_name(lane_id l) { return (unsigned)l < LANE_COUNT ? lane_describe(l)->name : "?"; }

/* "cma+host" for every pair of lanes, made once. */
static char stripe_labels[LANE_COUNT][LANE_COUNT][32];
static pthread_once_t labels_once = PTHREAD_ONCE_INIT;
static void make_stripe_labels(void)
{
    for (int a = 0; a < LANE_COUNT; a++)
        for (int b = 0; b < LANE_COUNT; b++)
            snprintf(stripe_labels[a][b], sizeof stripe_labels[a][b], "%s+%s", lane_describe((lane_id)a)->name,
                     lane_describe((lane_id)b)->name);
}

const char *plan_lanes_label(lane_id lane, lane_id stripe)
{
    if ((unsigned)lane >= LANE_COUNT || (unsigned)stripe >= LANE_COUNT)
        return plan_lane_name(lane);
    pthread_once(&labels_once, make_stripe_labels);
    return stripe_labels[lane][stripe];
}

/* The two-sided lane's share of a striped transfer: its part of the two
 * lanes' modelled throughput for large blocks at this ppn. */
static double stripe_share(const pricing *p, lane_id single, lane_id two_sided)
{
    int ppn = team_ppn(p->q);
    double big = 1 << 20;
    double t_host = plan_lane_time(&p->m->lane[two_sided], big, ppn);
    double t_cma = plan_lane_time(&p->m->lane[single], big, ppn);
    return t_host > 0 && t_cma > 0 ? (1 / t_host) / (1 / t_host + 1 / t_cma) : 0.5;
}

/* The two-sided lane a pull of large blocks on single-copy lane l may stripe
 * with (gather, scatter, allgather(v), alltoall), or LANE_COUNT. */
static lane_id stripe_partner(const plan_query *q, plan_algo a, lane_id l)
{
    bool pull_coll = q->coll == CORE_COLL_GATHER || q->coll == CORE_COLL_SCATTER || q->coll == CORE_COLL_ALLGATHER ||
                     q->coll == CORE_COLL_ALLGATHERV || q->coll == CORE_COLL_ALLTOALL;
    if (a != PLAN_MOVE_PULL || !pull_coll || q->n <= 1 || q->bytes < PLAN_STRIPE_MIN ||
        !lane_can(l, LANE_CAP_SINGLE_COPY) || !q->usable[l])
        return LANE_COUNT;
    for (int two = 0; two < LANE_COUNT; two++)
        if (lane_can((lane_id)two, LANE_CAP_TWO_SIDED) && q->usable[two])
            return (lane_id)two;
    return LANE_COUNT;
}

/* ---- forced choices ---- */
/* SHOAL_ALGO="allreduce:flat,bcast:tree": the forced algorithm for c, or -1. */
static int forced_algo(core_coll c)
{
    const char *spec = core_config_get()->algo;
    const char *name = core_coll_name(c);
    size_t len = strlen(name);
    for (const char *p = spec; p && *p;) {
        if (!strncmp(p, name, len) && p[len] == ':') {
            const char *v = p + len + 1;
            size_t vlen = strcspn(v, ",");
            int a = plan_algo_from_name(c, v, vlen);
            if (a >= 0)
                return a;
            core_log_warn_once("SHOAL_ALGO: '%.*s' is not an algorithm of %s; ignored", (int)vlen, v, name);
            return -1;
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return -1;
}

/* SHOAL_LANES=cma+host (a single-copy lane striped with a two-sided one):
 * only striped candidates. */
#define FORCED_STRIPE LANE_COUNT

/* SHOAL_LANES: the forced lane, FORCED_STRIPE, or -1. */
static int forced_lane(const plan_query *q)
{
    const char *lanes = core_config_get()->lanes;
    if (!lanes[0])
        return -1;
    const char *plus = strchr(lanes, '+');
    if (plus) {
        lane_id single = lane_from_name(lanes, (size_t)(plus - lanes)),
                two = lane_from_name(plus + 1, strlen(plus + 1));
        if (single != LANE_COUNT && two != LANE_COUNT && lane_can(single, LANE_CAP_SINGLE_COPY) &&
            lane_can(two, LANE_CAP_TWO_SIDED)) {
            if (q->usable[single] && q->usable[two])
                return FORCED_STRIPE;
            core_log_warn_once("SHOAL_LANES=%s but a lane of it is not usable here; the planner chooses", lanes);
            return -1;
        }
    }
    lane_id l = lane_from_name(lanes, strlen(lanes));
    if (l != LANE_COUNT) {
        if (q->usable[l])
            return l;
        core_log_warn_once("SHOAL_LANES=%s but that lane is not usable here; the planner chooses", lanes);
        return -1;
    }
    core_log_warn_once("SHOAL_LANES=%s is not a lane (cells, cma, host, cma+host); ignored", lanes);
    return -1;
}

/* ---- enumeration ---- */

/* Team sizes are calibrated in powers of two: the smallest one >= n. */
int plan_team_bucket(int n)
{
    int b = 2;
    while (b < n && b < 1024)
        b *= 2;
    return b;
}

/* Sizes are calibrated at powers of two: the nearest one, log2 rounded. */
int plan_size_bucket(size_t bytes) { return bytes ? (int)lround(log2((double)bytes)) : 0; }

static void factor_key(char *buf, size_t len, core_coll c, plan_algo a, const char *lanes, int size_b, int team_b)
{
    snprintf(buf, len, "%s/%s/%s/b%d/n%d", core_coll_name(c), plan_algo_name(a), lanes, size_b, team_b);
}

void plan_factor_key(char *buf, size_t len, core_coll c, plan_algo a, lane_id l, lane_id stripe, size_t bytes, int n)
{
    factor_key(buf, len, c, a, plan_lanes_label(l, stripe), plan_size_bucket(bytes), plan_team_bucket(n));
}

/* A calibration factor, its key parsed. */
typedef struct factor_point {
    int size_b, team_b;
    double factor;
} factor_point;

/* The factors of one collective, algorithm and lanes into out (at most
 * max): their keys share a prefix, so they sit together in the sorted
 * table. */
static int factor_series(const plan_model *m, core_coll c, plan_algo a, const char *lanes, factor_point *out, int max)
{
    char prefix[64];
    int len = snprintf(prefix, sizeof prefix, "%s/%s/%s/b", core_coll_name(c), plan_algo_name(a), lanes);
    int lo = 0, hi = m->nfactors;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(m->factors[mid].key, prefix) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    int k = 0;
    for (int i = lo; i < m->nfactors && k < max && !strncmp(m->factors[i].key, prefix, (size_t)len); i++) {
        char *end;
        long size_b = strtol(m->factors[i].key + len, &end, 10);
        if (strncmp(end, "/n", 2))
            continue;
        long team_b = strtol(end + 2, &end, 10);
        if (*end == '\0')
            out[k++] = (factor_point){(int)size_b, (int)team_b, m->factors[i].factor};
    }
    return k;
}

/* The model in use's factors by collective, algorithm, lane and stripe,
 * parsed once per model (plan_model_generation): pricing a candidate then
 * formats and parses no key (with a tuning file, formatting and searching a
 * key per size and team size tried was most of a plan's cost: 10-90 us).
 * Two copies, so that a rebuild never writes the one a thread may be
 * reading. */
typedef struct factor_index {
    unsigned generation;
    int first[CORE_COLL_COUNT][PLAN_ALGO_COUNT][LANE_COUNT][LANE_COUNT + 1];
    int count[CORE_COLL_COUNT][PLAN_ALGO_COUNT][LANE_COUNT][LANE_COUNT + 1];
    factor_point points[PLAN_MAX_FACTORS];
} factor_index;
static factor_index factor_indexes[2];
static factor_index *_Atomic factor_index_in_use;
static pthread_mutex_t factor_index_lock = PTHREAD_MUTEX_INITIALIZER;

static void factor_index_build(factor_index *ix, const plan_model *m)
{
    int used = 0;
    memset(ix->count, 0, sizeof ix->count);
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        for (int a = 0; a < PLAN_ALGO_COUNT; a++) {
            if (!(plan_algorithm_of((plan_algo)a)->colls & (1u << c)))
                continue;
            for (int l = 0; l < LANE_COUNT; l++)
                for (int s = 0; s <= LANE_COUNT; s++) {
                    ix->first[c][a][l][s] = used;
                    ix->count[c][a][l][s] =
                        factor_series(m, (core_coll)c, (plan_algo)a, plan_lanes_label((lane_id)l, (lane_id)s),
                                      ix->points + used, PLAN_MAX_FACTORS - used);
                    used += ix->count[c][a][l][s];
                }
        }
}

static const factor_index *factor_index_of(const plan_model *m)
{
    unsigned generation = plan_model_generation();
    factor_index *ix = atomic_load_explicit(&factor_index_in_use, memory_order_acquire);
    if (ix && ix->generation == generation)
        return ix;
    pthread_mutex_lock(&factor_index_lock);
    ix = atomic_load_explicit(&factor_index_in_use, memory_order_relaxed);
    if (!ix || ix->generation != generation) {
        factor_index *next = ix == &factor_indexes[0] ? &factor_indexes[1] : &factor_indexes[0];
        factor_index_build(next, m);
        next->generation = generation;
        atomic_store_explicit(&factor_index_in_use, next, memory_order_release);
        ix = next;
    }
    pthread_mutex_unlock(&factor_index_lock);
    return ix;
}

static bool factor_point_at(const factor_point *pts, int k, int size_b, int team_b, double *f)
{
    for (int i = 0; i < k; i++)
        if (pts[i].size_b == size_b && pts[i].team_b == team_b) {
            *f = pts[i].factor;
            return true;
        }
    return false;
}

/* Within one team size: the factors of the nearest calibrated sizes below
 * and above (at most 16x away), interpolated in log-log; false if neither. */
#define FACTOR_REACH 4
static bool factor_at_team(const factor_point *pts, int k, size_t bytes, int team_b, double *out)
{
    double x = bytes ? log2((double)bytes) : 0, f_lo = 0, f_hi = 0;
    int lo = -1, hi = -1, below = (int)floor(x), above = (int)ceil(x);
    for (int d = 0; d <= FACTOR_REACH && lo < 0; d++)
        if (below - d >= 0 && factor_point_at(pts, k, below - d, team_b, &f_lo))
            lo = below - d;
    for (int d = 0; d <= FACTOR_REACH && hi < 0; d++)
        if (factor_point_at(pts, k, above + d, team_b, &f_hi))
            hi = above + d;
    if (lo < 0 && hi < 0)
        return false;
    if (lo < 0 || hi == lo)
        *out = hi >= 0 ? f_hi : f_lo;
    else if (hi < 0)
        *out = f_lo;
    else
        *out = exp(log(f_lo) + (log(f_hi) - log(f_lo)) * (x - lo) / (hi - lo));
    return true;
}

/* A series' value for n ranks: at the nearest measured team size below
 * n, else above; false if none is near in size. */
static bool series_value(const factor_point *pts, int k, size_t bytes, int n, double *out)
{
    int own = plan_team_bucket(n);
    for (int b = own; b >= 2; b /= 2)
        if (factor_at_team(pts, k, bytes, b, out))
            return true;
    for (int b = own * 2; b <= 1024; b *= 2)
        if (factor_at_team(pts, k, bytes, b, out))
            return true;
    return false;
}

static double factor_for(const plan_model *m, core_coll c, plan_algo a, lane_id lane, lane_id stripe, size_t bytes,
                         int n)
{
    if (m->nfactors == 0)
        return 1.0;
    const factor_index *ix = factor_index_of(m);
    int k = ix->count[c][a][lane][stripe];
    double f;
    return k && series_value(ix->points + ix->first[c][a][lane][stripe], k, bytes, n, &f) ? f : 1.0;
}

/* One field of the host times of collective c (ns, repeat_ns or
 * shoal_repeat_ns) at `bytes`, interpolated in size at n's own team
 * bucket; -1 where none is near. */
static double host_time_at(core_coll c, size_t bytes, int n, size_t field)
{
    const plan_model *m = plan_model_get();
    factor_point pts[PLAN_MAX_HOST_TIMES];
    int k = 0;
    for (int i = 0; i < m->nhost; i++) {
        double ns;
        memcpy(&ns, (const char *)&m->host[i] + field, sizeof ns);
        if (m->host[i].coll == (int)c && ns > 0)
            pts[k++] = (factor_point){m->host[i].size_b, m->host[i].team_b, ns};
    }
    /* At the call's own team size only: a time is not a ratio, and another
     * team size's would compare the host at one rank count with shoal at
     * another (2 ranks' 0.16 us allgather against shoal's 1.1 at 3 ranks
     * on 2 cores). */
    double ns;
    return k && factor_at_team(pts, k, bytes, plan_team_bucket(n), &ns) ? ns : -1;
}

double plan_host_ns(core_coll c, size_t bytes, int n)
{
    return host_time_at(c, bytes, n, offsetof(plan_host_time, ns));
}

double plan_host_repeat_ns(core_coll c, size_t bytes, int n, double *shoal_ns)
{
    if (shoal_ns)
        *shoal_ns = host_time_at(c, bytes, n, offsetof(plan_host_time, shoal_repeat_ns));
    return host_time_at(c, bytes, n, offsetof(plan_host_time, repeat_ns));
}

static int enumerate(const plan_query *q, plan_candidate *out, int max, int want_lane, int want_algo)
{
    pricing p = {q, plan_model_get()};
    /* A barrier, or any collective of one rank, moves no data between
     * ranks: it is priced once, on the lane every team has. */
    bool no_lane = q->coll == CORE_COLL_BARRIER || q->n <= 1;
    lane_id every_team = lane_every_team();
    int k = 0;
    for (int a = 0; a < PLAN_ALGO_COUNT; a++) {
        const plan_algorithm *alg = plan_algorithm_of((plan_algo)a);
        if (!(alg->colls & (1u << q->coll)))
            continue;
        for (int l = 0; l < LANE_COUNT; l++) {
            if (!lane_can((lane_id)l, alg->needs) || !q->usable[l] || (no_lane && l != (int)every_team))
                continue;
            int fanouts[2] = {4, 2}, nfan = alg->pipelined ? 2 : 1;
            size_t chunks[2] = {256 * 1024, 64 * 1024};
            int nchunk = alg->pipelined && q->bytes > 64 * 1024 ? 2 : 1;
            for (int f = 0; f < nfan; f++)
                for (int c = 0; c < nchunk && k < max; c++) {
                    plan_candidate *cand = &out[k++];
                    *cand = (plan_candidate){.algo = alg->id,
                                             .lane = (lane_id)l,
                                             .stripe = LANE_COUNT,
                                             .fanout = fanouts[f],
                                             .chunk = chunks[c]};
                    if (alg->id == PLAN_REDUCE_FLAT)
                        cand->chunk = plan_reduce_flat_unit(&p, (lane_id)l);
                    cand->root_share = plan_root_share(&p, alg->id, (lane_id)l);
                    cand->formula_ns = alg->cost(&p, (lane_id)l, cand);
                    cand->factor = factor_for(p.m, q->coll, alg->id, (lane_id)l, LANE_COUNT, q->bytes, q->n);
                    cand->ns = cand->formula_ns * cand->factor;
                    if (want_lane >= 0 && l != want_lane && !no_lane)
                        cand->excluded = "SHOAL_LANES";
                    else if (want_algo >= 0 && (int)alg->id != want_algo)
                        cand->excluded = "SHOAL_ALGO";
                }
            /* Large blocks may also be striped: a share of every transfer on
             * a two-sided lane, the rest on this single-copy one. */
            lane_id partner = stripe_partner(q, alg->id, (lane_id)l);
            if (partner != LANE_COUNT && k < max) {
                plan_candidate *cand = &out[k++];
                double share = stripe_share(&p, (lane_id)l, partner);
                *cand = (plan_candidate){.algo = alg->id,
                                         .lane = (lane_id)l,
                                         .stripe = partner,
                                         .stripe_share = share,
                                         .fanout = 4,
                                         .chunk = 256 * 1024};
                cand->formula_ns = plan_pull_ns(&p, (lane_id)l, partner, share);
                cand->factor = factor_for(p.m, q->coll, alg->id, (lane_id)l, partner, q->bytes, q->n);
                cand->ns = cand->formula_ns * cand->factor;
                if (want_lane >= 0 && want_lane != FORCED_STRIPE)
                    cand->excluded = "SHOAL_LANES";
                else if (want_algo >= 0 && want_algo != (int)alg->id)
                    cand->excluded = "SHOAL_ALGO";
            }
        }
    }
    /* Forced striping excludes every candidate that does not stripe. */
    for (int i = 0; i < k && want_lane == FORCED_STRIPE; i++)
        if (out[i].stripe == LANE_COUNT && !out[i].excluded && !no_lane)
            out[i].excluded = "SHOAL_LANES";
    return k;
}

static int by_price(const void *a, const void *b)
{
    const plan_candidate *x = a, *y = b;
    if (!x->excluded != !y->excluded)
        return x->excluded ? 1 : -1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Every candidate for q with its price and exclusions, in table order. */
static int priced(const plan_query *q, plan_candidate *out, int max)
{
    int lane = forced_lane(q), algo = forced_algo(q->coll);
    int k = enumerate(q, out, max, lane, algo);
    bool any = false;
    for (int i = 0; i < k; i++)
        any = any || !out[i].excluded;
    if (!any && lane == FORCED_STRIPE) {
        /* Striping is for large blocks of data movement only. */
        core_log_once("SHOAL_LANES=cma+host: %s of %zu bytes does not stripe; the planner chooses",
                      core_coll_name(q->coll), q->bytes);
        lane = -1;
        k = enumerate(q, out, max, lane, algo);
        for (int i = 0; i < k; i++)
            any = any || !out[i].excluded;
    }
    if (!any && algo >= 0) {
        /* The forced algorithm has no candidate on the forced lane. */
        core_log_warn_once("SHOAL_ALGO=%s:%s cannot run on lane %s; the planner chooses among that lane's",
                           core_coll_name(q->coll), plan_algo_name((plan_algo)algo),
                           lane >= 0 ? plan_lane_name((lane_id)lane) : "any");
        k = enumerate(q, out, max, lane, -1);
    }
    return k;
}

static int by_regret(const void *a, const void *b)
{
    const plan_candidate *x = a, *y = b;
    if (!x->excluded != !y->excluded)
        return x->excluded ? 1 : -1;
    if (x->regret != y->regret)
        return x->regret < y->regret ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Reductions combine in rank order in every algorithm but reduce's tree,
 * which groups rank ranges: switching across that line changes the bits.
 * Every other pair of algorithms (data movement included) groups alike. */
static bool same_grouping(plan_algo a, plan_algo b) { return (a == PLAN_REDUCE_TREE) == (b == PLAN_REDUCE_TREE); }

/* The cheapest allowed candidate, or -1 if none. */
static int cheapest(const plan_candidate *c, int k)
{
    int at = -1;
    for (int i = 0; i < k; i++)
        if (!c[i].excluded && (at < 0 || c[i].ns < c[at].ns))
            at = i;
    return at;
}

/* Excludes every candidate of c[0..k) that groups a reduction otherwise
 * than `first`, the first call's algorithm: a repeat on the same input
 * gives the same bits. */
static void keep_grouping(plan_candidate *c, int k, plan_algo first)
{
    for (int i = 0; i < k; i++)
        if (!c[i].excluded && !same_grouping(c[i].algo, first))
            c[i].excluded = "the first call's grouping (a repeat gives the same bits)";
}

/* A repeat: every candidate priced on fresh and on unchanged inputs (the
 * enumeration is the same for both, so the lists align), its regret the
 * worse of its two prices over each state's cheapest. */
static int priced_either(const plan_query *q, plan_candidate *out, int max)
{
    plan_candidate same[64];
    plan_query fresh_q = *q, same_q = *q;
    fresh_q.inputs = PLAN_INPUTS_FRESH;
    same_q.inputs = PLAN_INPUTS_UNCHANGED;
    int k = priced(&fresh_q, out, max);
    int k_same = priced(&same_q, same, max < 64 ? max : 64);
    int at = cheapest(out, k);
    if (at >= 0)
        keep_grouping(same, k_same, out[at].algo);
    int at_same = cheapest(same, k_same);
    for (int i = 0; i < k; i++) {
        out[i].unchanged_ns = i < k_same ? same[i].ns : out[i].ns;
        out[i].regret =
            at >= 0 && at_same >= 0 ? maxd(out[i].ns / out[at].ns, out[i].unchanged_ns / same[at_same].ns) : 1;
    }
    if (at >= 0)
        keep_grouping(out, k, out[at].algo);
    return k;
}

/* A repeat known to read unchanged inputs: priced so, within the grouping
 * of the first call's choice (the cheapest on fresh inputs). */
static int priced_unchanged(const plan_query *q, plan_candidate *out, int max)
{
    plan_candidate fresh[64];
    plan_query fresh_q = *q;
    fresh_q.inputs = PLAN_INPUTS_FRESH;
    int k = priced(q, out, max), at = cheapest(fresh, priced(&fresh_q, fresh, 64));
    if (at >= 0)
        keep_grouping(out, k, fresh[at].algo);
    return k;
}

size_t plan_size_class(size_t bytes)
{
    if (bytes < 16)
        return bytes;
    int top = core_log2_floor(bytes);
    return bytes & ~(((size_t)1 << (top - 3)) - 1);
}

bool plan_moves_blocks(core_coll c)
{
    return c == CORE_COLL_GATHER || c == CORE_COLL_GATHERV || c == CORE_COLL_SCATTER || c == CORE_COLL_SCATTERV ||
           c == CORE_COLL_ALLGATHER || c == CORE_COLL_ALLGATHERV || c == CORE_COLL_ALLTOALL || c == CORE_COLL_ALLTOALLV;
}

/* PLAN_SINGLE_COPY_BAND: the first single-copy candidate to the front where
 * it is within the band of a staged cheapest, for blocks of at least
 * PLAN_SINGLE_COPY_BAND_MIN (a call of no bytes, priced 0 on every lane,
 * keeps the cheapest). */
static void prefer_single_copy(const plan_query *q, plan_candidate *c, int k, bool either)
{
    if (!plan_moves_blocks(q->coll) || q->bytes < PLAN_SINGLE_COPY_BAND_MIN || k < 2 || c[0].excluded || c[0].ns <= 0 ||
        c[0].stripe != LANE_COUNT || !lane_can(c[0].lane, LANE_CAP_STAGED))
        return;
    for (int j = 1; j < k; j++) {
        if (c[j].excluded || c[j].stripe != LANE_COUNT || !lane_can(c[j].lane, LANE_CAP_SINGLE_COPY) ||
            lane_can(c[j].lane, LANE_CAP_TWO_SIDED))
            continue;
        double best = either ? c[0].regret : c[0].ns, mine = either ? c[j].regret : c[j].ns;
        if (mine <= best * (1 + PLAN_SINGLE_COPY_BAND)) {
            plan_candidate taken = c[j];
            memmove(c + 1, c, (size_t)j * sizeof *c);
            c[0] = taken;
        }
        return;
    }
}

int plan_candidates(const plan_query *asked, plan_candidate *out, int max)
{
    plan_query sized = *asked, *q = &sized;
    sized.bytes = plan_size_class(asked->bytes);
    bool repeat = q->coll != CORE_COLL_BARRIER && q->n > 1;
    bool either = repeat && q->inputs == PLAN_INPUTS_EITHER;
    int k = either                                         ? priced_either(q, out, max)
            : repeat && q->inputs == PLAN_INPUTS_UNCHANGED ? priced_unchanged(q, out, max)
                                                           : priced(q, out, max);
    qsort(out, (size_t)k, sizeof *out, either ? by_regret : by_price);
    prefer_single_copy(q, out, k, either);
    return k;
}

static bool is_v(core_coll c) { return c == CORE_COLL_GATHERV || c == CORE_COLL_SCATTERV || c == CORE_COLL_ALLTOALLV; }

static core_coll non_v(core_coll c)
{
    return c == CORE_COLL_GATHERV ? CORE_COLL_GATHER : c == CORE_COLL_SCATTERV ? CORE_COLL_SCATTER : CORE_COLL_ALLTOALL;
}

bool plan_repeat_rule(core_coll c, int n)
{
    bool reduction = c == CORE_COLL_REDUCE || c == CORE_COLL_ALLREDUCE || c == CORE_COLL_REDUCE_SCATTER_BLOCK ||
                     c == CORE_COLL_REDUCE_SCATTER || c == CORE_COLL_SCAN || c == CORE_COLL_EXSCAN;
    return c != CORE_COLL_BARRIER && (!reduction || n <= 2);
}

/* A repeat (the size of the collective's last call) may be the same bytes
 * again, as in OSU, or fresh data written into the same buffers, as a
 * solver's gradient is: no rank knows which. The host takes it where it
 * wins one state by the guard band and its worse ratio to shoal over the
 * two states, with the guard band, is still below shoal's worse ratio to
 * it, so that a win on cached inputs is not bought with a larger loss on
 * fresh ones. Known unchanged inputs, or no fresh time of the host's,
 * leave the repeat times alone to decide. */
static bool host_takes_repeat(const plan_choice *ch, plan_inputs inputs)
{
    double repeat = ch->host_repeat_ns / ch->shoal_repeat_ns;
    if (inputs == PLAN_INPUTS_UNCHANGED || ch->host_ns <= 0 || ch->model_ns <= 0)
        return repeat * PLAN_HOST_GUARD < 1;
    double fresh = ch->host_ns / ch->model_ns;
    double host_worst = fmax(fresh, repeat), shoal_worst = fmax(1 / fresh, 1 / repeat);
    return fmin(fresh, repeat) * PLAN_HOST_GUARD < 1 && host_worst * PLAN_HOST_GUARD < shoal_worst;
}

/* The bytes a rank of a v-variant may expose with the size headers: its
 * blocks (one in gatherv, n - 1 in scatterv and alltoallv) as large as the
 * plain collective's plan still keeps them on the small lane, within the
 * window; EAGER_BYTES at least. (At 4 ranks on 2 cores, alltoall's blocks
 * of 8-64 KiB moved over the cells in half the time of single copy, where
 * a fixed 16 KiB sent alltoallv's over single copy from 5 KiB.) A repeat
 * also needs the plain plan for unchanged inputs on the small lane: a
 * v-variant cannot ask its ranks whether their inputs changed, and where
 * the two states part, the lane that loses less in the worse one goes. (At
 * 16 KiB a block, np 2, 2-core Xeon VM: under OSU 7.4's loop scatterv and
 * alltoallv with the sizes over the cells ran 0.74-0.90x of Open MPI 4.1
 * and MPICH 4.0, over single copy 1.2-2.2x; with inputs written anew the
 * cells' 1.21-1.30x became 1.12-1.35x.) Alike on every rank: the same
 * model and query. */
static size_t v_eager_limit(const plan_query *q, lane_id small)
{
    int blocks = q->coll == CORE_COLL_GATHERV ? 1 : q->n - 1;
    size_t fixed = CORE_CACHELINE + sizeof(uint64_t) + sizeof(uint32_t) * (size_t)q->n; /* a note line, the table */
    size_t limit = EAGER_BYTES;
    plan_query plain = *q;
    plain.coll = non_v(q->coll);
    plan_candidate cand[64];
    plan_query unchanged = plain;
    unchanged.inputs = PLAN_INPUTS_UNCHANGED;
    for (size_t b = 1024; blocks > 0 && b * (size_t)blocks + fixed <= q->window; b *= 2) {
        plain.bytes = unchanged.bytes = b;
        if (plan_candidates(&plain, cand, 64) == 0 || cand[0].lane != small)
            break;
        if (q->inputs == PLAN_INPUTS_EITHER && (plan_candidates(&unchanged, cand, 64) == 0 || cand[0].lane != small))
            break;
        limit = b * (size_t)blocks + fixed > limit ? b * (size_t)blocks + fixed : limit;
    }
    return limit;
}

plan_choice plan_choose(const plan_query *q)
{
    plan_candidate cand[64];
    lane_id every_team = lane_every_team();
    plan_choice ch = {.lane = every_team,
                      .stripe = LANE_COUNT,
                      .fanout = 4,
                      .chunk = 256 * 1024,
                      .large_lane = every_team,
                      .large_algo = PLAN_MOVE_PULL,
                      .inputs = q->inputs,
                      .host_ns = -1,
                      .host_repeat_ns = -1,
                      .shoal_repeat_ns = -1};
    if (is_v(q->coll)) {
        /* No rank knows every size: small data goes with the size headers on
         * the lane every team has (or the forced lane); the lane for large
         * data is priced as the plain collective at a large size. */
        int forced = forced_lane(q);
        plan_query big = *q;
        big.coll = non_v(q->coll);
        big.bytes = V_LARGE_BYTES;
        int k = plan_candidates(&big, cand, 64);
        ch.algo = PLAN_MOVE_PULL;
        ch.lane = forced >= 0 && forced != FORCED_STRIPE ? (lane_id)forced : every_team;
        ch.large_lane = k ? cand[0].lane : ch.lane;
        /* Gatherv's large blocks by push where gather's would go so (every
         * rank writes its own at once, where pull has the root read them
         * one after the other). */
        if (k && q->coll == CORE_COLL_GATHERV && cand[0].algo == PLAN_MOVE_PUSH && forced < 0 &&
            lane_can(cand[0].lane, LANE_CAP_PUT)) {
            ch.large_algo = PLAN_MOVE_PUSH;
            ch.root_share = cand[0].root_share;
        }
        /* forced onto a staged lane: everything that fits its window goes eagerly */
        ch.eager_limit = forced >= 0 && forced != FORCED_STRIPE && lane_can((lane_id)forced, LANE_CAP_STAGED)
                             ? q->window
                             : v_eager_limit(q, ch.lane);
        return ch;
    }
    int k = plan_candidates(q, cand, 64);
    if (k == 0)
        return ch;
    ch.algo = cand[0].algo;
    ch.lane = cand[0].lane;
    ch.stripe = cand[0].stripe;
    ch.stripe_share = cand[0].stripe_share;
    ch.root_share = cand[0].root_share;
    ch.fanout = cand[0].fanout;
    ch.chunk = cand[0].chunk;
    ch.model_ns = cand[0].ns;
    /* Data movement by puts only where the lane can put. */
    if (ch.algo == PLAN_MOVE_PUSH && !lane_can(ch.lane, LANE_CAP_PUT))
        ch.algo = PLAN_MOVE_PULL;
    /* The host's own run, where the tune measured it and nothing is forced
     * (a forced algorithm or lane is shoal's to run). */
    const core_config *cfg = core_config_get();
    if (q->n > 1 && !cfg->algo[0] && !cfg->lanes[0]) {
        size_t sized = plan_size_class(q->bytes);
        ch.host_ns = plan_host_ns(q->coll, sized, q->n);
        ch.host_faster = ch.host_ns > 0 && ch.host_ns * PLAN_HOST_GUARD < ch.model_ns;
        if (q->inputs != PLAN_INPUTS_FRESH && plan_repeat_rule(q->coll, q->n)) {
            double shoal_measured;
            ch.host_repeat_ns = plan_host_repeat_ns(q->coll, sized, q->n, &shoal_measured);
            if (ch.host_repeat_ns > 0) {
                /* Shoal's own choice timed beside the host on unchanged
                 * buffers where the tune did; else its price on unchanged
                 * inputs. */
                ch.shoal_repeat_ns = shoal_measured > 0                   ? shoal_measured
                                     : q->inputs == PLAN_INPUTS_UNCHANGED ? cand[0].ns
                                                                          : cand[0].unchanged_ns;
                ch.host_faster = host_takes_repeat(&ch, q->inputs);
            }
        }
    }
    return ch;
}
