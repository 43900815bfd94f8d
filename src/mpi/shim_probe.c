/* Measuring the node: the timer and the figure measurements that shoal tune
 * and MPI_Init's probe share, and that probe.
 *
 * Built-in figures describe one machine; on another the planner would
 * choose lanes by someone else's hardware (on one 2-core VM single copy was
 * half memcpy's speed, on another a tenth). So without a tuning file,
 * MPI_Init measures the few figures that decide between lanes: one core's
 * copy and reduction rates, a rank's wait for another, and the cells and
 * cma lanes between two ranks, fitted as shoal tune fits them. Node rank 0's
 * fit goes to every rank of the node, so all plan alike. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "core_sys.h"
#include "shim_comm.h"
#include "shim_probe.h"

/* ---- timing ---- */

/* Completes a request; polling while this rank is measured, sleeping 20 us
 * between tests while it sits out. */
static void complete(MPI_Request *req, bool polite)
{
    int done = 0;
    struct timespec nap = {0, 20000};
    for (;;) {
        PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (polite)
            nanosleep(&nap, NULL);
    }
}

double shim_time_batch(const shim_timing *o, shim_timed_fn fn, void *arg, long iters, bool active)
{
    MPI_Request req;
    bool polite = !active && !o->idle_polls;
    PMPI_Ibarrier(o->comm, &req);
    complete(&req, polite);
    uint64_t t0 = core_now_ns();
    for (long i = 0; active && i < iters; i++)
        fn(arg);
    double mine = active ? (double)(core_now_ns() - t0) / (double)iters : 0, slowest = 0;
    PMPI_Iallreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, o->comm, &req);
    complete(&req, polite);
    return slowest;
}

/* Two probes, the faster kept: one that met a descheduled rank would make
 * every batch a single call, and each then pays the start skew. */
long shim_time_iters(const shim_timing *o, shim_timed_fn fn, void *arg, bool active)
{
    double probe = shim_time_batch(o, fn, arg, 2, active), again = shim_time_batch(o, fn, arg, 2, active);
    probe = again < probe ? again : probe;
    long iters = probe > 0 ? (long)(o->batch_ns / probe) : 1000;
    return iters < 1 ? 1 : iters > 20000 ? 20000 : iters;
}

int shim_time_batches(const shim_timing *o)
{
    return o->batches < 1 ? 1 : o->batches > SHIM_MAX_BATCHES ? SHIM_MAX_BATCHES : o->batches;
}

/* A point's time from its nb batch times: their median, or the fastest. */
static double batches_result(const shim_timing *o, double *t, int nb)
{
    double best = t[0];
    for (int b = 1; b < nb; b++)
        best = t[b] < best ? t[b] : best;
    return o->fastest ? best : core_median(t, nb);
}

double shim_time_ns(const shim_timing *o, shim_timed_fn fn, void *arg, bool active)
{
    long iters = shim_time_iters(o, fn, arg, active);
    double t[SHIM_MAX_BATCHES];
    int nb = shim_time_batches(o);
    for (int b = 0; b < nb; b++)
        t[b] = shim_time_batch(o, fn, arg, iters, active);
    return batches_result(o, t, nb);
}

/* ---- one core ---- */

typedef struct copy_arg {
    char *a, *b;
    size_t len;
    core_reduce_fn kernel;
} copy_arg;

static void copy_once(void *p)
{
    copy_arg *c = p;
    memcpy(c->b, c->a, c->len);
}

static void reduce_once(void *p)
{
    copy_arg *c = p;
    c->kernel(c->b, c->a, c->b, c->len / sizeof(float));
}

/* A zeroed buffer for timing one core's copies, NULL if none. Huge pages
 * where the kernel gives them: a fresh 4 KiB page costs a fault of about
 * 2 us on a VM, 2048 of them for the 8 MiB that the rate beyond the cache
 * copies through, and a copy within one process hardly depends on the page
 * size. (The lanes' buffers keep ordinary pages: single copy pins every
 * page it moves, so its rate does.) */
static void *core_buffer(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    memset(p, 0, len);
    return p;
}

static void core_buffer_free(void *p, size_t len)
{
    if (p)
        munmap(p, len);
}

/* Bytes per ns of fn on buffers of len bytes, timed on rank 0 alone (one
 * core's rate, even when ranks outnumber cores); `otherwise` when rank 0
 * could not allocate them. */
