/* The cycle-level engine: zero-load latency equals the pipeline formula; the
 * two engines agree (flit-level phase throughput never beats the link-load
 * bound and equals it, to the cycle, on conflict-free phases); flows are
 * conserved and nothing deadlocks on long random runs with dateline VCs; a
 * real deadlock (no dateline) is detected and reported; runs are
 * deterministic whatever the thread count.
 * Arguments: none (default set), "quick" (sanitizer build), "full"
 * (exhaustive, behind the `full` CTest label). */
#include "sim_run.h"
#include "sim_test.h"
#include "sim_traffic.h"

static void set(sim_params *p, const char *kv)
{
    sim_err err;
    REQUIRE(sim_param_set_kv(p, kv, &err) == 0, "%s: %s", kv, err.msg);
}

/* Applies space-separated key=value settings. */
static void set_all(sim_params *p, const char *settings)
{
    if (!settings)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *kv = strtok(buf, " "); kv; kv = strtok(NULL, " "))
        set(p, kv);
}

static sim_topo topo(const char *spec)
{
    sim_topo t;
    sim_err err;
    REQUIRE(sim_topo_parse(spec, &t, &err) == 0, "%s: %s", spec, err.msg);
    return t;
}

/* ---- zero load ------------------------------------------------------------ */

static void zero_load(int quick)
{
    const char *nets[] = {"torus:8x8", "mesh:4x4", "fattree:4,3", "torus:4x4x4"};
    const int stages[] = {1, 2, 4, 7};
    const int lats[] = {1, 3};
    const int widths[][2] = {{8, 8}, {4, 8}, {16, 8}, {8, 32}}; /* link_width, flit_size */
    const int64_t flits[] = {1, 5, 64};
    int cases = 0;
    for (size_t ni = 0; ni < sizeof nets / sizeof *nets; ni++) {
        sim_topo t = topo(nets[ni]);
        /* a neighbour and the farthest node */
        int far = t.nnodes - 1;
        int near = t.kind == SIM_TOPO_FATTREE ? 1 : t.out_peer[t.node_router[0] * t.nports + 1];
        for (size_t si = 0; si < 4; si++)
            for (size_t li = 0; li < 2; li++)
                for (size_t wi = 0; wi < 4; wi++)
                    for (size_t fi = 0; fi < 3; fi++) {
                        if (quick && (si + li + wi + fi) % 3)
                            continue;
                        sim_params p;
                        sim_params_default(&p);
                        p.router_stages = stages[si];
                        p.link_latency = lats[li];
                        p.inject_latency = 1 + (int)li;
                        p.eject_latency = 2 - (int)li;
                        p.credit_latency = 1 + 2 * (int)li;
                        p.link_width = widths[wi][0];
                        p.flit_size = widths[wi][1];
                        p.out_depth = 8;
                        for (int dst_i = 0; dst_i < 2; dst_i++) {
                            int dst = dst_i ? far : near;
                            int64_t meas = -1, form = -2;
                            int routers = 0;
                            sim_err err;
                            int rc = sim_run_zero_load(&t, &p, 0, dst, flits[fi], &meas, &form, &routers, &err);
                            CHECK(rc == 0, "%s zero-load: %s", nets[ni], rc ? err.msg : "");
                            /* the formula written out here, independently of the library */
                            int64_t serial =
                                p.flit_size >= p.link_width
                                    ? (flits[fi] - 1) * (p.flit_size / p.link_width)
                                    : (flits[fi] + p.link_width / p.flit_size - 1) / (p.link_width / p.flit_size) - 1;
                            int64_t mine = p.inject_latency + p.eject_latency + routers * p.router_stages +
                                           (routers - 1) * p.link_latency + serial;
                            CHECK(meas == form && form == mine,
                                  "%s 0->%d, %lld flits, stages %lld, link %lld, width %lld/flit %lld: measured %lld, "
                                  "formula %lld, "
                                  "by hand %lld",
                                  nets[ni], dst, (long long)flits[fi], (long long)p.router_stages,
                                  (long long)p.link_latency, (long long)p.link_width, (long long)p.flit_size,
                                  (long long)meas, (long long)form, (long long)mine);
                            cases++;
                        }
                    }
        sim_topo_free(&t);
    }
    /* the default router to a neighbour: 1 + 1 + 2*4 + 1 + (L-1) */
    sim_topo t = topo("torus:8x8");
    sim_params p;
    sim_params_default(&p);
    int64_t meas, form;
    int routers;
    sim_err err;
    REQUIRE(sim_run_zero_load(&t, &p, 0, 1, 1, &meas, &form, &routers, &err) == 0, "%s", err.msg);
    CHECK(meas == 11 && routers == 2, "default router, one flit to a neighbour: %lld cycles over %d routers (want 11)",
          (long long)meas, routers);
    sim_topo_free(&t);
    printf("zero load: %d cases equal to the formula\n", cases);
}

