/* The measurement: OSU's loops, run for both paths alternately in the same
 * process, next to a timed memcpy of the bytes that bound the operation.
 *
 * Collectives (as osu_allreduce and friends): for every size, `warmup`
 * untimed then `iterations` timed calls, a barrier before each, each call
 * timed alone with MPI_Wtime; a rank's latency is its average over the timed
 * calls, the table shows the average of that over ranks (min and max with
 * -f). Here every iteration runs the host path and the shoal path one after
 * the other, swapping which goes first, then the bound's memcpy, so that the
 * three figures of a row see the same machine noise.
 *
 * Point to point (osu_latency, osu_bw): OSU times a whole loop of back-to-
 * back messages; here the timed iterations are cut into chunks, and chunks
 * of the two paths alternate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_sys.h"
#include "bench_run.h"
#include "shoal.h"

/* The host path calls PMPI_<fn>, which reaches the host MPI even when shoal
 * is loaded; the shoal path calls MPI_<fn>, which shoal intercepts. */
#define ON_PATH(path, fn, ...) ((path) == PATH_HOST ? P##fn(__VA_ARGS__) : fn(__VA_ARGS__))

#define ROOT 0
/* pt2pt: timed iterations are split into at most this many chunks per
 * path. Fine enough that a slow spell of the machine (some last for
 * thousands of round trips) falls on both paths, not on one. */
#define PT2PT_CHUNKS 50
/* Errors printed per benchmark, size and path on one rank; the rest are counted. */
#define ERRORS_PRINTED 1

static const char *path_name(enum bench_path path) { return path == PATH_HOST ? "host" : "shoal"; }

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

size_t measure_buffer_bytes(const struct bench_options *opt, int nprocs)
{
    size_t need = 64;
    for (int id = 0; id < BENCH_COUNT; id++) {
        if (!opt->selected[id])
            continue;
        size_t min, max;
        bench_size_range(opt, id, &min, &max);
        /* alltoall, allgather, gather and scatter hold n blocks of max. */
        size_t bytes = bench_kind_of(id) == KIND_COLLECTIVE ? max * (size_t)nprocs : max;
        if (bytes > need)
            need = bytes;
    }
    return need;
}

/* ---- collectives: inputs, the call, the check -------------------------- */

struct call_site {
    struct bench_context *ctx;
    enum bench_id id;
    size_t size;
    enum bench_path path;
    uint64_t seed;
    long errors;
};

static size_t float_count(size_t size) { return size / sizeof(float); }
static size_t scatter_block_floats(size_t size, int nprocs) { return size / sizeof(float) / (size_t)nprocs; }
/* Floats of rank's block in the reduce_scatter benchmark. */
static size_t reduce_scatter_floats(size_t size, int nprocs, int rank)
{
    return bench_reduce_scatter_first(size, nprocs, rank + 1) - bench_reduce_scatter_first(size, nprocs, rank);
}

static void prepare_inputs(const struct call_site *call)
{
    struct bench_context *ctx = call->ctx;
    size_t s = call->size;
    int n = ctx->nprocs, me = ctx->rank;
    switch (call->id) {
    case BENCH_BCAST:
        if (me == ROOT)
            pattern_fill_bytes(ctx->recv_buf, s, pattern_key(call->seed, ROOT, 0));
        break;
    case BENCH_REDUCE:
    case BENCH_ALLREDUCE:
    case BENCH_SCAN:
    case BENCH_EXSCAN:
        pattern_fill_floats((float *)ctx->send_buf, float_count(s), pattern_key(call->seed, me, 0));
        break;
    case BENCH_REDUCE_SCATTER_BLOCK:
        pattern_fill_floats((float *)ctx->send_buf, scatter_block_floats(s, n) * (size_t)n,
                            pattern_key(call->seed, me, 0));
        break;
    case BENCH_REDUCE_SCATTER:
        pattern_fill_floats((float *)ctx->send_buf, float_count(s), pattern_key(call->seed, me, 0));
        for (int r = 0; r < n; r++)
            ctx->counts[r] = (int)reduce_scatter_floats(s, n, r);
        break;
    case BENCH_GATHER:
    case BENCH_ALLGATHER: pattern_fill_bytes(ctx->send_buf, s, pattern_key(call->seed, me, 0)); break;
    case BENCH_SCATTER:
        if (me == ROOT)
            for (int block = 0; block < n; block++)
                pattern_fill_bytes(ctx->send_buf + (size_t)block * s, s, pattern_key(call->seed, ROOT, block));
        break;
    case BENCH_ALLTOALL:
        for (int block = 0; block < n; block++)
            pattern_fill_bytes(ctx->send_buf + (size_t)block * s, s, pattern_key(call->seed, me, block));
        break;
    default: break;
    }
}

