/* sim_route: the routing function both engines use, so the link-load engine
 * and the cycle-level engine can never disagree on a path.
 *  - tori/meshes: dimension-order (X, then Y, then Z...) minimal routing. At
 *    distance exactly K/2 on a ring the direction follows the tie rule (default:
 *    parity of the coordinate, in that dimension, of the node where the packet
 *    starts moving along it; even goes +, odd goes -). With dateline on, a
 *    packet uses VC class 0 in a dimension until it takes that ring's wrap link
 *    and class 1 from the wrap link on.
 *  - fat trees: up/down; up until the destination lies below, the up port
 *    chosen by a digit of the destination (d-mod-k, default) or source.
 * Owns: sim_router_fn (routing context), path tracing.
 * May call: sim_topo, sim_params, sim_common. */
#ifndef SIM_ROUTE_H
#define SIM_ROUTE_H

#include "sim_params.h"
#include "sim_topo.h"

#define SIM_VC_ANY (-1)

typedef struct {
    const sim_topo *topo;
    int tie;      /* SIM_TIE_* */
    int dateline; /* tori: two VC classes */
    int updown;   /* SIM_UPDOWN_* */
    int kpow[16]; /* fat trees: k^l */
} sim_router_fn;

void sim_route_init(sim_router_fn *rf, const sim_topo *t, const sim_params *p);

/* Output port at router r for a packet from node src to node dst, and the VC
 * class it must use on that port (0, 1 or SIM_VC_ANY). */
int sim_route(const sim_router_fn *rf, int r, int src, int dst, int *vc_class);

/* Direction (+1 or -1) a packet from src takes in dimension d of a torus or
 * mesh, 0 if the coordinates agree. */
int sim_route_dir(const sim_router_fn *rf, int src, int dst, int d);

/* The router output ports (r*nports+p) a packet from src to dst uses, the last
 * one being the ejection port. Returns their count (routers traversed), or -1
 * if max is too small. src == dst gives 0 (the message never enters the net). */
int sim_route_path(const sim_router_fn *rf, int src, int dst, int32_t *ports, int max);

#endif