/* ---- the two engines agree ---------------------------------------------------- */

/* Runs every selected phase of an all-to-all and checks, per phase:
 * throughput <= ideal / (W_i * T(F)), where T(F) = F * cycles-per-flit /
 * flits-per-cycle is the time a link needs for one message of F flits: the
 * bottleneck link carries W_i such messages, so the phase cannot end sooner.
 * That is the link-load bound 1/W_i plus the pipeline share of the ideal
 * time. On conflict-free phases (W_i = 1), cycles == ideal exactly. */
static void engines_agree(const char *spec, const char *msg, const char *phases, const char *extra, int threads)
{
    sim_topo t = topo(spec);
    sim_params p;
    sim_params_default(&p);
    set(&p, msg);
    set(&p, phases);
    set_all(&p, extra);
    p.threads = threads;
    int32_t *map = malloc(sizeof(int32_t) * (size_t)t.nnodes);
    sim_mapping_identity(map, t.nnodes);
    sim_alltoall_result r;
    sim_run_opts opts = {1, 0, 1};
    sim_err err;
    int rc = sim_run_alltoall(&t, &p, map, &opts, &r, &err);
    CHECK(rc == 0, "%s %s: %s", spec, msg, rc ? err.msg : "");
    if (rc) {
        free(map);
        sim_topo_free(&t);
        return;
    }
    int exact = 0, cf = 0, below = 0;
    for (int i = 0; i < r.nphases; i++) {
        const sim_phase_result *ph = &r.ph[i];
        if (!ph->simulated)
            continue;
        double F = (double)ph->msg_flits;
        double link_time = F * (double)p.flit_size / (double)p.link_width; /* cycles for F flits on one link */
        double limit = (double)ph->ideal / ((double)ph->load.W * link_time);
        CHECK(ph->throughput <= limit + 1e-12, "%s %s phase %d: throughput %.5f above the link-load bound %.5f (W %d)",
              spec, extra ? extra : "", ph->phase, ph->throughput, limit, ph->load.W);
        if (ph->load.W == 1) {
            cf++;
            exact += ph->cycles == ph->ideal;
            CHECK(ph->cycles == ph->ideal, "%s %s conflict-free phase %d: %lld cycles, ideal %lld", spec,
                  extra ? extra : "", ph->phase, (long long)ph->cycles, (long long)ph->ideal);
        } else {
            below += ph->throughput < 1.0 / ph->load.W;
        }
    }
    printf("%s %s %s%s%s: %d phases simulated, %d conflict-free at ideal (of %d), %d others below 1/W_i, W %.4f\n",
           spec, msg, phases, extra ? " " : "", extra ? extra : "", r.simulated, exact, cf, below, r.mean_W);
    CHECK(r.simulated > 0, "%s: nothing simulated", spec);
    sim_alltoall_result_free(&r);
    free(map);
    sim_topo_free(&t);
}

/* ---- flow conservation, no deadlock -------------------------------------------------- */