static void call_collective(const struct call_site *call)
{
    struct bench_context *ctx = call->ctx;
    void *sbuf = ctx->send_buf, *rbuf = ctx->recv_buf;
    int s = (int)call->size, n = ctx->nprocs;
    MPI_Comm comm = ctx->comm;
    enum bench_path path = call->path;
    switch (call->id) {
    case BENCH_BARRIER: ON_PATH(path, MPI_Barrier, comm); break;
    case BENCH_BCAST: ON_PATH(path, MPI_Bcast, rbuf, s, MPI_CHAR, ROOT, comm); break;
    case BENCH_REDUCE:
        ON_PATH(path, MPI_Reduce, sbuf, rbuf, (int)float_count(call->size), MPI_FLOAT, MPI_SUM, ROOT, comm);
        break;
    case BENCH_ALLREDUCE:
        ON_PATH(path, MPI_Allreduce, sbuf, rbuf, (int)float_count(call->size), MPI_FLOAT, MPI_SUM, comm);
        break;
    case BENCH_GATHER: ON_PATH(path, MPI_Gather, sbuf, s, MPI_CHAR, rbuf, s, MPI_CHAR, ROOT, comm); break;
    case BENCH_ALLGATHER: ON_PATH(path, MPI_Allgather, sbuf, s, MPI_CHAR, rbuf, s, MPI_CHAR, comm); break;
    case BENCH_SCATTER: ON_PATH(path, MPI_Scatter, sbuf, s, MPI_CHAR, rbuf, s, MPI_CHAR, ROOT, comm); break;
    case BENCH_ALLTOALL: ON_PATH(path, MPI_Alltoall, sbuf, s, MPI_CHAR, rbuf, s, MPI_CHAR, comm); break;
    case BENCH_REDUCE_SCATTER_BLOCK:
        ON_PATH(path, MPI_Reduce_scatter_block, sbuf, rbuf, (int)scatter_block_floats(call->size, n), MPI_FLOAT,
                MPI_SUM, comm);
        break;
    case BENCH_REDUCE_SCATTER:
        ON_PATH(path, MPI_Reduce_scatter, sbuf, rbuf, ctx->counts, MPI_FLOAT, MPI_SUM, comm);
        break;
    case BENCH_SCAN: ON_PATH(path, MPI_Scan, sbuf, rbuf, (int)float_count(call->size), MPI_FLOAT, MPI_SUM, comm); break;
    case BENCH_EXSCAN:
        ON_PATH(path, MPI_Exscan, sbuf, rbuf, (int)float_count(call->size), MPI_FLOAT, MPI_SUM, comm);
        break;
    default: break;
    }
}

/* The rank whose result the test hook spoils: one that checks a result. */
static int corrupting_rank(enum bench_id id, int nprocs)
{
    return (id == BENCH_REDUCE || id == BENCH_GATHER) ? ROOT : nprocs - 1;
}

static size_t result_bytes(enum bench_id id, size_t size, int nprocs)
{
    switch (id) {
    case BENCH_GATHER:
    case BENCH_ALLGATHER:
    case BENCH_ALLTOALL: return size * (size_t)nprocs;
    case BENCH_REDUCE_SCATTER_BLOCK: return scatter_block_floats(size, nprocs) * sizeof(float);
    case BENCH_REDUCE_SCATTER: /* the last rank's block, the largest */
        return reduce_scatter_floats(size, nprocs, nprocs - 1) * sizeof(float);
    default: return size;
    }
}

/* --debug-corrupt: spoil one result of one path, once per benchmark, so
 * the tests can prove that validation catches a wrong answer. */
static void maybe_corrupt(struct call_site *call)
{
    struct bench_context *ctx = call->ctx;
    enum bench_corrupt want = call->path == PATH_HOST ? CORRUPT_HOST : CORRUPT_SHOAL;
    if (ctx->opt->corrupt != want || ctx->corrupted[call->id])
        return;
    ctx->corrupted[call->id] = true;
    if (ctx->rank != corrupting_rank(call->id, ctx->nprocs))
        return;
    size_t bytes = result_bytes(call->id, call->size, ctx->nprocs);
    if (bench_is_reduction(call->id)) {
        float *result = (float *)ctx->recv_buf;
        result[bytes / sizeof(float) / 2] += 1.0f;
    } else {
        ctx->recv_buf[bytes / 2] ^= 0x5A;
    }
}

static void report_error(struct call_site *call, const char *what)
{
    if (call->errors++ < ERRORS_PRINTED)
        fprintf(stderr, "shoal-bench: VALIDATION ERROR: %s, %zu bytes, %s path, rank %d, call %llu: %s\n",
                bench_name(call->id), call->size, path_name(call->path), call->ctx->rank,
                (unsigned long long)call->seed, what);
}

static void check_bytes(struct call_site *call, const unsigned char *buf, size_t len, uint64_t key, const char *where)
{
    long bad = pattern_check_bytes(buf, len, key);
    if (bad < 0)
        return;
    char what[256];
    snprintf(what, sizeof what, "%s byte %ld is 0x%02x but the reference is 0x%02x", where, bad, buf[bad],
             pattern_expected_byte(key, (size_t)bad));
    report_error(call, what);
}

/* The sum of the inputs of ranks 0 .. ranks-1 (every rank's but a scan's). */
static void check_float_sum_of(struct call_site *call, const float *buf, size_t count, size_t first_element, int ranks)
{
    struct bench_context *ctx = call->ctx;
    for (int r = 0; r < ranks; r++)
        ctx->keys[r] = pattern_key(call->seed, r, 0);
    float expected = 0;
    long bad = pattern_check_float_sum(buf, count, ctx->keys, ranks, first_element, &expected);
    if (bad < 0)
        return;
    char what[256];
    snprintf(what, sizeof what, "element %ld of the sum is %g but the reference is %g", bad + (long)first_element,
             (double)buf[bad], (double)expected);
    report_error(call, what);
}

