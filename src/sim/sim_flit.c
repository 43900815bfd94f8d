#include "sim_flit.h"

#include "sim_rng.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One flit in an input buffer: the cycle from which the router may use it
 * and its packet. Cycle stamps are 32-bit (max_cycles stays below 2^31) so a
 * slot is 8 bytes and the buffers of an 8x8 torus fit in a core's L2. */
typedef struct {
    int32_t ready;
    int32_t pkt;
} slot_t;

/* One flit in an output buffer, with the output VC it travels on. */
typedef struct {
    int32_t ready;
    int32_t pkt;
    int32_t vc;
} oslot_t;

/* A flit is one 32-bit word: its packet number, plus TAIL_FLAG on the last
 * flit of the packet (packet numbers stay below 2^30). */
#define TAIL_FLAG (INT32_C(1) << 30)
#define PKT_OF(word) ((word) & (TAIL_FLAG - 1))

/* An input virtual channel: a ring of vc_depth slots plus the state of the
 * packet at its front. Flits of two packets can sit in one VC (the tail of one
 * behind the head of the next), which is why the state is "front packet"; the
 * front flit is a head exactly when out_vc < 0. 16 bytes, so the VC state of
 * a whole 8x8 torus fits in 41 KB. */
typedef struct {
    uint16_t head, count;
    int16_t out_port;    /* router-local output port of the front packet, -1 before routing */
    int16_t out_vc;      /* output VC held by the front packet, -1 before VC allocation */
    int32_t front_ready; /* copy of the front flit's ready stamp and word, so */
    int32_t front_word;  /* blocked VCs are checked without touching the buffer */
} ivc_t;
/* No field of the hot structures is a char type: a char store may alias
 * anything, which would make the compiler reload every engine field after it. */

typedef struct {
    uint32_t free_vcs; /* output VCs no packet holds */
    int32_t ob_head, ob_count;
    int32_t rr_in;       /* output arbiter: input port with priority */
    int64_t link_next;   /* first cycle the link may take the next flit (flits slower than a cycle) */
    int32_t kind;        /* SIM_PORT_* */
    int32_t down_router; /* router, or node for an ejection port */
    int32_t down_iport;  /* global input port (router * P + port) fed by this link */
} oport_t;

/* A node's network interface: the injection queue (a linked list of packets
 * in creation order) and the packet it is sending. */
typedef struct {
    int32_t q_head, q_tail;
    int32_t cur_pkt, cur_vc, cur_left;
    uint32_t free_vcs;
    int64_t link_next;
    int32_t iport; /* global input port of its router */
    int32_t router;
} nic_t;

struct sim_flit_engine {
    const sim_topo *t;
    sim_params p;
    sim_router_fn rf;
    int R, P, V, D, OD, N, nIP;
    int stages, link_lat, inj_lat, ej_lat, cred_lat;
    int cpf, fpc; /* cycles per flit (>= 1) and flits per cycle (>= 1); one of them is 1 */
    int vct;
    uint32_t all_vcs, class_mask[3];

    /* routers */
    ivc_t *ivc;           /* nIP * V */
    uint16_t *ivc_class;  /* nIP * V: 0, 1: dateline class the front packet's route demands; 2: any VC */
    slot_t *ibuf;         /* nIP * V * D */
    uint32_t *in_vcmask;  /* nIP: VCs holding flits */
    uint32_t *in_ready;   /* nIP: VCs not parked waiting for a credit (see cred_waiter) */
    uint16_t *in_rr;      /* nIP: VC with priority at the input arbiter */
    int32_t *in_credit;   /* nIP: index in credits[] of the upstream VC 0 */
    uint32_t *in_busy;    /* R: input ports holding flits */
    uint32_t *out_busy;   /* R: output buffers holding flits */
    oport_t *op;          /* nIP */
    oslot_t *obuf;        /* nIP * OD */
    int32_t *credits;     /* (nIP + N) * V: router outputs, then node injection channels */
    int32_t *cred_waiter; /* nIP * V: input VC parked until this output VC gets a credit, or -1.
                           Only the packet holding an output VC spends its credits, so one
                           waiter per output VC is enough. */
    int32_t eject_credit;

    /* credits in flight: a wheel of cred_lat + 1 slots, each a list of targets */
    int wheel_len, wheel_cap, wheel_pos; /* wheel_pos: slot of the current cycle */
    int32_t *wheel, *wheel_count;

    /* routers and nodes to visit this cycle and next */
    int32_t *active, *next_active;
    int nactive, nnext;
    int64_t *listed;
    int32_t *nodes_active, *nodes_next;
    int nnodes_active, nnodes_next;
    int64_t *node_listed;
    int64_t list_stamp; /* the cycle the lists being built are for */

    nic_t *nic;

    /* packets */
    int npkt, pkt_cap;
    int32_t *pkt_src, *pkt_dst, *pkt_nflits, *pkt_msg, *pkt_next, *pkt_recv;
    int64_t *pkt_created, *pkt_done;
    int32_t pkt_free; /* random traffic: recycled packet slots */

    /* messages */
    int nmsg, msg_cap;
    int32_t *msg_left;
    int64_t *msg_done;

    /* clock and statistics */
    int64_t now, last_progress;
    int64_t *chan_flits;
    sim_flit_stats st;
    int64_t dup_flits;

    /* random traffic */
    int random_mode;
    int64_t win_lo, win_hi, win_flits;
    int64_t tagged_created, tagged_done, lat_sum, lat_max;
    int64_t pkts_created, pkts_started; /* random traffic: source-queue backlog */
};

#define TAGGED (-2)
#define UNTAGGED (-3)

