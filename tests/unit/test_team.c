/* The collectives layer without MPI: n forked processes share a segment and
 * run every algorithm on every lane, with a staging window small enough to
 * force several rounds, checking each result against a serial computation.
 * Floating sums must equal the rank-order left fold bit for bit (flat and
 * sliced algorithms). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll.h"
#include "coll_internal.h"
#include "plan_model.h"
#include "unit.h"

static int n, me;
static coll_team team;

static double input(int rank, size_t i) { return (double)(((size_t)rank * 7919 + i * 104729) % 1000) / 7.0 - 60.0; }

static void check_allreduce(size_t count, bool in_place)
{
    double *x = malloc(count * sizeof *x + 1), *y = malloc(count * sizeof *y + 1);
    for (size_t i = 0; i < count; i++)
        x[i] = y[i] = input(me, i);
    coll_allreduce(&team, in_place ? NULL : x, y, count, CORE_DOUBLE, CORE_OP_SUM);
    size_t bad = count;
    for (size_t i = 0; i < count && bad == count; i++) {
        double want = input(0, i);
        for (int r = 1; r < n; r++)
            want = want + input(r, i); /* rank order, as shoal promises */
        if (memcmp(&want, &y[i], sizeof want))
            bad = i;
    }
    CHECK(bad == count, "rank %d/%d allreduce %zu doubles (in place %d): element %zu", me, n, count, in_place, bad);
    free(x), free(y);
}

static void check_reduce(size_t count, int root)
{
    long *x = malloc(count * sizeof *x + 1), *y = malloc(count * sizeof *y + 1);
    for (size_t i = 0; i < count; i++)
        x[i] = (long)(me * 31 + (long)i % 17 - 5);
    memset(y, 0, count * sizeof *y);
    coll_reduce(&team, x, me == root ? y : NULL, count, CORE_INT64, CORE_OP_MAX, root);
    if (me == root)
        for (size_t i = 0; i < count; i++) {
            long want = (long)i % 17 - 5 + (n - 1) * 31;
            if (y[i] != want) {
                CHECK(0, "rank %d/%d reduce max %zu at root %d: element %zu is %ld, want %ld", me, n, count, root, i,
                      y[i], want);
                break;
            }
        }
    free(x), free(y);
}

static void check_rsb(size_t count)
{
    int *x = malloc(count * (size_t)n * sizeof *x + 1), *y = malloc(count * sizeof *y + 1);
    for (size_t i = 0; i < count * (size_t)n; i++)
        x[i] = (int)(i % 1000) + me;
    coll_reduce_scatter_block(&team, x, y, count, CORE_INT32, CORE_OP_SUM);
    for (size_t i = 0; i < count; i++) {
        int want = ((int)((me * count + i) % 1000)) * n + n * (n - 1) / 2;
        if (y[i] != want) {
            CHECK(0, "rank %d/%d rsb %zu: element %zu is %d want %d", me, n, count, i, y[i], want);
            break;
        }
    }
    free(x), free(y);
}

/* Blocks of count + 3 r elements for rank r, the last one empty; in place or not. */
static void check_reduce_scatter(size_t count, bool in_place)
{
    size_t *counts = malloc(2 * (size_t)n * sizeof *counts), *firsts = counts + n, total = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = r == n - 1 && n > 1 ? 0 : count + 3 * (size_t)r;
        firsts[r] = total;
        total += counts[r];
    }
    int *x = malloc(total * sizeof *x + 1), *y = malloc(total * sizeof *y + 1);
    for (size_t i = 0; i < total; i++)
        x[i] = y[i] = (int)(i % 1000) + me;
    coll_reduce_scatter(&team, in_place ? NULL : x, y, counts, firsts, CORE_INT32, CORE_OP_SUM);
    for (size_t i = 0; i < counts[me]; i++) {
        int want = ((int)((firsts[me] + i) % 1000)) * n + n * (n - 1) / 2;
        if (y[i] != want) {
            CHECK(0, "rank %d/%d reduce_scatter %zu (in place %d): element %zu is %d want %d", me, n, count, in_place,
                  i, y[i], want);
            break;
        }
    }
    free(counts), free(x), free(y);
}