static void check_float_sum(struct call_site *call, const float *buf, size_t count, size_t first_element)
{
    check_float_sum_of(call, buf, count, first_element, call->ctx->nprocs);
}

static void check_result(struct call_site *call)
{
    struct bench_context *ctx = call->ctx;
    size_t s = call->size;
    int n = ctx->nprocs, me = ctx->rank;
    char where[64];
    switch (call->id) {
    case BENCH_BCAST: /* the root's buffer must come back unchanged too */
        check_bytes(call, ctx->recv_buf, s, pattern_key(call->seed, ROOT, 0), "buffer");
        break;
    case BENCH_REDUCE:
        if (me == ROOT)
            check_float_sum(call, (const float *)ctx->recv_buf, float_count(s), 0);
        break;
    case BENCH_ALLREDUCE: check_float_sum(call, (const float *)ctx->recv_buf, float_count(s), 0); break;
    case BENCH_SCAN: check_float_sum_of(call, (const float *)ctx->recv_buf, float_count(s), 0, me + 1); break;
    case BENCH_EXSCAN: /* rank 0's result is undefined */
        if (me > 0)
            check_float_sum_of(call, (const float *)ctx->recv_buf, float_count(s), 0, me);
        break;
    case BENCH_REDUCE_SCATTER_BLOCK: {
        size_t block = scatter_block_floats(s, n);
        check_float_sum(call, (const float *)ctx->recv_buf, block, block * (size_t)me);
        break;
    }
    case BENCH_REDUCE_SCATTER:
        check_float_sum(call, (const float *)ctx->recv_buf, reduce_scatter_floats(s, n, me),
                        bench_reduce_scatter_first(s, n, me));
        break;
    case BENCH_GATHER:
    case BENCH_ALLGATHER:
        if (call->id == BENCH_GATHER && me != ROOT)
            break;
        for (int block = 0; block < n; block++) {
            snprintf(where, sizeof where, "block from rank %d:", block);
            check_bytes(call, ctx->recv_buf + (size_t)block * s, s, pattern_key(call->seed, block, 0), where);
        }
        break;
    case BENCH_SCATTER: check_bytes(call, ctx->recv_buf, s, pattern_key(call->seed, ROOT, me), "block"); break;
    case BENCH_ALLTOALL:
        for (int block = 0; block < n; block++) {
            snprintf(where, sizeof where, "block from rank %d:", block);
            check_bytes(call, ctx->recv_buf + (size_t)block * s, s, pattern_key(call->seed, block, me), where);
        }
        break;
    default: break;
    }
}

/* Barrier has no data; what it must guarantee is that no rank leaves before
 * every rank has entered. Ranks of one node share CLOCK_MONOTONIC, so each
 * records when it entered and left, and after the size the latest entry must
 * precede the earliest exit. */
struct barrier_log {
    double *entered, *left; /* per call */
    int calls;
};

/* What shoal chose for the call just made (all ranks choose alike). */
static void record_shoal_path(struct bench_context *ctx)
{
    const char *algorithm, *lane;
    if (shoal_last_choice(&algorithm, &lane))
        snprintf(ctx->last_shoal_path, sizeof ctx->last_shoal_path, "%s/%s", algorithm, lane);
    else
        snprintf(ctx->last_shoal_path, sizeof ctx->last_shoal_path, "host MPI");
}

/* One timed call of one path: inputs, barrier, the call, then the check. */
static double timed_call(struct bench_context *ctx, enum bench_id id, size_t size, enum bench_path path,
                         struct barrier_log *log, long *errors)
{
    struct call_site call = {ctx, id, size, path, ++ctx->calls, 0};
    if (ctx->opt->validate)
        prepare_inputs(&call);
    PMPI_Barrier(ctx->comm);
    /* The late rank sleeps (it could be computing, or descheduled: a sleep
     * leaves the cores to the others, as they would have them on a node
     * with a core per rank), and times only its own call: the others'
     * times show what it cost them. */
    if (ctx->late) {
        struct timespec delay = {0, ctx->opt->skew_us * 1000L};
        nanosleep(&delay, NULL);
    }
    double entered = monotonic_seconds();
    double start = MPI_Wtime();
    call_collective(&call);
    double stop = MPI_Wtime();
    double left = monotonic_seconds();
    if (path == PATH_SHOAL)
        record_shoal_path(ctx);
    if (id == BENCH_BARRIER) {
        enum bench_corrupt want = path == PATH_HOST ? CORRUPT_HOST : CORRUPT_SHOAL;
        if (ctx->opt->corrupt == want && !ctx->corrupted[id]) {
            ctx->corrupted[id] = true;
            if (ctx->rank == ctx->nprocs - 1)
                left = entered - 1.0; /* claims to have left before entering */
        }
        log->entered[log->calls] = entered;
        log->left[log->calls] = left;
        log->calls++;
    } else {
        maybe_corrupt(&call);
        if (ctx->opt->validate)
            check_result(&call);
    }
    *errors += call.errors;
    return stop - start;
}