int sim_flit_check_params(const sim_topo *t, const sim_params *p, sim_err *err)
{
    if (p->link_width % p->flit_size != 0 && p->flit_size % p->link_width != 0)
        return sim_fail(err, SIM_EINVAL,
                        "field 'link_width': %" PRId64 " bytes/cycle is neither a multiple nor a divisor of flit_size "
                        "(%" PRId64
                        " bytes); a flit must take a whole number of cycles or a cycle a whole number of flits",
                        p->link_width, p->flit_size);
    int64_t fpc = p->link_width >= p->flit_size ? p->link_width / p->flit_size : 1;
    if (fpc > 32)
        return sim_fail(err, SIM_EINVAL,
                        "field 'link_width': %" PRId64 " flits per cycle per link, at most 32 supported", fpc);
    if (p->out_depth < fpc)
        return sim_fail(err, SIM_EINVAL,
                        "field 'out_depth': %" PRId64 " flits cannot keep a link of %" PRId64
                        " flits per cycle busy; it must be at least link_width/flit_size",
                        p->out_depth, fpc);
    if (t->kind == SIM_TOPO_TORUS && p->dateline && p->vcs < 2)
        return sim_fail(err, SIM_EINVAL,
                        "field 'vcs': a torus with dateline on needs at least 2 virtual channels (one per dateline "
                        "class), got %" PRId64,
                        p->vcs);
    if (p->flow_control == SIM_FC_VCT && p->vc_depth < p->packet_flits)
        return sim_fail(err, SIM_EINVAL,
                        "field 'packet_flits': a packet of %" PRId64
                        " flits never fits a virtual channel of vc_depth %" PRId64
                        " flits, so under flow_control=vct it could never advance",
                        p->packet_flits, p->vc_depth);
    if (t->nports > 32)
        return sim_fail(err, SIM_EINVAL, "field 'topo': routers with %d ports, at most 32 supported at flit level",
                        t->nports);
    int64_t turn = p->router_stages + p->link_latency + p->credit_latency + p->inject_latency + p->eject_latency +
                   (p->flit_size / p->link_width) + 2;
    if (p->deadlock_window <= turn)
        return sim_fail(err, SIM_EINVAL,
                        "field 'deadlock_window': %" PRId64 " cycles is shorter than one hop's round trip (%" PRId64
                        "), healthy runs would be reported as deadlocked",
                        p->deadlock_window, turn);
    double bytes = (double)t->nrouters * t->nports * (double)p->vcs * ((double)p->vc_depth * sizeof(slot_t) + 32) +
                   (double)t->nrouters * t->nports * (double)p->out_depth * sizeof(oslot_t);
    if (bytes > 16e9)
        return sim_fail(err, SIM_EINVAL,
                        "field 'topo': %s needs %.1f GB of router buffers at flit level; use the link-load engine "
                        "(--engine load) for networks this large",
                        t->name, bytes / 1e9);
    return 0;
}

int64_t sim_zero_load_latency(const sim_params *p, int routers, int64_t flits)
{
    int64_t serial;
    if (p->flit_size >= p->link_width)
        serial = (flits - 1) * (p->flit_size / p->link_width);
    else {
        int64_t fpc = p->link_width / p->flit_size;
        serial = (flits + fpc - 1) / fpc - 1;
    }
    return p->inject_latency + p->eject_latency + (int64_t)routers * p->router_stages +
           (int64_t)(routers - 1) * p->link_latency + serial;
}

void sim_flit_destroy(sim_flit_engine *e)
{
    if (!e)
        return;
    free(e->ivc), free(e->ivc_class), free(e->ibuf), free(e->in_vcmask), free(e->in_ready), free(e->in_rr),
        free(e->in_credit);
    free(e->cred_waiter);
    free(e->in_busy), free(e->out_busy), free(e->op), free(e->obuf), free(e->credits);
    free(e->wheel), free(e->wheel_count);
    free(e->active), free(e->next_active), free(e->listed);
    free(e->nodes_active), free(e->nodes_next), free(e->node_listed), free(e->nic);
    free(e->pkt_src), free(e->pkt_dst), free(e->pkt_nflits), free(e->pkt_msg), free(e->pkt_next);
    free(e->pkt_recv), free(e->pkt_created), free(e->pkt_done);
    free(e->msg_left), free(e->msg_done), free(e->chan_flits);
    free(e);
}