static double core_rate(shim_node_probe *p, shim_timed_fn fn, size_t len, double otherwise)
{
    copy_arg c = {0};
    bool active = false;
    if (p->rank == 0) {
        c = (copy_arg){core_buffer(len), core_buffer(len), len, core_reduce_kernel(CORE_FLOAT, CORE_OP_SUM)};
        active = c.a && c.b;
    }
    double ns = shim_time_ns(&p->timing, fn, &c, active);
    core_buffer_free(c.a, len);
    core_buffer_free(c.b, len);
    return ns > 0 ? (double)len / ns : otherwise;
}

void shim_time_barrier(void *team)
{
    if (team)
        coll_barrier(team);
}

/* Blocks of PLAN_REDUCE_BLOCK stay in cache, as the algorithms use them; a
 * copy of 4 caches' worth streams through 8, as the single-copy collectives
 * of a few MiB do. sync_ns: two ranks, where flat and dissemination barriers
 * are the same single step. */
void shim_probe_core(shim_node_probe *p, plan_model *m)
{
    m->copy_bw = core_rate(p, copy_once, PLAN_REDUCE_BLOCK, m->copy_bw);
    m->copy_mem_bw = core_rate(p, copy_once, 4 * plan_core_cache_bytes(), m->copy_mem_bw);
    m->reduce_bw = core_rate(p, reduce_once, PLAN_REDUCE_BLOCK, m->reduce_bw);
    coll_team *pair0 = p->pair && p->pair_index == 0 ? &p->pair->team : NULL;
    double sync = shim_time_ns(&p->timing, shim_time_barrier, pair0, pair0 != NULL);
    if (sync > 0)
        m->sync_ns = sync;
}

/* ---- lanes ---- */

/* How a timed exchange treats its send buffer: as it is (the bytes the
 * last exchange moved), or written anew first, and then exchanged or not
 * (the writing alone, whose time the written exchange less it leaves the
 * exchange of fresh bytes). */
typedef enum { SEND_AS_IS, SEND_WRITTEN, SEND_WRITTEN_ONLY } send_mode;

typedef struct exchange_arg {
    coll_team *t; /* NULL: this rank sits out */
    lane_id lane;
    int peer;
    char *send, *recv; /* recv NULL: this rank only exposes */
    size_t len;
    send_mode mode;
    unsigned char stamp; /* what the send buffer was last written with */
} exchange_arg;

static void exchange_once(void *p)
{
    exchange_arg *a = p;
    if (!a->t)
        return;
    if (a->mode != SEND_AS_IS)
        memset(a->send, ++a->stamp, a->len);
    if (a->mode != SEND_WRITTEN_ONLY)
        coll_exchange(a->t, a->lane, a->peer, a->send, a->recv, a->len);
}

/* This rank's part in one transfer of len bytes on lane with `movers` ranks
 * reading at once: movers 1 is one way within pair 0, else movers/2 pairs
 * both ways. t NULL: this rank sits out. */
static exchange_arg exchange_for(const shim_node_probe *p, lane_id lane, size_t len, int movers, char *send, char *recv)
{
    exchange_arg a = {0};
    int pairs = movers == 1 ? 1 : movers / 2;
    if (p->pair && p->pair_index < pairs) {
        a = (exchange_arg){
            .t = &p->pair->team, .lane = lane, .peer = 1 - p->pair->rank, .send = send, .recv = recv, .len = len};
        if (movers == 1 && p->pair->rank == 0)
            a.recv = NULL;
    }
    return a;
}

/* One timed transfer of a lane: a size at a number of movers, or the
 * lane's latency (8 bytes, one mover), fitted apart. */
typedef struct lane_point {
    lane_id lane;
    bool latency;
    send_mode mode;
    plan_sample s;
    exchange_arg arg;
    long iters;
    double t[SHIM_MAX_BATCHES];
} lane_point;

/* The sizes a lane is timed at: over its range, the cells lane up to its
 * largest single-round transfer. The probe at MPI_Init stops single copy
 * at 1 MiB and leaves the host lane to its deliberately modest figures. */