static long check_barrier_log(struct bench_context *ctx, struct barrier_log *log, enum bench_path path)
{
    /* Latest entry (max) and earliest exit (max of the negation), all ranks. */
    for (int k = 0; k < log->calls; k++)
        log->left[k] = -log->left[k];
    PMPI_Allreduce(MPI_IN_PLACE, log->entered, log->calls, MPI_DOUBLE, MPI_MAX, ctx->comm);
    PMPI_Allreduce(MPI_IN_PLACE, log->left, log->calls, MPI_DOUBLE, MPI_MAX, ctx->comm);
    long errors = 0;
    for (int k = 0; k < log->calls; k++) {
        double earliest_exit = -log->left[k];
        if (log->entered[k] > earliest_exit) {
            if (errors++ < ERRORS_PRINTED && ctx->rank == 0)
                fprintf(stderr,
                        "shoal-bench: VALIDATION ERROR: barrier, %s path, call %d: a rank left "
                        "%.3f us before the last rank entered\n",
                        path_name(path), k, 1e6 * (log->entered[k] - earliest_exit));
        }
    }
    return errors;
}

/* Time `repeat` memcpys of `bytes` after a barrier: the bound's measurement,
 * run by every rank at once as the collective's copies would be. One untimed
 * copy first brings source and destination into cache (as far as they fit):
 * the calls measured just before have filled the caches with their own
 * buffers, and a bound must be the best case of the machine, not a copy
 * slowed by those misses. */
static double timed_copy(struct bench_context *ctx, size_t bytes, int repeat)
{
    memcpy(ctx->copy_dst, ctx->copy_src, bytes);
    PMPI_Barrier(ctx->comm);
    double start = MPI_Wtime();
    for (int k = 0; k < repeat; k++)
        memcpy(ctx->copy_dst, ctx->copy_src, bytes);
    double stop = MPI_Wtime();
    return stop - start;
}

/* The two paths' times in each pair of adjacent calls: the figures of a
 * paired comparison. Both paths saw the same moment of the machine in a
 * pair, so comparing within pairs removes most of its noise. */
struct paired_times {
    double *host, *shoal; /* seconds per operation, one per pair */
    int count;
};

static struct paired_times paired_alloc(int capacity)
{
    size_t n = capacity > 0 ? (size_t)capacity : 1; /* counts are >= 1 (options) */
    struct paired_times p = {calloc(n, sizeof(double)), calloc(n, sizeof(double)), 0};
    return p;
}

static void paired_add(struct paired_times *p, double host, double shoal)
{
    p->host[p->count] = host;
    p->shoal[p->count] = shoal;
    p->count++;
}

static void paired_free(struct paired_times *p)
{
    free(p->host);
    free(p->shoal);
}

/* Two-sided 95 % quantile of Student's t: few pairs (pt2pt chunks) need a
 * wider interval than the normal 1.96. */
static double student_t95(int degrees_of_freedom)
{
    static const double table[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                   2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
    if (degrees_of_freedom < 1)
        return NAN;
    if (degrees_of_freedom <= 20)
        return table[degrees_of_freedom];
    /* Beyond the table, the quantile at the low end of each range: a
     * little wide, never narrow. */
    if (degrees_of_freedom <= 30)
        return 2.080;
    if (degrees_of_freedom <= 60)
        return 2.042;
    if (degrees_of_freedom <= 120)
        return 2.000;
    return 1.980;
}

/* Fills the row's paired figures: rank 0's pairs alone for pt2pt (only rank
 * 0 times, as in OSU), else each pair averaged over ranks. The mean
 * difference gets a Student-t 95 % interval; the pair counts feed a sign
 * test, and the median over pairs of host/shoal time is the typical
 * speedup. A few descheduled calls (milliseconds each) move a mean, not a
 * majority nor a median. */
static void paired_summary(struct bench_context *ctx, struct paired_times *p, bool rank0_only, struct size_result *row)
{
    if (rank0_only) {
        PMPI_Bcast(&p->count, 1, MPI_INT, 0, ctx->comm);
        PMPI_Bcast(p->host, p->count, MPI_DOUBLE, 0, ctx->comm);
        PMPI_Bcast(p->shoal, p->count, MPI_DOUBLE, 0, ctx->comm);
    } else {
        PMPI_Allreduce(MPI_IN_PLACE, p->host, p->count, MPI_DOUBLE, MPI_SUM, ctx->comm);
        PMPI_Allreduce(MPI_IN_PLACE, p->shoal, p->count, MPI_DOUBLE, MPI_SUM, ctx->comm);
        for (int k = 0; k < p->count; k++) {
            p->host[k] /= ctx->nprocs;
            p->shoal[k] /= ctx->nprocs;
        }
    }
    int n = p->count;
    double sum = 0, squares = 0;
    double *ratios = calloc(n > 0 ? (size_t)n : 1, sizeof(double));
    int nratios = 0;
    row->pairs = n;
    row->pairs_shoal_faster = row->pairs_shoal_slower = 0;
    for (int k = 0; k < n; k++) {
        double d = p->host[k] - p->shoal[k];
        sum += d;
        row->pairs_shoal_faster += d > 0;
        row->pairs_shoal_slower += d < 0;
        if (p->shoal[k] > 0 && p->host[k] > 0)
            ratios[nratios++] = p->host[k] / p->shoal[k];
    }
    double mean = n ? sum / n : NAN;
    for (int k = 0; k < n; k++) {
        double d = p->host[k] - p->shoal[k];
        squares += (d - mean) * (d - mean);
    }
    row->difference_us = 1e6 * mean;
    row->difference_ci95_us = n > 1 ? 1e6 * student_t95(n - 1) * sqrt(squares / (n - 1) / n) : NAN;
    if (nratios) {
        row->median_speedup = core_median(ratios, nratios);
    } else {
        row->median_speedup = NAN;
    }
    free(ratios);
}

/* Per-rank averages -> average, min and max across ranks, on every rank. */
static struct path_figures across_ranks(struct bench_context *ctx, double per_rank)
{
    double in[2] = {per_rank, -per_rank}, out[2];
    double sum;
    PMPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, ctx->comm);
    PMPI_Allreduce(&per_rank, &sum, 1, MPI_DOUBLE, MPI_SUM, ctx->comm);
    struct path_figures f = {sum / ctx->nprocs, -out[1], out[0]};
    return f;
}