sim_flit_engine *sim_flit_create(const sim_topo *t, const sim_params *p, sim_err *err)
{
    if (sim_flit_check_params(t, p, err) != 0)
        return NULL;
    sim_flit_engine *e = sim_calloc(1, sizeof *e, "flit engine", err);
    if (!e)
        return NULL;
    e->t = t;
    e->p = *p;
    sim_route_init(&e->rf, t, p);
    e->R = t->nrouters;
    e->P = t->nports;
    e->V = (int)p->vcs;
    e->D = (int)p->vc_depth;
    e->OD = (int)p->out_depth;
    e->N = t->nnodes;
    e->nIP = e->R * e->P;
    e->stages = (int)p->router_stages;
    e->link_lat = (int)p->link_latency;
    e->inj_lat = (int)p->inject_latency;
    e->ej_lat = (int)p->eject_latency;
    e->cred_lat = (int)p->credit_latency;
    e->cpf = p->flit_size > p->link_width ? (int)(p->flit_size / p->link_width) : 1;
    e->fpc = p->link_width > p->flit_size ? (int)(p->link_width / p->flit_size) : 1;
    e->vct = p->flow_control == SIM_FC_VCT;
    e->all_vcs = e->V == 32 ? 0xffffffffu : ((1u << e->V) - 1);
    int half = e->V / 2;
    e->class_mask[0] = (1u << half) - 1;
    e->class_mask[1] = e->all_vcs & ~e->class_mask[0];
    e->class_mask[2] = e->all_vcs;
    e->eject_credit = INT32_MAX / 2;

    size_t nIP = (size_t)e->nIP, V = (size_t)e->V;
    e->ivc = sim_calloc(nIP * V, sizeof *e->ivc, "input VCs", err);
    e->ivc_class = sim_calloc(nIP * V, sizeof *e->ivc_class, "input VCs", err);
    e->ibuf = sim_calloc(nIP * V * (size_t)e->D, sizeof *e->ibuf, "input buffers", err);
    e->in_vcmask = sim_calloc(nIP, sizeof *e->in_vcmask, "input masks", err);
    e->in_ready = sim_calloc(nIP, sizeof *e->in_ready, "input masks", err);
    e->cred_waiter = sim_calloc(nIP * V, sizeof *e->cred_waiter, "credit waiters", err);
    e->in_rr = sim_calloc(nIP, sizeof *e->in_rr, "input arbiters", err);
    e->in_credit = sim_calloc(nIP, sizeof *e->in_credit, "credit routes", err);
    e->in_busy = sim_calloc((size_t)e->R, sizeof *e->in_busy, "router masks", err);
    e->out_busy = sim_calloc((size_t)e->R, sizeof *e->out_busy, "router masks", err);
    e->op = sim_calloc(nIP, sizeof *e->op, "output ports", err);
    e->obuf = sim_calloc(nIP * (size_t)e->OD, sizeof *e->obuf, "output buffers", err);
    e->credits = sim_calloc((nIP + (size_t)e->N) * V, sizeof *e->credits, "credits", err);
    e->wheel_len = e->cred_lat + 1;
    e->wheel_cap = (e->nIP + 1) * e->fpc;
    e->wheel = sim_calloc((size_t)e->wheel_len * (size_t)e->wheel_cap, sizeof *e->wheel, "credit wheel", err);
    e->wheel_count = sim_calloc((size_t)e->wheel_len, sizeof *e->wheel_count, "credit wheel", err);
    e->active = sim_calloc((size_t)e->R, sizeof *e->active, "active list", err);
    e->next_active = sim_calloc((size_t)e->R, sizeof *e->next_active, "active list", err);
    e->listed = sim_calloc((size_t)e->R, sizeof *e->listed, "active list", err);
    e->nodes_active = sim_calloc((size_t)e->N, sizeof *e->nodes_active, "node list", err);
    e->nodes_next = sim_calloc((size_t)e->N, sizeof *e->nodes_next, "node list", err);
    e->node_listed = sim_calloc((size_t)e->N, sizeof *e->node_listed, "node list", err);
    e->nic = sim_calloc((size_t)e->N, sizeof *e->nic, "network interfaces", err);
    e->chan_flits = sim_calloc((size_t)sim_topo_nchan(t), sizeof *e->chan_flits, "channel counters", err);
    if (!e->ivc || !e->ivc_class || !e->ibuf || !e->in_vcmask || !e->in_ready || !e->cred_waiter || !e->in_rr ||
        !e->in_credit || !e->in_busy || !e->out_busy || !e->op || !e->obuf || !e->credits || !e->wheel ||
        !e->wheel_count || !e->active || !e->next_active || !e->listed || !e->nodes_active || !e->nodes_next ||
        !e->node_listed || !e->nic || !e->chan_flits) {
        sim_flit_destroy(e);
        return NULL;
    }
    /* static wiring */
    for (int i = 0; i < e->nIP; i++) {
        oport_t *o = &e->op[i];
        o->kind = t->out_kind[i];
        if (o->kind == SIM_PORT_ROUTER) {
            o->down_router = t->out_peer[i];
            o->down_iport = t->out_peer[i] * e->P + t->out_peer_port[i];
        } else if (o->kind == SIM_PORT_NODE) {
            o->down_router = t->out_peer[i];
            o->down_iport = -1;
        }
        int32_t from = t->in_from[i];
        if (from == INT32_MIN)
            e->in_credit[i] = -1;
        else if (from >= 0)
            e->in_credit[i] = from * e->V;
        else
            e->in_credit[i] = (e->nIP + (-from - 1)) * e->V;
    }
    for (int n = 0; n < e->N; n++) {
        e->nic[n].router = t->node_router[n];
        e->nic[n].iport = t->node_router[n] * e->P + t->node_port[n];
    }
    sim_flit_reset(e);
    return e;
}

void sim_flit_reset(sim_flit_engine *e)
{
    size_t nIV = (size_t)e->nIP * e->V;
    for (size_t i = 0; i < nIV; i++) {
        ivc_t *q = &e->ivc[i];
        q->head = q->count = 0;
        q->out_port = q->out_vc = -1;
        e->ivc_class[i] = 2;
    }
    memset(e->in_vcmask, 0, sizeof *e->in_vcmask * (size_t)e->nIP);
    for (int i = 0; i < e->nIP; i++)
        e->in_ready[i] = e->all_vcs;
    for (size_t i = 0; i < nIV; i++)
        e->cred_waiter[i] = -1;
    memset(e->in_rr, 0, sizeof *e->in_rr * (size_t)e->nIP);
    memset(e->in_busy, 0, sizeof *e->in_busy * (size_t)e->R);
    memset(e->out_busy, 0, sizeof *e->out_busy * (size_t)e->R);
    for (int i = 0; i < e->nIP; i++) {
        oport_t *o = &e->op[i];
        o->free_vcs = e->all_vcs;
        o->ob_head = o->ob_count = 0;
        o->rr_in = 0;
        o->link_next = 0;
        int32_t c = o->kind == SIM_PORT_NODE ? e->eject_credit : e->D;
        for (int v = 0; v < e->V; v++)
            e->credits[(size_t)i * e->V + v] = c;
    }
    for (int n = 0; n < e->N; n++) {
        nic_t *c = &e->nic[n];
        c->q_head = c->q_tail = -1;
        c->cur_pkt = -1;
        c->cur_vc = -1;
        c->cur_left = 0;
        c->free_vcs = e->all_vcs;
        c->link_next = 0;
        for (int v = 0; v < e->V; v++)
            e->credits[((size_t)e->nIP + n) * e->V + v] = e->D;
    }
    memset(e->wheel_count, 0, sizeof *e->wheel_count * (size_t)e->wheel_len);
    e->wheel_pos = 0;
    e->nactive = e->nnext = 0;
    e->nnodes_active = e->nnodes_next = 0;
    e->list_stamp = 0;
    for (int r = 0; r < e->R; r++)
        e->listed[r] = -1;
    for (int n = 0; n < e->N; n++)
        e->node_listed[n] = -1;
    e->npkt = 0;
    e->pkt_free = -1;
    e->nmsg = 0;
    e->now = 0;
    e->last_progress = 0;
    memset(e->chan_flits, 0, sizeof *e->chan_flits * (size_t)sim_topo_nchan(e->t));
    memset(&e->st, 0, sizeof e->st);
    e->dup_flits = 0;
    e->random_mode = 0;
    e->win_lo = e->win_hi = e->win_flits = 0;
    e->tagged_created = e->tagged_done = e->lat_sum = e->lat_max = 0;
    e->pkts_created = e->pkts_started = 0;
}