static int lane_sizes(shim_probe_depth depth, lane_id lane, size_t window, size_t *out)
{
    static const size_t cells_sizes[] = {64, 256, 1024, 4096, 16384, 65536};
    static const size_t cma_sizes[] = {4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
    static const size_t cma_startup[] = {4096, 65536, 1 << 20};
    static const size_t host_sizes[] = {256, 4096, 65536, 262144, 1 << 20, 4 << 20};
    if (depth == SHIM_PROBE_STARTUP && lane == LANE_CMA) {
        memcpy(out, cma_startup, sizeof cma_startup);
        return 3;
    }
    const size_t *src = lane == LANE_CELLS ? cells_sizes : lane == LANE_CMA ? cma_sizes : host_sizes;
    int k = 0;
    for (int i = 0; i < 6; i++)
        if (depth == SHIM_PROBE_FULL || i % 2 == 1)
            out[k++] = src[i];
    if (lane == LANE_CELLS)
        out[k++] = window / CORE_CACHELINE * CORE_CACHELINE;
    return k;
}

static void add_sample(shim_node_probe *p, lane_id lane, size_t bytes, int movers, double ns)
{
    if (p->samples && p->nsamples < p->max_samples)
        p->samples[p->nsamples++] = (shim_lane_sample){lane, {(double)bytes, movers, ns}};
}

#define MAX_LANE_SAMPLES 128

/* Whether lane l's figures are timed on bytes that stay in the reader's
 * cache between transfers (a single-copy reader), so that bytes just
 * written cost more (plan_model.lane_written). A staged lane copies
 * through its cells either way. */
static bool reads_in_place(lane_id l) { return lane_can(l, LANE_CAP_SINGLE_COPY) && !lane_can(l, LANE_CAP_TWO_SIDED); }

/* The exchanges of bytes just written, as samples of the lane: each
 * written exchange less the writing alone. Returns how many. */
static int written_samples(lane_point *pts, int npts, lane_id l, const shim_timing *o, int nb, plan_sample *out,
                           int max)
{
    int k = 0;
    for (int i = 0; i < npts && k < max; i++) {
        if (pts[i].lane != l || pts[i].mode != SEND_WRITTEN)
            continue;
        for (int j = 0; j < npts; j++)
            if (pts[j].lane == l && pts[j].mode == SEND_WRITTEN_ONLY && pts[j].s.bytes == pts[i].s.bytes &&
                pts[j].s.movers == pts[i].s.movers) {
                double t = batches_result(o, pts[i].t, nb) - batches_result(o, pts[j].t, nb);
                out[k++] = (plan_sample){pts[i].s.bytes, pts[i].s.movers, t > 0 ? t : 1};
                break;
            }
    }
    return k;
}

void shim_probe_lanes(shim_node_probe *p, plan_model *m, bool fitted[LANE_COUNT])
{
    int size = 0;
    PMPI_Comm_size(p->timing.comm, &size);
    int most = p->max_movers < size ? p->max_movers : size;
    int movers[16], nm = 0;
    /* With movers 1 and 2 alone, the split of bandwidth into a dedicated and
     * a shared part rests on two noisy points and swings from run to run:
     * a short probe times both ranks moving at once (what the planner prices
     * at 2 ranks) and leaves the split to shoal tune; but for a staged lane
     * (one_way_too), whose exchange gives each core both copies of two
     * transfers where one transfer spreads its two over two cores, also
     * one way. Priced at the exchange's rate, a one-way transfer over the
     * cells (bcast, gather, scatter at np 2) came to 2-3x what it took
     * (2-core EPYC VM: 60 us modelled for a 1 MiB bcast, 18-22 measured). */
    bool short_probe = p->depth == SHIM_PROBE_STARTUP;
    for (int k = 1; k <= most && nm < 16; k *= 2)
        movers[nm++] = k;
    if (most % 2 == 0 && movers[nm - 1] != most && nm < 16)
        movers[nm++] = most;
    if (most % 2 && most == size)
        nm -= movers[nm - 1] == most; /* an odd rank out cannot pair */

    size_t window = p->pair ? p->pair->team.lane.stage_size : 0;
    PMPI_Allreduce(MPI_IN_PLACE, &window, 1, MPI_UNSIGNED_LONG, MPI_MAX, p->timing.comm);
    /* Buffers for the largest size timed: the cells lane's window can be
     * larger than any fixed size (SHOAL_SHM_SIZE). */
    size_t biggest = 8;
    for (int l = 0; l < LANE_COUNT; l++) {
        size_t sizes[8];
        int ns = p->lanes[l] ? lane_sizes(p->depth, (lane_id)l, window, sizes) : 0;
        for (int i = 0; i < ns; i++)
            biggest = sizes[i] > biggest ? sizes[i] : biggest;
    }
    char *send = malloc(biggest), *recv = malloc(biggest);
    if (!send || !recv)
        core_fatal("out of memory for the %zu-byte buffers that measure the lanes", biggest);
    memset(send, 1, biggest);
    memset(recv, 0, biggest);

    /* Every lane's points, timed in turns batch by batch, as the tuner's
     * calibration times candidates: a slow spell of the machine then falls
     * on all lanes alike instead of making one look slow (timed one lane
     * after the other, a probe now and then found the cells as slow as
     * single copy and chose it everywhere). */
    lane_point *pts = calloc(LANE_COUNT * (1 + 8 * 16 + 2 * 8), sizeof *pts);
    if (!pts)
        core_fatal("out of memory for the lane measurements");
    int npts = 0;
    for (int l = 0; l < LANE_COUNT; l++) {
        if (!p->lanes[l])
            continue;
        size_t sizes[8];
        int ns = lane_sizes(p->depth, (lane_id)l, window, sizes);
        /* A team just made has cold staging areas, which the first timings
         * would pay for (a 128 KiB exchange timed 40 % slower the first
         * time through its round buffers than the second): every round
         * buffer twice, a window or the lane's largest size, untimed. */
        exchange_arg warm = {0};
        if (p->pair)
            warm = (exchange_arg){.t = &p->pair->team,
                                  .lane = (lane_id)l,
                                  .peer = 1 - p->pair->rank,
                                  .send = send,
                                  .recv = recv,
                                  .len = sizes[ns - 1] < window ? sizes[ns - 1] : window};
        for (int r = 0; r < 2 * LANE_ROUNDS; r++)
            exchange_once(&warm);
        pts[npts++] = (lane_point){
            .lane = (lane_id)l, .latency = true, .s = {8, 1, 0}, .arg = exchange_for(p, (lane_id)l, 8, 1, send, recv)};
        bool one_way_too = !short_probe || lane_can((lane_id)l, LANE_CAP_STAGED);
        for (int k = 0; k < nm; k++) {
            if (movers[k] == 1 && !one_way_too && nm > 1)
                continue;
            for (int i = 0; i < ns; i++)
                pts[npts++] = (lane_point){.lane = (lane_id)l,
                                           .s = {(double)sizes[i], movers[k], 0},
                                           .arg = exchange_for(p, (lane_id)l, sizes[i], movers[k], send, recv)};
        }
        /* Both ways at once, each rank reading bytes its peer has just
         * written. */
        bool both_ways = nm > 1 && movers[1] == 2;
        for (int i = 0; i < ns && both_ways && reads_in_place((lane_id)l); i++) {
            for (send_mode mode = SEND_WRITTEN; mode <= SEND_WRITTEN_ONLY; mode++) {
                lane_point pt = {.lane = (lane_id)l,
                                 .mode = mode,
                                 .s = {(double)sizes[i], 2, 0},
                                 .arg = exchange_for(p, (lane_id)l, sizes[i], 2, send, recv)};
                pt.arg.mode = mode;
                pts[npts++] = pt;
            }
        }
    }
    for (int i = 0; i < npts; i++)
        pts[i].iters = shim_time_iters(&p->timing, exchange_once, &pts[i].arg, pts[i].arg.t != NULL);
    int nb = shim_time_batches(&p->timing);
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < npts; i++)
            pts[i].t[b] = shim_time_batch(&p->timing, exchange_once, &pts[i].arg, pts[i].iters, pts[i].arg.t != NULL);

    for (int l = 0; l < LANE_COUNT; l++) {
        fitted[l] = false;
        double latency = 0;
        plan_sample fit[MAX_LANE_SAMPLES];
        int nfit = 0;
        for (int i = 0; i < npts; i++) {
            if (pts[i].lane != (lane_id)l)
                continue;
            double t = batches_result(&p->timing, pts[i].t, nb);
            if (pts[i].latency) {
                latency = t;
                continue;
            }
            if (pts[i].mode != SEND_AS_IS)
                continue;
            add_sample(p, (lane_id)l, (size_t)pts[i].s.bytes, pts[i].s.movers, t);
            /* The model's lane figures are for movers on cores of their own. */
            if (nfit < MAX_LANE_SAMPLES)
                fit[nfit++] =
                    (plan_sample){pts[i].s.bytes, pts[i].s.movers, t / plan_cpu_share(pts[i].s.movers, p->cores)};
        }
        lane_cost c, written = {0};
        plan_sample fresh[MAX_LANE_SAMPLES];
        int nfresh = written_samples(pts, npts, (lane_id)l, &p->timing, nb, fresh, MAX_LANE_SAMPLES);
        if (nfresh < 2 || plan_fit_lane(fresh, nfresh, latency, &written) < 0)
            written = (lane_cost){0};
        /* Where bytes just written are timed apart, the lane's own figures
         * are those of bytes the reader still caches: the sizes whose
         * exchange (a send, a receive and the peer's send buffer) fits its
         * cache. A larger exchange streams, and costs what written bytes
         * cost (1 MiB unchanged at 11 GB/s, written at 9.5, where 64 KiB
         * unchanged ran at 25: 2-core Xeon VM). */
        plan_sample cached[MAX_LANE_SAMPLES];
        int ncached = 0;
        for (int i = 0; i < nfit && plan_lane_measured(&written); i++)
            if (3 * fit[i].bytes <= (double)plan_core_cache_bytes())
                cached[ncached++] = fit[i];
        double err = ncached ? plan_fit_lane(cached, ncached, latency, &c) : -1;
        if (err < 0)
            err = nfit ? plan_fit_lane(fit, nfit, latency, &c) : -1;
        if (err >= 0) {
            m->lane[l] = c;
            m->lane_written[l] = written;
            m->fit_error[l] = err;
            fitted[l] = true;
        }
    }
    free(pts);
    free(send);
    free(recv);
}