static unsigned char byte_of(int rank, size_t i) { return (unsigned char)(rank * 37 + i * 11 + (i >> 9)); }

static void check_moves(size_t bytes, int root)
{
    size_t nn = (size_t)n;
    unsigned char *s = malloc(bytes * nn + 1), *r = malloc(bytes * nn + 1);
    /* bcast */
    for (size_t i = 0; i < bytes; i++)
        s[i] = me == root ? byte_of(root, i) : 0;
    coll_bcast(&team, s, bytes, root);
    for (size_t i = 0; i < bytes; i++)
        if (s[i] != byte_of(root, i)) {
            CHECK(0, "rank %d/%d bcast %zu from %d: byte %zu", me, n, bytes, root, i);
            break;
        }
    /* gather */
    for (size_t i = 0; i < bytes; i++)
        s[i] = byte_of(me, i);
    memset(r, 0, bytes * nn);
    coll_gather(&team, s, bytes, r, root);
    if (me == root)
        for (size_t k = 0; k < bytes * nn; k++)
            if (r[k] != byte_of((int)(k / bytes), k % bytes)) {
                CHECK(0, "rank %d/%d gather %zu to %d: byte %zu", me, n, bytes, root, k);
                break;
            }
    /* allgather, in place */
    for (size_t k = 0; k < bytes * nn; k++)
        r[k] = k / bytes == (size_t)me ? byte_of(me, k % bytes) : 0;
    coll_allgather(&team, NULL, bytes, r);
    for (size_t k = 0; k < bytes * nn; k++)
        if (r[k] != byte_of((int)(k / bytes), k % bytes)) {
            CHECK(0, "rank %d/%d allgather %zu: byte %zu", me, n, bytes, k);
            break;
        }
    /* scatter: block k of the root goes to rank k */
    for (size_t k = 0; k < bytes * nn; k++)
        s[k] = byte_of(root + (int)(k / bytes) * 3, k % bytes);
    memset(r, 0, bytes);
    coll_scatter(&team, s, bytes, r, root);
    for (size_t i = 0; i < bytes; i++)
        if (r[i] != byte_of(root + me * 3, i)) {
            CHECK(0, "rank %d/%d scatter %zu from %d: byte %zu", me, n, bytes, root, i);
            break;
        }
    /* alltoall: block k of rank j goes to rank k, tagged by j and k */
    for (size_t k = 0; k < bytes * nn; k++)
        s[k] = byte_of(me * 5 + (int)(k / bytes), k % bytes);
    memset(r, 0, bytes * nn);
    coll_alltoall(&team, s, bytes, r);
    for (size_t k = 0; k < bytes * nn; k++)
        if (r[k] != byte_of((int)(k / bytes) * 5 + me, k % bytes)) {
            CHECK(0, "rank %d/%d alltoall %zu: byte %zu", me, n, bytes, k);
            break;
        }
    /* alltoallv: rank j sends (j + k) % 3 * bytes / 2 bytes to k, blocks reversed */
    size_t *sb = malloc(4 * nn * sizeof *sb), *so = sb + nn, *rb = so + nn, *ro = rb + nn;
    size_t spos = 0, rpos = 0;
    for (int k = n - 1; k >= 0; k--) {
        sb[k] = (size_t)((me + k) % 3) * bytes / 2;
        rb[k] = (size_t)((k + me) % 3) * bytes / 2;
        so[k] = spos, ro[k] = rpos;
        spos += sb[k], rpos += rb[k];
    }
    unsigned char *sv = malloc(spos + 1), *rv = malloc(rpos + 1);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < sb[k]; i++)
            sv[so[k] + i] = byte_of(me * 5 + k, i);
    memset(rv, 0, rpos + 1);
    coll_alltoallv(&team, sv, sb, so, rv, rb, ro);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < rb[k]; i++)
            if (rv[ro[k] + i] != byte_of(k * 5 + me, i)) {
                CHECK(0, "rank %d/%d alltoallv %zu: from %d byte %zu", me, n, bytes, k, i);
                k = n;
                break;
            }
    free(sb), free(sv), free(rv), free(s), free(r);
}