static int grow_packets(sim_flit_engine *e, int need, sim_err *err)
{
    if (need <= e->pkt_cap)
        return 0;
    int cap = e->pkt_cap ? e->pkt_cap : 1024;
    while (cap < need) {
        if (cap > INT32_MAX / 2)
            return sim_fail(err, SIM_ELIMIT, "field 'msg': more than 2^30 packets in one run");
        cap *= 2;
    }
#define GROW(field)                                                                \
    do {                                                                           \
        void *np = realloc(e->field, sizeof *e->field * (size_t)cap);              \
        if (!np)                                                                   \
            return sim_fail(err, SIM_ENOMEM, "out of memory for %d packets", cap); \
        e->field = np;                                                             \
    } while (0)
    GROW(pkt_src);
    GROW(pkt_dst);
    GROW(pkt_nflits);
    GROW(pkt_msg);
    GROW(pkt_next);
    GROW(pkt_recv);
    GROW(pkt_created);
    GROW(pkt_done);
    e->pkt_cap = cap;
    return 0;
}

static int grow_messages(sim_flit_engine *e, int need, sim_err *err)
{
    if (need <= e->msg_cap)
        return 0;
    int cap = e->msg_cap ? e->msg_cap : 256;
    while (cap < need)
        cap *= 2;
    GROW(msg_left);
    GROW(msg_done);
    e->msg_cap = cap;
    return 0;
#undef GROW
}

static inline void node_activate(sim_flit_engine *e, int n)
{
    if (e->node_listed[n] != e->list_stamp) {
        e->node_listed[n] = e->list_stamp;
        e->nodes_next[e->nnodes_next++] = n;
    }
}

static inline void router_activate(sim_flit_engine *e, int r)
{
    if (e->listed[r] != e->list_stamp) {
        e->listed[r] = e->list_stamp;
        e->next_active[e->nnext++] = r;
    }
}

/* Puts packet pk at the back of node n's injection queue. */
static void enqueue_packet(sim_flit_engine *e, int n, int pk)
{
    nic_t *c = &e->nic[n];
    e->pkt_next[pk] = -1;
    if (c->q_tail >= 0)
        e->pkt_next[c->q_tail] = pk;
    else
        c->q_head = pk;
    c->q_tail = pk;
    node_activate(e, n);
}

int sim_flit_add_message(sim_flit_engine *e, int src, int dst, int64_t bytes, int64_t when, sim_err *err)
{
    if (src < 0 || src >= e->N || dst < 0 || dst >= e->N)
        return sim_fail(err, SIM_EINVAL, "message %d -> %d: node outside 0..%d", src, dst, e->N - 1);
    if (bytes <= 0)
        return sim_fail(err, SIM_EINVAL, "field 'msg': a message needs at least one byte");
    if (grow_messages(e, e->nmsg + 1, err))
        return -1;
    int m = e->nmsg++;
    int64_t flits = sim_msg_flits(&e->p, bytes);
    int64_t pf = e->p.packet_flits;
    int64_t npk = (flits + pf - 1) / pf;
    e->msg_done[m] = -1;
    if (src == dst) {
        e->msg_left[m] = 0;
        e->msg_done[m] = when;
        e->st.messages_done++;
        if (when > e->st.cycles)
            e->st.cycles = when;
        return m;
    }
    if (npk > INT32_MAX / 4 || e->npkt + npk > INT32_MAX / 4)
        return sim_fail(err, SIM_ELIMIT, "field 'msg': %" PRId64 " bytes make too many packets", bytes);
    if (grow_packets(e, e->npkt + (int)npk, err))
        return -1;
    e->msg_left[m] = (int32_t)npk;
    for (int64_t i = 0; i < npk; i++) {
        int pk = e->npkt++;
        e->pkt_src[pk] = src;
        e->pkt_dst[pk] = dst;
        e->pkt_nflits[pk] = (int32_t)(i + 1 < npk ? pf : flits - pf * (npk - 1));
        e->pkt_msg[pk] = m;
        e->pkt_recv[pk] = 0;
        e->pkt_created[pk] = when;
        e->pkt_done[pk] = -1;
        enqueue_packet(e, src, pk);
    }
    return m;
}

/* ---- the cycle ---------------------------------------------------------- */

static inline void credit_later(sim_flit_engine *e, int32_t target)
{
    int slot = e->wheel_pos + e->cred_lat;
    if (slot >= e->wheel_len)
        slot -= e->wheel_len;
    e->wheel[(size_t)slot * e->wheel_cap + e->wheel_count[slot]++] = target;
}

static void packet_done(sim_flit_engine *e, int pk, int64_t t)
{
    e->pkt_done[pk] = t;
    e->st.packets_done++;
    int m = e->pkt_msg[pk];
    if (m >= 0) {
        if (--e->msg_left[m] == 0) {
            e->msg_done[m] = t;
            e->st.messages_done++;
            if (t > e->st.cycles)
                e->st.cycles = t;
        }
    } else {
        if (t > e->st.cycles)
            e->st.cycles = t;
        if (m == TAGGED) {
            int64_t lat = t - e->pkt_created[pk];
            e->tagged_done++;
            e->lat_sum += lat;
            if (lat > e->lat_max)
                e->lat_max = lat;
        }
        /* random traffic recycles the slot */
        e->pkt_next[pk] = e->pkt_free;
        e->pkt_free = pk;
    }
}

static inline void deliver_flit(sim_flit_engine *e, int pk, int64_t t)
{
    e->st.flits_ejected++;
    if (t >= e->win_lo && t < e->win_hi)
        e->win_flits++;
    if (e->pkt_recv[pk] >= e->pkt_nflits[pk]) {
        e->dup_flits++; /* can only happen through a bug; check_idle reports it */
        return;
    }
    if (++e->pkt_recv[pk] == e->pkt_nflits[pk])
        packet_done(e, pk, t);
}

