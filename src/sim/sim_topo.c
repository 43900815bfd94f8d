#include "sim_topo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a positive decimal number at *s; -1 if there is none or it is huge. */
static long read_number(const char **s)
{
    const char *p = *s;
    if (!isdigit((unsigned char)*p))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p - '0');
        if (v > SIM_MAX_NODES)
            return -1;
        p++;
    }
    *s = p;
    return v;
}

static int alloc_graph(sim_topo *t, sim_err *err)
{
    int np = t->nrouters * t->nports;
    t->out_kind = sim_calloc((size_t)np, sizeof *t->out_kind, "topology ports", err);
    t->out_peer = sim_calloc((size_t)np, sizeof *t->out_peer, "topology ports", err);
    t->out_peer_port = sim_calloc((size_t)np, sizeof *t->out_peer_port, "topology ports", err);
    t->in_from = sim_calloc((size_t)np, sizeof *t->in_from, "topology ports", err);
    t->inter_index = sim_calloc((size_t)np, sizeof *t->inter_index, "topology ports", err);
    t->node_router = sim_calloc((size_t)t->nnodes, sizeof *t->node_router, "topology nodes", err);
    t->node_port = sim_calloc((size_t)t->nnodes, sizeof *t->node_port, "topology nodes", err);
    if (!t->out_kind || !t->out_peer || !t->out_peer_port || !t->in_from || !t->inter_index || !t->node_router ||
        !t->node_port)
        return -1;
    for (int i = 0; i < np; i++) {
        t->in_from[i] = INT32_MIN;
        t->out_peer[i] = -1;
        t->out_peer_port[i] = -1;
        t->inter_index[i] = -1;
    }
    return 0;
}

static void connect(sim_topo *t, int r, int p, int r2, int p2)
{
    t->out_kind[r * t->nports + p] = SIM_PORT_ROUTER;
    t->out_peer[r * t->nports + p] = r2;
    t->out_peer_port[r * t->nports + p] = p2;
    t->in_from[r2 * t->nports + p2] = r * t->nports + p;
}

static void attach_node(sim_topo *t, int node, int r, int p)
{
    t->node_router[node] = r;
    t->node_port[node] = p;
    t->out_kind[r * t->nports + p] = SIM_PORT_NODE;
    t->out_peer[r * t->nports + p] = node;
    t->out_peer_port[r * t->nports + p] = 0;
    t->in_from[r * t->nports + p] = -(1 + node);
}

static int finish(sim_topo *t, sim_err *err)
{
    int np = t->nrouters * t->nports;
    t->ninter = 0;
    for (int i = 0; i < np; i++)
        if (t->out_kind[i] == SIM_PORT_ROUTER)
            t->inter_index[i] = t->ninter++;
    t->inter_port = sim_calloc((size_t)t->ninter, sizeof *t->inter_port, "channel index", err);
    if (!t->inter_port)
        return -1;
    for (int i = 0; i < np; i++)
        if (t->inter_index[i] >= 0)
            t->inter_port[t->inter_index[i]] = i;
    return 0;
}

static int build_cube(sim_topo *t, sim_err *err)
{
    long n = 1;
    for (int d = 0; d < t->ndims; d++)
        n *= t->radix[d];
    t->nnodes = (int)n;
    t->nrouters = (int)n;
    t->nports = 1 + 2 * t->ndims;
    if (alloc_graph(t, err))
        return -1;
    t->coords = sim_calloc((size_t)n * t->ndims, sizeof *t->coords, "coordinates", err);
    if (!t->coords)
        return -1;
    for (int r = 0; r < t->nrouters; r++) {
        int rest = r;
        for (int d = 0; d < t->ndims; d++) {
            t->coords[r * t->ndims + d] = rest % t->radix[d];
            rest /= t->radix[d];
        }
    }
    for (int r = 0; r < t->nrouters; r++) {
        attach_node(t, r, r, 0);
        int stride = 1;
        for (int d = 0; d < t->ndims; d++) {
            int K = t->radix[d];
            int x = t->coords[r * t->ndims + d];
            int base = r - x * stride;
            if (x + 1 < K || t->wrap[d])
                connect(t, r, 1 + 2 * d, base + ((x + 1) % K) * stride, 2 + 2 * d);
            if (x > 0 || t->wrap[d])
                connect(t, r, 2 + 2 * d, base + ((x - 1 + K) % K) * stride, 1 + 2 * d);
            stride *= K;
        }
    }
    return finish(t, err);
}

