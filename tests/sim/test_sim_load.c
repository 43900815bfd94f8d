/* The link-load engine against cases checkable by hand, and its two counting
 * methods (difference arrays, hop-by-hop tracing) against each other. */
#include "sim_load.h"
#include "sim_rng.h"
#include "sim_test.h"
#include "sim_traffic.h"

typedef struct {
    sim_topo t;
    sim_params p;
    sim_router_fn rf;
    sim_load_ctx lc;
    int32_t *map, *src, *dst;
} net;

static void net_open(net *n, const char *spec, const char *extra)
{
    sim_err err;
    sim_params_default(&n->p);
    if (extra)
        REQUIRE(sim_param_set_kv(&n->p, extra, &err) == 0, "%s: %s", extra, err.msg);
    REQUIRE(sim_topo_parse(spec, &n->t, &err) == 0, "%s: %s", spec, err.msg);
    sim_route_init(&n->rf, &n->t, &n->p);
    REQUIRE(sim_load_ctx_init(&n->lc, &n->rf, &err) == 0, "%s", err.msg);
    n->map = malloc(sizeof(int32_t) * (size_t)n->t.nnodes);
    n->src = malloc(sizeof(int32_t) * (size_t)n->t.nnodes);
    n->dst = malloc(sizeof(int32_t) * (size_t)n->t.nnodes);
    sim_mapping_identity(n->map, n->t.nnodes);
}

static void net_close(net *n)
{
    sim_load_ctx_free(&n->lc);
    sim_topo_free(&n->t);
    free(n->map), free(n->src), free(n->dst);
}

static sim_load_phase stride_phase(net *n, int stride)
{
    sim_load_phase ph;
    int m = sim_stride_pairs(n->map, n->t.nnodes, stride, n->src, n->dst);
    sim_load_pairs(&n->lc, m, n->src, n->dst, &ph);
    return ph;
}

static void random_mapping(int32_t *map, int n, uint64_t seed)
{
    sim_rng rng;
    sim_rng_seed(&rng, seed);
    sim_mapping_identity(map, n);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_below(&rng, (uint32_t)(i + 1));
        int32_t tmp = map[i];
        map[i] = map[j];
        map[j] = tmp;
    }
}

/* The 8-node ring: stride 4 with the balanced tie puts exactly 2 messages on
 * every link (even sources go +4, odd go -4; each link is covered by 2 of the
 * 4 sources within 4 hops behind it in its direction). */
static void ring_cases(void)
{
    net n;
    net_open(&n, "ring:8", NULL);
    sim_load_phase ph = stride_phase(&n, 4);
    CHECK(ph.W == 2, "ring:8 stride 4: W %d, expected 2", ph.W);
    for (int i = 0; i < n.t.ninter; i++)
        CHECK(n.lc.load[i] == 2, "ring:8 stride 4: link %d carries %d", i, n.lc.load[i]);
    /* stride 3: all go +3, each + link is covered by the 3 sources behind it */
    ph = stride_phase(&n, 3);
    CHECK(ph.W == 3, "ring:8 stride 3: W %d, expected 3 (the estimate min(4/K,1)=0.5 is not a bound)", ph.W);
    CHECK(1.0 / ph.W < sim_load_paper_estimate(&n.t), "stride 3 falls below the paper estimate");
    CHECK(ph.hops == 24, "ring:8 stride 3: %lld hops, expected 24", (long long)ph.hops);
    CHECK(ph.max_routers == 4, "ring:8 stride 3: longest path %d routers", ph.max_routers);
    /* stride 1 and 7 are conflict-free; every stride meets the average-load bound */
    CHECK(stride_phase(&n, 1).W == 1 && stride_phase(&n, 7).W == 1, "ring:8 strides 1 and 7");
    for (int s = 1; s < 8; s++) {
        ph = stride_phase(&n, s);
        CHECK(ph.W * (int64_t)n.t.ninter >= ph.hops, "stride %d: W %d below the average load %lld/%d", s, ph.W,
              (long long)ph.hops, n.t.ninter);
    }
    net_close(&n);

    /* with tie=positive every stride-4 message goes +: the + links carry 4 */
    net_open(&n, "ring:8", "tie=positive");
    CHECK(stride_phase(&n, 4).W == 4, "ring:8 stride 4, tie=positive: W %d, expected 4", stride_phase(&n, 4).W);
    net_close(&n);
}