/* Node n's interface: start the next packet on a free injection VC, send its
 * flits while credits and the link allow. */
static void nic_step(sim_flit_engine *e, int n, int64_t now)
{
    nic_t *c = &e->nic[n];
    if (e->cpf > 1 && now < c->link_next)
        return;
    const int V = e->V;
    int32_t *cred = e->credits + ((size_t)e->nIP + n) * V;
    for (int budget = e->fpc; budget > 0; budget--) {
        if (c->cur_pkt < 0) {
            int pk = c->q_head;
            if (pk < 0 || e->pkt_created[pk] > now)
                return;
            int need = e->vct ? e->pkt_nflits[pk] : 1;
            uint32_t m = c->free_vcs;
            int v = -1;
            while (m) {
                int b = sim_ctz32(m);
                m &= m - 1;
                if (cred[b] >= need) {
                    v = b;
                    break;
                }
            }
            if (v < 0)
                return;
            c->free_vcs &= ~(1u << v);
            e->pkts_started++;
            c->cur_pkt = pk;
            c->cur_vc = v;
            c->cur_left = e->pkt_nflits[pk];
            c->q_head = e->pkt_next[pk];
            if (c->q_head < 0)
                c->q_tail = -1;
        }
        int v = c->cur_vc;
        if (cred[v] <= 0)
            return;
        cred[v]--;
        int iv = c->iport * V + v;
        ivc_t *q = &e->ivc[iv];
        int tail = q->head + q->count;
        if (tail >= e->D)
            tail -= e->D;
        slot_t *s = &e->ibuf[(size_t)iv * e->D + tail];
        s->ready = (int32_t)(now + e->inj_lat + e->stages - 1);
        s->pkt = c->cur_pkt | (c->cur_left == 1 ? TAIL_FLAG : 0);
        if (q->count++ == 0) {
            q->front_ready = s->ready;
            q->front_word = s->pkt;
        }
        e->in_vcmask[c->iport] |= 1u << v;
        e->in_busy[c->router] |= 1u << (c->iport - c->router * e->P);
        router_activate(e, c->router);
        e->chan_flits[(size_t)e->nIP + n]++;
        e->st.flits_injected++;
        e->last_progress = now;
        if (--c->cur_left == 0) {
            c->free_vcs |= 1u << v;
            c->cur_pkt = -1;
        }
        if (e->cpf > 1) {
            c->link_next = now + e->cpf;
            return;
        }
    }
}

/* Moves the front flit of input VC v of input port ip (router r) through the
 * crossbar into the output buffer of port po. */
static inline void grant(sim_flit_engine *e, int r, int ip, int v, int po, int64_t now)
{
    const int P = e->P, V = e->V;
    int ipg = r * P + ip;
    int iv = ipg * V + v;
    ivc_t *q = &e->ivc[iv];
    int32_t word = q->front_word;
    if (++q->head == e->D)
        q->head = 0;
    if (--q->count) {
        const slot_t *next = &e->ibuf[(size_t)iv * e->D + q->head];
        q->front_ready = next->ready;
        q->front_word = next->pkt;
    }
    int opi = r * P + po;
    oport_t *o = &e->op[opi];
    int tail = o->ob_head + o->ob_count;
    if (tail >= e->OD)
        tail -= e->OD;
    oslot_t *s = &e->obuf[(size_t)opi * e->OD + tail];
    s->ready = (int32_t)(now + 1);
    s->pkt = word;
    s->vc = q->out_vc;
    o->ob_count++;
    e->out_busy[r] |= 1u << po;
    e->credits[(size_t)opi * V + q->out_vc]--;
    credit_later(e, e->in_credit[ipg] + v);
    if (word & TAIL_FLAG) { /* the tail left: the output VC is free for another packet */
        o->free_vcs |= 1u << q->out_vc;
        q->out_vc = -1;
        q->out_port = -1;
    }
    if (q->count == 0) {
        e->in_vcmask[ipg] &= ~(1u << v);
        if (!e->in_vcmask[ipg])
            e->in_busy[r] &= ~(1u << ip);
    }
    e->in_rr[ipg] = (uint16_t)(v + 1 == V ? 0 : v + 1);
    e->st.flit_hops++;
    e->last_progress = now;
}

/* Link stage: output buffers send ready flits downstream. fpc and cpf are
 * the engine's flits per cycle and cycles per flit, passed in so the common
 * one-flit-per-cycle case compiles without its loops (see cycle()). */
static inline __attribute__((always_inline)) void links_step(sim_flit_engine *e, int r, int64_t now, const int fpc,
                                                             const int cpf)
{
    const int P = e->P, V = e->V;
    uint32_t om = e->out_busy[r];
    while (om) {
        int p = sim_ctz32(om);
        om &= om - 1;
        int opi = r * P + p;
        oport_t *o = &e->op[opi];
        if (cpf > 1 && now < o->link_next)
            continue;
        for (int budget = fpc; budget > 0 && o->ob_count; budget--) {
            oslot_t *s = &e->obuf[(size_t)opi * e->OD + o->ob_head];
            if (s->ready > now)
                break;
            int pk = s->pkt, vc = s->vc;
            if (++o->ob_head == e->OD)
                o->ob_head = 0;
            o->ob_count--;
            e->chan_flits[opi]++;
            e->last_progress = now;
            if (o->kind == SIM_PORT_ROUTER) {
                int ip = o->down_iport;
                int iv = ip * V + vc;
                ivc_t *q = &e->ivc[iv];
                int tail = q->head + q->count;
                if (tail >= e->D)
                    tail -= e->D;
                slot_t *d = &e->ibuf[(size_t)iv * e->D + tail];
                d->ready = (int32_t)(now + e->link_lat + e->stages - 1);
                d->pkt = pk;
                if (q->count++ == 0) {
                    q->front_ready = d->ready;
                    q->front_word = pk;
                }
                e->in_vcmask[ip] |= 1u << vc;
                int dr = o->down_router;
                e->in_busy[dr] |= 1u << (ip - dr * P);
                router_activate(e, dr);
            } else {
                e->credits[(size_t)opi * V + vc]++; /* the ejection queue takes the flit at once */
                deliver_flit(e, PKT_OF(pk), now + e->ej_lat);
            }
            if (cpf > 1) {
                o->link_next = now + cpf;
                break;
            }
        }
        if (!o->ob_count)
            e->out_busy[r] &= ~(1u << p);
    }
}

