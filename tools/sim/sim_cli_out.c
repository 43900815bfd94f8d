#include "sim_cli_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each nesting level remembers whether it already holds an item (a comma is
 * due before the next); after a key the value follows without one. */
static void value_prefix(json_out *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = 1;
}

void json_begin(json_out *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    fputc('{', f);
    j->depth = 1;
}

void json_end(json_out *j)
{
    fputs("\n}\n", j->f);
    j->depth = 0;
}

void json_str(json_out *j, const char *s)
{
    fputc('"', j->f);
    for (const char *c = s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(j->f, "\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            fprintf(j->f, "\\u%04x", (unsigned char)*c);
        else
            fputc(*c, j->f);
    }
    fputc('"', j->f);
}

void json_key(json_out *j, const char *key)
{
    value_prefix(j);
    if (j->depth <= 2)
        fputc('\n', j->f);
    json_str(j, key);
    fputc(':', j->f);
    j->after_key = 1;
}

void json_obj_open(json_out *j)
{
    value_prefix(j);
    fputc('{', j->f);
    j->need_comma[++j->depth] = 0;
}

void json_obj_close(json_out *j)
{
    fputc('}', j->f);
    j->depth--;
}

void json_arr_open(json_out *j)
{
    value_prefix(j);
    fputc('[', j->f);
    j->need_comma[++j->depth] = 0;
}

void json_arr_close(json_out *j)
{
    fputc(']', j->f);
    j->depth--;
}

static void json_value_str(json_out *j, const char *s)
{
    value_prefix(j);
    json_str(j, s);
}

void json_int(json_out *j, int64_t v)
{
    value_prefix(j);
    fprintf(j->f, "%lld", (long long)v);
}

void json_num(json_out *j, double v)
{
    value_prefix(j);
    if (isfinite(v))
        fprintf(j->f, "%.6g", v);
    else
        fputs("null", j->f);
}

void json_kv_str(json_out *j, const char *key, const char *v)
{
    json_key(j, key);
    json_value_str(j, v);
}
void json_kv_int(json_out *j, const char *key, int64_t v)
{
    json_key(j, key);
    json_int(j, v);
}
void json_kv_num(json_out *j, const char *key, double v)
{
    json_key(j, key);
    json_num(j, v);
}

void out_json_header(json_out *j, const char *command, const sim_topo *t, const sim_params *p, const char *mapping_name)
{
    json_kv_str(j, "command", command);
    json_key(j, "topology");
    json_obj_open(j);
    json_kv_str(j, "name", t->name);
    json_kv_str(j, "kind", t->kind == SIM_TOPO_TORUS ? "torus" : t->kind == SIM_TOPO_MESH ? "mesh" : "fattree");
    json_key(j, "dims");
    json_arr_open(j);
    if (t->kind == SIM_TOPO_FATTREE) {
        json_int(j, t->ft_k);
        json_int(j, t->ft_n);
    } else {
        for (int d = 0; d < t->ndims; d++)
            json_int(j, t->radix[d]);
    }
    json_arr_close(j);
    json_kv_int(j, "nodes", t->nnodes);
    json_kv_int(j, "routers", t->nrouters);
    json_kv_int(j, "links", t->ninter);
    json_obj_close(j);
    json_key(j, "params");
    json_obj_open(j);
    char buf[SIM_STR_LEN + 32];
    for (const sim_param_desc *d = sim_param_table(); d->name; d++) {
        sim_param_format(p, d, buf, sizeof buf);
        if (d->type == SIM_PT_INT || d->type == SIM_PT_SIZE)
            json_kv_int(j, d->name, *(const int64_t *)((const char *)p + d->offset));
        else if (d->type == SIM_PT_REAL)
            json_kv_num(j, d->name, *(const double *)((const char *)p + d->offset));
        else
            json_kv_str(j, d->name, buf);
    }
    json_obj_close(j);
    json_kv_str(j, "mapping", mapping_name ? mapping_name : "identity");
}

void out_json_phases(json_out *j, const char *key, const sim_topo *t, const sim_alltoall_result *r)
{
    json_key(j, key);
    json_arr_open(j);
    for (int i = 0; i < r->nphases; i++) {
        const sim_phase_result *ph = &r->ph[i];
        json_obj_open(j);
        json_kv_int(j, "phase", ph->phase);
        json_kv_int(j, "stride", ph->phase);
        json_kv_int(j, "W", ph->load.W);
        json_kv_num(j, "bound", 1.0 / ph->load.W);
        json_kv_num(j, "avg_bound", sim_load_avg_bound(t, &ph->load));
        json_kv_int(j, "hops", ph->load.hops);
        json_kv_int(j, "max_routers", ph->load.max_routers);
        json_kv_int(j, "ideal", ph->ideal);
        if (ph->simulated) {
            json_kv_int(j, "cycles", ph->cycles);
            json_kv_num(j, "throughput", ph->throughput);
        }
        json_obj_close(j);
    }
    json_arr_close(j);
}

/* Collects the distinct heat-map groups of a topology in channel order. */
static int groups_of(const sim_topo *t, char names[][24], int max)
{
    int n = 0;
    for (int c = 0; c < sim_topo_nchan(t); c++) {
        char g[24];
        int row, col;
        if (!sim_topo_chan_cell(t, c, g, sizeof g, &row, &col))
            continue;
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = !strcmp(names[i], g);
        if (!found && n < max)
            strcpy(names[n++], g);
    }
    return n;
}

static int group_index(char names[][24], int n, const char *g)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], g))
            return i;
    return -1;
}

