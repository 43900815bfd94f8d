#include "sim_route.h"

void sim_route_init(sim_router_fn *rf, const sim_topo *t, const sim_params *p)
{
    rf->topo = t;
    rf->tie = (int)p->tie;
    rf->dateline = t->kind == SIM_TOPO_TORUS && p->dateline;
    rf->updown = (int)p->updown;
    rf->kpow[0] = 1;
    for (int l = 1; l < 16; l++)
        rf->kpow[l] = t->kind == SIM_TOPO_FATTREE && l <= t->ft_n ? rf->kpow[l - 1] * t->ft_k : 0;
}

int sim_route_dir(const sim_router_fn *rf, int src, int dst, int d)
{
    const sim_topo *t = rf->topo;
    int s = t->coords[src * t->ndims + d], e = t->coords[dst * t->ndims + d];
    if (s == e)
        return 0;
    if (!t->wrap[d])
        return e > s ? 1 : -1;
    int K = t->radix[d];
    int delta = (e - s + K) % K; /* hops going + */
    if (2 * delta < K)
        return 1;
    if (2 * delta > K)
        return -1;
    switch (rf->tie) {
    case SIM_TIE_POSITIVE: return 1;
    case SIM_TIE_NODE: return src % 2 == 0 ? 1 : -1;
    default: return s % 2 == 0 ? 1 : -1; /* DOR: in dimension d the packet starts at coordinate s */
    }
}

int sim_route(const sim_router_fn *rf, int r, int src, int dst, int *vc_class)
{
    const sim_topo *t = rf->topo;
    *vc_class = SIM_VC_ANY;
    if (t->kind == SIM_TOPO_FATTREE) {
        int k = t->ft_k, S = t->ft_switches;
        int level = r / S, idx = r % S;
        int kl = rf->kpow[level];
        int group = idx / kl;
        if (dst / (kl * k) == group)
            return (dst / kl) % k;
        int chooser = rf->updown == SIM_UPDOWN_SMODK ? src : dst;
        return k + (chooser / kl) % k;
    }
    const int nd = t->ndims;
    const int32_t *c = t->coords + (size_t)r * nd;
    const int32_t *e = t->coords + (size_t)dst * nd;
    for (int d = 0; d < nd; d++) {
        if (c[d] == e[d])
            continue;
        int dir = sim_route_dir(rf, src, dst, d);
        if (rf->dateline && t->wrap[d]) {
            int K = t->radix[d];
            int s = t->coords[src * nd + d];
            int next = dir > 0 ? (c[d] + 1) % K : (c[d] - 1 + K) % K;
            /* minimal routes are shorter than the ring, so having passed the wrap
       * link is the same as the next coordinate lying "behind" the start */
            *vc_class = dir > 0 ? next < s : next > s;
        }
        return dir > 0 ? 1 + 2 * d : 2 + 2 * d;
    }
    return t->node_port[dst]; /* arrived: the ejection port */
}

int sim_route_path(const sim_router_fn *rf, int src, int dst, int32_t *ports, int max)
{
    const sim_topo *t = rf->topo;
    if (src == dst)
        return 0;
    int r = t->node_router[src], n = 0;
    for (;;) {
        if (n == max)
            return -1;
        int cls;
        int p = sim_route(rf, r, src, dst, &cls);
        int gp = r * t->nports + p;
        ports[n++] = gp;
        if (t->out_kind[gp] == SIM_PORT_NODE)
            return n;
        if (t->out_kind[gp] != SIM_PORT_ROUTER)
            return -1; /* a route into a missing link: a bug */
        r = t->out_peer[gp];
    }
}