/* Route computation and VC allocation for the head at the front of q; returns
 * 1 when the packet holds an output VC afterwards. */
static inline int route_and_allocate(sim_flit_engine *e, int r, int iv, ivc_t *q, int pk)
{
    if (q->out_port < 0) {
        int cls;
        q->out_port = (int16_t)sim_route(&e->rf, r, e->pkt_src[pk], e->pkt_dst[pk], &cls);
        e->ivc_class[iv] = (uint16_t)(cls < 0 ? 2 : cls);
    }
    int opi = r * e->P + q->out_port;
    oport_t *o = &e->op[opi];
    uint32_t cand = o->free_vcs & e->class_mask[e->ivc_class[iv]];
    if (!cand)
        return 0;
    int ov;
    if (e->vct) {
        const int32_t *cr = e->credits + (size_t)opi * e->V;
        ov = -1;
        while (cand) {
            int b = sim_ctz32(cand);
            cand &= cand - 1;
            if (cr[b] >= e->pkt_nflits[pk]) {
                ov = b;
                break;
            }
        }
        if (ov < 0)
            return 0;
    } else {
        ov = sim_ctz32(cand);
    }
    o->free_vcs &= ~(1u << ov);
    q->out_vc = (int16_t)ov;
    return 1;
}

/* Switch allocation (separable, input first) and crossbar traversal, fpc
 * rounds per cycle (crossbar speedup = flits a link carries per cycle). */
static inline __attribute__((always_inline)) void switch_step(sim_flit_engine *e, int r, int64_t now, const int fpc)
{
    const int P = e->P, V = e->V;
    uint32_t out_req[32];
    int req_vc[32];
    for (int round = 0; round < fpc; round++) {
        uint32_t im = e->in_busy[r];
        if (!im)
            return;
        uint32_t outs = 0;
        /* input arbitration: each input port offers one VC, round-robin */
        while (im) {
            int ip = sim_ctz32(im);
            im &= im - 1;
            int ipg = r * P + ip;
            uint32_t vm = e->in_vcmask[ipg] & e->in_ready[ipg];
            if (!vm)
                continue;
            int rr = e->in_rr[ipg];
            uint32_t rot = rr ? ((vm >> rr) | (vm << (V - rr))) & e->all_vcs : vm;
            while (rot) {
                int b = sim_ctz32(rot);
                rot &= rot - 1;
                int v = b + rr;
                if (v >= V)
                    v -= V;
                int iv = ipg * V + v;
                ivc_t *q = &e->ivc[iv];
                if (q->front_ready > now)
                    continue;
                if (q->out_vc < 0 && !route_and_allocate(e, r, iv, q, PKT_OF(q->front_word)))
                    continue;
                int opi = r * P + q->out_port;
                size_t ovi = (size_t)opi * V + q->out_vc;
                if (e->credits[ovi] <= 0) {
                    /* park until a credit for this output VC arrives (cycle() wakes it) */
                    e->cred_waiter[ovi] = iv;
                    e->in_ready[ipg] &= ~(1u << v);
                    continue;
                }
                if (e->op[opi].ob_count >= e->OD)
                    continue;
                int po = q->out_port;
                if (!(outs >> po & 1))
                    out_req[po] = 0;
                outs |= 1u << po;
                out_req[po] |= 1u << ip;
                req_vc[ip] = v;
                break;
            }
        }
        if (!outs)
            return;
        /* output arbitration: round-robin among the inputs asking */
        while (outs) {
            int po = sim_ctz32(outs);
            outs &= outs - 1;
            uint32_t reqs = out_req[po];
            oport_t *o = &e->op[r * P + po];
            int rr = o->rr_in;
            uint32_t rot = rr ? ((reqs >> rr) | (reqs << (P - rr))) : reqs;
            if (P < 32)
                rot &= (1u << P) - 1;
            int ip = sim_ctz32(rot) + rr;
            if (ip >= P)
                ip -= P;
            grant(e, r, ip, req_vc[ip], po, now);
            o->rr_in = ip + 1 == P ? 0 : ip + 1;
        }
    }
}

static void cycle(sim_flit_engine *e)
{
    const int64_t now = e->now;
    /* The lists built since the last cycle are this cycle's work; whatever is
   * activated from here on is for the next cycle. */
    int32_t *tmp = e->nodes_active;
    e->nodes_active = e->nodes_next;
    e->nodes_next = tmp;
    e->nnodes_active = e->nnodes_next;
    e->nnodes_next = 0;
    tmp = e->active;
    e->active = e->next_active;
    e->next_active = tmp;
    e->nactive = e->nnext;
    e->nnext = 0;
    e->list_stamp = now + 1;

    /* credits arriving now; wake the input VC parked on a router output VC */
    int ws = e->wheel_pos;
    int32_t *w = e->wheel + (size_t)ws * e->wheel_cap;
    const int32_t nIV = e->nIP * e->V;
    for (int i = 0, n = e->wheel_count[ws]; i < n; i++) {
        int32_t tgt = w[i];
        if (e->credits[tgt]++ == 0 && tgt < nIV) {
            int32_t iv = e->cred_waiter[tgt];
            if (iv >= 0) {
                e->cred_waiter[tgt] = -1;
                e->in_ready[iv / e->V] |= 1u << (iv % e->V);
            }
        }
    }
    e->wheel_count[ws] = 0;

    for (int i = 0; i < e->nnodes_active; i++) {
        int n = e->nodes_active[i];
        nic_step(e, n, now);
        if (e->nic[n].cur_pkt >= 0 || e->nic[n].q_head >= 0)
            node_activate(e, n);
    }
    if (e->fpc == 1 && e->cpf == 1) { /* the default links: constants let the compiler drop the loops */
        for (int i = 0; i < e->nactive; i++) {
            int r = e->active[i];
            if (e->out_busy[r])
                links_step(e, r, now, 1, 1);
            if (e->in_busy[r])
                switch_step(e, r, now, 1);
            if (e->in_busy[r] | e->out_busy[r])
                router_activate(e, r);
        }
    } else {
        for (int i = 0; i < e->nactive; i++) {
            int r = e->active[i];
            if (e->out_busy[r])
                links_step(e, r, now, e->fpc, e->cpf);
            if (e->in_busy[r])
                switch_step(e, r, now, e->fpc);
            if (e->in_busy[r] | e->out_busy[r])
                router_activate(e, r);
        }
    }
    e->st.cycles_simulated++;
    e->now = now + 1;
    if (++e->wheel_pos == e->wheel_len)
        e->wheel_pos = 0;
}