/* ---- MPI_Init's probe ---- */

/* What node rank 0 gives the node: the model's measured figures. */
typedef struct probe_figures {
    int ok;
    unsigned measured; /* bit per lane the pair measured */
    int attempts;      /* measurements made (implausible ones are repeated) */
    lane_cost lane[LANE_COUNT];
    lane_cost lane_written[LANE_COUNT];
    double low_rate[LANE_COUNT]; /* each lane's lowest 1 MiB rate over the attempts (plan_lane_rate at 2) */
    double fit_error[LANE_COUNT];
    double sync_ns, copy_bw, copy_mem_bw, reduce_bw;
    double took_ms;
} probe_figures;

/* Where the node's ranks take turns on cores and nothing binds the two
 * apart, the scheduler may leave both on one core for the whole probe (seen
 * on a 2-core VM: every hand-off then costs a waiter's whole spin). So each
 * keeps to one CPU of its own affinity mask, the two different, until the
 * probe ends; never a CPU its mask excludes, and the one it runs on where
 * it may. True, on both alike, when they did; false also where their masks
 * keep them apart already. Collective over the pair. */
static bool pin_apart(MPI_Comm pair_comm, int rank, cpu_set_t *saved)
{
    struct {
        cpu_set_t mask;
        int cpu;
    } mine = {.cpu = sched_getcpu()}, both[2];
    if (sched_getaffinity(0, sizeof mine.mask, &mine.mask) != 0)
        CPU_ZERO(&mine.mask);
    *saved = mine.mask;
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, both, (int)sizeof mine, MPI_BYTE, pair_comm);
    int cpu[2];
    if (core_cpus_disjoint(&both[0].mask, &both[1].mask) ||
        !core_cpus_apart(&both[0].mask, both[0].cpu, &both[1].mask, both[1].cpu, &cpu[0], &cpu[1]))
        return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu[rank], &one);
    int failed = sched_setaffinity(0, sizeof one, &one) != 0, any = 0;
    PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, pair_comm);
    if (any && !failed)
        sched_setaffinity(0, sizeof *saved, saved);
    return !any;
}