static void random_runs(const char *spec, const char *extra, double load, int64_t measure, uint64_t seed)
{
    sim_topo t = topo(spec);
    sim_params p;
    sim_params_default(&p);
    set_all(&p, extra);
    p.warmup = 500;
    p.measure = measure;
    p.drain = 20 * measure + 100000;
    sim_err err;
    sim_flit_engine *e = sim_flit_create(&t, &p, &err);
    REQUIRE(e != NULL, "%s: %s", spec, err.msg);
    sim_random_result res;
    int rc = sim_flit_run_random(e, load, seed, &res, &err);
    CHECK(rc == 0, "%s %s load %.2f seed %llu: %s", spec, extra ? extra : "", load, (unsigned long long)seed,
          rc ? err.msg : "");
    if (rc == 0) {
        rc = sim_flit_check_idle(e, &err);
        CHECK(rc == 0, "%s %s load %.2f seed %llu: %s", spec, extra ? extra : "", load, (unsigned long long)seed,
              rc ? err.msg : "");
        sim_flit_stats st;
        sim_flit_get_stats(e, &st);
        CHECK(st.flits_injected == st.flits_ejected && st.flits_injected > 0, "%s: %lld injected, %lld ejected", spec,
              (long long)st.flits_injected, (long long)st.flits_ejected);
        CHECK(!res.undelivered, "%s load %.2f: %lld measured packets never delivered", spec, load,
              (long long)res.undelivered);
        printf("random %s %s load %.2f seed %llu: %lld flits through %lld cycles, accepted %.3f, latency %.1f\n", spec,
               extra ? extra : "", load, (unsigned long long)seed, (long long)st.flits_ejected,
               (long long)st.cycles_simulated, res.accepted, res.avg_latency);
    }
    sim_flit_destroy(e);
    sim_topo_free(&t);
}

/* Every packet of a heavy all-to-all without barriers (every phase queued at
 * once) arrives with all its flits, and the network ends empty. */
static void no_barrier_conservation(const char *spec, const char *msg)
{
    sim_topo t = topo(spec);
    sim_params p;
    sim_params_default(&p);
    set(&p, msg);
    sim_err err;
    sim_flit_engine *e = sim_flit_create(&t, &p, &err);
    REQUIRE(e != NULL, "%s", err.msg);
    int64_t flits = 0;
    for (int s = 1; s < t.nnodes; s++)
        for (int k = 0; k < t.nnodes; k++) {
            REQUIRE(sim_flit_add_message(e, k, (k + s) % t.nnodes, p.msg, 0, &err) >= 0, "%s", err.msg);
            flits += sim_msg_flits(&p, p.msg);
        }
    int rc = sim_flit_run(e, &err);
    CHECK(rc == 0, "%s no barrier: %s", spec, rc ? err.msg : "");
    if (!rc) {
        rc = sim_flit_check_idle(e, &err);
        CHECK(rc == 0, "%s no barrier: %s", spec, rc ? err.msg : "");
        sim_flit_stats st;
        sim_flit_get_stats(e, &st);
        CHECK(st.flits_ejected == flits, "%s: %lld flits delivered, %lld sent", spec, (long long)st.flits_ejected,
              (long long)flits);
        CHECK(st.messages_done == (int64_t)t.nnodes * (t.nnodes - 1), "%s: messages done", spec);
    }
    sim_flit_destroy(e);
    sim_topo_free(&t);
}

/* ---- deadlock ------------------------------------------------------------------------ */

/* Stride 3 on an 8-ring sends every message 3 hops clockwise: without the
 * dateline classes, one VC and 2-flit buffers, eight 64-flit packets each hold
 * links ahead of each other around the ring. It must stop with a deadlock
 * report listing the blocked channels; with the dateline it must finish. */
static void deadlock(void)
{
    sim_topo t = topo("ring:8");
    sim_params p;
    sim_params_default(&p);
    set(&p, "dateline=off");
    set(&p, "vcs=1");
    set(&p, "vc_depth=2");
    set(&p, "deadlock_window=2000");
    sim_err err;
    memset(&err, 0, sizeof err);
    sim_flit_engine *e = sim_flit_create(&t, &p, &err);
    REQUIRE(e != NULL, "%s", err.msg);
    for (int k = 0; k < 8; k++)
        REQUIRE(sim_flit_add_message(e, k, (k + 3) % 8, 512, 0, &err) >= 0, "%s", err.msg);
    int rc = sim_flit_run(e, &err);
    CHECK(rc != 0 && err.code == SIM_EDEADLOCK, "ring without dateline must deadlock (rc %d, code %d)", rc, err.code);
    CHECK(strstr(err.msg, "deadlock") && strstr(err.msg, "router") && strstr(err.msg, "X+"),
          "the report names the blocked channels: %s", err.msg);
    printf("deadlock report (expected):\n%s\n", err.msg);
    sim_flit_destroy(e);

    set(&p, "dateline=on");
    set(&p, "vcs=2");
    e = sim_flit_create(&t, &p, &err);
    REQUIRE(e != NULL, "%s", err.msg);
    for (int k = 0; k < 8; k++)
        REQUIRE(sim_flit_add_message(e, k, (k + 3) % 8, 512, 0, &err) >= 0, "%s", err.msg);
    rc = sim_flit_run(e, &err);
    CHECK(rc == 0, "with the dateline the same traffic completes: %s", rc ? err.msg : "");
    CHECK(rc || sim_flit_check_idle(e, &err) == 0, "idle after the dateline run: %s", err.msg);
    sim_flit_destroy(e);
    sim_topo_free(&t);
}