/* A benchmark's loop, a gather and a barrier in turn at each size, prices
 * each call's plan at most twice per size (its first call and its first
 * repeat); after that every call finds its plan in the cache, whatever the
 * size (two of these sizes once shared a slot with the barrier and evicted
 * it on every call). */
static void check_plan_cache(void)
{
    char *in = calloc(1, 1 << 16), *out = calloc((size_t)n, 1 << 16);
    for (size_t bytes = 1024; bytes <= (1 << 16); bytes += 1024) {
        uint64_t before = team.plans_priced;
        for (int call = 0; call < 4; call++) {
            if (call == 2)
                before = team.plans_priced;
            coll_gather(&team, in, bytes, out, 0);
            coll_barrier(&team);
        }
        CHECK(team.plans_priced == before,
              "rank %d/%d: a gather of %zu bytes between barriers priced %llu plans on its 3rd and 4th calls", me, n,
              bytes, (unsigned long long)(team.plans_priced - before));
    }
    /* Sizes that change on every call, within one eighth of a power of two
     * (960 to 1023 bytes): one class, priced once fresh and once as a
     * repeat at most, whatever the order. */
    uint64_t before = team.plans_priced;
    for (int call = 0; call < 64; call++) {
        size_t bytes = 960 + (size_t)((call * 37) % 64);
        coll_gather(&team, in, bytes, out, 0);
        coll_gather(&team, in, bytes, out, 0);
    }
    CHECK(team.plans_priced - before <= 2, "rank %d/%d: 64 sizes of one class priced %llu plans", me, n,
          (unsigned long long)(team.plans_priced - before));
    free(in), free(out);
}

/* The cells lane claims, once a round is stamped, the lines the next round
 * will write: lane_next_round_at must name the same place in the next
 * round's note and staging area, wrapping from the last round buffer to
 * the first. */
static void check_next_round_layout(void)
{
    lane_ctx ctx = team.lane; /* a copy: the team's own rounds stay as they are */
    for (int parity = 0; parity < LANE_ROUNDS; parity++) {
        int next = (parity + 1) % LANE_ROUNDS;
        lane_begin_round(&ctx, parity);
        const char *note = (const char *)&ctx.notes[(size_t)me * LANE_ROUNDS + (size_t)parity];
        const char *area = lane_staging_of(&ctx, me) + 3 * CORE_CACHELINE;
        const char *note_next = lane_next_round_at(&ctx, note + 16, sizeof(lane_note));
        const char *area_next = lane_next_round_at(&ctx, area, ctx.stage_stride);
        lane_begin_round(&ctx, next);
        CHECK(note_next == (const char *)&ctx.notes[(size_t)me * LANE_ROUNDS + (size_t)next] + 16,
              "rank %d/%d: the note after round buffer %d is not buffer %d's", me, n, parity, next);
        CHECK(area_next == lane_staging_of(&ctx, me) + 3 * CORE_CACHELINE,
              "rank %d/%d: the staging area after round buffer %d is not buffer %d's", me, n, parity, next);
    }
}

/* A round marks its rank idle after it (the cells claim the next round's
 * lines then) only where the caller says so and every reader of the next
 * round's buffer is known done with it. */
static void check_idle_after_round(void)
{
    coll_team copy = team; /* the team's own rounds stay as they are */
    int next = (int)((copy.round + 1) % LANE_ROUNDS);
    copy.all_seen = 10; /* every peer is known to have reached epoch 10 */
    copy.reuse_epoch[next] = 10;
    coll_round_begin(&copy, false, true);
    CHECK(copy.lane.idle_after_round, "rank %d/%d: an idle last round with its next buffer free is not idle", me, n);
    coll_round_begin(&copy, false, false);
    CHECK(!copy.lane.idle_after_round, "rank %d/%d: a round the caller did not call idle is", me, n);
    copy.reuse_epoch[next] = 11;
    coll_round_begin(&copy, false, true);
    CHECK(!copy.lane.idle_after_round, "rank %d/%d: idle while a reader of the next buffer may still copy it", me, n);
}

