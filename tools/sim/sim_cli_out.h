/* sim_cli_out: what shoal-sim writes besides the terminal table: JSON (the
 * input of shoal_sim_plot.py) and CSV files.
 * Owns: the JSON and CSV layouts (documented in docs/SIM.md).
 * May call: the sim library (src/sim), libc. */
#ifndef SIM_CLI_OUT_H
#define SIM_CLI_OUT_H

#include "sim_map.h"
#include "sim_run.h"

#include <stdio.h>

/* A minimal streaming JSON writer: it tracks commas, the caller nests. */
typedef struct {
    FILE *f;
    int need_comma[32];
    int depth;
    int after_key;
} json_out;

void json_begin(json_out *j, FILE *f);
void json_end(json_out *j);
void json_key(json_out *j, const char *key); /* inside an object */
void json_obj_open(json_out *j);
void json_obj_close(json_out *j);
void json_arr_open(json_out *j);
void json_arr_close(json_out *j);
void json_str(json_out *j, const char *s); /* raw, no separator: for keys */
void json_int(json_out *j, int64_t v);
void json_num(json_out *j, double v);
void json_kv_str(json_out *j, const char *key, const char *v);
void json_kv_int(json_out *j, const char *key, int64_t v);
void json_kv_num(json_out *j, const char *key, double v);

/* Header shared by every JSON file: command, topology, all parameters. */
void out_json_header(json_out *j, const char *command, const sim_topo *t, const sim_params *p,
                     const char *mapping_name);
/* "phases": [...] from an all-to-all result. */
void out_json_phases(json_out *j, const char *key, const sim_topo *t, const sim_alltoall_result *r);
/* "links": per-channel cells for heat maps: group names and rows of
 * [group, row, col, messages, flits, utilisation]. messages may be NULL
 * (per router-to-router link, dense index) and so may flits (per channel). */
void out_json_links(json_out *j, const char *key, const sim_topo *t, const int64_t *messages, const int64_t *flits,
                    int64_t cycles);
/* The same from int32 link weights (one phase). */
void out_json_weights(json_out *j, const char *key, const sim_topo *t, const int32_t *weights);

int out_csv_phases(const char *path, const sim_topo *t, const sim_alltoall_result *r, sim_err *err);
int out_csv_links(const char *path, const sim_topo *t, const int64_t *messages, const int64_t *flits, int64_t cycles,
                  sim_err *err);
int out_csv_random(const char *path, const sim_random_result *res, int n, sim_err *err);

#endif