static void finish_row(struct bench_context *ctx, enum bench_id id, struct size_result *row, long errors[2])
{
    long local[2] = {errors[0], errors[1]}, total[2];
    PMPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, ctx->comm);
    row->errors_host = total[0];
    row->errors_shoal = total[1];
    ctx->errors_total += total[0] + total[1];
    double latency = ctx->facts.core_latency_us > 0 ? ctx->facts.core_latency_us : 0;
    if (bench_kind_of(id) == KIND_BANDWIDTH) {
        row->speedup = row->host.avg > 0 ? row->shoal.avg / row->host.avg : NAN;
        row->times_bound = row->shoal.avg > 0 ? row->bound / row->shoal.avg : NAN;
    } else {
        row->bound = fmax(row->memcpy_us, latency);
        row->speedup = row->shoal.avg > 0 ? row->host.avg / row->shoal.avg : NAN;
        row->times_bound = row->bound > 0 ? row->shoal.avg / row->bound : NAN;
    }
    output_table_row(ctx, id, row);
}

/* The barrier benchmark logs when each call was entered and left, per path. */
static void barrier_logs_alloc(enum bench_id id, struct barrier_log logs[2], int calls)
{
    for (int p = 0; p < 2; p++) {
        bool needed = id == BENCH_BARRIER;
        logs[p] = (struct barrier_log){needed ? malloc(sizeof(double) * (size_t)calls) : NULL,
                                       needed ? malloc(sizeof(double) * (size_t)calls) : NULL, 0};
    }
}

/* A collective size's row before its calls (either method): the counts
 * and the bound's bytes; returns the bytes of the bound's timed copy. */
static size_t collective_row_start(struct bench_context *ctx, enum bench_id id, size_t size, struct size_result *row)
{
    bench_counts(ctx->opt, id, size, &row->iterations, &row->warmup);
    row->size = size;
    row->bound_bytes = bench_bound_bytes(id, size, ctx->nprocs);
    return (size_t)floor(row->bound_bytes);
}

/* A collective size's figures, once its calls are done (either method):
 * the barrier's ordering check, the averages across ranks, the paired
 * summary, the row printed. copy_seconds is NAN where no bound was timed. */
static void collective_row_done(struct bench_context *ctx, enum bench_id id, struct size_result *row,
                                struct barrier_log logs[2], const double seconds[2], double copy_seconds,
                                struct paired_times *pairs, long errors[2])
{
    if (id == BENCH_BARRIER) {
        for (int p = 0; p < 2; p++) {
            if (ctx->facts.single_node)
                errors[p] += check_barrier_log(ctx, &logs[p], (enum bench_path)p);
            free(logs[p].entered);
            free(logs[p].left);
        }
    }
    row->host = across_ranks(ctx, 1e6 * seconds[PATH_HOST] / row->iterations);
    row->shoal = across_ranks(ctx, 1e6 * seconds[PATH_SHOAL] / row->iterations);
    row->memcpy_us = isnan(copy_seconds) ? 0 : across_ranks(ctx, 1e6 * copy_seconds).avg;
    paired_summary(ctx, pairs, false, row);
    paired_free(pairs);
    snprintf(row->shoal_path, sizeof row->shoal_path, "%s", ctx->last_shoal_path);
    finish_row(ctx, id, row, errors);
}

static void measure_collective_size(struct bench_context *ctx, enum bench_id id, size_t size, struct size_result *row)
{
    size_t copy_bytes = collective_row_start(ctx, id, size, row);
    int iterations = row->iterations, warmup = row->warmup;

    /* The bound takes the fastest copy of the run, not the average: noise
     * only ever slows a copy down, and a floor must not rise with it. */
    double seconds[2] = {0, 0}, copy_seconds = INFINITY;
    long errors[2] = {0, 0};
    int calls = warmup + iterations;
    struct barrier_log logs[2];
    barrier_logs_alloc(id, logs, calls);

    struct paired_times pairs = paired_alloc(iterations);
    for (int it = -warmup; it < iterations; it++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            /* Even iterations run host then shoal, odd ones shoal then host. */
            enum bench_path path = (enum bench_path)((it & 1) ? 1 - k : k);
            t[path] = timed_call(ctx, id, size, path, &logs[path], &errors[path]);
        }
        if (it >= 0) {
            seconds[PATH_HOST] += t[PATH_HOST];
            seconds[PATH_SHOAL] += t[PATH_SHOAL];
            paired_add(&pairs, t[PATH_HOST], t[PATH_SHOAL]);
        }
        if (copy_bytes > 0) {
            double copy_time = timed_copy(ctx, copy_bytes, 1);
            if (it >= 0)
                copy_seconds = fmin(copy_seconds, copy_time);
        }
    }

    collective_row_done(ctx, id, row, logs, seconds, copy_bytes > 0 ? copy_seconds : NAN, &pairs, errors);
}

