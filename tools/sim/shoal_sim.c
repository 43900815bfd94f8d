/* shoal-sim: command-line front end of the network simulator (src/sim).
 * Commands: alltoall, stride, perm, random, latency, map, params, bench.
 * Every simulator parameter can come from a config file (--config), from
 * --set key=value, or from --key value; see docs/SIM.md and `shoal-sim params`.
 * Under an MPI launcher (mpirun -np R shoal-sim alltoall ...) the all-to-all
 * phases are spread over the ranks; rank 0 prints and writes the results. */
#include "core_sys.h"
#include "sim_cli_out.h"
#include "sim_map.h"
#include "sim_mpi.h"
#include "sim_run.h"
#include "sim_traffic.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SHOAL_SIM_PLOT_SCRIPT
#define SHOAL_SIM_PLOT_SCRIPT "shoal_sim_plot.py"
#endif

typedef struct {
    const char *command;
    sim_params p;
    const char *mapping_file, *perm_file, *out_file, *csv, *json, *links, *png;
    int load_only;
    int engine_forced; /* --engine given: no automatic choice */
    int stride;
    int quiet;
    int links_phase;
    int src, dst;
    int64_t flits;
    int repeat;
    int markdown;
    char threads_list[64];
    int rank, nranks;
} cli_opts;

static void usage(FILE *f)
{
    fprintf(f, "usage: shoal-sim COMMAND [options]\n"
               "\n"
               "commands:\n"
               "  alltoall   all-to-all as N-1 uniform-stride phases: per-phase table and summary\n"
               "  stride     one uniform-stride phase (--stride S)\n"
               "  perm       a permutation read from a file (--perm FILE)\n"
               "  random     uniform random traffic: latency and accepted load against offered load\n"
               "  latency    zero-load latency of one packet to a neighbour, next to the pipeline formula\n"
               "  map        search a logical-to-physical mapping that lowers W, write it (--out FILE)\n"
               "  params     print every parameter with its value (a config file)\n"
               "  bench      cycle-level speed: wall time and flit-hops/s of the all-to-all\n"
               "\n"
               "options:\n"
               "  --topo SPEC        torus:8x8, mesh:4x4x4, ring:8, torus:4^3, fattree:4,3 (k-ary n-tree)\n"
               "  --msg SIZE         bytes per message: 512, 32K, 1M\n"
               "  --config FILE      parameters from a 'key = value' file\n"
               "  --set KEY=VALUE    one parameter; --KEY VALUE works too for every parameter\n"
               "  --engine auto|flit|load  flit: both engines; load: link-load engine only; auto (default):\n"
               "                     flit unless the flit level would exceed 1e10 flit-hops\n"
               "  --mapping FILE     logical rank i runs on the physical node on line i\n"
               "  --threads N        threads for independent phases / load points\n"
               "  --no-barrier       all-to-all phases without barriers (one run)\n"
               "  --phases LIST      phases to simulate at flit level: all, 1-7,9, every:8\n"
               "  --stride S         stride of the stride command\n"
               "  --perm FILE        permutation of the perm command (line i: destination of rank i)\n"
               "  --src N --dst N --flits F   latency command: the probe (default node 0 to a neighbour)\n"
               "  --out FILE         map: where to write the mapping\n"
               "  --csv FILE         per-phase table (or load curve) as CSV\n"
               "  --json FILE        everything as JSON (input of shoal_sim_plot.py)\n"
               "  --links FILE       per-link message counts, flits and utilisation as CSV\n"
               "  --links-phase S    also record the link weights of phase S (JSON and heat map)\n"
               "  --png PREFIX       draw PREFIX-*.png with tools/sim/shoal_sim_plot.py\n"
               "  --repeat N --threads-list 1,2   bench: repetitions and thread counts\n"
               "  --quiet            summary only\n"
               "  --markdown         params: the parameter table as Markdown (docs/SIM.md)\n"
               "\n"
               "mpirun -np R shoal-sim alltoall ... spreads the phases over R processes.\n");
}

static int fail(const char *what, const sim_err *err)
{
    fprintf(stderr, "shoal-sim: %s%s%s\n", what ? what : "", what ? ": " : "", err->msg);
    return 1;
}

/* Options that take a value; everything else that starts with -- is a
 * parameter name (dashes or underscores) followed by its value. */