/* ---- determinism ------------------------------------------------------------------------ */

static void determinism(void)
{
    sim_topo t = topo("torus:8x8");
    sim_params p;
    sim_params_default(&p);
    set(&p, "msg=2K");
    set(&p, "phases=every:5");
    int32_t map[64];
    sim_mapping_identity(map, 64);
    sim_alltoall_result a, b;
    sim_run_opts opts = {1, 0, 1};
    sim_err err;
    p.threads = 1;
    REQUIRE(sim_run_alltoall(&t, &p, map, &opts, &a, &err) == 0, "%s", err.msg);
    p.threads = 2;
    REQUIRE(sim_run_alltoall(&t, &p, map, &opts, &b, &err) == 0, "%s", err.msg);
    int same = a.total_cycles == b.total_cycles && a.flit_hops == b.flit_hops;
    for (int i = 0; i < a.nphases; i++)
        same &= a.ph[i].cycles == b.ph[i].cycles;
    for (int c = 0; c < sim_topo_nchan(&t); c++)
        same &= a.chan_flits[c] == b.chan_flits[c];
    CHECK(same, "1 and 2 threads give different results (%lld vs %lld cycles)", (long long)a.total_cycles,
          (long long)b.total_cycles);
    /* MPI-style split: ranks 0 and 1 of 2 together simulate the same phases */
    sim_alltoall_result r0, r1;
    sim_run_opts o0 = {1, 0, 2}, o1 = {1, 1, 2};
    REQUIRE(sim_run_alltoall(&t, &p, map, &o0, &r0, &err) == 0, "%s", err.msg);
    REQUIRE(sim_run_alltoall(&t, &p, map, &o1, &r1, &err) == 0, "%s", err.msg);
    int split_ok = 1;
    for (int i = 0; i < a.nphases; i++) {
        split_ok &= r0.ph[i].simulated + r1.ph[i].simulated == a.ph[i].simulated;
        split_ok &= r0.ph[i].cycles + r1.ph[i].cycles == a.ph[i].cycles;
    }
    CHECK(split_ok && r0.simulated > 0 && r1.simulated > 0, "two ranks share the phases without overlap");
    sim_alltoall_result_free(&a), sim_alltoall_result_free(&b);
    sim_alltoall_result_free(&r0), sim_alltoall_result_free(&r1);

    /* random traffic: same seed, same result */
    sim_random_result x, y;
    sim_flit_engine *e = sim_flit_create(&t, &p, &err);
    REQUIRE(e != NULL, "%s", err.msg);
    p.measure = 3000;
    REQUIRE(sim_flit_run_random(e, 0.3, 42, &x, &err) == 0, "%s", err.msg);
    REQUIRE(sim_flit_run_random(e, 0.3, 42, &y, &err) == 0, "%s", err.msg);
    CHECK(x.avg_latency == y.avg_latency && x.accepted == y.accepted && x.measured_packets == y.measured_packets,
          "random traffic with seed 42 differs between runs");
    sim_flit_destroy(e);
    sim_topo_free(&t);
}

/* ---- parameter checks of the engine ---------------------------------------------------- */