/* Stride 1 is conflict-free on any torus in row-major order. */
static void stride_one(void)
{
    const char *tori[] = {"torus:4x4",   "torus:8x8",   "torus:16x8",  "torus:3x5",
                          "torus:4x4x4", "torus:8x8x8", "torus:6x4x2", "ring:9"};
    for (size_t i = 0; i < sizeof tori / sizeof *tori; i++) {
        net n;
        net_open(&n, tori[i], NULL);
        sim_load_phase ph = stride_phase(&n, 1);
        CHECK(ph.W == 1, "%s stride 1: W %d, expected 1", tori[i], ph.W);
        net_close(&n);
    }
}

/* 4x4 and 4x4x4 tori, row-major, default tie: every phase has W = 1. */
static void four_ary_all_phases(void)
{
    const char *tori[] = {"torus:4x4", "torus:4x4x4", "ring:4"};
    for (size_t i = 0; i < sizeof tori / sizeof *tori; i++) {
        net n;
        net_open(&n, tori[i], NULL);
        for (int s = 1; s < n.t.nnodes; s++) {
            sim_load_phase ph = stride_phase(&n, s);
            CHECK(ph.W == 1, "%s phase %d: W %d, expected 1", tori[i], s, ph.W);
        }
        net_close(&n);
    }
}

/* Messages a directed link of a K-ring carries over a whole ring all-to-all
 * under the parity tie, when that is the same for every link: distances
 * 1..ceil(K/2)-1 contribute 1+2+..., and at distance K/2 (K even) half of the
 * K/2 sources behind a link go its way, which is uniform only when K/2 is even. */
static int64_t ring_total(int K)
{
    int64_t t = 0;
    for (int d = 1; 2 * d < K; d++)
        t += d;
    if (K % 2 == 0)
        t += K / 4;
    return t;
}

/* Over a whole all-to-all every directed link carries the same number of
 * messages whatever the mapping: every ordered pair is sent exactly once, so
 * the totals do not depend on the mapping, link by link, on any torus. On a
 * k-ary n-cube with K odd or a multiple of 4 all links carry the same total,
 * (N/K) * ring_total(K); with K = 2 mod 4 the parity tie alternates. */
static void whole_alltoall_uniform(void)
{
    const char *tori[] = {"torus:8x8", "torus:4x4x4", "torus:5x5", "ring:8",  "torus:16x16",
                          "torus:5x3", "torus:6x4",   "ring:6",    "mesh:4x4"};
    for (size_t i = 0; i < sizeof tori / sizeof *tori; i++) {
        net n;
        net_open(&n, tori[i], NULL);
        int N = n.t.nnodes;
        sim_load_phase *ph = calloc((size_t)N, sizeof *ph);
        int64_t *total = calloc((size_t)n.t.ninter, sizeof *total);
        int64_t *identity = calloc((size_t)n.t.ninter, sizeof *identity);
        sim_err err;
        REQUIRE(sim_load_alltoall(&n.rf, n.map, 2, ph, identity, &err) == 0, "%s", err.msg);
        for (int trial = 1; trial <= 3; trial++) {
            uint64_t seed = 1000 + trial;
            random_mapping(n.map, N, seed);
            REQUIRE(sim_load_alltoall(&n.rf, n.map, 2, ph, total, &err) == 0, "%s", err.msg);
            int same = !memcmp(total, identity, sizeof *total * (size_t)n.t.ninter);
            CHECK(same, "%s mapping seed %llu: link totals differ from the identity's", tori[i],
                  (unsigned long long)seed);
        }
        int equal_radix = n.t.kind == SIM_TOPO_TORUS;
        for (int d = 1; d < n.t.ndims; d++)
            equal_radix &= n.t.radix[d] == n.t.radix[0];
        int K = n.t.radix[0];
        if (equal_radix && (K % 2 == 1 || K % 4 == 0)) {
            int64_t want = (N / K) * ring_total(K);
            int64_t lo = identity[0], hi = identity[0];
            for (int l = 0; l < n.t.ninter; l++) {
                if (identity[l] < lo)
                    lo = identity[l];
                if (identity[l] > hi)
                    hi = identity[l];
            }
            CHECK(lo == want && hi == want, "%s: every link should carry %lld messages, range %lld..%lld", tori[i],
                  (long long)want, (long long)lo, (long long)hi);
        }
        if (!strcmp(tori[i], "ring:6")) { /* the known exception: 1+2 plus 2 or 1 of the 3 distance-3 sources */
            int p0 = n.t.inter_index[0 * n.t.nports + 1], p1 = n.t.inter_index[1 * n.t.nports + 1];
            CHECK(identity[p0] == 5 && identity[p1] == 4, "ring:6: X+ links carry 5 and 4, got %lld and %lld",
                  (long long)identity[p0], (long long)identity[p1]);
        }
        free(ph), free(total), free(identity);
        net_close(&n);
    }
    /* the tie rule matters: always-positive loads + links more than - links */
    net n;
    net_open(&n, "torus:4x4", "tie=positive");
    sim_load_phase *ph = calloc(16, sizeof *ph);
    int64_t *total = calloc((size_t)n.t.ninter, sizeof *total);
    sim_err err;
    REQUIRE(sim_load_alltoall(&n.rf, n.map, 1, ph, total, &err) == 0, "%s", err.msg);
    int xp = n.t.inter_index[0 * n.t.nports + 1], xm = n.t.inter_index[0 * n.t.nports + 2];
    CHECK(total[xp] > total[xm], "tie=positive: X+ total %lld should exceed X- total %lld", (long long)total[xp],
          (long long)total[xm]);
    free(ph), free(total);
    net_close(&n);
}