static int parse_args(int argc, char **argv, cli_opts *o, sim_err *err)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                        \
    do {                                                                    \
        if (!val)                                                           \
            return sim_fail(err, SIM_EINVAL, "option %s needs a value", a); \
        i++;                                                                \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--config")) {
            NEED_VALUE();
            if (sim_params_load(&o->p, val, err))
                return -1;
        } else if (!strcmp(a, "--set")) {
            NEED_VALUE();
            if (sim_param_set_kv(&o->p, val, err))
                return -1;
        } else if (!strcmp(a, "--engine")) {
            NEED_VALUE();
            if (!strcmp(val, "load"))
                o->load_only = 1, o->engine_forced = 1;
            else if (!strcmp(val, "flit"))
                o->load_only = 0, o->engine_forced = 1;
            else if (!strcmp(val, "auto"))
                o->load_only = 0, o->engine_forced = 0;
            else
                return sim_fail(err, SIM_EINVAL, "option --engine: '%s' is not auto, flit or load", val);
        } else if (!strcmp(a, "--mapping")) {
            NEED_VALUE();
            o->mapping_file = val;
        } else if (!strcmp(a, "--perm")) {
            NEED_VALUE();
            o->perm_file = val;
        } else if (!strcmp(a, "--out")) {
            NEED_VALUE();
            o->out_file = val;
        } else if (!strcmp(a, "--csv")) {
            NEED_VALUE();
            o->csv = val;
        } else if (!strcmp(a, "--json")) {
            NEED_VALUE();
            o->json = val;
        } else if (!strcmp(a, "--links")) {
            NEED_VALUE();
            o->links = val;
        } else if (!strcmp(a, "--png")) {
            NEED_VALUE();
            o->png = val;
        } else if (!strcmp(a, "--no-barrier")) {
            o->p.barrier = 0;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--markdown")) {
            o->markdown = 1;
        } else if (!strcmp(a, "--stride") || !strcmp(a, "--links-phase") || !strcmp(a, "--src") ||
                   !strcmp(a, "--dst") || !strcmp(a, "--flits") || !strcmp(a, "--repeat")) {
            NEED_VALUE();
            char *end;
            errno = 0;
            long long v = strtoll(val, &end, 10);
            if (errno || end == val || *end)
                return sim_fail(err, SIM_EINVAL, "option %s: '%s' is not an integer", a, val);
            if (!strcmp(a, "--stride"))
                o->stride = (int)v;
            else if (!strcmp(a, "--links-phase"))
                o->links_phase = (int)v;
            else if (!strcmp(a, "--src"))
                o->src = (int)v;
            else if (!strcmp(a, "--dst"))
                o->dst = (int)v;
            else if (!strcmp(a, "--flits"))
                o->flits = v;
            else
                o->repeat = (int)v;
        } else if (!strcmp(a, "--threads-list")) {
            NEED_VALUE();
            snprintf(o->threads_list, sizeof o->threads_list, "%s", val);
        } else if (!strncmp(a, "--", 2) && a[2]) {
            char key[64];
            snprintf(key, sizeof key, "%s", a + 2);
            for (char *c = key; *c; c++)
                if (*c == '-')
                    *c = '_';
            NEED_VALUE();
            if (sim_param_set(&o->p, key, val, err))
                return -1;
        } else {
            return sim_fail(err, SIM_EINVAL, "unexpected argument '%s' (see shoal-sim --help)", a);
        }
#undef NEED_VALUE
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The plot script: $SHOAL_SIM_PLOT; else the one `cmake --install` puts
 * beside an installed shoal-sim (PREFIX/bin/shoal-sim,
 * PREFIX/share/shoal/shoal_sim_plot.py); else the source tree's. */
static const char *plot_script(char *buf, size_t size)
{
    const char *script = getenv("SHOAL_SIM_PLOT");
    if (script)
        return script;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    if (slash) {
        *slash = '\0';
        int len = snprintf(buf, size, "%s/../share/shoal/shoal_sim_plot.py", exe);
        if (len > 0 && (size_t)len < size && access(buf, R_OK) == 0)
            return buf;
    }
    return SHOAL_SIM_PLOT_SCRIPT;
}

/* Runs the plot script on a JSON file: python3 SCRIPT JSON --out PREFIX. */
static int draw(const char *json_path, const char *prefix)
{
    char installed[4200];
    const char *script = plot_script(installed, sizeof installed);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("shoal-sim: fork");
        return 1;
    }
    if (pid == 0) {
        execlp("python3", "python3", script, json_path, "--out", prefix, (char *)NULL);
        perror("shoal-sim: cannot run python3 for the figures");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "shoal-sim: the plot script %s failed\n", script);
        return 1;
    }
    return 0;
}

/* Opens the JSON output: --json FILE, or PREFIX.json when only --png is set. */
static FILE *open_json(const cli_opts *o, char *path, size_t len)
{
    if (o->json)
        snprintf(path, len, "%s", o->json);
    else if (o->png)
        snprintf(path, len, "%s.json", o->png);
    else
        return NULL;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "shoal-sim: cannot create %s\n", path);
    return f;
}

static int finish_json(const cli_opts *o, FILE *f, json_out *j, const char *path)
{
    json_end(j);
    if (fclose(f) != 0) {
        fprintf(stderr, "shoal-sim: writing %s failed\n", path);
        return 1;
    }
    if (o->png)
        return draw(path, o->png);
    return 0;
}

static const char *mapping_name(const cli_opts *o) { return o->mapping_file ? o->mapping_file : "identity"; }

/* ---- alltoall ------------------------------------------------------------- */