void out_json_links(json_out *j, const char *key, const sim_topo *t, const int64_t *messages, const int64_t *flits,
                    int64_t cycles)
{
    char names[64][24];
    int ng = groups_of(t, names, 64);
    json_key(j, key);
    json_obj_open(j);
    json_key(j, "groups");
    json_arr_open(j);
    for (int i = 0; i < ng; i++)
        json_value_str(j, names[i]);
    json_arr_close(j);
    json_kv_int(j, "cycles", cycles);
    json_key(j, "columns");
    json_arr_open(j);
    json_value_str(j, "group");
    json_value_str(j, "row");
    json_value_str(j, "col");
    json_value_str(j, "messages");
    json_value_str(j, "flits");
    json_value_str(j, "utilisation");
    json_arr_close(j);
    json_key(j, "cells");
    json_arr_open(j);
    for (int c = 0; c < sim_topo_nchan(t); c++) {
        char g[24];
        int row, col;
        if (!sim_topo_chan_cell(t, c, g, sizeof g, &row, &col))
            continue;
        json_arr_open(j);
        json_int(j, group_index(names, ng, g));
        json_int(j, row);
        json_int(j, col);
        json_int(j, messages ? messages[t->inter_index[c]] : 0);
        json_int(j, flits ? flits[c] : 0);
        json_num(j, flits && cycles > 0 ? (double)flits[c] / (double)cycles : 0.0);
        json_arr_close(j);
    }
    json_arr_close(j);
    json_obj_close(j);
}

void out_json_weights(json_out *j, const char *key, const sim_topo *t, const int32_t *weights)
{
    int64_t *w = calloc((size_t)t->ninter + 1, sizeof *w);
    if (!w)
        return;
    for (int i = 0; i < t->ninter; i++)
        w[i] = weights[i];
    out_json_links(j, key, t, w, NULL, 0);
    free(w);
}

int out_csv_phases(const char *path, const sim_topo *t, const sim_alltoall_result *r, sim_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_fail(err, SIM_EIO, "--csv '%s': cannot create it", path);
    fprintf(f, "phase,stride,ideal_cycles,sim_cycles,throughput,W,bound,avg_bound,hops,max_routers\n");
    for (int i = 0; i < r->nphases; i++) {
        const sim_phase_result *ph = &r->ph[i];
        if (ph->simulated)
            fprintf(f, "%d,%d,%lld,%lld,%.6f,%d,%.6f,%.6f,%lld,%d\n", ph->phase, ph->phase, (long long)ph->ideal,
                    (long long)ph->cycles, ph->throughput, ph->load.W, 1.0 / ph->load.W,
                    sim_load_avg_bound(t, &ph->load), (long long)ph->load.hops, ph->load.max_routers);
        else
            fprintf(f, "%d,%d,%lld,,,%d,%.6f,%.6f,%lld,%d\n", ph->phase, ph->phase, (long long)ph->ideal, ph->load.W,
                    1.0 / ph->load.W, sim_load_avg_bound(t, &ph->load), (long long)ph->load.hops, ph->load.max_routers);
    }
    if (fclose(f))
        return sim_fail(err, SIM_EIO, "--csv '%s': write failed", path);
    return 0;
}

int out_csv_links(const char *path, const sim_topo *t, const int64_t *messages, const int64_t *flits, int64_t cycles,
                  sim_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_fail(err, SIM_EIO, "--links '%s': cannot create it", path);
    fprintf(f, "group,row,col,router,port,messages,flits,utilisation\n");
    for (int c = 0; c < sim_topo_nchan(t); c++) {
        char g[24], pn[24];
        int row, col;
        if (!sim_topo_chan_cell(t, c, g, sizeof g, &row, &col))
            continue;
        sim_topo_port_name(t, c % t->nports, pn, sizeof pn);
        fprintf(f, "%s,%d,%d,%d,%s,%lld,%lld,%.6f\n", g, row, col, c / t->nports, pn,
                (long long)(messages ? messages[t->inter_index[c]] : 0), (long long)(flits ? flits[c] : 0),
                flits && cycles > 0 ? (double)flits[c] / (double)cycles : 0.0);
    }
    if (fclose(f))
        return sim_fail(err, SIM_EIO, "--links '%s': write failed", path);
    return 0;
}

int out_csv_random(const char *path, const sim_random_result *res, int n, sim_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_fail(err, SIM_EIO, "--csv '%s': cannot create it", path);
    fprintf(f, "offered,accepted,avg_latency,max_latency,packets,backlog,undelivered,saturated\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%.6f,%.6f,%.3f,%lld,%lld,%.3f,%lld,%d\n", res[i].offered, res[i].accepted, res[i].avg_latency,
                (long long)res[i].max_latency, (long long)res[i].measured_packets, res[i].backlog,
                (long long)res[i].undelivered, res[i].saturated);
    if (fclose(f))
        return sim_fail(err, SIM_EIO, "--csv '%s': write failed", path);
    return 0;
}