/* The error of a deadlocked run: how long nothing moved, and the first
 * blocked input VCs with what each one waits for. */
static int deadlock_report(sim_flit_engine *e, sim_err *err)
{
    char body[SIM_ERR_LEN - 300];
    size_t used = 0;
    body[0] = 0;
    int listed = 0, blocked = 0;
    for (int ipg = 0; ipg < e->nIP; ipg++) {
        uint32_t vm = e->in_vcmask[ipg];
        while (vm) {
            int v = sim_ctz32(vm);
            vm &= vm - 1;
            blocked++;
            if (listed >= 12)
                continue;
            const ivc_t *q = &e->ivc[(size_t)ipg * e->V + v];
            int pk = PKT_OF(q->front_word);
            int r = ipg / e->P, ip = ipg % e->P;
            char inname[16], outname[16], where[64] = "", why[96] = "waits for its route";
            sim_topo_port_name(e->t, ip, inname, sizeof inname);
            if (e->t->coords) { /* tori and meshes: the router's coordinates */
                size_t w = (size_t)snprintf(where, sizeof where, " (");
                for (int d = 0; d < e->t->ndims && w < sizeof where; d++)
                    w += (size_t)snprintf(where + w, sizeof where - w, d ? ",%d" : "%d",
                                          e->t->coords[r * e->t->ndims + d]);
                if (w < sizeof where)
                    snprintf(where + w, sizeof where - w, ")");
            }
            if (q->out_port >= 0) {
                sim_topo_port_name(e->t, q->out_port, outname, sizeof outname);
                if (q->out_vc < 0)
                    snprintf(why, sizeof why, "waits for a free VC on %s", outname);
                else
                    snprintf(why, sizeof why, "holds VC %d on %s, %d credits", q->out_vc, outname,
                             e->credits[((size_t)r * e->P + q->out_port) * e->V + q->out_vc]);
            }
            int n = snprintf(body + used, sizeof body - used,
                             "\n  router %d%s in %s vc %d: %d flits, packet %d (%d->%d) %s", r, where, inname, v,
                             q->count, pk, e->pkt_src[pk], e->pkt_dst[pk], why);
            if (n < 0 || (size_t)n >= sizeof body - used) { /* full: keep what fits */
                body[used] = 0;
                listed = 12;
                continue;
            }
            used += (size_t)n;
            listed++;
        }
    }
    return sim_fail(err, SIM_EDEADLOCK,
                    "deadlock: no flit moved for %" PRId64 " cycles (deadlock_window) at cycle %" PRId64 "; %" PRId64
                    " flits in the network, %d blocked input VCs%s:%s",
                    e->now - e->last_progress, e->now, e->st.flits_injected - e->st.flits_ejected, blocked,
                    blocked > listed ? " (first listed)" : "", body);
}

/* Deadlock and run-length checks. The runs call it every 256 cycles: cheap,
 * and far finer than any sensible deadlock_window. An empty network (flits
 * waiting only in source queues, or none at all) is never a deadlock. */
static int watchdog(sim_flit_engine *e, sim_err *err)
{
    if (e->st.flits_injected == e->st.flits_ejected)
        e->last_progress = e->now;
    if (e->now - e->last_progress > e->p.deadlock_window)
        return deadlock_report(e, err);
    if (e->now >= e->p.max_cycles)
        return sim_fail(err, SIM_ELIMIT,
                        "field 'max_cycles': the simulation reached %" PRId64 " cycles without finishing",
                        e->p.max_cycles);
    return 0;
}

int sim_flit_run(sim_flit_engine *e, sim_err *err)
{
    while (e->st.messages_done < e->nmsg) {
        if ((e->now & 255) == 0 && watchdog(e, err))
            return -1;
        cycle(e);
    }
    return 0;
}