/* --method osu: OSU's loop (the call between two MPI_Wtime, then a barrier
 * of the same path, the same buffers untouched call after call), in blocks
 * of calls that alternate between the paths, so that each path keeps the
 * cache state it would have under OSU alone (its own buffers, its own
 * internal state) and both see the same machine. A block starts with one
 * untimed call that takes back the caches from the other path; the inputs
 * are written once per size and the last result of each block is checked. */
#define OSU_BLOCKS 10

/* Where OSU 7.4's loop puts its barrier: before the timed call in
 * osu_reduce, after it in the other collectives' programs. Before, the
 * call starts as the barrier lets the ranks go, so their skew on leaving
 * it is in the time. */
static bool osu_barrier_first(enum bench_id id) { return id == BENCH_REDUCE; }

/* Timed seconds of `count` calls after one untimed one; the barrier
 * benchmark's timed calls are logged for the ordering check (log not NULL). */
static double osu_block(struct bench_context *ctx, struct call_site *call, int count, struct barrier_log *log)
{
    double seconds = 0;
    bool barrier_first = osu_barrier_first(call->id);
    for (int k = -1; k < count; k++) {
        if (barrier_first)
            ON_PATH(call->path, MPI_Barrier, ctx->comm);
        double entered = monotonic_seconds();
        double start = MPI_Wtime();
        call_collective(call);
        double stop = MPI_Wtime();
        double left = monotonic_seconds();
        if (call->path == PATH_SHOAL && k == count - 1)
            record_shoal_path(ctx); /* before the barrier, which shoal also plans */
        if (!barrier_first)
            ON_PATH(call->path, MPI_Barrier, ctx->comm);
        if (k < 0)
            continue;
        seconds += stop - start;
        if (call->id == BENCH_BARRIER && log) {
            log->entered[log->calls] = entered;
            log->left[log->calls] = left;
            log->calls++;
        }
    }
    return seconds;
}

static void measure_collective_size_osu(struct bench_context *ctx, enum bench_id id, size_t size,
                                        struct size_result *row)
{
    size_t copy_bytes = collective_row_start(ctx, id, size, row);
    int iterations = row->iterations, warmup = row->warmup;
    int blocks = iterations < OSU_BLOCKS ? iterations : OSU_BLOCKS;

    double seconds[2] = {0, 0}, copy_seconds = INFINITY;
    long errors[2] = {0, 0};
    struct barrier_log logs[2];
    barrier_logs_alloc(id, logs, iterations);
    struct call_site calls[2];
    uint64_t seed = ++ctx->calls;
    for (int p = 0; p < 2; p++) {
        calls[p] = (struct call_site){ctx, id, size, (enum bench_path)p, seed, 0};
        if (ctx->opt->validate)
            prepare_inputs(&calls[p]);
        PMPI_Barrier(ctx->comm);
        osu_block(ctx, &calls[p], warmup, NULL);
    }

    struct paired_times pairs = paired_alloc(blocks);
    for (int b = 0; b < blocks; b++) {
        /* Block b's share of the timed calls; even blocks host first. */
        int count = iterations / blocks + (b < iterations % blocks);
        double t[2];
        for (int k = 0; k < 2; k++) {
            enum bench_path path = (enum bench_path)((b & 1) ? 1 - k : k);
            struct call_site *call = &calls[path];
            PMPI_Barrier(ctx->comm);
            t[path] = osu_block(ctx, call, count, &logs[path]);
            if (ctx->opt->validate && id != BENCH_BARRIER) {
                long before = call->errors;
                maybe_corrupt(call);
                check_result(call);
                errors[path] += call->errors - before;
                prepare_inputs(call); /* a spoiled or in-place buffer starts the next block right */
            }
        }
        seconds[PATH_HOST] += t[PATH_HOST];
        seconds[PATH_SHOAL] += t[PATH_SHOAL];
        paired_add(&pairs, t[PATH_HOST] / count, t[PATH_SHOAL] / count);
        if (copy_bytes > 0)
            copy_seconds = fmin(copy_seconds, timed_copy(ctx, copy_bytes, 1));
    }

    collective_row_done(ctx, id, row, logs, seconds, copy_bytes > 0 ? copy_seconds : NAN, &pairs, errors);
}

/* ---- point to point: osu_latency and osu_bw ---------------------------- */

struct pt2pt_site {
    struct bench_context *ctx;
    size_t size;
    enum bench_path path;
    int window;
    MPI_Request *requests;
    MPI_Status *statuses; /* not MPI_STATUSES_IGNORE: gcc reads that as a 0-byte array */
};