static void print_alltoall(const cli_opts *o, const sim_topo *t, const sim_alltoall_result *r, int flit)
{
    const sim_params *p = &o->p;
    double est = sim_load_paper_estimate(t);
    int64_t flits = sim_msg_flits(p, p->msg);
    printf("shoal-sim alltoall: %s, %d nodes, mapping %s, msg %lld B = %lld flits (packets of %lld flits x %lld B), "
           "%lld VCs x %lld flits, %s\n",
           t->name, t->nnodes, mapping_name(o), (long long)p->msg, (long long)flits, (long long)p->packet_flits,
           (long long)p->flit_size, (long long)p->vcs, (long long)p->vc_depth,
           p->barrier ? "barrier between phases" : "no barrier");
    if (!o->quiet) {
        printf("%6s %6s %11s %11s %10s %4s %7s %9s\n", "phase", "stride", "ideal_cyc", "sim_cyc", "throughput", "W_i",
               "1/W_i", "vs_est");
        for (int i = 0; i < r->nphases; i++) {
            const sim_phase_result *ph = &r->ph[i];
            double bound = 1.0 / ph->load.W;
            const char *mark = bound < est - 1e-9 ? "below" : "";
            if (ph->simulated && p->barrier)
                printf("%6d %6d %11lld %11lld %10.4f %4d %7.4f %9s\n", ph->phase, ph->phase, (long long)ph->ideal,
                       (long long)ph->cycles, ph->throughput, ph->load.W, bound, mark);
            else if (ph->simulated)
                printf("%6d %6d %11lld %11lld %10s %4d %7.4f %9s\n", ph->phase, ph->phase, (long long)ph->ideal,
                       (long long)ph->cycles, "(overlap)", ph->load.W, bound, mark);
            else
                printf("%6d %6d %11lld %11s %10s %4d %7.4f %9s\n", ph->phase, ph->phase, (long long)ph->ideal, "-", "-",
                       ph->load.W, bound, mark);
        }
    }
    int below = 0, flit_below_bound = 0, flit_below_est = 0, conflict_free = 0, cf_exact = 0;
    for (int i = 0; i < r->nphases; i++) {
        const sim_phase_result *ph = &r->ph[i];
        if (1.0 / ph->load.W < est - 1e-9)
            below++;
        if (!ph->simulated || !p->barrier)
            continue;
        if (ph->throughput < 1.0 / ph->load.W - 1e-9)
            flit_below_bound++;
        if (ph->throughput < est - 1e-9)
            flit_below_est++;
        if (ph->load.W == 1) {
            conflict_free++;
            cf_exact += ph->cycles == ph->ideal;
        }
    }
    printf("summary:\n");
    printf("  mean max link weight W          %.4f  (link-load bound 1/W = %.4f)\n", r->mean_W, 1.0 / r->mean_W);
    if (t->kind == SIM_TOPO_FATTREE)
        printf("  paper estimate                  %.4f  (fat trees: conflict-free yardstick)\n", est);
    else
        printf("  paper estimate min(4/K, 1)      %.4f  (K = %d; counts links only, not a bound under DOR)\n", est,
               sim_topo_max_radix(t));
    printf("  phases with 1/W_i below the estimate: %d of %d\n", below, r->nphases);
    if (flit && r->simulated > 0) {
        if (p->barrier) {
            printf("  mean per-phase throughput       %.4f  (flit level, %d phases simulated)\n", r->mean_throughput,
                   r->simulated);
            printf("  phases below their bound 1/W_i: %d; below the estimate: %d; conflict-free phases at ideal: %d of "
                   "%d\n",
                   flit_below_bound, flit_below_est, cf_exact, conflict_free);
        }
        printf("  whole all-to-all throughput     %.4f  (sum of ideal cycles %lld / %lld cycles%s)\n",
               r->whole_throughput, (long long)r->ideal_sum, (long long)r->total_cycles,
               p->barrier && p->barrier_latency ? ", barriers included" : "");
        double secs = r->wall_seconds;
        printf("  flit level: %lld flit-hops in %.2f s = %.2f M flit-hops/s (%lld threads x %d processes)\n",
               (long long)r->flit_hops, secs, secs > 0 ? (double)r->flit_hops / secs / 1e6 : 0.0, (long long)p->threads,
               o->nranks);
    }
}

/* Flit-hops the flit level would simulate for the selected phases: every
 * message's flits times the routers on its path, known exactly from the
 * link loads (router-to-router hops plus the last router). */
static double predicted_flit_hops(const sim_topo *t, const sim_params *p, const sim_alltoall_result *r)
{
    uint8_t *sel = calloc((size_t)t->nnodes + 1, 1);
    sim_err err;
    double hops = 0;
    if (sel && sim_phase_list_parse(p->phases, t->nnodes - 1, sel, &err) >= 0)
        for (int i = 0; i < r->nphases; i++)
            if (sel[r->ph[i].phase])
                hops += (double)(r->ph[i].load.hops + r->ph[i].load.nmsg) * (double)r->ph[i].msg_flits;
    free(sel);
    return hops;
}

#define AUTO_FLIT_LIMIT 1e10 /* about a quarter hour of one core at ~10 M flit-hops/s */