int sim_flit_run_random(sim_flit_engine *e, double load, uint64_t seed, sim_random_result *res, sim_err *err)
{
    sim_flit_reset(e);
    e->random_mode = 1;
    sim_rng rng;
    sim_rng_seed(&rng, seed);
    const int64_t warm = e->p.warmup, end_gen = e->p.warmup + e->p.measure;
    e->win_lo = warm;
    e->win_hi = end_gen;
    const double per_cycle = load / (double)e->p.packet_flits; /* packets per node per cycle */
    const int whole = (int)per_cycle;
    const double frac = per_cycle - whole;
    memset(res, 0, sizeof *res);
    res->offered = load;
    if (e->N < 2)
        return sim_fail(err, SIM_EINVAL, "field 'topo': random traffic needs at least 2 nodes");
    for (;;) {
        const int64_t now = e->now;
        if (now < end_gen) {
            for (int n = 0; n < e->N; n++) {
                int k = whole + (sim_rng_uniform(&rng) < frac);
                for (int i = 0; i < k; i++) {
                    int pk = e->pkt_free;
                    if (pk >= 0)
                        e->pkt_free = e->pkt_next[pk];
                    else {
                        if (grow_packets(e, e->npkt + 1, err))
                            return -1;
                        pk = e->npkt++;
                    }
                    int dst = (int)sim_rng_below(&rng, (uint32_t)(e->N - 1));
                    if (dst >= n)
                        dst++;
                    e->pkt_src[pk] = n;
                    e->pkt_dst[pk] = dst;
                    e->pkt_nflits[pk] = (int32_t)e->p.packet_flits;
                    e->pkt_msg[pk] = now >= warm ? TAGGED : UNTAGGED;
                    e->pkt_recv[pk] = 0;
                    e->pkt_created[pk] = now;
                    e->pkt_done[pk] = -1;
                    if (now >= warm)
                        e->tagged_created++;
                    e->pkts_created++;
                    enqueue_packet(e, n, pk);
                }
            }
        }
        if (now == end_gen) {
            /* Below saturation a source queue holds a packet or two; beyond it the
       * queues grow for as long as packets keep coming. */
            res->backlog = (double)(e->pkts_created - e->pkts_started) / (double)e->N;
            if (res->backlog > 4.0)
                res->saturated = 1;
        }
        if (now >= end_gen) {
            if (e->tagged_done == e->tagged_created)
                break;
            if (now >= end_gen + e->p.drain) {
                res->saturated = 1;
                res->undelivered = e->tagged_created - e->tagged_done;
                break;
            }
        }
        if ((now & 255) == 0 && watchdog(e, err))
            return -1;
        cycle(e);
    }
    res->accepted = (double)e->win_flits / ((double)e->N * (double)e->p.measure);
    res->measured_packets = e->tagged_done;
    res->avg_latency = e->tagged_done ? (double)e->lat_sum / (double)e->tagged_done : 0.0;
    res->max_latency = e->lat_max;
    return 0;
}

void sim_flit_get_stats(const sim_flit_engine *e, sim_flit_stats *s) { *s = e->st; }
const int64_t *sim_flit_chan_flits(const sim_flit_engine *e) { return e->chan_flits; }
int64_t sim_flit_message_done(const sim_flit_engine *e, int m) { return m >= 0 && m < e->nmsg ? e->msg_done[m] : -1; }
int sim_flit_npackets(const sim_flit_engine *e) { return e->npkt; }
int64_t sim_flit_packet_latency(const sim_flit_engine *e, int p)
{
    if (p < 0 || p >= e->npkt || e->pkt_done[p] < 0)
        return -1;
    return e->pkt_done[p] - e->pkt_created[p];
}

int sim_flit_check_idle(const sim_flit_engine *e, sim_err *err)
{
    if (e->dup_flits)
        return sim_fail(err, SIM_EINVAL, "flow conservation: %" PRId64 " flits delivered beyond their packet's length",
                        e->dup_flits);
    if (e->st.flits_injected != e->st.flits_ejected)
        return sim_fail(err, SIM_EINVAL, "flow conservation: %" PRId64 " flits injected, %" PRId64 " ejected",
                        e->st.flits_injected, e->st.flits_ejected);
    /* credits still on their way back count as returned */
    int32_t *pending = calloc(((size_t)e->nIP + e->N) * e->V, sizeof *pending);
    if (!pending)
        return sim_fail(err, SIM_ENOMEM, "out of memory checking credits");
    for (int s = 0; s < e->wheel_len; s++)
        for (int i = 0; i < e->wheel_count[s]; i++)
            pending[e->wheel[(size_t)s * e->wheel_cap + i]]++;
    int rc = 0;
    for (int i = 0; i < e->nIP && !rc; i++) {
        const oport_t *o = &e->op[i];
        if (e->in_vcmask[i])
            rc = sim_fail(err, SIM_EINVAL, "idle check: router %d input port %d still holds flits", i / e->P, i % e->P);
        else if (o->ob_count)
            rc =
                sim_fail(err, SIM_EINVAL, "idle check: router %d output port %d still holds flits", i / e->P, i % e->P);
        else if (o->kind != SIM_PORT_NONE && o->free_vcs != e->all_vcs)
            rc = sim_fail(err, SIM_EINVAL, "idle check: router %d output port %d has VCs still held (mask %#x)",
                          i / e->P, i % e->P, o->free_vcs);
        for (int v = 0; v < e->V && !rc; v++) {
            int32_t want = o->kind == SIM_PORT_NODE ? e->eject_credit : e->D;
            size_t k = (size_t)i * e->V + v;
            if (o->kind != SIM_PORT_NONE && e->credits[k] + pending[k] != want)
                rc = sim_fail(err, SIM_EINVAL, "idle check: router %d output port %d vc %d has %d credits, expected %d",
                              i / e->P, i % e->P, v, e->credits[k] + pending[k], want);
        }
    }
    for (int n = 0; n < e->N && !rc; n++) {
        const nic_t *c = &e->nic[n];
        if (c->cur_pkt >= 0 || c->q_head >= 0)
            rc = sim_fail(err, SIM_EINVAL, "idle check: node %d still has packets to inject", n);
        for (int v = 0; v < e->V && !rc; v++) {
            size_t k = ((size_t)e->nIP + n) * e->V + v;
            if (e->credits[k] + pending[k] != e->D)
                rc = sim_fail(err, SIM_EINVAL, "idle check: node %d injection vc %d has %d credits, expected %d", n, v,
                              e->credits[k] + pending[k], e->D);
        }
    }
    free(pending);
    if (rc)
        return rc;
    if (!e->random_mode) {
        int64_t total = 0;
        for (int pk = 0; pk < e->npkt; pk++) {
            if (e->pkt_recv[pk] != e->pkt_nflits[pk])
                return sim_fail(err, SIM_EINVAL, "flow conservation: packet %d received %d of %d flits", pk,
                                e->pkt_recv[pk], e->pkt_nflits[pk]);
            total += e->pkt_nflits[pk];
        }
        if (total != e->st.flits_ejected)
            return sim_fail(err, SIM_EINVAL, "flow conservation: %" PRId64 " flits ejected, packets hold %" PRId64,
                            e->st.flits_ejected, total);
    }
    return 0;
}