/* Node rank 0 and its partner (core_cpus_partner) measure on a team of their own. */
static probe_figures measure_pair(MPI_Comm pair_comm, int rank)
{
    probe_figures fig = {0};
    uint64_t t0 = core_now_ns();
    shim_comm *pair = shim_comm_team_now(pair_comm); /* NULL on both alike: no segment */
    if (!pair)
        return fig;
    static plan_model m; /* too large for a stack; only the thread in MPI_Init is here */
    plan_model_defaults(&m);
    /* The figures are those of ranks with a core each: ranks outnumbering
     * cores are the model's own terms (the cpu share, oversub_step_ns). So
     * where the node's ranks take turns on cores, the two keep to a core
     * each and wait as ranks with cores of their own while the others
     * sleep; their posts fence, so that no timing holds a missed wake-up.
     * The team's own policy comes back after (both switch where no post is
     * in flight: after the team's set-up and after the last timing, each
     * ended by an MPI collective). */
    bool taking_turns = pair->team.node_ranks > pair->team.node_cores;
    cpu_set_t saved;
    bool pinned = taking_turns && pin_apart(pair_comm, rank, &saved);
    core_wait_policy node_policy = pair->team.wait;
    if (taking_turns && pair->team.node_cores >= 2) {
        pair->team.wait = core_wait_policy_for(2, pair->team.node_cores);
        pair->team.wait.fence_posts = true;
    }
    shim_node_probe p = {
        .timing = {.comm = pair_comm, .batches = 5, .batch_ns = 3e4, .fastest = true, .idle_polls = !taking_turns},
        .depth = SHIM_PROBE_STARTUP,
        .rank = rank,
        .pair = pair,
        .cores = pair->team.node_cores,
        .max_movers = 2,
    };
    p.lanes[LANE_CELLS] = true;
    p.lanes[LANE_CMA] = pair->team.lanes[LANE_CMA] != NULL;
    shim_probe_core(&p, &m);
    bool fitted[LANE_COUNT];
    shim_probe_lanes(&p, &m, fitted);
    pair->team.wait = node_policy;
    if (pinned)
        sched_setaffinity(0, sizeof saved, &saved);
    fig.ok = 1;
    for (int l = 0; l < LANE_COUNT; l++) {
        fig.measured |= p.lanes[l] ? 1u << l : 0;
        fig.lane[l] = m.lane[l];
        fig.lane_written[l] = fitted[l] ? m.lane_written[l] : (lane_cost){0};
        fig.fit_error[l] = fitted[l] ? m.fit_error[l] : 0;
    }
    fig.sync_ns = m.sync_ns;
    fig.copy_bw = m.copy_bw;
    fig.copy_mem_bw = m.copy_mem_bw;
    fig.reduce_bw = m.reduce_bw;
    fig.took_ms = (double)(core_now_ns() - t0) / 1e6;
    return fig;
}