static int cmd_alltoall(cli_opts *o, const sim_topo *t, const int32_t *map)
{
    sim_err err;
    memset(&err, 0, sizeof err);
    sim_alltoall_result r;
    int flit = !o->load_only;
    if (flit && !o->engine_forced) {
        /* the link-load pass is cheap and tells how big the flit level would be */
        sim_run_opts opts = {0, 0, 1};
        if (sim_run_alltoall(t, &o->p, map, &opts, &r, &err))
            return o->rank == 0 ? fail(NULL, &err) : 1;
        double work = predicted_flit_hops(t, &o->p, &r);
        sim_alltoall_result_free(&r);
        if (work > AUTO_FLIT_LIMIT) {
            flit = 0;
            if (o->rank == 0)
                printf(
                    "note: flit level would simulate %.3g flit-hops (about %.0f core-minutes); running the link-load "
                    "engine only. Use --engine flit to force it, or --phases every:K to sample phases.\n",
                    work, work / 1e7 / 60);
        }
    }
    if (sim_mpi_alltoall(t, &o->p, map, flit, &r, &err))
        return o->rank == 0 ? fail(NULL, &err) : 1;
    if (o->rank != 0) {
        sim_alltoall_result_free(&r);
        return 0;
    }
    print_alltoall(o, t, &r, flit);
    int rc = 0;
    if (o->csv && out_csv_phases(o->csv, t, &r, &err))
        rc = fail(NULL, &err);
    int64_t sim_cycles = 0;
    for (int i = 0; i < r.nphases; i++)
        if (r.ph[i].simulated)
            sim_cycles = o->p.barrier ? sim_cycles + r.ph[i].cycles : r.total_cycles;
    if (o->links && out_csv_links(o->links, t, r.chan_msgs, flit ? r.chan_flits : NULL, sim_cycles, &err))
        rc = fail(NULL, &err);
    char path[1024];
    FILE *f = open_json(o, path, sizeof path);
    if (f) {
        json_out j;
        json_begin(&j, f);
        out_json_header(&j, "alltoall", t, &o->p, mapping_name(o));
        out_json_phases(&j, "phases", t, &r);
        json_key(&j, "summary");
        json_obj_open(&j);
        json_kv_num(&j, "mean_W", r.mean_W);
        json_kv_num(&j, "bound", 1.0 / r.mean_W);
        json_kv_num(&j, "paper_estimate", sim_load_paper_estimate(t));
        json_kv_int(&j, "simulated_phases", r.simulated);
        json_kv_num(&j, "mean_throughput", r.mean_throughput);
        json_kv_num(&j, "whole_throughput", r.whole_throughput);
        json_kv_int(&j, "total_cycles", r.total_cycles);
        json_kv_int(&j, "flit_hops", r.flit_hops);
        json_kv_num(&j, "wall_seconds", r.wall_seconds);
        json_obj_close(&j);
        out_json_links(&j, "links", t, r.chan_msgs, flit ? r.chan_flits : NULL, sim_cycles);
        if (o->links_phase > 0 && o->links_phase < t->nnodes) {
            int32_t *src = malloc(sizeof(int32_t) * (size_t)t->nnodes),
                    *dst = malloc(sizeof(int32_t) * (size_t)t->nnodes);
            int32_t *w = malloc(sizeof(int32_t) * ((size_t)t->ninter + 1));
            sim_phase_result ph;
            int m = sim_stride_pairs(map, t->nnodes, o->links_phase, src, dst);
            if (src && dst && w && !sim_run_pattern(t, &o->p, m, src, dst, 0, &ph, NULL, w, &err)) {
                json_kv_int(&j, "links_phase", o->links_phase);
                out_json_weights(&j, "phase_links", t, w);
            }
            free(src), free(dst), free(w);
        }
        rc |= finish_json(o, f, &j, path);
    }
    sim_alltoall_result_free(&r);
    return rc;
}

/* ---- stride and perm: one pattern ------------------------------------------ */

