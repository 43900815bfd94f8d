/* sim_params: every parameter of the simulator, its default, its range and its
 * one-line documentation, in one table; parsing of "key = value" config files
 * and of single key=value overrides; cross-field checks against a topology.
 * Owns: sim_params, the parameter table, size parsing ("32K").
 * May call: sim_common, sim_topo (for checks that depend on the network), libc. */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "sim_common.h"

#include <stdio.h>

enum { SIM_TIE_PARITY = 0, SIM_TIE_POSITIVE = 1, SIM_TIE_NODE = 2 };
enum { SIM_UPDOWN_DMODK = 0, SIM_UPDOWN_SMODK = 1 };
enum { SIM_FC_WORMHOLE = 0, SIM_FC_VCT = 1 };

#define SIM_STR_LEN 256

/* All integer parameters are int64_t so one table drives parsing, printing and
 * documentation; hot code copies them into plain ints. */
typedef struct {
    /* network */
    char topo[SIM_STR_LEN];
    int64_t tie;      /* SIM_TIE_*: direction at distance exactly K/2 on a ring */
    int64_t dateline; /* 1: two VC classes per torus dimension, split at the wrap link */
    int64_t updown;   /* SIM_UPDOWN_*: which digit picks the up port in a fat tree */
    /* links and packets */
    int64_t flit_size;
    int64_t packet_flits;
    int64_t link_width;
    int64_t link_latency;
    int64_t inject_latency;
    int64_t eject_latency;
    int64_t credit_latency;
    /* router */
    int64_t router_stages;
    int64_t vcs;
    int64_t vc_depth;
    int64_t out_depth;
    int64_t flow_control; /* SIM_FC_* */
    /* traffic and run */
    int64_t msg;             /* bytes per message of a phase */
    int64_t barrier;         /* 1: phases are separated by a barrier */
    int64_t barrier_latency; /* cycles a barrier costs, added between phases */
    char phases[SIM_STR_LEN];
    int64_t threads;
    int64_t seed;
    int64_t deadlock_window;
    int64_t max_cycles;
    /* uniform random traffic */
    char loads[SIM_STR_LEN];
    int64_t warmup;
    int64_t measure;
    int64_t drain;
    /* mapper */
    int64_t map_iters;
    double map_t0;
    double map_t1;
    int64_t map_greedy;
    int64_t map_chains;
    double map_near;
} sim_params;

typedef enum { SIM_PT_INT, SIM_PT_SIZE, SIM_PT_BOOL, SIM_PT_ENUM, SIM_PT_STR, SIM_PT_REAL } sim_param_type;

typedef struct {
    const char *name;
    sim_param_type type;
    size_t offset;
    const char *def;     /* default, as it would be written in a config file */
    int64_t min, max;    /* integer range (INT and SIZE); ignored otherwise */
    const char *choices; /* ENUM: names separated by '|', in enum order */
    const char *unit;    /* "bytes", "cycles", "flits", ... for the docs */
    const char *doc;
} sim_param_desc;

/* The table, terminated by an entry with name == NULL. */
const sim_param_desc *sim_param_table(void);

/* Fills p with every default. */
void sim_params_default(sim_params *p);

/* Sets one parameter from text; the error names the field and the bad value. */
int sim_param_set(sim_params *p, const char *key, const char *value, sim_err *err);

/* "key=value" in one string. */
int sim_param_set_kv(sim_params *p, const char *kv, sim_err *err);

/* Reads a config file: "key = value" lines, '#' comments, blank lines. The
 * error names the file, line and field. */
int sim_params_load(sim_params *p, const char *path, sim_err *err);

/* Writes every parameter as a config file (its current values). */
void sim_params_write(const sim_params *p, FILE *out);

/* Renders the value of one parameter as text (for output headers). */
void sim_param_format(const sim_params *p, const sim_param_desc *d, char *buf, size_t len);

/* Parses "32K", "1M", "512", "4KiB", "2G" into bytes. */
int sim_parse_size(const char *text, int64_t *bytes);

/* Flits one message of msg bytes occupies (last packet may be short). */
int64_t sim_msg_flits(const sim_params *p, int64_t msg_bytes);

#endif