/* A probe whose figures are implausible (plan_lane_implausible: a lane
 * below a fifth of memcpy; plan_core_rates_implausible: a core's copy or
 * sum far from any machine's) is repeated, the best of PROBE_TRIES kept,
 * and the core rates still implausible are refused: they keep their
 * built-in figures. So is a lane still below a fifth of memcpy, unless
 * every try found about the same rate (plan_lane_steady). That happens:
 * on the 2-core VM, for minutes at a time, the cores exchange cache lines
 * 3x slower (0.38 us one way, not 0.11), and the cells then measured 3.6
 * GB/s in each try against memcpy's 26; priced at the built-in 5.0, they
 * took 16 KiB movements that single copy ran in 0.8x their time. */
#define PROBE_TRIES 3

/* Whether f's core rates are implausible against the built-in model's. */
static bool core_rates_implausible(const probe_figures *f)
{
    plan_model builtin, measured;
    plan_model_defaults(&builtin);
    measured = builtin;
    measured.copy_bw = f->copy_bw;
    measured.copy_mem_bw = f->copy_mem_bw;
    measured.reduce_bw = f->reduce_bw;
    return plan_core_rates_implausible(&measured, &builtin);
}

/* The lowest of the measured lanes' rates as a share of the copy rate; 0
 * where the core rates themselves are implausible. */
static double plausibility(const probe_figures *f)
{
    if (core_rates_implausible(f))
        return 0;
    double worst = INFINITY;
    for (int l = 0; l < LANE_COUNT; l++)
        if (f->measured & (1u << l))
            worst = fmin(worst, plan_lane_rate(&f->lane[l], 2) / f->copy_mem_bw);
    return worst;
}

/* Measures until plausible, at most PROBE_TRIES times; the best is kept
 * (rank 0 decides and tells rank 1, so that both measure alike). */