/* coll_any is the OR of every rank's answer, vote after vote (each rank's
 * answer words alternate: a rank two votes ahead would overwrite one). */
static void check_any(void)
{
    for (int vote = 0; vote < 40; vote++) {
        int yes = vote % (n + 2); /* rank `yes` says yes; n and n+1: nobody */
        bool any = coll_any(&team, me == yes);
        CHECK(any == (yes < n), "rank %d/%d vote %d: any %d, rank %d said yes", me, n, vote, any, yes);
        CHECK(coll_any(&team, true), "rank %d/%d vote %d: all said yes, any is false", me, n, vote);
    }
}

/* A repeat whose choice depends on whether its inputs changed (the model
 * the caller set up prices single copy apart on bytes just written) asks
 * the ranks: a run of calls on unchanged buffers ends planned for unchanged
 * inputs, a run with the inputs written anew before each call (on one rank
 * only: that is enough) ends planned for fresh ones, within the most
 * repeats asking may skip; every result is right meanwhile. */
static void check_asked_repeats(size_t count)
{
    double *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y);
    plan_inputs last[2] = {PLAN_INPUTS_EITHER, PLAN_INPUTS_EITHER};
    for (int phase = 0; phase < 4; phase++) {
        bool written = phase % 2;
        for (int call = 0; call < COLL_ASK_SKIP_MAX + 3; call++) {
            /* Rank n-1 adds `shift` to its input: in a written phase a
             * value that changes call by call (other values, or the sample
             * could not tell), else 0, written once at the phase's start. */
            double shift = written ? (double)(call % 2 + 1) : 0;
            bool writes = written || call == 0;
            for (size_t i = 0; i < count && writes; i++)
                x[i] = input(me, i) + (me == n - 1 ? shift : 0);
            coll_allreduce(&team, x, y, count, CORE_DOUBLE, CORE_OP_SUM);
            size_t bad = count;
            for (size_t i = 0; i < count && bad == count; i++) {
                double want = input(0, i) + (n == 1 ? shift : 0);
                for (int r = 1; r < n; r++)
                    want = want + (input(r, i) + (r == n - 1 ? shift : 0)); /* rank order */
                if (memcmp(&want, &y[i], sizeof want))
                    bad = i;
            }
            CHECK(bad == count, "rank %d/%d asked allreduce %zu doubles, phase %d call %d: element %zu", me, n, count,
                  phase, call, bad);
        }
        const coll_ran *ch = coll_last_choice();
        last[written] = ch ? ch->inputs : PLAN_INPUTS_EITHER;
    }
    CHECK(last[0] == PLAN_INPUTS_UNCHANGED && last[1] == PLAN_INPUTS_FRESH,
          "rank %d/%d asked allreduce %zu doubles: the last unchanged call planned as %d, the last written one as %d",
          me, n, count, (int)last[0], (int)last[1]);
    free(x), free(y);
}