static int run_one_pattern(cli_opts *o, const sim_topo *t, const char *what, int nmsg, const int32_t *src,
                           const int32_t *dst)
{
    sim_err err;
    int flit = !o->load_only;
    sim_phase_result ph;
    int64_t *chan = calloc((size_t)sim_topo_nchan(t), sizeof *chan);
    int32_t *w = calloc((size_t)t->ninter + 1, sizeof *w);
    if (!chan || !w) {
        free(chan), free(w);
        fprintf(stderr, "shoal-sim: out of memory\n");
        return 1;
    }
    double t0 = now_s();
    if (sim_run_pattern(t, &o->p, nmsg, src, dst, flit, &ph, chan, w, &err)) {
        free(chan), free(w);
        return fail(what, &err);
    }
    double secs = now_s() - t0;
    printf("shoal-sim %s: %s, %d messages of %lld B (%lld flits), mapping %s\n", what, t->name, ph.load.nmsg,
           (long long)o->p.msg, (long long)ph.msg_flits, mapping_name(o));
    printf("  max link weight W_i            %d  (bound 1/W_i = %.4f)\n", ph.load.W, 1.0 / ph.load.W);
    printf("  links at the maximum            %d of %d\n", ph.load.nmax, t->ninter);
    printf("  average-load bound              %.4f  (%lld link traversals on %d links)\n",
           sim_load_avg_bound(t, &ph.load), (long long)ph.load.hops, t->ninter);
    printf("  paper estimate                  %.4f\n", sim_load_paper_estimate(t));
    printf("  ideal cycles                    %lld  (longest path: %d routers)\n", (long long)ph.ideal,
           ph.load.max_routers);
    if (flit) {
        printf("  simulated cycles                %lld\n", (long long)ph.cycles);
        printf("  throughput                      %.4f  (ideal / simulated)\n", ph.throughput);
        printf("  flit level                      %lld flit-hops in %.3f s\n", (long long)ph.flit_hops, secs);
    }
    int rc = 0;
    if (o->links) {
        int64_t *m64 = calloc((size_t)t->ninter + 1, sizeof *m64);
        if (m64) {
            for (int i = 0; i < t->ninter; i++)
                m64[i] = w[i];
            if (out_csv_links(o->links, t, m64, flit ? chan : NULL, ph.cycles, &err))
                rc = fail(NULL, &err);
            free(m64);
        }
    }
    char path[1024];
    FILE *f = open_json(o, path, sizeof path);
    if (f) {
        json_out j;
        json_begin(&j, f);
        out_json_header(&j, what, t, &o->p, mapping_name(o));
        json_key(&j, "pattern");
        json_obj_open(&j);
        if (o->stride)
            json_kv_int(&j, "stride", o->stride);
        json_kv_int(&j, "messages", ph.load.nmsg);
        json_kv_int(&j, "W", ph.load.W);
        json_kv_num(&j, "bound", 1.0 / ph.load.W);
        json_kv_num(&j, "avg_bound", sim_load_avg_bound(t, &ph.load));
        json_kv_num(&j, "paper_estimate", sim_load_paper_estimate(t));
        json_kv_int(&j, "ideal", ph.ideal);
        if (flit) {
            json_kv_int(&j, "cycles", ph.cycles);
            json_kv_num(&j, "throughput", ph.throughput);
        }
        json_obj_close(&j);
        int64_t *m64 = calloc((size_t)t->ninter + 1, sizeof *m64);
        if (m64) {
            for (int i = 0; i < t->ninter; i++)
                m64[i] = w[i];
            out_json_links(&j, "links", t, m64, flit ? chan : NULL, ph.cycles);
            free(m64);
        }
        rc |= finish_json(o, f, &j, path);
    }
    free(chan), free(w);
    return rc;
}

static int cmd_stride(cli_opts *o, const sim_topo *t, const int32_t *map)
{
    int n = t->nnodes;
    if (o->stride <= 0 || o->stride >= n) {
        fprintf(stderr, "shoal-sim: option --stride: needs a stride in 1..%d for %s\n", n - 1, t->name);
        return 1;
    }
    int32_t *src = malloc(sizeof(int32_t) * (size_t)n), *dst = malloc(sizeof(int32_t) * (size_t)n);
    if (!src || !dst)
        return 1;
    int m = sim_stride_pairs(map, n, o->stride, src, dst);
    int rc = run_one_pattern(o, t, "stride", m, src, dst);
    free(src), free(dst);
    return rc;
}

static int cmd_perm(cli_opts *o, const sim_topo *t, const int32_t *map)
{
    int n = t->nnodes;
    if (!o->perm_file) {
        fprintf(stderr, "shoal-sim: the perm command needs --perm FILE\n");
        return 1;
    }
    sim_err err;
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *src = malloc(sizeof(int32_t) * (size_t)n), *dst = malloc(sizeof(int32_t) * (size_t)n);
    if (!perm || !src || !dst)
        return 1;
    int rc;
    if (sim_perm_read(o->perm_file, n, perm, &err))
        rc = fail(NULL, &err);
    else {
        int m = sim_perm_pairs(map, perm, n, src, dst);
        rc = run_one_pattern(o, t, "perm", m, src, dst);
    }
    free(perm), free(src), free(dst);
    return rc;
}

/* ---- random ------------------------------------------------------------------ */

