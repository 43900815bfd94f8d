/* What shoal-bench writes: the OSU-style table on stdout (rank 0, a row as
 * soon as its size is done, which is the run's progress), and at the end
 * the JSON and CSV files. docs/BENCH.md describes the JSON schema, and
 * tools/bench/shoal-bench.schema.json states it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_run.h"

#define JSON_SCHEMA_ID "shoal-bench/1"

static const char *operation_label(enum bench_id id)
{
    switch (id) {
    case BENCH_BARRIER: return "MPI_Barrier";
    case BENCH_BCAST: return "MPI_Bcast, MPI_CHAR, root 0";
    case BENCH_REDUCE: return "MPI_Reduce, MPI_FLOAT sum, root 0";
    case BENCH_ALLREDUCE: return "MPI_Allreduce, MPI_FLOAT sum";
    case BENCH_GATHER: return "MPI_Gather, MPI_CHAR, root 0, size = bytes per rank";
    case BENCH_ALLGATHER: return "MPI_Allgather, MPI_CHAR, size = bytes per rank";
    case BENCH_SCATTER: return "MPI_Scatter, MPI_CHAR, root 0, size = bytes per rank";
    case BENCH_ALLTOALL: return "MPI_Alltoall, MPI_CHAR, size = bytes per rank pair";
    case BENCH_REDUCE_SCATTER_BLOCK: return "MPI_Reduce_scatter_block, MPI_FLOAT sum, size = whole vector";
    case BENCH_REDUCE_SCATTER:
        return "MPI_Reduce_scatter, MPI_FLOAT sum, size = whole vector, rank r's block (r+1)/(n(n+1)/2) of it";
    case BENCH_SCAN: return "MPI_Scan, MPI_FLOAT sum";
    case BENCH_EXSCAN: return "MPI_Exscan, MPI_FLOAT sum";
    case BENCH_LATENCY: return "MPI_Send/MPI_Recv ping-pong, ranks 0 and 1, one-way latency";
    case BENCH_BW: return "MPI_Isend/MPI_Irecv windows, rank 0 to rank 1";
    default: return "";
    }
}

void output_preamble(const struct bench_context *ctx)
{
    if (ctx->rank != 0)
        return;
    const struct machine_facts *f = &ctx->facts;
    printf("# shoal-bench %s (%s): %d processes on %d node%s, %s, %d cores online\n", f->shoal_version, f->shoal_commit,
           f->nprocs, f->nodes, f->nodes == 1 ? "" : "s", f->hostname, f->cores_online);
    printf("# host MPI: %s %s (MPI %d.%d)\n", f->mpi_name, f->mpi_version, f->mpi_standard_major,
           f->mpi_standard_minor);
    if (f->shoal_enabled)
        printf("# shoal: active, intercepting the MPI_* calls of the shoal column\n");
    else
        printf("# shoal: NOT active in this process: both columns measure the host MPI\n");
    if (f->core_latency_us > 0)
        printf("# core-to-core cache-line latency (one way): %.3f us\n", f->core_latency_us);
    else
        printf("# core-to-core cache-line latency: not measured (no rank on rank 0's node that may run on "
               "another CPU, or descheduled)\n");
    if (ctx->opt->method == METHOD_OSU)
        printf("# method: osu (collectives: the same buffers call after call, untouched, a barrier after each "
               "call, before each reduce, as OSU 7.4; the paths alternate in blocks of calls)\n");
    else
        printf("# method: fresh (collectives: a new input written before each call; the paths alternate call by "
               "call)\n");
    if (ctx->opt->skew_us)
        printf("# skew: one rank per node enters each call %d us late (a node's first rank; the second on rank "
               "0's node)\n",
               ctx->opt->skew_us);
    printf("# validation: %s\n\n", !ctx->opt->validate ? "off"
                                   : ctx->opt->method == METHOD_OSU
                                       ? "the last result of every block of calls, both paths"
                                       : "every result, both paths");
    fflush(stdout);
}

void output_table_header(const struct bench_context *ctx, enum bench_id id)
{
    if (ctx->rank != 0)
        return;
    bool bw = bench_kind_of(id) == KIND_BANDWIDTH;
    printf("# shoal-bench %s: %s\n", bench_name(id), operation_label(id));
    if (bw)
        printf("# bound: window bytes / max(memcpy of s/2 bytes per message, 2 x core-to-core "
               "latency)\n");
    else
        printf("# bound: max(memcpy of %s bytes, core-to-core latency)\n", bench_bound_formula(id));
    if (bw)
        printf("%-10s%16s%16s%10s%16s%14s", "# Size", "Host MPI(MB/s)", "shoal(MB/s)", "Speedup", "Bound(MB/s)",
               "Bound/shoal");
    else
        printf("%-10s%16s%16s%10s%16s%14s", "# Size", "Host MPI(us)", "shoal(us)", "Speedup", "Bound(us)",
               "shoal/Bound");
    if (ctx->opt->full)
        printf("%14s%14s%14s%14s%12s%18s%10s", "Host Min", "Host Max", "shoal Min", "shoal Max", "Iterations",
               "Host-shoal(us)", "Median");
    if (!bw)
        printf("  %s", "shoal ran");
    printf("\n");
    fflush(stdout);
}

void output_table_row(const struct bench_context *ctx, enum bench_id id, const struct size_result *row)
{
    if (ctx->rank != 0)
        return;
    printf("%-10zu%16.2f%16.2f%10.2f%16.2f%14.2f", row->size, row->host.avg, row->shoal.avg, row->speedup, row->bound,
           row->times_bound);
    if (ctx->opt->full)
        printf("%14.2f%14.2f%14.2f%14.2f%12d%10.2f+-%-6.2f%10.2f", row->host.min, row->host.max, row->shoal.min,
               row->shoal.max, row->iterations, row->difference_us, row->difference_ci95_us, row->median_speedup);
    if (row->shoal_path[0])
        printf("  %s", row->shoal_path);
    if (row->errors_host || row->errors_shoal)
        printf("  FAILED validation (host %ld, shoal %ld)", row->errors_host, row->errors_shoal);
    printf("\n");
    fflush(stdout);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* JSON has no NaN or infinity: a figure that could not be formed is null. */