/* Fat tree wiring (see the header): switch (level l, group g, free f) with
 * index g * k^l + f; up port u of it goes to (l+1, g / k, f * k + u) and
 * arrives at that switch's down port g % k. */
static int build_fattree(sim_topo *t, sim_err *err)
{
    int k = t->ft_k, n = t->ft_n;
    long S = 1;
    for (int i = 0; i < n - 1; i++)
        S *= k;
    t->ft_switches = (int)S;
    t->nnodes = (int)(S * k);
    t->nrouters = (int)(S * n);
    t->nports = 2 * k;
    if (alloc_graph(t, err))
        return -1;
    for (int node = 0; node < t->nnodes; node++)
        attach_node(t, node, node / k, node % k);
    long kl = 1; /* k^l */
    for (int l = 0; l + 1 < n; l++) {
        for (long idx = 0; idx < S; idx++) {
            long g = idx / kl, f = idx % kl;
            for (int u = 0; u < k; u++) {
                long g2 = g / k, f2 = f * k + u;
                long idx2 = g2 * (kl * k) + f2;
                connect(t, (int)(l * S + idx), k + u, (int)((l + 1) * S + idx2), (int)(g % k));
                connect(t, (int)((l + 1) * S + idx2), (int)(g % k), (int)(l * S + idx), k + u);
            }
        }
        kl *= k;
    }
    return finish(t, err);
}

int sim_topo_parse(const char *spec, sim_topo *t, sim_err *err)
{
    memset(t, 0, sizeof *t);
    const char *colon = strchr(spec, ':');
    if (!colon)
        return sim_fail(err, SIM_EINVAL,
                        "field 'topo': '%s' has no kind (expected torus:8x8, mesh:4x4, ring:8, fattree:4,3)", spec);
    size_t klen = (size_t)(colon - spec);
    const char *s = colon + 1;
    if (klen == 5 && !strncmp(spec, "torus", 5))
        t->kind = SIM_TOPO_TORUS;
    else if (klen == 4 && !strncmp(spec, "ring", 4))
        t->kind = SIM_TOPO_TORUS;
    else if (klen == 4 && !strncmp(spec, "mesh", 4))
        t->kind = SIM_TOPO_MESH;
    else if (klen == 7 && !strncmp(spec, "fattree", 7))
        t->kind = SIM_TOPO_FATTREE;
    else
        return sim_fail(err, SIM_EINVAL,
                        "field 'topo': unknown kind '%.*s' in '%s' (expected torus, mesh, ring or fattree)", (int)klen,
                        spec, spec);

    if (t->kind == SIM_TOPO_FATTREE) {
        long k, n;
        if (!strncmp(s, "k=", 2))
            s += 2;
        k = read_number(&s);
        if (k < 0)
            return sim_fail(err, SIM_EINVAL,
                            "field 'topo': '%s': expected fattree:k,n (e.g. fattree:4,3), arity k missing", spec);
        if (*s != ',')
            return sim_fail(err, SIM_EINVAL,
                            "field 'topo': '%s': expected fattree:k,n (e.g. fattree:4,3), levels n missing", spec);
        s++;
        if (!strncmp(s, "n=", 2))
            s += 2;
        n = read_number(&s);
        if (n < 0 || *s)
            return sim_fail(err, SIM_EINVAL,
                            "field 'topo': '%s': expected fattree:k,n (e.g. fattree:4,3), levels n missing", spec);
        if (k < 2 || k > 16)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': arity k=%ld must be in [2, 16]", spec, k);
        if (n < 1 || n > 12)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': levels n=%ld must be in [1, 12]", spec, n);
        double nodes = 1;
        for (long i = 0; i < n; i++)
            nodes *= (double)k;
        if (nodes > SIM_MAX_NODES)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s' has %.0f nodes, more than the %d supported", spec,
                            nodes, SIM_MAX_NODES);
        t->ft_k = (int)k;
        t->ft_n = (int)n;
        snprintf(t->name, sizeof t->name, "fattree:%ld,%ld", k, n);
        return build_fattree(t, err);
    }

    /* torus / mesh: AxBxC or K^n */
    int nd = 0;
    double nodes = 1;
    long first = read_number(&s);
    if (first < 0)
        return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': expected a radix after ':' (like 8x8)", spec);
    if (*s == '^') {
        s++;
        long n = read_number(&s);
        if (n < 1 || *s)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': expected K^n with n >= 1", spec);
        if (n > SIM_MAX_DIMS)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': %ld dimensions, at most %d supported", spec, n,
                            SIM_MAX_DIMS);
        for (nd = 0; nd < n; nd++)
            t->radix[nd] = (int)first;
    } else {
        t->radix[nd++] = (int)first;
        while (*s == 'x' || *s == 'X') {
            s++;
            if (nd == SIM_MAX_DIMS)
                return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': more than %d dimensions", spec, SIM_MAX_DIMS);
            long r = read_number(&s);
            if (r < 0)
                return sim_fail(err, SIM_EINVAL,
                                "field 'topo': '%s': dimension %d has no radix (expected a number after 'x')", spec,
                                nd + 1);
            t->radix[nd++] = (int)r;
        }
        if (*s)
            return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': unexpected '%s' (expected AxBx... like 8x8)", spec,
                            s);
    }
    if (klen == 4 && !strncmp(spec, "ring", 4) && nd != 1)
        return sim_fail(err, SIM_EINVAL, "field 'topo': '%s': a ring has one dimension", spec);
    t->ndims = nd;
    char *w = t->name;
    w += sprintf(w, "%s:", t->kind == SIM_TOPO_MESH ? "mesh" : "torus");
    for (int d = 0; d < nd; d++) {
        if (t->radix[d] < 2)
            return sim_fail(err, SIM_EINVAL,
                            "field 'topo': '%s': dimension %d has radix %d, each radix must be at least 2", spec, d + 1,
                            t->radix[d]);
        nodes *= t->radix[d];
        t->wrap[d] = t->kind == SIM_TOPO_TORUS;
        w += sprintf(w, d ? "x%d" : "%d", t->radix[d]);
    }
    if (nodes > SIM_MAX_NODES)
        return sim_fail(err, SIM_EINVAL, "field 'topo': '%s' has %.0f nodes, more than the %d supported", spec, nodes,
                        SIM_MAX_NODES);
    return build_cube(t, err);
}

