/* shim_nodes: collectives of a communicator that spans several nodes
 * (shim_nodes.c), in two levels. Each is a composition of named steps: a
 * step inside every node runs on the node's part of the communicator
 * through shoal's own path (its team, or the host MPI where shoal declines
 * that call), a step between nodes runs on the host MPI over one rank per
 * node (the leaders: each node's first rank). The answer is the host MPI's:
 * reductions combine inside each node in rank order, then across nodes as
 * the host does, so results are the same on every run of the same layout.
 *
 * Node discovery: a node is the ranks MPI_Comm_split_type(SHARED) groups,
 * any number per node and in any rank order; SHOAL_NODE_CLIQUES splits each
 * node further (local rank modulo N, or N runs of consecutive local ranks
 * under SHOAL_NODE_CLIQUE_ORDER=blocks), so the two levels run on one host.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_NODES_H
#define SHOAL_SHIM_NODES_H

#include <mpi.h>
#include <stdbool.h>

#include "shim_comm.h"

/* The node part of comm that this rank is in, ordered as comm (collective
 * over comm). The caller frees it. MPI_COMM_NULL where comm cannot be split
 * (its error handler returned an error). */
MPI_Comm shim_node_part(MPI_Comm comm);

/* Sets up sc->nodes given this rank's node part (taken over on success):
 * the leaders' communicator and where every rank is. False (on every rank
 * alike) when two levels gain nothing: every node holds one rank. */
bool shim_nodes_open(shim_comm *sc, MPI_Comm node);
/* Frees the node part and the leaders' communicator: collective over comm. */
void shim_nodes_close(shim_nodes *nodes);

/* The collectives: false, having done nothing, when an argument is one
 * shoal leaves to the host MPI (which then reports it, if invalid). */
bool shim_nodes_barrier(shim_comm *sc);
bool shim_nodes_bcast(shim_comm *sc, void *buf, MPI_Count count, MPI_Datatype type, int root);
bool shim_nodes_reduce(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                       int root);
bool shim_nodes_allreduce(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op);
/* inclusive: MPI_Scan, else MPI_Exscan; false also where a node's ranks
 * are not consecutive in comm (nodes in order). */
bool shim_nodes_scan(shim_comm *sc, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                     bool inclusive);

/* Data movement, in bytes as the team path packs them (shim_bytes.h):
 * whether shoal runs collective c (gather, allgather, scatter) of `bytes`
 * a rank in two levels: the whole communicator's fit the host's int
 * counts, and two levels are priced below the host's flat run (alike on
 * every rank); then the collectives (sdata NULL: in place, as coll.h says). */
bool shim_nodes_takes_bytes(shim_comm *sc, core_coll c, size_t bytes);
void shim_nodes_allgather(shim_comm *sc, const char *sdata, size_t bytes, char *rdata);
void shim_nodes_gather(shim_comm *sc, const char *sdata, size_t bytes, char *rdata, int root);
void shim_nodes_scatter(shim_comm *sc, const char *sdata, size_t bytes, char *rdata, int root);
/* The rest decide themselves, alike on every rank: false, having done
 * nothing, where the whole would exceed the host's int counts (alltoall:
 * or where its blocks are too big for the leaders to gain). */
/* rbytes[r] bytes of rank r at rbase + roffs[r]; sdata NULL: mine is there. */
bool shim_nodes_allgatherv(shim_comm *sc, const char *sdata, char *rbase, const size_t *rbytes, const size_t *roffs);
/* n blocks of bytes each way, in rank order; sdata NULL: rdata holds them. */
bool shim_nodes_alltoall(shim_comm *sc, const char *sdata, size_t bytes, char *rdata);
/* Blocks of any sizes, sbytes[r] at sbase + soffs[r] to rank r, rbytes[r]
 * from rank r to rbase + roffs[r] (in place: the caller packs a copy). */
bool shim_nodes_alltoallv(shim_comm *sc, const char *sbase, const size_t *sbytes, const size_t *soffs, char *rbase,
                          const size_t *rbytes, const size_t *roffs);
/* Blocks of sizes the root alone knows (rbytes/sbytes and the offsets: at
 * the root only); sdata NULL: the root's block is in place; rdata NULL:
 * the in-place root keeps its block. Sizes of any total. */
bool shim_nodes_gatherv(shim_comm *sc, const char *sdata, size_t sbytes, char *rbase, const size_t *rbytes,
                        const size_t *roffs, int root);
bool shim_nodes_scatterv(shim_comm *sc, const char *sbase, const size_t *sbytes, const size_t *soffs, char *rdata,
                         size_t rbytes, int root);
/* Elements: rank r gets counts[r] of the sum, from firsts[r] of the vector
 * (sbuf MPI_IN_PLACE: the vector is in rbuf). */
bool shim_nodes_reduce_scatter(shim_comm *sc, const void *sbuf, void *rbuf, const size_t *counts, const size_t *firsts,
                               MPI_Datatype type, MPI_Op op);

#endif