static void json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.6g", value);
    else
        fputs("null", out);
}

static void json_figures(FILE *out, const char *name, const struct path_figures *f)
{
    fprintf(out, "\"%s\": {\"avg\": ", name);
    json_number(out, f->avg);
    fputs(", \"min\": ", out);
    json_number(out, f->min);
    fputs(", \"max\": ", out);
    json_number(out, f->max);
    fputs("}", out);
}

static const char *kind_name(enum bench_kind kind)
{
    return kind == KIND_COLLECTIVE ? "collective" : kind == KIND_LATENCY ? "latency" : "bandwidth";
}

int output_json(const struct bench_context *ctx, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return -1;
    }
    const struct machine_facts *f = &ctx->facts;
    const struct bench_options *opt = ctx->opt;
    fprintf(out, "{\n  \"schema\": \"%s\",\n", JSON_SCHEMA_ID);
    fputs("  \"machine\": {\"hostname\": ", out);
    json_string(out, f->hostname);
    fputs(", \"cpu_model\": ", out);
    json_string(out, f->cpu_model);
    fprintf(out, ", \"cores_online\": %d, \"cores_usable\": %d, \"nodes\": %d},\n", f->cores_online, f->cores_usable,
            f->nodes);
    fputs("  \"mpi\": {\"name\": ", out);
    json_string(out, f->mpi_name);
    fputs(", \"version\": ", out);
    json_string(out, f->mpi_version);
    fprintf(out, ", \"standard\": \"%d.%d\", \"library_version\": ", f->mpi_standard_major, f->mpi_standard_minor);
    json_string(out, f->mpi_library_version);
    fputs("},\n  \"shoal\": {\"version\": ", out);
    json_string(out, f->shoal_version);
    fputs(", \"commit\": ", out);
    json_string(out, f->shoal_commit);
    fprintf(out, ", \"enabled\": %s},\n", f->shoal_enabled ? "true" : "false");
    fprintf(out, "  \"run\": {\"processes\": %d, \"max_processes_per_node\": %d, \"date_utc\": ", f->nprocs,
            f->max_procs_per_node);
    json_string(out, f->date_utc);
    fputs(", \"command_line\": ", out);
    json_string(out, f->command_line);
    fprintf(out,
            ", \"validation\": %s, \"method\": \"%s\", \"skew_us\": %d, \"large_message_size\": %d, "
            "\"window_size\": %d},\n",
            opt->validate ? "true" : "false", bench_method_name(opt->method), opt->skew_us, BENCH_LARGE_MESSAGE_SIZE,
            opt->window_size);
    fputs("  \"calibration\": {\"core_to_core_latency_us\": ", out);
    json_number(out, f->core_latency_us > 0 ? f->core_latency_us : NAN);
    fputs("},\n  \"benchmarks\": [", out);

    bool first_bench = true;
    for (int id = 0; id < BENCH_COUNT; id++) {
        const struct bench_result *r = &ctx->results[id];
        if (!r->ran)
            continue;
        bool bw = bench_kind_of(id) == KIND_BANDWIDTH;
        fprintf(out, "%s\n    {\"name\": \"%s\", \"kind\": \"%s\", \"unit\": \"%s\", ", first_bench ? "" : ",",
                bench_name(id), kind_name(bench_kind_of(id)), bw ? "MB/s" : "us");
        first_bench = false;
        fputs("\"operation\": ", out);
        json_string(out, operation_label(id));
        fputs(", \"bound_bytes_formula\": ", out);
        json_string(out, bench_bound_formula(id));
        fputs(", \"validation_note\": ", out);
        if (r->validation_note)
            json_string(out, r->validation_note);
        else
            fputs("null", out);
        fputs(",\n     \"results\": [", out);
        for (int k = 0; k < r->nsizes; k++) {
            const struct size_result *row = &r->sizes[k];
            fprintf(out, "%s\n      {\"size\": %zu, \"iterations\": %d, \"warmup\": %d, ", k ? "," : "", row->size,
                    row->iterations, row->warmup);
            json_figures(out, "host", &row->host);
            fputs(", ", out);
            json_figures(out, "shoal", &row->shoal);
            fputs(",\n       \"bound\": ", out);
            json_number(out, row->bound);
            fputs(", \"bound_bytes\": ", out);
            json_number(out, row->bound_bytes);
            fputs(", \"memcpy_us\": ", out);
            json_number(out, row->memcpy_us);
            fputs(", \"speedup\": ", out);
            json_number(out, row->speedup);
            fputs(", \"shoal_over_bound\": ", out);
            json_number(out, row->times_bound);
            fputs(",\n       \"difference_us\": ", out);
            json_number(out, row->difference_us);
            fputs(", \"difference_ci95_us\": ", out);
            json_number(out, row->difference_ci95_us);
            fprintf(out,
                    ", \"pairs\": {\"count\": %d, \"shoal_faster\": %d, \"shoal_slower\": %d, "
                    "\"median_speedup\": ",
                    row->pairs, row->pairs_shoal_faster, row->pairs_shoal_slower);
            json_number(out, row->median_speedup);
            fputs("}", out);
            fprintf(out, ", \"errors\": {\"host\": %ld, \"shoal\": %ld}, \"valid\": %s", row->errors_host,
                    row->errors_shoal, row->errors_host + row->errors_shoal == 0 ? "true" : "false");
            if (row->shoal_path[0]) {
                fputs(", \"shoal_path\": ", out);
                json_string(out, row->shoal_path);
            }
            fputs("}", out);
        }
        fputs("\n     ]}", out);
    }
    fprintf(out, "\n  ],\n  \"validation_errors\": %ld,\n  \"status\": \"%s\"\n}\n", ctx->errors_total,
            ctx->errors_total ? "validation_failed" : "ok");
    return fclose(out) == 0 ? 0 : -1;
}

