/* shmem_team: teams (world, shared, split_strided, split_2d), contexts, and
 * the communicators of active sets. A team is an MPI communicator of its
 * members in team order, with each member's world PE number beside it.
 * Calls: MPI. */
#include <stdlib.h>

#include "shmem_internal.h"

struct shoal_shmem_team shoal_shmem_team_world = {.comm = MPI_COMM_NULL};
struct shoal_shmem_team shoal_shmem_team_shared = {.comm = MPI_COMM_NULL};

/* Fills team's ranks from its communicator (collective over it). */
static void team_fill(struct shoal_shmem_team *team, MPI_Comm comm)
{
    team->comm = comm;
    MPI_Comm_rank(comm, &team->my_pe);
    MPI_Comm_size(comm, &team->n_pes);
    team->world_pe = malloc((size_t)team->n_pes * sizeof *team->world_pe);
    MPI_Allgather(&osh.my_pe, 1, MPI_INT, team->world_pe, 1, MPI_INT, comm);
}

static void team_empty(struct shoal_shmem_team *team)
{
    if (team->comm != MPI_COMM_NULL)
        MPI_Comm_free(&team->comm);
    free(team->world_pe);
    team->world_pe = NULL;
    team->n_pes = 0;
}

/* Active sets seen so far, each with its communicator. */
typedef struct active_set {
    int start, log_stride, size;
    MPI_Comm comm;
} active_set;
static active_set *active_sets;
static size_t active_set_count;

void osh_teams_open(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(osh.world, &comm);
    team_fill(&shoal_shmem_team_world, comm);
    MPI_Comm_dup(osh.node, &comm);
    team_fill(&shoal_shmem_team_shared, comm);
}

void osh_teams_close(void)
{
    team_empty(&shoal_shmem_team_world);
    team_empty(&shoal_shmem_team_shared);
    for (size_t i = 0; i < active_set_count; i++)
        MPI_Comm_free(&active_sets[i].comm);
    free(active_sets);
    active_sets = NULL;
    active_set_count = 0;
}

static bool team_usable(shmem_team_t team) { return team != SHMEM_TEAM_INVALID && team->comm != MPI_COMM_NULL; }

MPI_Comm osh_team_comm(const char *call, shmem_team_t team)
{
    osh_require_init(call);
    if (team == SHMEM_TEAM_INVALID || team->comm == MPI_COMM_NULL)
        osh_fail(call, "the team is SHMEM_TEAM_INVALID or was destroyed");
    osh_remote_push();
    return team->comm;
}

MPI_Comm osh_active_set(const char *call, int PE_start, int logPE_stride, int PE_size)
{
    osh_require_init(call);
    if (PE_start < 0 || logPE_stride < 0 || logPE_stride > 30 || PE_size < 1 ||
        PE_start + (long)(PE_size - 1) * (1L << logPE_stride) >= osh.n_pes)
        osh_fail(call, "the active set (PE_start %d, logPE_stride %d, PE_size %d) does not fit the %d PEs", PE_start,
                 logPE_stride, PE_size, osh.n_pes);
    long stride = 1L << logPE_stride;
    if (osh.my_pe < PE_start || (osh.my_pe - PE_start) % stride || (osh.my_pe - PE_start) / stride >= PE_size)
        osh_fail(call, "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d) it called on",
                 osh.my_pe, PE_start, logPE_stride, PE_size);
    osh_remote_push();
    for (size_t i = 0; i < active_set_count; i++)
        if (active_sets[i].start == PE_start && active_sets[i].log_stride == logPE_stride &&
            active_sets[i].size == PE_size)
            return active_sets[i].comm;
    /* Only the members call: MPI_Comm_create_group is collective over them. */
    MPI_Group world_group, group;
    MPI_Comm_group(osh.world, &world_group);
    int range[1][3] = {{PE_start, PE_start + (int)((PE_size - 1) * stride), (int)stride}};
    MPI_Group_range_incl(world_group, 1, range, &group);
    MPI_Comm comm;
    MPI_Comm_create_group(osh.world, group, 0, &comm);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    active_set *grown = realloc(active_sets, (active_set_count + 1) * sizeof *grown);
    if (!grown)
        osh_fail(call, "out of memory");
    active_sets = grown;
    active_sets[active_set_count++] = (active_set){PE_start, logPE_stride, PE_size, comm};
    return comm;
}

