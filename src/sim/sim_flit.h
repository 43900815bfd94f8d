/* sim_flit: the cycle-level (flit-level) engine.
 * Model, per router: input buffers per virtual channel (vc_depth flits each)
 * with credit flow control, route computation, VC allocation, a separable
 * input-first switch allocator (round-robin at inputs and at outputs), a
 * crossbar that moves one flit per input and per output per round (rounds per
 * cycle = flits a link carries per cycle), an output buffer per port
 * (out_depth flits) and links of link_width bytes per cycle and link_latency
 * cycles. The pipeline is router_stages cycles from a flit entering an input
 * buffer to it leaving on the output link. Each node has an injection queue
 * (unbounded, packets in creation order, one packet at a time on a free
 * injection VC) and an ejection queue that takes flits as they arrive.
 * Zero-load latency of a packet of L flits through R routers is
 *   inject_latency + eject_latency + R*router_stages + (R-1)*link_latency
 *   + serialisation(L),
 * serialisation(L) = (L-1)*flit_size/link_width when a flit takes one cycle or
 * more, ceil(L*flit_size/link_width)-1 when a link carries several flits per
 * cycle; see sim_zero_load_latency().
 * Speed: flat arrays, no allocation per flit or per packet during a run, and
 * only routers holding flits are visited each cycle.
 * Owns: sim_flit_engine and its statistics, the deadlock report.
 * May call: sim_route, sim_topo, sim_params, sim_common. No MPI, no threads
 * (callers run one engine per thread). */
#ifndef SIM_FLIT_H
#define SIM_FLIT_H

#include "sim_route.h"

typedef struct sim_flit_engine sim_flit_engine;

typedef struct {
    int64_t cycles;         /* cycle at which the last queued message was fully delivered */
    int64_t flits_injected; /* flits that left injection queues */
    int64_t flits_ejected;  /* flits that reached ejection queues */
    int64_t flit_hops;      /* flits through a router crossbar (one per router traversed) */
    int64_t packets_done;
    int64_t messages_done;
    int64_t cycles_simulated; /* cycles the engine stepped through */
} sim_flit_stats;

/* Checks that the parameters make sense together for this topology (e.g.
 * link_width and flit_size, dateline VCs, VCT buffer size). */
int sim_flit_check_params(const sim_topo *t, const sim_params *p, sim_err *err);

/* Zero-load latency of one packet of `flits` flits crossing `routers` routers,
 * from its creation to its last flit reaching the ejection queue. */
int64_t sim_zero_load_latency(const sim_params *p, int routers, int64_t flits);

sim_flit_engine *sim_flit_create(const sim_topo *t, const sim_params *p, sim_err *err);
void sim_flit_destroy(sim_flit_engine *e);

/* Empties the network and sets the clock and all statistics to zero. */
void sim_flit_reset(sim_flit_engine *e);

/* Queues a message of `bytes` bytes from node src to node dst, cut into
 * packets of packet_flits flits, created at cycle `when`. Returns its id. A
 * message to self is complete at creation. */
int sim_flit_add_message(sim_flit_engine *e, int src, int dst, int64_t bytes, int64_t when, sim_err *err);

/* Runs until every queued message is delivered. Fails with SIM_EDEADLOCK (and a
 * report of the blocked channels in err) when no flit moves for
 * deadlock_window cycles, or SIM_ELIMIT past max_cycles. */
int sim_flit_run(sim_flit_engine *e, sim_err *err);

/* Uniform random traffic: every node creates packets of packet_flits flits to
 * uniformly random other nodes, a Bernoulli process of `load` flits per cycle
 * per node. Packets created in [warmup, warmup+measure) are measured. */
typedef struct {
    double offered;     /* flits/cycle/node asked for */
    double accepted;    /* flits/cycle/node delivered during the measured window */
    double avg_latency; /* cycles from creation to last flit delivered, measured packets */
    int64_t max_latency;
    int64_t measured_packets;
    double backlog;      /* packets per node waiting in source queues when the window closed */
    int64_t undelivered; /* measured packets still undelivered after `drain` cycles */
    int saturated;       /* backlog above 4 packets per node, or undelivered packets */
} sim_random_result;
int sim_flit_run_random(sim_flit_engine *e, double load, uint64_t seed, sim_random_result *res, sim_err *err);

void sim_flit_get_stats(const sim_flit_engine *e, sim_flit_stats *s);
/* Flits carried by each channel (sim_topo_nchan entries) since the last reset. */
const int64_t *sim_flit_chan_flits(const sim_flit_engine *e);
/* Cycle at which message m was fully delivered, -1 if not yet. */
int64_t sim_flit_message_done(const sim_flit_engine *e, int m);
/* Latency (creation to delivery) of packet p, -1 if not delivered. */
int64_t sim_flit_packet_latency(const sim_flit_engine *e, int p);
int sim_flit_npackets(const sim_flit_engine *e);

/* After a run: the network must be empty, every credit back, every VC free,
 * every packet delivered exactly once with all its flits. */
int sim_flit_check_idle(const sim_flit_engine *e, sim_err *err);

#endif