/* ---- CSV: one line per benchmark and size ---------------------------------- */

int output_csv(const struct bench_context *ctx, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return -1;
    }
    const struct machine_facts *f = &ctx->facts;
    fputs("mpi,mpi_version,processes,shoal_version,shoal_commit,shoal_enabled,benchmark,unit,"
          "size,iterations,host_avg,host_min,host_max,shoal_avg,shoal_min,shoal_max,bound,"
          "bound_bytes,memcpy_us,speedup,shoal_over_bound,difference_us,difference_ci95_us,pairs,"
          "pairs_shoal_faster,pairs_shoal_slower,median_speedup,valid\n",
          out);
    for (int id = 0; id < BENCH_COUNT; id++) {
        const struct bench_result *r = &ctx->results[id];
        for (int k = 0; r->ran && k < r->nsizes; k++) {
            const struct size_result *row = &r->sizes[k];
            fprintf(out,
                    "%s,%s,%d,%s,%s,%d,%s,%s,%zu,%d,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,"
                    "%d,%d,%d,%g,%d\n",
                    f->mpi_name, f->mpi_version, f->nprocs, f->shoal_version, f->shoal_commit, f->shoal_enabled,
                    bench_name(id), bench_kind_of(id) == KIND_BANDWIDTH ? "MB/s" : "us", row->size, row->iterations,
                    row->host.avg, row->host.min, row->host.max, row->shoal.avg, row->shoal.min, row->shoal.max,
                    row->bound, row->bound_bytes, row->memcpy_us, row->speedup, row->times_bound, row->difference_us,
                    row->difference_ci95_us, row->pairs, row->pairs_shoal_faster, row->pairs_shoal_slower,
                    row->median_speedup, row->errors_host + row->errors_shoal == 0);
        }
    }
    return fclose(out) == 0 ? 0 : -1;
}