static void check_message(struct bench_context *ctx, enum bench_id id, size_t size, enum bench_path path, uint64_t seed,
                          int from, long *errors)
{
    struct call_site call = {ctx, id, size, path, seed, 0};
    enum bench_corrupt want = path == PATH_HOST ? CORRUPT_HOST : CORRUPT_SHOAL;
    if (ctx->opt->corrupt == want && !ctx->corrupted[id] && size > 0) {
        ctx->corrupted[id] = true;
        if (ctx->rank == 1) /* one result: the message rank 1 received */
            ctx->recv_buf[size / 2] ^= 0x5A;
    }
    if (ctx->opt->validate)
        check_bytes(&call, ctx->recv_buf, size, pattern_key(seed, from, 0), "message");
    *errors += call.errors;
}

/* osu_latency: rank 0 sends, rank 1 answers, `count` round trips timed as
 * one loop. Returns rank 0's seconds. */
static double latency_loop(struct pt2pt_site *site, int count)
{
    struct bench_context *ctx = site->ctx;
    int s = (int)site->size;
    double start = 0, stop = 0;
    PMPI_Barrier(ctx->comm);
    if (ctx->rank == 0) {
        start = MPI_Wtime();
        for (int i = 0; i < count; i++) {
            ON_PATH(site->path, MPI_Send, ctx->send_buf, s, MPI_CHAR, 1, 1, ctx->comm);
            ON_PATH(site->path, MPI_Recv, ctx->recv_buf, s, MPI_CHAR, 1, 1, ctx->comm, MPI_STATUS_IGNORE);
        }
        stop = MPI_Wtime();
    } else if (ctx->rank == 1) {
        for (int i = 0; i < count; i++) {
            ON_PATH(site->path, MPI_Recv, ctx->recv_buf, s, MPI_CHAR, 0, 1, ctx->comm, MPI_STATUS_IGNORE);
            ON_PATH(site->path, MPI_Send, ctx->send_buf, s, MPI_CHAR, 0, 1, ctx->comm);
        }
    }
    return stop - start;
}

/* osu_bw: rank 0 posts a window of sends, rank 1 a window of receives, then
 * rank 1 acknowledges with 4 bytes; `count` windows timed as one loop. */
static double bandwidth_loop(struct pt2pt_site *site, int count)
{
    struct bench_context *ctx = site->ctx;
    int s = (int)site->size, w = site->window;
    double start = 0, stop = 0;
    char ack[4] = {0};
    PMPI_Barrier(ctx->comm);
    if (ctx->rank == 0) {
        start = MPI_Wtime();
        for (int i = 0; i < count; i++) {
            for (int j = 0; j < w; j++)
                ON_PATH(site->path, MPI_Isend, ctx->send_buf, s, MPI_CHAR, 1, 2, ctx->comm, &site->requests[j]);
            ON_PATH(site->path, MPI_Waitall, w, site->requests, site->statuses);
            ON_PATH(site->path, MPI_Recv, ack, 4, MPI_CHAR, 1, 3, ctx->comm, MPI_STATUS_IGNORE);
        }
        stop = MPI_Wtime();
    } else if (ctx->rank == 1) {
        for (int i = 0; i < count; i++) {
            for (int j = 0; j < w; j++)
                ON_PATH(site->path, MPI_Irecv, ctx->recv_buf, s, MPI_CHAR, 0, 2, ctx->comm, &site->requests[j]);
            ON_PATH(site->path, MPI_Waitall, w, site->requests, site->statuses);
            ON_PATH(site->path, MPI_Send, ack, 4, MPI_CHAR, 0, 3, ctx->comm);
        }
    }
    return stop - start;
}

/* Fresh inputs for a chunk: rank 0 sends key(seed, 0), rank 1 answers with
 * key(seed, 1). Every message of a chunk carries the same bytes, as in OSU. */
static uint64_t prepare_messages(struct bench_context *ctx, size_t size)
{
    uint64_t seed = ++ctx->calls;
    if (ctx->opt->validate && ctx->rank < 2)
        pattern_fill_bytes(ctx->send_buf, size, pattern_key(seed, ctx->rank, 0));
    return seed;
}

static void check_chunk(struct bench_context *ctx, enum bench_id id, size_t size, enum bench_path path, uint64_t seed,
                        long *errors)
{
    /* In bw only rank 1 receives data; in latency both ranks do. */
    if (ctx->rank == 1 || (ctx->rank == 0 && id == BENCH_LATENCY))
        check_message(ctx, id, size, path, seed, 1 - ctx->rank, errors);
}