/* One process of the team: every check under one lane / algorithm setting. */
static int run_rank(core_segment *seg, const char *lanes, const char *algo, int cores)
{
    setenv("SHOAL_LANES", lanes, 1);
    setenv("SHOAL_ALGO", algo, 1);
    core_config_reload();
    if (coll_team_open(&team, seg, n, me, n, cores, true) != 0)
        return 100;
    /* 48, 49, 496, 497: the most a note's first line and a note hold, and one more each. */
    const size_t sizes[] = {1, 24, 48, 49, 496, 497, 1000, 8192, 40000, 300000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t bytes = sizes[s];
        coll_barrier(&team);
        check_allreduce(bytes / 8 + 1, false);
        check_allreduce(bytes / 8 + 3, true);
        check_reduce(bytes / 8 + 1, (int)(s % (size_t)n));
        check_rsb(bytes / 16 + 1);
        check_reduce_scatter(bytes / 16 + 1, s % 2);
        check_moves(bytes, (int)((s + 1) % (size_t)n));
    }
    /* A call of its collective's last size is a repeat, planned alike on
     * every rank (the lanes may differ from the first call's: the results
     * must not); another size is not. */
    for (int call = 0; call < 3; call++) {
        check_allreduce(call < 2 ? 777 : 778, false);
        const coll_ran *ch = coll_last_choice();
        plan_inputs want = call == 1 ? PLAN_INPUTS_EITHER : PLAN_INPUTS_FRESH;
        CHECK(n == 1 || (ch && ch->inputs == want), "rank %d/%d allreduce call %d: inputs %d, want %d", me, n, call,
              ch ? (int)ch->inputs : -1, (int)want);
        check_moves(40000, call % n);
    }
    check_plan_cache();
    check_any();
    check_next_round_layout();
    check_idle_after_round();
    coll_team_close(&team);
    return unit_failures;
}

/* run_rank under the setting fork_team's caller chose. */
static const char *forced_lanes, *forced_algo;
static int run_forced_rank(core_segment *seg, int cores) { return run_rank(seg, forced_lanes, forced_algo, cores); }

/* The size of allreduce at which the planner's choices on fresh and on
 * unchanged inputs differ on this team (0: none from 16 KiB to 4 MiB). */
static size_t asking_bytes(void)
{
    for (size_t bytes = 16384; bytes <= (4 << 20); bytes *= 2) {
        plan_query q = {.coll = CORE_COLL_ALLREDUCE,
                        .bytes = bytes,
                        .n = team.n,
                        .ppn = team.node_ranks,
                        .cores = team.node_cores,
                        .window = team.lane.stage_size,
                        .inputs = PLAN_INPUTS_FRESH};
        for (int l = 0; l < LANE_COUNT; l++)
            q.usable[l] = team.lanes[l] != NULL;
        plan_choice fresh = plan_choose(&q);
        q.inputs = PLAN_INPUTS_UNCHANGED;
        plan_choice same = plan_choose(&q);
        if (fresh.algo != same.algo || fresh.lane != same.lane)
            return bytes;
    }
    return 0;
}

/* One process of a team that plans freely on the model of `tuning`. */
static int run_asking_rank(core_segment *seg, int cores)
{
    setenv("SHOAL_LANES", "", 1);
    setenv("SHOAL_ALGO", "", 1);
    core_config_reload();
    plan_model_reload();
    if (coll_team_open(&team, seg, n, me, n, cores, true) != 0)
        return 100;
    size_t bytes = asking_bytes();
    CHECK(bytes > 0,
          "rank %d/%d: the model with single copy timed on written bytes never tells fresh and unchanged "
          "inputs apart",
          me, n);
    if (bytes)
        check_asked_repeats(bytes / sizeof(double));
    coll_team_close(&team);
    return unit_failures;
}

/* n forked ranks run rank_fn on a segment of their own, with a few KiB of
 * staging per round buffer (large messages take many rounds); every one
 * must exit 0. */