static int cmd_random(cli_opts *o, const sim_topo *t)
{
    sim_err err;
    double loads[256];
    int n = sim_load_list_parse(o->p.loads, loads, 256, &err);
    if (n < 0)
        return fail(NULL, &err);
    sim_random_result *res = calloc((size_t)n, sizeof *res);
    if (!res)
        return 1;
    double t0 = now_s();
    if (sim_run_random(t, &o->p, loads, n, res, &err)) {
        free(res);
        return fail(NULL, &err);
    }
    double secs = now_s() - t0;
    int64_t zl = sim_zero_load_latency(&o->p, 2, o->p.packet_flits);
    printf(
        "shoal-sim random: %s, uniform random destinations, packets of %lld flits, warmup %lld, measure %lld cycles\n",
        t->name, (long long)o->p.packet_flits, (long long)o->p.warmup, (long long)o->p.measure);
    printf("  (zero-load latency of one packet to a neighbour: %lld cycles)\n", (long long)zl);
    printf("%10s %10s %12s %12s %10s %9s %s\n", "offered", "accepted", "avg_latency", "max_latency", "packets",
           "backlog", "");
    for (int i = 0; i < n; i++)
        printf("%10.3f %10.4f %12.1f %12lld %10lld %9.1f %s\n", res[i].offered, res[i].accepted, res[i].avg_latency,
               (long long)res[i].max_latency, (long long)res[i].measured_packets, res[i].backlog,
               res[i].saturated ? "saturated" : "");
    printf("  backlog: packets per node still in source queues when the window closed (saturated above 4)\n");
    printf("  %d load points in %.2f s (%lld threads)\n", n, secs, (long long)o->p.threads);
    int rc = 0;
    if (o->csv && out_csv_random(o->csv, res, n, &err))
        rc = fail(NULL, &err);
    char path[1024];
    FILE *f = open_json(o, path, sizeof path);
    if (f) {
        json_out j;
        json_begin(&j, f);
        out_json_header(&j, "random", t, &o->p, "identity");
        json_kv_int(&j, "zero_load_neighbour", zl);
        json_key(&j, "random");
        json_arr_open(&j);
        for (int i = 0; i < n; i++) {
            json_obj_open(&j);
            json_kv_num(&j, "offered", res[i].offered);
            json_kv_num(&j, "accepted", res[i].accepted);
            json_kv_num(&j, "avg_latency", res[i].avg_latency);
            json_kv_int(&j, "max_latency", res[i].max_latency);
            json_kv_int(&j, "packets", res[i].measured_packets);
            json_kv_num(&j, "backlog", res[i].backlog);
            json_kv_int(&j, "undelivered", res[i].undelivered);
            json_kv_int(&j, "saturated", res[i].saturated);
            json_obj_close(&j);
        }
        json_arr_close(&j);
        rc |= finish_json(o, f, &j, path);
    }
    free(res);
    return rc;
}

/* ---- latency ------------------------------------------------------------------- */

static int cmd_latency(cli_opts *o, const sim_topo *t)
{
    sim_err err;
    int src = o->src, dst = o->dst;
    if (dst < 0)
        dst = t->kind == SIM_TOPO_FATTREE ? 1 : t->out_peer[t->node_router[src] * t->nports + 1];
    if (dst < 0)
        dst = 1;
    if (src < 0 || src >= t->nnodes || dst < 0 || dst >= t->nnodes || src == dst) {
        fprintf(stderr, "shoal-sim: options --src/--dst: need two different nodes in 0..%d\n", t->nnodes - 1);
        return 1;
    }
    const sim_params *p = &o->p;
    printf("shoal-sim latency: %s, node %d -> node %d, empty network\n", t->name, src, dst);
    printf("  formula: inject_latency + eject_latency + R*router_stages + (R-1)*link_latency + serialisation(L)\n");
    printf("           with inject %lld, eject %lld, router_stages %lld, link_latency %lld, flit %lld B, link %lld "
           "B/cycle\n",
           (long long)p->inject_latency, (long long)p->eject_latency, (long long)p->router_stages,
           (long long)p->link_latency, (long long)p->flit_size, (long long)p->link_width);
    printf("%8s %8s %10s %10s %s\n", "flits", "routers", "measured", "formula", "");
    int64_t sizes[3] = {1, p->packet_flits, o->flits};
    int count = o->flits > 0 && o->flits != 1 && o->flits != p->packet_flits ? 3 : 2, rc = 0;
    for (int i = 0; i < count; i++) {
        if (i == 1 && sizes[1] == 1)
            continue;
        int64_t meas, form;
        int routers;
        if (sim_run_zero_load(t, p, src, dst, sizes[i], &meas, &form, &routers, &err))
            return fail(NULL, &err);
        printf("%8lld %8d %10lld %10lld %s\n", (long long)sizes[i], routers, (long long)meas, (long long)form,
               meas == form ? "equal" : "DIFFERENT");
        if (meas != form)
            rc = 1;
    }
    return rc;
}

/* ---- map --------------------------------------------------------------------------- */

