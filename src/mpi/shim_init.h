/* shim_init: shoal's process-wide state (shim_init.c): whether it is on,
 * the node's ranks and cores, and turning it on once the host MPI is
 * initialised and off before it is finalised.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_INIT_H
#define SHOAL_SHIM_INIT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "core.h"

/* True between a successful MPI_Init* and MPI_Finalize, unless SHOAL_DISABLE. */
extern bool shim_active;
/* Ranks of MPI_COMM_WORLD on this node, and the cores they may use. */
extern int shim_node_ranks, shim_node_cores;

/* Turns shoal on once the host MPI is initialised (once per process; a
 * collective over MPI_COMM_WORLD), and off before it is finalised. */
void shim_start(void);
void shim_stop(void);

/* Runs the host MPI's progress engine once (core_flag's idle hook while
 * shoal is on): what peers on other nodes and one-sided access to this rank
 * need while it waits in shoal. */
void shim_host_progress(void);

/* Windows the program has open (MPI_Win_create and its kin, less
 * MPI_Win_free: shim_bindings.c). */
extern _Atomic int shim_open_windows;

/* At the end of a collective shoal ran: with a window open, one turn of the
 * host's progress engine. A program may count on a collective to deliver the
 * one-sided synchronisation its peers sent before entering it, as the host's
 * collectives do by running that engine (mpi4py's test_rma: MPI_Win_test
 * after a barrier that followed the origin's MPI_Win_complete). */
static inline void shim_after_collective(void)
{
    if (atomic_load_explicit(&shim_open_windows, memory_order_relaxed) > 0)
        shim_host_progress();
}

/* True when shoal should try to handle this collective at all. */
static inline bool shim_wants(core_coll c) { return shim_active && !(core_config_get()->disabled_colls & (1u << c)); }

#endif