static void fork_team(int ranks, int (*rank_fn)(core_segment *seg, int cores), int cores, const char *what)
{
    n = ranks;
    size_t size = coll_segment_size(n, (size_t)n * 2 * 16384 + 65536);
    core_segment seg;
    CHECK(core_segment_create(&seg, size) == 0, "segment");
    coll_segment_format(seg.base, size, n);
    pid_t kids[8];
    for (me = 0; me < n; me++) {
        kids[me] = fork();
        if (kids[me] == 0)
            _exit(rank_fn(&seg, cores));
    }
    core_segment_unlink(&seg);
    for (int k = 0; k < n; k++) {
        int status;
        waitpid(kids[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d ranks, %s: rank %d exit status %d", n, what, k,
              status);
    }
    core_segment_release(&seg);
}

int main(void)
{
    /* Every algorithm of the planner's table on every lane a forked team
     * has that can carry it: setting k forces, for each collective, its
     * k-th such algorithm (wrapping round). cores: those the planner is told
     * the ranks run on (2, as here, or "each": one per rank, where gather by
     * push and scatter by pull on cma have the root move a share of every
     * block). */
    static char algo_specs[2 * PLAN_ALGO_COUNT][512];
    const char *settings[2 * PLAN_ALGO_COUNT + 1][3];
    int nsettings = 0, nalgos;
    const plan_algorithm *table = plan_algorithms(&nalgos);
    const lane_id team_lanes[] = {LANE_CELLS, LANE_CMA};
    for (int tl = 0; tl < 2; tl++)
        for (int k = 0;; k++) {
            char *spec = algo_specs[nsettings];
            bool more = false;
            spec[0] = 0;
            for (int c = 0; c < CORE_COLL_COUNT; c++) {
                const plan_algorithm *own[PLAN_ALGO_COUNT];
                int count = 0;
                for (int a = 0; a < nalgos; a++)
                    if ((table[a].colls & (1u << c)) && lane_can(team_lanes[tl], table[a].needs))
                        own[count++] = &table[a];
                if (count < 2) /* nothing to force (and SHOAL_ALGO holds 255 characters) */
                    continue;
                more = more || k < count;
                snprintf(spec + strlen(spec), sizeof algo_specs[0] - strlen(spec), "%s%s:%s", spec[0] ? "," : "",
                         core_coll_name((core_coll)c), own[k % count]->name);
            }
            if (!more)
                break;
            settings[nsettings][0] = lane_describe(team_lanes[tl])->name;
            settings[nsettings][1] = spec;
            settings[nsettings][2] = "2";
            nsettings++;
        }
    settings[nsettings][0] = "cma", settings[nsettings][1] = "gather:push", settings[nsettings][2] = "each";
    nsettings++;
    const int team_sizes[] = {1, 2, 3, 5};
    for (size_t ts = 0; ts < sizeof team_sizes / sizeof team_sizes[0]; ts++)
        for (int st = 0; st < nsettings; st++) {
            char what[600];
            snprintf(what, sizeof what, "lanes %s, algorithms '%s', cores %s", settings[st][0], settings[st][1],
                     settings[st][2]);
            forced_lanes = settings[st][0], forced_algo = settings[st][1];
            int cores = strcmp(settings[st][2], "each") ? atoi(settings[st][2]) : team_sizes[ts];
            fork_team(team_sizes[ts], run_forced_rank, cores, what);
        }
    /* The repeats that ask: a model like the start-up probe's on a 2-core
     * VM (single copy 22 GB/s on bytes read before, 9 on bytes just
     * written). */
    char tuning[] = "/tmp/shoal-test-tuning-XXXXXX";
    int fd = mkstemp(tuning);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    static plan_model m;
    plan_model_defaults(&m);
    m.copy_bw = 55, m.copy_mem_bw = 15, m.reduce_bw = 50, m.sync_ns = 150;
    m.lane[LANE_CELLS] = (lane_cost){.latency_ns = 160, .overhead_ns = 120, .bw_dedicated = 7.9, .bw_shared = 2.2};
    m.lane[LANE_CMA] = (lane_cost){.latency_ns = 1000, .overhead_ns = 300, .bw_dedicated = 22};
    m.lane_written[LANE_CMA] = (lane_cost){.latency_ns = 1000, .overhead_ns = 900, .bw_dedicated = 9};
    CHECK(plan_model_save(&m, tuning) == 0, "save %s", tuning);
    setenv("SHOAL_TUNING_FILE", tuning, 1);
    fork_team(2, run_asking_rank, 2, "asking repeats");
    fork_team(3, run_asking_rank, 2, "asking repeats");
    unlink(tuning);
    unsetenv("SHOAL_TUNING_FILE");
    return unit_done("test_team");
}
