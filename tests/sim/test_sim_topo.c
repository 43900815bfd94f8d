/* Topology strings and the router graph: sizes, wiring consistency, and the
 * errors for malformed strings (each must name the field 'topo'). */
#include "sim_test.h"
#include "sim_topo.h"

/* Every output port that leads to a router must be the input its peer says
 * it is fed by, and every node must be attached to a port that leads back. */
static void check_wiring(const sim_topo *t)
{
    int np = t->nrouters * t->nports, links = 0;
    for (int i = 0; i < np; i++) {
        if (t->out_kind[i] == SIM_PORT_ROUTER) {
            int peer = t->out_peer[i] * t->nports + t->out_peer_port[i];
            CHECK(t->in_from[peer] == i, "%s: port %d -> %d but %d is fed by %d", t->name, i, peer, peer,
                  t->in_from[peer]);
            CHECK(t->out_peer[i] != i / t->nports, "%s: port %d loops back to its own router", t->name, i);
            CHECK(t->inter_index[i] >= 0 && t->inter_port[t->inter_index[i]] == i, "%s: dense index of port %d",
                  t->name, i);
            links++;
        } else {
            CHECK(t->inter_index[i] == -1, "%s: port %d has a dense index but no link", t->name, i);
        }
    }
    CHECK(links == t->ninter, "%s: %d router links, ninter %d", t->name, links, t->ninter);
    for (int n = 0; n < t->nnodes; n++) {
        int gp = t->node_router[n] * t->nports + t->node_port[n];
        CHECK(t->out_kind[gp] == SIM_PORT_NODE && t->out_peer[gp] == n, "%s: node %d ejection port", t->name, n);
        CHECK(t->in_from[gp] == -(1 + n), "%s: node %d injection port", t->name, n);
    }
}

static void check_parse(const char *spec, const char *name, int nodes, int routers, int links)
{
    sim_topo t;
    sim_err err;
    int rc = sim_topo_parse(spec, &t, &err);
    CHECK(rc == 0, "'%s' should parse: %s", spec, rc ? err.msg : "");
    if (rc)
        return;
    CHECK(!strcmp(t.name, name), "'%s' canonical name '%s', expected '%s'", spec, t.name, name);
    CHECK(t.nnodes == nodes, "'%s': %d nodes, expected %d", spec, t.nnodes, nodes);
    CHECK(t.nrouters == routers, "'%s': %d routers, expected %d", spec, t.nrouters, routers);
    CHECK(t.ninter == links, "'%s': %d router-to-router links, expected %d", spec, t.ninter, links);
    check_wiring(&t);
    sim_topo_free(&t);
}

static void check_bad(const char *spec, const char *must_contain)
{
    sim_topo t;
    sim_err err;
    memset(&err, 0, sizeof err);
    int rc = sim_topo_parse(spec, &t, &err);
    CHECK(rc != 0, "'%s' must be rejected", spec);
    if (rc == 0) {
        sim_topo_free(&t);
        return;
    }
    CHECK(strstr(err.msg, "field 'topo'") != NULL, "'%s': error does not name the field: %s", spec, err.msg);
    CHECK(strstr(err.msg, must_contain) != NULL, "'%s': error '%s' lacks '%s'", spec, err.msg, must_contain);
}

int main(void)
{
    /* a K-ary n-cube torus (K > 2) has 2n directed links per node */
    check_parse("torus:8x8", "torus:8x8", 64, 64, 2 * 2 * 64);
    check_parse("torus:4x4x4", "torus:4x4x4", 64, 64, 2 * 3 * 64);
    check_parse("torus:4^3", "torus:4x4x4", 64, 64, 2 * 3 * 64);
    check_parse("torus:16x8", "torus:16x8", 128, 128, 2 * 2 * 128);
    check_parse("ring:8", "torus:8", 8, 8, 16);
    check_parse("torus:3x5x2", "torus:3x5x2", 30, 30, 2 * 3 * 30); /* K=2: two parallel links per direction pair */
    /* a mesh loses the wrap links: 2 * (K-1) * K^(n-1) per dimension */
    check_parse("mesh:4x4", "mesh:4x4", 16, 16, 2 * 2 * 3 * 4);
    check_parse("mesh:8", "mesh:8", 8, 8, 14);
    /* k-ary n-tree: k^n nodes, n*k^(n-1) switches, 2 * (n-1) * k^n switch links */
    check_parse("fattree:4,3", "fattree:4,3", 64, 48, 2 * 2 * 64);
    check_parse("fattree:k=2,n=4", "fattree:2,4", 16, 32, 2 * 3 * 16);
    check_parse("fattree:8,1", "fattree:8,1", 8, 1, 0);

    /* coordinates: dimension 0 varies fastest */
    sim_topo t;
    sim_err err;
    REQUIRE(sim_topo_parse("torus:4x3x2", &t, &err) == 0, "parse: %s", err.msg);
    int node = 1 + 4 * 2 + 12 * 1; /* x=1, y=2, z=1 */
    CHECK(t.coords[node * 3] == 1 && t.coords[node * 3 + 1] == 2 && t.coords[node * 3 + 2] == 1,
          "coordinates of node %d", node);
    /* the X+ neighbour of x=3 wraps to x=0 in the same row */
    int edge = 3 + 4 * 2 + 12;
    CHECK(t.out_peer[edge * t.nports + 1] == 0 + 4 * 2 + 12, "wrap link of node %d goes to %d", edge,
          t.out_peer[edge * t.nports + 1]);
    char name[16];
    sim_topo_port_name(&t, 4, name, sizeof name);
    CHECK(!strcmp(name, "Y-"), "port 4 is Y-, got %s", name);
    CHECK(sim_topo_diameter(&t) == 2 + 1 + 1, "diameter of 4x3x2 torus is 4, got %d", sim_topo_diameter(&t));
    CHECK(sim_topo_max_radix(&t) == 4, "max radix");
    sim_topo_free(&t);

    /* fat tree: every leaf's up port u reaches a level-1 switch whose down port
   * leads back to it; the top level has no up links */
    REQUIRE(sim_topo_parse("fattree:3,3", &t, &err) == 0, "parse: %s", err.msg);
    for (int r = 2 * t.ft_switches; r < 3 * t.ft_switches; r++)
        for (int u = 0; u < t.ft_k; u++)
            CHECK(t.out_kind[r * t.nports + t.ft_k + u] == SIM_PORT_NONE, "top switch %d has an up link", r);
    CHECK(sim_topo_diameter(&t) == 4, "fat tree diameter");
    sim_topo_free(&t);

    check_bad("tours:8x8", "unknown kind");
    check_bad("torus8x8", "has no kind");
    check_bad("torus:8x0", "radix 0");
    check_bad("torus:8x1", "radix 1");
    check_bad("torus:8xx8", "dimension 2 has no radix");
    check_bad("torus:8x8y", "unexpected");
    check_bad("torus:", "expected a radix");
    check_bad("ring:4x4", "one dimension");
    check_bad("torus:2^9", "dimensions");
    check_bad("torus:4096x4096", "more than");
    check_bad("fattree:4", "levels n missing");
    check_bad("fattree:1,3", "arity");
    check_bad("fattree:4,0", "levels");
    check_bad("fattree:,3", "arity k missing");
    return sim_test_finish("test_sim_topo");
}