static int cmd_map(cli_opts *o, const sim_topo *t, int32_t *map)
{
    sim_err err;
    memset(&err, 0, sizeof err);
    const int n = t->nnodes;
    int32_t *start = malloc(sizeof(int32_t) * (size_t)n);
    if (!start)
        return 1;
    memcpy(start, map, sizeof(int32_t) * (size_t)n);
    sim_map_result mr;
    int rc = 0;
    if (o->rank == 0) {
        rc = sim_map_search(t, &o->p, map, &mr, &err);
    }
    /* every rank needs the result for the flit-level comparison */
    if (o->nranks > 1) {
        sim_mpi_bcast_map(map, n, &rc);
    }
    if (rc) {
        free(start);
        return o->rank == 0 ? fail("map", &err) : 1;
    }
    char outname[512];
    if (o->out_file)
        snprintf(outname, sizeof outname, "%s", o->out_file);
    else {
        snprintf(outname, sizeof outname, "mapping-%s.txt", t->name);
        for (char *c = outname; *c; c++)
            if (*c == ':' || *c == ',')
                *c = '-';
    }
    if (o->rank == 0) {
        char header[512];
        snprintf(header, sizeof header,
                 "shoal-sim mapping for %s: line i is the physical node of logical rank i\n"
                 "W %.4f -> %.4f (start: %s), seed %lld, %lld moves",
                 t->name, mr.W_start, mr.W_final, mapping_name(o), (long long)o->p.seed, (long long)mr.moves);
        if (sim_mapping_write(outname, map, n, header, &err)) {
            free(start);
            return fail(NULL, &err);
        }
        printf("shoal-sim map: %s, start %s, seed %lld\n", t->name, mapping_name(o), (long long)o->p.seed);
        printf("  W before                        %.4f  (1/W = %.4f)\n", mr.W_start, 1.0 / mr.W_start);
        if (mr.W_greedy > 0)
            printf("  W of the greedy construction    %.4f%s\n", mr.W_greedy,
                   mr.started_from_greedy ? "  (annealing started from it)" : "");
        if (mr.greedy_skipped)
            printf("  greedy construction skipped (more than 256 nodes)\n");
        printf("  W after                         %.4f  (1/W = %.4f)\n", mr.W_final, 1.0 / mr.W_final);
        printf("  annealing: %lld moves, %lld accepted, %lld improvements, %.2f s\n", (long long)mr.moves,
               (long long)mr.accepted, (long long)mr.improved, mr.seconds);
        printf("  mapping written to %s\n", outname);
    }
    sim_alltoall_result before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    int flit = !o->load_only;
    if (sim_mpi_alltoall(t, &o->p, start, flit, &before, &err) || sim_mpi_alltoall(t, &o->p, map, flit, &after, &err)) {
        free(start);
        sim_alltoall_result_free(&before);
        return o->rank == 0 ? fail("map: evaluating the mappings", &err) : 1;
    }
    if (o->rank == 0) {
        if (flit) {
            printf("  flit level, msg %lld B: mean per-phase throughput %.4f -> %.4f, whole all-to-all %.4f -> %.4f\n",
                   (long long)o->p.msg, before.mean_throughput, after.mean_throughput, before.whole_throughput,
                   after.whole_throughput);
            printf("                          all-to-all cycles %lld -> %lld\n", (long long)before.total_cycles,
                   (long long)after.total_cycles);
        }
        char path[1024];
        FILE *f = open_json(o, path, sizeof path);
        if (f) {
            json_out j;
            json_begin(&j, f);
            out_json_header(&j, "map", t, &o->p, mapping_name(o));
            json_key(&j, "map");
            json_obj_open(&j);
            json_kv_str(&j, "file", outname);
            json_kv_str(&j, "mapping_after", outname);
            json_kv_num(&j, "W_before", mr.W_start);
            json_kv_num(&j, "W_greedy", mr.W_greedy);
            json_kv_num(&j, "W_after", mr.W_final);
            json_kv_int(&j, "moves", mr.moves);
            json_kv_num(&j, "seconds", mr.seconds);
            if (flit) {
                json_kv_num(&j, "throughput_before", before.mean_throughput);
                json_kv_num(&j, "throughput_after", after.mean_throughput);
                json_kv_num(&j, "whole_before", before.whole_throughput);
                json_kv_num(&j, "whole_after", after.whole_throughput);
                json_kv_int(&j, "cycles_before", before.total_cycles);
                json_kv_int(&j, "cycles_after", after.total_cycles);
            }
            json_obj_close(&j);
            out_json_phases(&j, "phases_before", t, &before);
            out_json_phases(&j, "phases", t, &after);
            rc |= finish_json(o, f, &j, path);
        }
    }
    sim_alltoall_result_free(&before);
    sim_alltoall_result_free(&after);
    free(start);
    return rc;
}

/* ---- bench -------------------------------------------------------------------------- */

