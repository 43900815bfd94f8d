/* sim_topo: network topologies as a graph of routers, ports and directed
 * channels: k-ary n-cube tori and meshes (any number of dimensions, any radix
 * per dimension) and k-ary n-tree fat trees; parsing of topology strings;
 * names and picture coordinates of channels.
 * Owns: sim_topo, channel numbering, port numbering per topology.
 * May call: sim_common, libc. */
#ifndef SIM_TOPO_H
#define SIM_TOPO_H

#include "sim_common.h"

#define SIM_MAX_DIMS 8
#define SIM_MAX_NODES (1 << 22)

typedef enum { SIM_TOPO_TORUS = 0, SIM_TOPO_MESH = 1, SIM_TOPO_FATTREE = 2 } sim_topo_kind;

/* What a router output port leads to. */
enum { SIM_PORT_NONE = 0, SIM_PORT_ROUTER = 1, SIM_PORT_NODE = 2 };

/* Port numbering.
 * Tori and meshes: one router per node; port 0 is the node (injection in,
 * ejection out); port 1+2d goes to the + neighbour in dimension d, port 2+2d to
 * the - neighbour. Node i has coordinates x_d = (i / prod_{e<d} K_e) % K_d
 * (dimension 0 varies fastest: row-major with X as the column).
 * Fat trees (k-ary n-tree, k^n nodes, n levels of k^(n-1) switches): router
 * id = level * k^(n-1) + index; ports 0..k-1 go down, k..2k-1 go up (none at
 * the top level). Node i hangs off leaf switch i / k, down port i % k. */
typedef struct {
    sim_topo_kind kind;
    char name[128]; /* canonical string, e.g. "torus:8x8" */
    int ndims;      /* tori and meshes */
    int radix[SIM_MAX_DIMS];
    int wrap[SIM_MAX_DIMS];
    int ft_k, ft_n;  /* fat trees */
    int ft_switches; /* switches per level, k^(n-1) */
    int nnodes;
    int nrouters;
    int nports; /* ports per router (the same for all routers) */
    /* Router output port r*nports+p leads to: */
    uint8_t *out_kind;      /* SIM_PORT_* */
    int32_t *out_peer;      /* downstream router, or node for SIM_PORT_NODE */
    int32_t *out_peer_port; /* downstream input port (the port index at that router) */
    /* Router input port r*nports+p is fed by upstream output port in_from (a
   * router port index r2*nports+p2), or by node -(1+node) for injection, or
   * nothing (INT32_MIN). */
    int32_t *in_from;
    int32_t *node_router; /* router a node attaches to */
    int32_t *node_port;   /* port at that router (the same index in and out) */
    int32_t *coords;      /* tori/meshes: router r, dimension d at r*ndims+d */
    int ninter;           /* router-to-router channels */
    int32_t *inter_index; /* router port -> dense index among router-to-router channels, or -1 */
    int32_t *inter_port;  /* dense index -> router port */
} sim_topo;

/* Parses "torus:8x8", "mesh:4x4x4", "ring:8", "torus:4^3", "fattree:4,3",
 * "fattree:k=4,n=3" and builds the graph. The error names the field. */
int sim_topo_parse(const char *spec, sim_topo *t, sim_err *err);
void sim_topo_free(sim_topo *t);

/* Channels: every router output port that leads somewhere, and one injection
 * channel per node. Index space: router port (r*nports+p) for router outputs,
 * nrouters*nports + node for injection channels. */
static inline int sim_topo_nchan(const sim_topo *t) { return t->nrouters * t->nports + t->nnodes; }

/* Human name of a router output port: "X+", "Y-", "Z+", "D4+", "node", "up2", "down0". */
void sim_topo_port_name(const sim_topo *t, int port, char *buf, int len);

/* The picture a channel belongs to (a heat map panel) and its cell in it:
 * tori/meshes: group "X+" etc., row = coordinates of dimensions 1.. flattened,
 * col = x; fat trees: group "L<level> up" or "L<level> down", row = switch
 * index, col = port. Returns 0 for channels that are not drawn (node links). */
int sim_topo_chan_cell(const sim_topo *t, int chan, char *group, int glen, int *row, int *col);

/* Largest radix (the K of the paper's min(4/K, 1) estimate), 0 for fat trees. */
int sim_topo_max_radix(const sim_topo *t);

/* Average hop count is a property of traffic; the diameter is one of the net. */
int sim_topo_diameter(const sim_topo *t);

#endif