void sim_topo_free(sim_topo *t)
{
    free(t->out_kind);
    free(t->out_peer);
    free(t->out_peer_port);
    free(t->in_from);
    free(t->node_router);
    free(t->node_port);
    free(t->coords);
    free(t->inter_index);
    free(t->inter_port);
    memset(t, 0, sizeof *t);
}

static const char dim_letters[] = "XYZ";

void sim_topo_port_name(const sim_topo *t, int port, char *buf, int len)
{
    if (t->kind == SIM_TOPO_FATTREE) {
        if (port < t->ft_k)
            snprintf(buf, (size_t)len, "down%d", port);
        else
            snprintf(buf, (size_t)len, "up%d", port - t->ft_k);
        return;
    }
    if (port == 0) {
        snprintf(buf, (size_t)len, "node");
        return;
    }
    int d = (port - 1) / 2;
    char sign = (port - 1) % 2 ? '-' : '+';
    if (d < 3)
        snprintf(buf, (size_t)len, "%c%c", dim_letters[d], sign);
    else
        snprintf(buf, (size_t)len, "D%d%c", d, sign);
}

int sim_topo_chan_cell(const sim_topo *t, int chan, char *group, int glen, int *row, int *col)
{
    if (chan >= t->nrouters * t->nports)
        return 0; /* injection channel */
    int r = chan / t->nports, p = chan % t->nports;
    if (t->out_kind[chan] != SIM_PORT_ROUTER)
        return 0;
    if (t->kind == SIM_TOPO_FATTREE) {
        int level = r / t->ft_switches;
        snprintf(group, (size_t)glen, "L%d %s", level, p < t->ft_k ? "down" : "up");
        *row = r % t->ft_switches;
        *col = p < t->ft_k ? p : p - t->ft_k;
        return 1;
    }
    sim_topo_port_name(t, p, group, glen);
    *col = t->coords[r * t->ndims];
    *row = r / t->radix[0];
    return 1;
}

int sim_topo_max_radix(const sim_topo *t)
{
    int m = 0;
    if (t->kind == SIM_TOPO_FATTREE)
        return 0;
    for (int d = 0; d < t->ndims; d++)
        if (t->radix[d] > m)
            m = t->radix[d];
    return m;
}

int sim_topo_diameter(const sim_topo *t)
{
    if (t->kind == SIM_TOPO_FATTREE)
        return 2 * (t->ft_n - 1);
    int dia = 0;
    for (int d = 0; d < t->ndims; d++)
        dia += t->wrap[d] ? t->radix[d] / 2 : t->radix[d] - 1;
    return dia;
}
