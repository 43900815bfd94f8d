/* shmem: the OpenSHMEM 1.5 API (include/shmem.h) on shoal's one-sided
 * engine. Internal names begin with osh_.
 *
 * The layer starts the host MPI where the program has not (a PE is an MPI
 * rank of MPI_COMM_WORLD), builds the symmetric regions (shmem_init.c: the
 * heap and the program's data, each a shared-memory segment every PE of the
 * node maps), hands them to the engine (src/rma) with MPI-3 RMA windows as
 * its way to other nodes (shmem_remote.c), and runs collectives as MPI
 * collectives on the team's communicator, which shoal's MPI layer takes
 * where it can (node teams, the two-level plans across nodes).
 *
 * Owns: the PE's state (osh), teams and contexts, the API's entry points.
 * May call: rma, core, and MPI (through shoal's MPI layer, which is linked
 * into the same library). */
#ifndef SHOAL_SHMEM_INTERNAL_H
#define SHOAL_SHMEM_INTERNAL_H

#define SHOAL_SHMEM_INTERNAL
#include <mpi.h>
#include <stdbool.h>

#include "core_log.h"
#include "core_shm.h"
#include "rma.h"
#include "shmem.h"

struct shoal_shmem_team {
    MPI_Comm comm; /* MPI_COMM_NULL until made (the predefined teams: by shmem_init) */
    int my_pe, n_pes;
    int *world_pe; /* [n_pes]: each member's PE number in the world team */
    shmem_team_config_t config;
};

struct shoal_shmem_ctx {
    shmem_team_t team;
    long options;
};

typedef struct osh_state {
    bool initialized, finalized;
    bool started_mpi; /* shmem_init started MPI, so shmem_finalize ends it */
    int thread_level;
    int my_pe, n_pes;
    MPI_Comm world, node;
    rma_engine engine;
    rma_heap *heap;
    size_t heap_alignment; /* my heap's mapping starts at a multiple of this */
    int n_local;
    int *local_index;
    pid_t *local_pid;
    core_segment *heap_segments; /* [n_local]: each local PE's heap, mine among them */
    core_segment *data_segments; /* [n_local]: each local PE's data; empty where globals stay private */
    char *data_start;            /* the program's data and bss, where they are symmetric */
    size_t data_size;
} osh_state;

extern osh_state osh;

/* Ends the job with a message naming the call (a bad argument, a broken
 * environment): never returns. */
_Noreturn void osh_fail(const char *call, const char *fmt, ...) CORE_PRINTF(2, 3);
/* Fails unless shmem_init has run (and shmem_finalize not). */
void osh_require_init(const char *call);

/* The specification's environment variables (shmem_env.c): the heap's
 * size (SHMEM_SYMMETRIC_SIZE, else SMA_SYMMETRIC_SIZE, else 128 MiB; a
 * value that is not a size ends the job), SHMEM_DEBUG (shoal's messages
 * on), and what PE 0 prints at start-up for SHMEM_VERSION and SHMEM_INFO. */
bool osh_parse_size(const char *text, size_t *out);
size_t osh_env_heap_size(void);
void osh_env_debug(void);
void osh_env_announce(int my_pe, size_t heap_bytes);
static inline rma_engine *osh_engine(const char *call)
{
    osh_require_init(call);
    return &osh.engine;
}

/* A context's PE number as a world PE: a context made on a team numbers
 * PEs as the team does. */
static inline int osh_ctx_pe(shmem_ctx_t ctx, int pe)
{
    if (ctx == SHMEM_CTX_INVALID)
        osh_fail("shmem_ctx_*", "the context is SHMEM_CTX_INVALID");
    shmem_team_t team = ctx->team;
    if (team == &shoal_shmem_team_world || !team->world_pe)
        return pe;
    return pe >= 0 && pe < team->n_pes ? team->world_pe[pe] : -1;
}

/* The context form of an entry point: shmem_ctx_<name>(ctx, params..., pe)
 * calls shmem_<name>(args..., pe) with pe numbered as ctx's team numbers
 * it. params and args are parenthesized lists, the PE left out. */
#define OSH_LIST(...) __VA_ARGS__
#define OSH_CTX_FORM(name, params, args)                            \
    void shmem_ctx_##name(shmem_ctx_t ctx, OSH_LIST params, int pe) \
    {                                                               \
        shmem_##name(OSH_LIST args, osh_ctx_pe(ctx, pe));           \
    }
#define OSH_CTX_FORM_RETURNING(T, name, params, args)            \
    T shmem_ctx_##name(shmem_ctx_t ctx, OSH_LIST params, int pe) \
    {                                                            \
        return shmem_##name(OSH_LIST args, osh_ctx_pe(ctx, pe)); \
    }

/* The MPI-3 RMA windows over every region, for PEs on other nodes. */
void osh_remote_open(void);
void osh_remote_close(void);
extern const rma_remote_ops osh_remote_ops;
/* Hands the small blocking puts still in this PE's bounce ring to the
 * network (a local flush), before a call that may wait for a peer that
 * waits for them. Does nothing where the job is on one node. */
void osh_remote_push(void);

/* Teams. */
void osh_teams_open(void);
void osh_teams_close(void);
/* The communicator of an active set (PE_start, 2^logPE_stride, PE_size),
 * made by its members at its first use and kept. */
MPI_Comm osh_active_set(const char *call, int PE_start, int logPE_stride, int PE_size);
/* A team's communicator, failing on SHMEM_TEAM_INVALID. Both are what a
 * collective asks right before it runs, so both push this PE's puts out
 * first (osh_remote_push). */
MPI_Comm osh_team_comm(const char *call, shmem_team_t team);

#endif