static probe_figures measure_pair_plausibly(MPI_Comm pair_comm, int rank)
{
    probe_figures best = {0};
    double low_rate[LANE_COUNT];
    for (int l = 0; l < LANE_COUNT; l++)
        low_rate[l] = INFINITY;
    for (int attempt = 1;; attempt++) {
        probe_figures now = measure_pair(pair_comm, rank);
        for (int l = 0; l < LANE_COUNT; l++)
            if (now.ok && (now.measured & (1u << l)))
                low_rate[l] = fmin(low_rate[l], plan_lane_rate(&now.lane[l], 2));
        if (!best.ok || (now.ok && plausibility(&now) > plausibility(&best)))
            best = now;
        best.attempts = attempt;
        memcpy(best.low_rate, low_rate, sizeof low_rate);
        int again = rank == 0 && now.ok && plausibility(&best) < PLAN_PLAUSIBLE_SHARE_OF_COPY && attempt < PROBE_TRIES;
        PMPI_Bcast(&again, 1, MPI_INT, 0, pair_comm);
        if (!again)
            return best;
    }
}

void shim_probe_startup(MPI_Comm node, const cpu_set_t *masks)
{
    int size = 1, rank = 0;
    PMPI_Comm_size(node, &size);
    PMPI_Comm_rank(node, &rank);
    const plan_model *now = plan_model_get();
    /* Every rank of the node must agree, or some would wait for a probe
     * the others skip (MPI_Init has already checked the settings agree). */
    int want = size >= 2 && core_config_get()->probe && now->origin == PLAN_ORIGIN_DEFAULTS, all = 0;
    PMPI_Allreduce(&want, &all, 1, MPI_INT, MPI_LAND, node);
    if (!all) {
        if (size >= 2 && !core_config_get()->probe && now->origin == PLAN_ORIGIN_DEFAULTS)
            core_log_once("SHOAL_PROBE=0: the planner uses built-in figures");
        return;
    }
    /* Two ranks on one core would time the scheduler's hand-offs, not the
     * lanes: with 4 ranks on a 2-core VM, node ranks 0 and 1 bound to one
     * CPU measured the cells' first byte after 300 us, not 0.2, and the
     * planner sent small collectives to the host's point-to-point (bcast
     * of 8 B in 2.4 us against the host's 0.3). */
    int partner = core_cpus_partner(masks, size);
    if (partner < 0) {
        core_log_once("every rank of the node may run only on CPU %d, so no two can be timed apart: the planner uses "
                      "built-in figures",
                      sched_getcpu());
        return;
    }
    core_log_debug(1, "the probe times node ranks 0 and %d", partner);
    bool measures = rank == 0 || rank == partner;
    MPI_Comm pair_comm;
    PMPI_Comm_split(node, measures ? 0 : MPI_UNDEFINED, rank, &pair_comm);
    probe_figures fig = {0};
    if (pair_comm != MPI_COMM_NULL) {
        fig = measure_pair_plausibly(pair_comm, rank == 0 ? 0 : 1);
        shim_comm_forget(pair_comm); /* its team is parked for a later communicator of the two */
        PMPI_Comm_free(&pair_comm);
    }
    MPI_Request req;
    PMPI_Ibcast(&fig, (int)sizeof fig, MPI_BYTE, 0, node, &req);
    complete(&req, !measures);
    if (!fig.ok) {
        core_log_once("no shared memory to probe the node with: the planner uses built-in figures");
        return;
    }
    static plan_model m; /* as in measure_pair */
    plan_model_defaults(&m);
    if (core_rates_implausible(&fig)) {
        /* Every rank has the same figures, so every rank refuses alike. */
        core_log_once("the probe measured a core's copy at %.2f GB/s (%.2f beyond the cache) and its float sum at "
                      "%.2f in %d tries, far from any machine's: the planner keeps its built-in figures for them, "
                      "%.1f, %.1f and %.1f GB/s (shoal tune measures at length)",
                      fig.copy_bw, fig.copy_mem_bw, fig.reduce_bw, fig.attempts, m.copy_bw, m.copy_mem_bw, m.reduce_bw);
        fig.copy_bw = m.copy_bw;
        fig.copy_mem_bw = m.copy_mem_bw;
        fig.reduce_bw = m.reduce_bw;
    }
    for (int l = 0; l < LANE_COUNT; l++) {
        m.lane[l] = fig.lane[l];
        m.fit_error[l] = fig.fit_error[l];
        /* Every rank has the same figures, so every rank refuses alike.
         * Figures for bytes just written below a fifth of memcpy go: the
         * lane's own then price fresh bytes, as where none were timed. */
        const lane_cost *builtin = &lane_describe((lane_id)l)->default_cost;
        const lane_cost *written = &fig.lane_written[l];
        bool written_plausible =
            plan_lane_measured(written) && !plan_lane_implausible(written, builtin, fig.copy_mem_bw);
        if (plan_lane_measured(written) && !written_plausible)
            core_log_debug(1,
                           "the probe measured %s on bytes just written at %.1f GB/s, below a fifth of memcpy's: "
                           "not used",
                           lane_describe((lane_id)l)->name, plan_lane_rate(written, 2));
        m.lane_written[l] = written_plausible ? *written : (lane_cost){0};
        if (!(fig.measured & (1u << l)) || !plan_lane_implausible(&fig.lane[l], builtin, fig.copy_mem_bw))
            continue;
        double rate = plan_lane_rate(&fig.lane[l], 2);
        if (fig.attempts >= PROBE_TRIES && plan_lane_steady(rate, fig.low_rate[l])) {
            core_log_once("the probe measured %s at %.1f-%.1f GB/s in each of %d tries, below a fifth of memcpy's "
                          "%.1f GB/s but steady: the planner takes %.1f GB/s as the node's rate now (shoal tune "
                          "measures at length)",
                          lane_describe((lane_id)l)->name, fig.low_rate[l], rate, fig.attempts, fig.copy_mem_bw, rate);
            continue;
        }
        core_log_once("the probe measured %s at %.1f GB/s in %d tries (%.1f at worst), below a fifth of memcpy's "
                      "%.1f GB/s: the planner keeps its built-in figures for it, %.1f GB/s (shoal tune measures at "
                      "length)",
                      lane_describe((lane_id)l)->name, rate, fig.attempts, fig.low_rate[l], fig.copy_mem_bw,
                      plan_lane_rate(builtin, 2));
        m.lane[l] = *builtin;
        m.lane_written[l] = (lane_cost){0};
        m.fit_error[l] = 0;
    }
    m.sync_ns = fig.sync_ns;
    m.copy_bw = fig.copy_bw;
    m.copy_mem_bw = fig.copy_mem_bw;
    m.reduce_bw = fig.reduce_bw;
    m.origin = PLAN_ORIGIN_MEASURED;
    snprintf(m.source, sizeof m.source, "probed at start-up");
    plan_model_use(&m);
    /* The rates the planner prices for this job: a 1 MiB transfer while
     * every rank of the node moves one (not one term of the fit). */
    double cells_bw = plan_lane_rate(&m.lane[LANE_CELLS], size), cma_bw = plan_lane_rate(&m.lane[LANE_CMA], size);
    const lane_cost *cma_written = &m.lane_written[LANE_CMA];
    char cma_again[64] = "";
    if (plan_lane_measured(cma_written)) {
        snprintf(cma_again, sizeof cma_again, " (%.1f on bytes it read before)", cma_bw);
        cma_bw = plan_lane_rate(cma_written, size);
    }
    core_log_debug(1, "the probe measured %d time%s (a lane below a fifth of memcpy is measured again)", fig.attempts,
                   fig.attempts == 1 ? "" : "s");
    core_log_once("no tuning file: probed the node in %.1f ms: copy %.1f GB/s (%.1f beyond the cache); with %d "
                  "ranks of the node moving 1 MiB each, just written: cells %.1f GB/s, cma %.1f GB/s%s; first byte "
                  "after %.0f ns (cells), %.0f ns (cma) (shoal tune measures more)",
                  fig.took_ms, m.copy_bw, m.copy_mem_bw, size, cells_bw, cma_bw, cma_again,
                  m.lane[LANE_CELLS].latency_ns + m.lane[LANE_CELLS].overhead_ns,
                  m.lane[LANE_CMA].latency_ns + m.lane[LANE_CMA].overhead_ns);
    core_log_debug(2,
                   "probe: sync %.0f ns, float sum %.1f GB/s; fitted GB/s dedicated + shared/ppn: cells %.1f + "
                   "%.1f, cma %.1f + %.1f; fit errors cells %.1f%%, cma %.1f%%",
                   m.sync_ns, m.reduce_bw, m.lane[LANE_CELLS].bw_dedicated, m.lane[LANE_CELLS].bw_shared,
                   m.lane[LANE_CMA].bw_dedicated, m.lane[LANE_CMA].bw_shared, 100 * m.fit_error[LANE_CELLS],
                   100 * m.fit_error[LANE_CMA]);
}