/* CPU seconds (user + system) this process has used, all threads. Less
 * disturbed than wall time when other work shares the cores. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmd_bench(cli_opts *o, const sim_topo *t, const int32_t *map)
{
    sim_err err;
    int repeat = o->repeat > 0 ? o->repeat : 3;
    const char *list = o->threads_list[0] ? o->threads_list : "1,2";
    printf("shoal-sim bench: %s, all-to-all of %lld B messages at flit level, %d repetitions per thread count\n",
           t->name, (long long)o->p.msg, repeat);
    printf("%8s %10s %10s %10s %12s %16s %12s\n", "threads", "median_s", "min_s", "max_s", "cpu_median", "Mflit-hops/s",
           "cycles");
    const char *s = list;
    while (*s) {
        char *end;
        long th = strtol(s, &end, 10);
        if (end == s || th < 1) {
            fprintf(stderr, "shoal-sim: option --threads-list: '%s' is not a list of thread counts\n", list);
            return 1;
        }
        s = *end == ',' ? end + 1 : end;
        sim_params q = o->p;
        q.threads = th;
        double *secs = calloc((size_t)repeat, sizeof *secs), *cpu = calloc((size_t)repeat, sizeof *cpu);
        int64_t hops = 0, cycles = 0;
        for (int k = 0; k < repeat; k++) {
            sim_alltoall_result r;
            sim_run_opts opts = {1, 0, 1};
            double c0 = cpu_seconds();
            if (sim_run_alltoall(t, &q, map, &opts, &r, &err)) {
                free(secs), free(cpu);
                return fail("bench", &err);
            }
            cpu[k] = cpu_seconds() - c0;
            secs[k] = r.wall_seconds;
            hops = r.flit_hops;
            cycles = r.total_cycles;
            sim_alltoall_result_free(&r);
        }
        double med = core_median(secs, repeat), cpu_med = core_median(cpu, repeat);
        printf("%8ld %10.3f %10.3f %10.3f %12.3f %16.2f %12lld\n", th, med, secs[0], secs[repeat - 1], cpu_med,
               (double)hops / med / 1e6, (long long)cycles);
        fflush(stdout);
        free(secs), free(cpu);
    }
    printf("  flit-hops: flits through a router crossbar (one per router traversed); cpu: user+system seconds of\n"
           "  all threads (includes the link-load pass); %d hardware threads here\n",
           (int)sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}

int main(int argc, char **argv)
{
    cli_opts o;
    memset(&o, 0, sizeof o);
    o.src = 0;
    o.dst = -1;
    sim_params_default(&o.p);
    sim_mpi_start(&argc, &argv, &o.rank, &o.nranks);
    int rc = 1;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        sim_mpi_stop();
        return argc < 2 ? 2 : 0;
    }
    o.command = argv[1];
    static const char *commands[] = {"alltoall", "stride", "perm", "random", "latency", "map", "params", "bench", NULL};
    int known = 0;
    for (int i = 0; commands[i]; i++)
        known |= !strcmp(commands[i], o.command);
    sim_err err;
    memset(&err, 0, sizeof err);
    if (!known) {
        fprintf(stderr, "shoal-sim: unknown command '%s' (see shoal-sim --help)\n", o.command);
        sim_mpi_stop();
        return 2;
    }
    if (parse_args(argc, argv, &o, &err)) {
        if (o.rank == 0)
            fail(NULL, &err);
        sim_mpi_stop();
        return 2;
    }
    if (!strcmp(o.command, "params")) {
        if (o.rank == 0 && o.markdown) {
            printf("| parameter | default | range | unit | meaning |\n|---|---|---|---|---|\n");
            for (const sim_param_desc *d = sim_param_table(); d->name; d++) {
                char range[80] = "";
                if (d->type == SIM_PT_INT || d->type == SIM_PT_SIZE) {
                    if (d->max >= INT64_C(1000000000000000))
                        snprintf(range, sizeof range, "%lld or more", (long long)d->min);
                    else
                        snprintf(range, sizeof range, "%lld..%lld", (long long)d->min, (long long)d->max);
                } else if (d->type == SIM_PT_ENUM) {
                    snprintf(range, sizeof range, "%s", d->choices);
                    for (char *c = range; *c; c++)
                        if (*c == '|')
                            *c = ',';
                } else if (d->type == SIM_PT_BOOL) {
                    snprintf(range, sizeof range, "on, off");
                } else if (d->type == SIM_PT_REAL) {
                    snprintf(range, sizeof range, ">= 0");
                }
                printf("| `%s` | `%s` | %s | %s | %s |\n", d->name, d->def, range, d->unit, d->doc);
            }
        } else if (o.rank == 0) {
            sim_params_write(&o.p, stdout);
        }
        sim_mpi_stop();
        return 0;
    }
    sim_topo t;
    if (sim_topo_parse(o.p.topo, &t, &err)) {
        if (o.rank == 0)
            fail(NULL, &err);
        sim_mpi_stop();
        return 2;
    }
    if (!o.load_only && strcmp(o.command, "map") != 0 && sim_flit_check_params(&t, &o.p, &err)) {
        if (o.rank == 0)
            fail(NULL, &err);
        sim_topo_free(&t);
        sim_mpi_stop();
        return 2;
    }
    int32_t *map = malloc(sizeof(int32_t) * (size_t)t.nnodes);
    if (!map) {
        sim_mpi_stop();
        return 1;
    }
    sim_mapping_identity(map, t.nnodes);
    if (o.mapping_file && sim_mapping_read(o.mapping_file, t.nnodes, map, &err)) {
        if (o.rank == 0)
            fail(NULL, &err);
        free(map);
        sim_topo_free(&t);
        sim_mpi_stop();
        return 2;
    }
    /* commands without a parallel driver run on rank 0 alone */
    int parallel = !strcmp(o.command, "alltoall") || !strcmp(o.command, "map");
    if (parallel || o.rank == 0) {
        if (!strcmp(o.command, "alltoall"))
            rc = cmd_alltoall(&o, &t, map);
        else if (!strcmp(o.command, "stride"))
            rc = cmd_stride(&o, &t, map);
        else if (!strcmp(o.command, "perm"))
            rc = cmd_perm(&o, &t, map);
        else if (!strcmp(o.command, "random"))
            rc = cmd_random(&o, &t);
        else if (!strcmp(o.command, "latency"))
            rc = cmd_latency(&o, &t);
        else if (!strcmp(o.command, "map"))
            rc = cmd_map(&o, &t, map);
        else if (!strcmp(o.command, "bench"))
            rc = cmd_bench(&o, &t, map);
    } else {
        rc = 0;
    }
    free(map);
    sim_topo_free(&t);
    sim_mpi_stop();
    return rc;
}