int shmem_team_my_pe(shmem_team_t team)
{
    osh_require_init("shmem_team_my_pe");
    return team == SHMEM_TEAM_INVALID || team->comm == MPI_COMM_NULL ? -1 : team->my_pe;
}

int shmem_team_n_pes(shmem_team_t team)
{
    osh_require_init("shmem_team_n_pes");
    return team == SHMEM_TEAM_INVALID || team->comm == MPI_COMM_NULL ? -1 : team->n_pes;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    osh_require_init("shmem_team_get_config");
    if (team == SHMEM_TEAM_INVALID || !config)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team->config.num_contexts;
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    osh_require_init("shmem_team_translate_pe");
    if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID || src_pe < 0 || src_pe >= src_team->n_pes ||
        !src_team->world_pe || !dest_team->world_pe)
        return -1;
    int world_pe = src_team->world_pe[src_pe];
    for (int i = 0; i < dest_team->n_pes; i++)
        if (dest_team->world_pe[i] == world_pe)
            return i;
    return -1;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    osh_require_init("shmem_team_split_strided");
    osh_remote_push(); /* a collective over the parent */
    *new_team = SHMEM_TEAM_INVALID;
    /* A PE outside an earlier split's team holds SHMEM_TEAM_INVALID and may
     * split it: the specification makes that a failed split, not an error. */
    if (!team_usable(parent_team))
        return -1;
    MPI_Comm parent = parent_team->comm;
    bool valid = start >= 0 && size >= 1 && (stride >= 1 || (stride == 0 && size == 1)) &&
                 start + (long)stride * (size - 1) < parent_team->n_pes;
    int offset = parent_team->my_pe - start;
    bool member = valid && offset >= 0 && (stride ? offset % stride == 0 && offset / stride < size : offset == 0);
    MPI_Comm comm;
    /* Collective over the parent: members take their order in the new team. */
    MPI_Comm_split(parent, member ? 0 : MPI_UNDEFINED, member && stride ? offset / stride : 0, &comm);
    if (!valid)
        return -1;
    if (!member)
        return 0;
    struct shoal_shmem_team *team = calloc(1, sizeof *team);
    team_fill(team, comm);
    if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS))
        team->config.num_contexts = config->num_contexts;
    *new_team = team;
    return 0;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask,
                        shmem_team_t *yaxis_team)
{
    osh_require_init("shmem_team_split_2d");
    osh_remote_push(); /* a collective over the parent */
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (!team_usable(parent_team) || xrange < 1)
        return -1;
    MPI_Comm parent = parent_team->comm;
    int n = parent_team->n_pes, me = parent_team->my_pe;
    if (xrange > n)
        xrange = n;
    /* Rows of xrange PEs (the last may be short), and the columns across them. */
    MPI_Comm row, column;
    MPI_Comm_split(parent, me / xrange, me % xrange, &row);
    MPI_Comm_split(parent, me % xrange, me / xrange, &column);
    struct shoal_shmem_team *x = calloc(1, sizeof *x), *y = calloc(1, sizeof *y);
    team_fill(x, row);
    team_fill(y, column);
    if (xaxis_config && (xaxis_mask & SHMEM_TEAM_NUM_CONTEXTS))
        x->config.num_contexts = xaxis_config->num_contexts;
    if (yaxis_config && (yaxis_mask & SHMEM_TEAM_NUM_CONTEXTS))
        y->config.num_contexts = yaxis_config->num_contexts;
    *xaxis_team = x;
    *yaxis_team = y;
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    osh_require_init("shmem_team_destroy");
    if (team == SHMEM_TEAM_INVALID)
        return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        osh_fail("shmem_team_destroy", "a predefined team (SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED) cannot be destroyed");
    team_empty(team);
    free(team);
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    osh_require_init("shmem_team_ptr");
    if (team == SHMEM_TEAM_INVALID || pe < 0 || pe >= team->n_pes)
        return NULL;
    return shmem_ptr(dest, team->world_pe[pe]);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    osh_require_init("shmem_team_create_ctx");
    *ctx = SHMEM_CTX_INVALID;
    if (team == SHMEM_TEAM_INVALID)
        return -1;
    struct shoal_shmem_ctx *made = malloc(sizeof *made);
    if (!made)
        return -1;
    *made = (struct shoal_shmem_ctx){team, options};
    *ctx = made;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx) { return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx); }

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID || ctx == SHMEM_CTX_DEFAULT)
        return;
    shmem_quiet();
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (!team)
        return -1;
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx->team;
    return 0;
}