/* k-ary n-trees with d-mod-k up routing are conflict-free for every shift. */
static void fat_trees(void)
{
    const char *trees[] = {"fattree:4,3", "fattree:2,4", "fattree:3,3", "fattree:8,2"};
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
        net n;
        net_open(&n, trees[i], NULL);
        for (int s = 1; s < n.t.nnodes; s++) {
            sim_load_phase ph = stride_phase(&n, s);
            CHECK(ph.W == 1, "%s phase %d: W %d, expected 1", trees[i], s, ph.W);
            if (ph.W != 1)
                break;
        }
        net_close(&n);
    }
    /* a path goes up to the nearest common ancestor and down: node 0 to node 63
   * in a 4-ary 3-tree crosses all 3 levels (5 switches) */
    net n;
    net_open(&n, "fattree:4,3", NULL);
    int32_t path[16];
    CHECK(sim_route_path(&n.rf, 0, 63, path, 16) == 5, "fattree 0->63 passes 5 switches");
    CHECK(sim_route_path(&n.rf, 0, 1, path, 16) == 1, "fattree 0->1 stays in the leaf switch");
    CHECK(sim_route_path(&n.rf, 0, 4, path, 16) == 3, "fattree 0->4 passes 3 switches");
    net_close(&n);
}

/* Difference arrays and hop-by-hop tracing give the same weights, link by
 * link, for random permutations and for stride phases, on tori and meshes. */
static void fast_equals_traced(int quick)
{
    const char *nets[] = {"torus:8x8", "torus:4x4x4", "torus:5x3", "torus:6x4x2",
                          "mesh:4x4",  "mesh:5x3x2",  "ring:8",    "torus:16x8"};
    const char *ties[] = {"tie=parity", "tie=positive", "tie=node"};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++) {
        for (int tie = 0; tie < 3; tie++) {
            net n;
            net_open(&n, nets[i], ties[tie]);
            int N = n.t.nnodes;
            int32_t *ref = malloc(sizeof(int32_t) * (size_t)n.t.ninter);
            for (int trial = 0; trial < (quick ? 3 : 12); trial++) {
                uint64_t seed = 77 + trial;
                random_mapping(n.map, N, seed);
                int s = 1 + (int)(seed % (uint64_t)(N - 1));
                int m = sim_stride_pairs(n.map, N, s, n.src, n.dst);
                sim_load_phase a, b;
                sim_load_pairs_traced(&n.lc, m, n.src, n.dst, &a);
                memcpy(ref, n.lc.load, sizeof(int32_t) * (size_t)n.t.ninter);
                sim_load_pairs(&n.lc, m, n.src, n.dst, &b);
                int same = a.W == b.W && a.hops == b.hops && a.max_routers == b.max_routers && a.nmax == b.nmax;
                for (int l = 0; l < n.t.ninter; l++)
                    same &= ref[l] == n.lc.load[l];
                CHECK(same, "%s %s seed %llu stride %d: traced W %d hops %lld, fast W %d hops %lld", nets[i], ties[tie],
                      (unsigned long long)seed, s, a.W, (long long)a.hops, b.W, (long long)b.hops);
            }
            free(ref);
            net_close(&n);
        }
    }
}

int main(int argc, char **argv)
{
    int quick = sim_test_quick(argc, argv);
    ring_cases();
    stride_one();
    four_ary_all_phases();
    whole_alltoall_uniform();
    fat_trees();
    fast_equals_traced(quick);
    net n;
    net_open(&n, "torus:8x8", NULL);
    CHECK(sim_load_paper_estimate(&n.t) == 0.5, "min(4/8,1) = 0.5");
    net_close(&n);
    net_open(&n, "torus:4x4x4", NULL);
    CHECK(sim_load_paper_estimate(&n.t) == 1.0, "min(4/4,1) = 1");
    net_close(&n);
    return sim_test_finish("test_sim_load");
}