static void measure_pt2pt_size(struct bench_context *ctx, enum bench_id id, size_t size, struct size_result *row)
{
    int iterations, warmup;
    bench_counts(ctx->opt, id, size, &iterations, &warmup);
    row->size = size;
    row->iterations = iterations;
    row->warmup = warmup;
    row->bound_bytes = bench_bound_bytes(id, size, 2);
    int window = id == BENCH_BW ? ctx->opt->window_size : 1;
    static MPI_Request requests[1024]; /* -W is at most 1024 */
    static MPI_Status statuses[1024];
    struct pt2pt_site site = {ctx, size, PATH_HOST, window, requests, statuses};
    double (*loop)(struct pt2pt_site *, int) = id == BENCH_BW ? bandwidth_loop : latency_loop;
    long errors[2] = {0, 0};

    /* Warm-up: one iteration at a time, every message checked (untimed). */
    for (int it = 0; it < warmup; it++)
        for (int k = 0; k < 2; k++) {
            site.path = (enum bench_path)((it & 1) ? 1 - k : k);
            uint64_t seed = prepare_messages(ctx, size);
            loop(&site, 1);
            check_chunk(ctx, id, size, site.path, seed, &errors[site.path]);
        }

    int chunks = iterations < PT2PT_CHUNKS ? iterations : PT2PT_CHUNKS;
    double seconds[2] = {0, 0}, copy_seconds = INFINITY; /* fastest chunk, per iteration */
    size_t copy_bytes = (size_t)floor(row->bound_bytes);
    /* Latency: per one-way message; bw: per window. */
    double operations_per_iteration = id == BENCH_LATENCY ? 2.0 : 1.0;
    struct paired_times pairs = paired_alloc(chunks);
    for (int c = 0; c < chunks; c++) {
        /* Spread the iterations over the chunks, the first ones taking the remainder. */
        int count = iterations / chunks + (c < iterations % chunks);
        double t[2];
        for (int k = 0; k < 2; k++) {
            site.path = (enum bench_path)((c & 1) ? 1 - k : k);
            uint64_t seed = prepare_messages(ctx, size);
            t[site.path] = loop(&site, count);
            seconds[site.path] += t[site.path];
            check_chunk(ctx, id, size, site.path, seed, &errors[site.path]);
        }
        if (ctx->rank == 0)
            paired_add(&pairs, t[PATH_HOST] / (count * operations_per_iteration),
                       t[PATH_SHOAL] / (count * operations_per_iteration));
        /* The bound: ranks 0 and 1 each copy half of every message. */
        if (copy_bytes > 0) {
            double copy_time = timed_copy(ctx, copy_bytes, count * window);
            if (ctx->rank == 0)
                copy_seconds = fmin(copy_seconds, copy_time / count);
        }
    }

    /* Only rank 0 timed the loops (OSU); share its figures. */
    double figures[3] = {seconds[0], seconds[1], copy_seconds};
    PMPI_Bcast(figures, 3, MPI_DOUBLE, 0, ctx->comm);
    paired_summary(ctx, &pairs, true, row);
    paired_free(&pairs);
    double latency = ctx->facts.core_latency_us > 0 ? ctx->facts.core_latency_us : 0;
    if (id == BENCH_LATENCY) {
        for (int p = 0; p < 2; p++) {
            double us = 1e6 * figures[p] / (2.0 * iterations); /* one way */
            struct path_figures f = {us, us, us};
            if (p == PATH_HOST)
                row->host = f;
            else
                row->shoal = f;
        }
        row->memcpy_us = copy_bytes > 0 ? 1e6 * figures[2] : 0;
    } else {
        double megabytes = (double)size / 1e6 * iterations * window;
        for (int p = 0; p < 2; p++) {
            double mbps = figures[p] > 0 ? megabytes / figures[p] : 0;
            struct path_figures f = {mbps, mbps, mbps};
            if (p == PATH_HOST)
                row->host = f;
            else
                row->shoal = f;
        }
        /* A window needs its bytes copied and the acknowledgement's round
         * trip: the bound's time per window is the larger of the two. */
        row->memcpy_us = copy_bytes > 0 ? 1e6 * figures[2] : 0;
        double window_us = fmax(row->memcpy_us, 2 * latency);
        row->bound = window_us > 0 ? (double)size * window / window_us : NAN; /* B/us = MB/s */
    }
    finish_row(ctx, id, row, errors);
}

/* ---- one benchmark over its sizes -------------------------------------- */

void measure_benchmark(struct bench_context *ctx, enum bench_id id)
{
    struct bench_result *result = &ctx->results[id];
    enum bench_kind kind = bench_kind_of(id);
    if (kind != KIND_COLLECTIVE && ctx->nprocs < 2) {
        if (ctx->rank == 0)
            printf("# %s needs at least 2 processes: skipped\n\n", bench_name(id));
        return;
    }
    size_t min, max;
    bench_size_range(ctx->opt, id, &min, &max);
    if (id == BENCH_BARRIER)
        min = max = 0; /* one row: a barrier has no size */

    int capacity = 2;
    for (size_t s = min; s < max; s = bench_next_size(s))
        capacity++;
    result->sizes = calloc((size_t)capacity, sizeof *result->sizes);
    result->ran = true;
    if (id == BENCH_BARRIER && !ctx->facts.single_node)
        result->validation_note = "barrier order not checked: ranks span several nodes";

    output_table_header(ctx, id);
    for (size_t s = min; s <= max; s = bench_next_size(s)) {
        if (!bench_size_supported(id, s, ctx->nprocs))
            continue;
        struct size_result *row = &result->sizes[result->nsizes++];
        if (kind == KIND_COLLECTIVE)
            (ctx->opt->method == METHOD_OSU ? measure_collective_size_osu : measure_collective_size)(ctx, id, s, row);
        else
            measure_pt2pt_size(ctx, id, s, row);
        if (s == max)
            break; /* max may not be a power of two times min */
    }
    if (ctx->rank == 0) {
        printf("\n");
        fflush(stdout);
    }
}
