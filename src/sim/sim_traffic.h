/* sim_traffic: traffic patterns and the files that describe them: logical to
 * physical mappings (one physical node per logical rank, validated), user
 * permutations, uniform-stride all-to-all phases, phase selections.
 * Owns: mapping and permutation file formats, phase lists.
 * May call: sim_common, core's node-list file (core_nodelist.h), libc. */
#ifndef SIM_TRAFFIC_H
#define SIM_TRAFFIC_H

#include "sim_common.h"

/* map[i] = physical node of logical rank i. */
void sim_mapping_identity(int32_t *map, int n);

/* Checks that v is a permutation of 0..n-1; the error says which entry is
 * wrong and names `what` ("mapping", "permutation"). */
int sim_check_permutation(const int32_t *v, int n, const char *what, sim_err *err);

/* Reads a mapping file: n lines, each the physical node of logical rank i
 * (line order), '#' starts a comment, blank lines are skipped. Rejects files
 * with the wrong number of entries, out-of-range nodes, repeated nodes and
 * text that is not a number, naming file and line. */
int sim_mapping_read(const char *path, int n, int32_t *map, sim_err *err);
int sim_mapping_write(const char *path, const int32_t *map, int n, const char *header, sim_err *err);

/* Reads a permutation: line i holds the logical destination of logical rank i
 * (same format and checks as a mapping). */
int sim_perm_read(const char *path, int n, int32_t *dst, sim_err *err);

/* Physical sources and destinations of uniform-stride phase `stride`: logical
 * rank k sends to (k + stride) mod n. Returns the number of messages (n, or 0
 * for stride 0 mod n). */
int sim_stride_pairs(const int32_t *map, int n, int stride, int32_t *src, int32_t *dst);

/* Physical pairs of a logical permutation (fixed points are dropped). */
int sim_perm_pairs(const int32_t *map, const int32_t *perm, int n, int32_t *src, int32_t *dst);

/* Parses a phase selection among 1..nphases: "all", "none", or a comma list of
 * items N, A-B, every:K (phases 1, 1+K, 1+2K, ...). selected[i] for phase i
 * (index 0 unused). Returns the count selected. */
int sim_phase_list_parse(const char *spec, int nphases, uint8_t *selected, sim_err *err);

/* Parses the offered load list: "0.1,0.2" or "FIRST:LAST:STEP". */
int sim_load_list_parse(const char *spec, double *loads, int max, sim_err *err);

#endif