static void bad_params(void)
{
    sim_topo t = topo("torus:4x4");
    struct {
        const char *kv[3];
        const char *field;
    } cases[] = {
        {{"link_width=6", NULL}, "field 'link_width'"},
        {{"vcs=1", NULL}, "field 'vcs'"},
        {{"flow_control=vct", "packet_flits=64", "vc_depth=32"}, "field 'packet_flits'"},
        {{"link_width=32", "out_depth=2", NULL}, "field 'out_depth'"},
        {{"deadlock_window=5", NULL}, "field 'deadlock_window'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sim_params p;
        sim_params_default(&p);
        for (int k = 0; k < 3 && cases[i].kv[k]; k++)
            set(&p, cases[i].kv[k]);
        sim_err err;
        memset(&err, 0, sizeof err);
        sim_flit_engine *e = sim_flit_create(&t, &p, &err);
        CHECK(e == NULL, "case %zu (%s) must be rejected", i, cases[i].kv[0]);
        CHECK(strstr(err.msg, cases[i].field) != NULL, "case %zu: '%s' does not name %s", i, err.msg, cases[i].field);
        sim_flit_destroy(e);
    }
    /* a mesh needs no dateline, so one VC is fine there */
    sim_topo m = topo("mesh:4x4");
    sim_params p;
    sim_params_default(&p);
    set(&p, "vcs=1");
    sim_err err;
    sim_flit_engine *e = sim_flit_create(&m, &p, &err);
    CHECK(e != NULL, "mesh with one VC: %s", e ? "" : err.msg);
    sim_flit_destroy(e);
    sim_topo_free(&m);
    sim_topo_free(&t);
}

int main(int argc, char **argv)
{
    int quick = sim_test_quick(argc, argv), full = sim_test_full(argc, argv);
    zero_load(quick);
    bad_params();
    deadlock();
    if (quick) {
        engines_agree("torus:4x4", "msg=1K", "phases=all", NULL, 1);
        engines_agree("torus:8x8", "msg=1K", "phases=1-9", NULL, 1);
        random_runs("torus:4x4", NULL, 0.8, 3000, 11);
        no_barrier_conservation("torus:4x4", "msg=1K");
        return sim_test_finish("test_sim_flit quick");
    }
    if (full) {
        /* the case, all 63 phases at 32 KB, and the variants at 8 KB */
        engines_agree("torus:8x8", "msg=32K", "phases=all", NULL, 2);
        engines_agree("torus:4x4x4", "msg=32K", "phases=all", NULL, 2);
        engines_agree("torus:8x8", "msg=8K", "phases=all", "flow_control=vct vc_depth=64", 2);
        engines_agree("torus:8x8", "msg=8K", "phases=all", "link_width=4", 2);
        engines_agree("torus:16x8", "msg=4K", "phases=every:3", NULL, 2);
        engines_agree("fattree:4,3", "msg=8K", "phases=all", NULL, 2);
        const char *nets[] = {"torus:8x8", "torus:4x4x4", "torus:5x3",  "ring:8",
                              "mesh:8x8",  "fattree:4,3", "torus:6x4x2"};
        for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
            for (uint64_t seed = 1; seed <= 4; seed++)
                random_runs(nets[i], NULL, 0.25 * (double)seed, 40000, seed);
        no_barrier_conservation("torus:8x8", "msg=8K");
        return sim_test_finish("test_sim_flit full");
    }
    /* default set: every phase of 4x4 and of 8x8 (short messages), sampled
   * variants, a fat tree, long random runs above saturation */
    engines_agree("torus:4x4", "msg=4K", "phases=all", NULL, 2);
    engines_agree("torus:8x8", "msg=2K", "phases=all", NULL, 2);
    engines_agree("torus:8x8", "msg=4K", "phases=every:7", "flow_control=vct vc_depth=64", 2);
    engines_agree("torus:8x8", "msg=2K", "phases=every:9", "link_width=16", 2);
    engines_agree("torus:8x8", "msg=2K", "phases=every:9", "flit_size=16", 2);
    engines_agree("torus:8x8", "msg=2K", "phases=every:9", "router_stages=2", 2);
    engines_agree("torus:4x4x4", "msg=2K", "phases=every:4", NULL, 2);
    engines_agree("mesh:4x4", "msg=2K", "phases=all", NULL, 2);
    engines_agree("fattree:4,3", "msg=2K", "phases=every:4", NULL, 2);
    random_runs("torus:8x8", NULL, 0.9, 20000, 1);
    random_runs("torus:4x4x4", NULL, 0.9, 10000, 2);
    random_runs("torus:5x3", "vcs=2", 1.0, 10000, 3);
    random_runs("ring:8", "vc_depth=4", 1.0, 20000, 4);
    random_runs("torus:8x8", "flow_control=vct vc_depth=64", 0.8, 5000, 5);
    random_runs("fattree:4,3", NULL, 0.9, 5000, 6);
    random_runs("mesh:4x4", "vcs=1", 0.9, 10000, 7);
    no_barrier_conservation("torus:4x4", "msg=2K");
    determinism();
    return sim_test_finish("test_sim_flit");
}
