/* Per-communicator state, cached as an attribute: a counter from the
 * communicator's first collective, the team once it has made
 * SHOAL_COMM_WARMUP of them. A freed communicator's team is parked, and the
 * next communicator of the same ranks in the same order adopts it instead
 * of building a segment of its own. A team is built by coll_team_create,
 * with PMPI calls on the communicator as its out-of-band means. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_comm.h"
#include "shim_host_lane.h"
#include "shim_init.h"
#include "shim_nodes.h"

static int keyval = MPI_KEYVAL_INVALID;

/* The attribute lookup costs a hash or list walk in the host MPI on every
 * collective; each thread remembers its last communicator instead. Any
 * release bumps the generation, which invalidates every thread's entry. */
static _Atomic unsigned generation = 1;
static CORE_THREAD_LOCAL struct {
    MPI_Comm comm;
    shim_comm *sc;
    unsigned generation;
} last_used;
static shim_comm *all_comms; /* for MPI_Finalize; guarded by comms_lock */
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;

/* Teams of freed communicators, oldest first; guarded by comms_lock.
 * Reserving and freeing a segment's pages costs about 0.5 ms at 2 ranks,
 * adopting a parked team one small allreduce. Two cover a loop that makes
 * and frees a communicator, also with one nested inside; each holds its
 * segment (memory in /dev/shm) until adopted, pushed out, or MPI_Finalize. */
#define PARKED_TEAMS 2
typedef struct parked_team {
    coll_team team;
    uint64_t id;
} parked_team;
static parked_team *parked[PARKED_TEAMS];
static int nparked;

static void drop_parked(parked_team *p)
{
    if (p) {
        coll_team_close(&p->team);
        free(p);
    }
}

static void drop_all_parked(void)
{
    pthread_mutex_lock(&comms_lock);
    while (nparked)
        drop_parked(parked[--nparked]);
    pthread_mutex_unlock(&comms_lock);
}

/* Takes entry i off the parked list; the caller holds comms_lock. */
static parked_team *unlist_parked(int i)
{
    parked_team *p = parked[i];
    memmove(parked + i, parked + i + 1, (size_t)(nparked - i - 1) * sizeof *parked);
    nparked--;
    return p;
}

/* Keeps sc's team for a later communicator of the same ranks: local. */
static void park(shim_comm *sc)
{
    parked_team *p = malloc(sizeof *p), *pushed_out = NULL;
    if (!p) {
        coll_team_close(&sc->team);
        return;
    }
    coll_team_move(&p->team, &sc->team);
    coll_team_set_host_lane(&p->team, NULL, NULL); /* that lane belonged to sc */
    p->id = sc->team_id;
    pthread_mutex_lock(&comms_lock);
    if (nparked == PARKED_TEAMS)
        pushed_out = unlist_parked(0);
    parked[nparked++] = p;
    pthread_mutex_unlock(&comms_lock);
    drop_parked(pushed_out);
}

/* The newest parked team in which this rank has sc's rank and size, taken
 * off the list (another thread's communicator must not offer it too). */
static parked_team *claim_parked(const shim_comm *sc)
{
    parked_team *p = NULL;
    pthread_mutex_lock(&comms_lock);
    for (int i = nparked - 1; i >= 0; i--)
        if (parked[i]->team.n == sc->size && parked[i]->team.me == sc->rank) {
            p = unlist_parked(i);
            break;
        }
    pthread_mutex_unlock(&comms_lock);
    return p;
}

uint64_t shim_plans_fingerprint(void) { return core_config_get()->fingerprint ^ plan_model_get()->fingerprint; }

#define MAX_ALIKE 8
void shim_all_alike(const uint64_t *values, bool *alike, int n, MPI_Comm comm)
{
    /* MAX of a value and of its complement: both are this rank's only when every rank's is. */
    if (n < 1 || n > MAX_ALIKE)
        core_fatal("internal: shim_all_alike takes 1 to %d values, not %d", MAX_ALIKE, n);
    uint64_t offer[2 * MAX_ALIKE] = {0}, most[2 * MAX_ALIKE];
    for (int i = 0; i < n; i++)
        offer[2 * i] = values[i], offer[2 * i + 1] = ~values[i];
    PMPI_Allreduce(offer, most, 2 * n, MPI_UINT64_T, MPI_MAX, comm);
    for (int i = 0; i < n; i++)
        alike[i] = most[2 * i] == values[i] && most[2 * i + 1] == ~values[i];
}

/* The v-variants' per-rank scratch (shim_comm.sizes). */
static void give_sizes(shim_comm *sc)
{
    sc->sizes = malloc(4 * (size_t)sc->size * sizeof *sc->sizes);
    if (!sc->sizes)
        core_fatal("out of memory for communicator state");
}

/* What the ranks of a communicator agree on before shoal takes it over. */
typedef struct team_agreement {
    bool same_plans;    /* every rank prices calls alike */
    parked_team *adopt; /* the parked team every rank offered, NULL: none */
} team_agreement;

/* One allreduce settles both: whether every rank plans with the same model
 * and settings (a process spawned apart, or one that read another tuning
 * file, may not; ranks that chose differently would wait for each other),
 * and whether every rank offers the same parked team, whose ranks are then
 * this communicator's, in its order, on one node. A team offered and not
 * agreed on is dropped: some rank no longer has it. Collective. */
static team_agreement agree(shim_comm *sc)
{
    parked_team *p = claim_parked(sc);
    uint64_t id = p ? p->id : 0;
    uint64_t values[2] = {id, shim_plans_fingerprint()};
    bool alike[2];
    shim_all_alike(values, alike, 2, sc->comm);
    team_agreement a = {.same_plans = alike[1]};
    if (p && a.same_plans && alike[0]) {
        a.adopt = p;
    } else {
        if (p)
            core_log_debug(1,
                           "communicator of %d ranks: not every rank offered the same parked team; "
                           "dropping this rank's",
                           sc->size);
        drop_parked(p);
    }
    return a;
}

static void release(shim_comm *sc)
{
    atomic_fetch_add(&generation, 1);
    pthread_mutex_lock(&comms_lock);
    for (shim_comm **p = &all_comms; *p; p = &(*p)->next)
        if (*p == sc) {
            *p = sc->next;
            break;
        }
    pthread_mutex_unlock(&comms_lock);
    if (sc->mode == SHIM_TEAM)
        park(sc);
    /* The private communicator is freed by shim_comm_forget and at
     * MPI_Finalize; a callback must not free it (no MPI calls there). */
    free(sc->host.reqs);
    free(sc->sizes);
    free(sc->pack[0]);
    free(sc->pack[1]);
    free(sc);
}

/* MPI calls this when the communicator is freed (or the attribute deleted).
 * It makes no MPI call: only memory and the mapping go. */
static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    release(value);
    return MPI_SUCCESS;
}

void shim_comm_setup_keyval(void)
{
    /* Duplicates start without state: a dup gets its own segment lazily. */
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL);
}

/* The oldest communicator spanning nodes whose node part is still open, or NULL. */
static shim_comm *oldest_open_nodes(void)
{
    shim_comm *found = NULL;
    pthread_mutex_lock(&comms_lock);
    for (shim_comm *sc = all_comms; sc; sc = sc->next)
        if (sc->mode == SHIM_NODES && sc->nodes.where)
            found = sc;
    pthread_mutex_unlock(&comms_lock);
    return found;
}

void shim_comm_release_all(void)
{
    /* Communicators spanning nodes first, oldest first (the same order on
     * every rank): closing one frees its node part, and that part's state. */
    for (shim_comm *sc; (sc = oldest_open_nodes());)
        shim_nodes_close(&sc->nodes);
    core_flag_set_idle(NULL, 0); /* no host progress to drive: every collective is done */
    /* Collective frees first, in the same order on every rank (creation). */
    pthread_mutex_lock(&comms_lock);
    int count = 0;
    for (shim_comm *sc = all_comms; sc; sc = sc->next)
        count++;
    shim_comm **order = calloc((size_t)count + 1, sizeof *order);
    int k = count;
    for (shim_comm *sc = all_comms; sc && order; sc = sc->next)
        order[--k] = sc;
    pthread_mutex_unlock(&comms_lock);
    for (int i = 0; order && i < count; i++)
        shim_host_release(&order[i]->host);
    free(order);
    for (;;) {
        pthread_mutex_lock(&comms_lock);
        shim_comm *sc = all_comms;
        pthread_mutex_unlock(&comms_lock);
        if (!sc)
            break;
        /* Deleting the attribute runs delete_state, which unlinks sc. */
        if (PMPI_Comm_delete_attr(sc->comm, keyval) != MPI_SUCCESS)
            release(sc);
    }
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
    drop_all_parked();
}

void shim_comm_forget(MPI_Comm comm)
{
    void *value;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) == MPI_SUCCESS && found) {
        shim_comm *sc = value;
        shim_host_release(&sc->host); /* collective, like the free */
        if (sc->mode == SHIM_NODES)
            shim_nodes_close(&sc->nodes);
        PMPI_Comm_delete_attr(comm, keyval);
    }
}

void *shim_comm_scratch(shim_comm *sc, int i, size_t size)
{
    if (size > sc->pack_size[i]) {
        free(sc->pack[i]);
        sc->pack[i] = malloc(size);
        sc->pack_size[i] = sc->pack[i] ? size : 0;
        if (!sc->pack[i])
            core_fatal("out of memory for a %zu-byte packing buffer", size);
    }
    return sc->pack[i];
}

/* The out-of-band means a team is built with: PMPI calls on the
 * communicator (ctx points to it). */
static void oob_bcast(void *ctx, void *buf, size_t len, int root)
{
    PMPI_Bcast(buf, (int)len, MPI_BYTE, root, *(MPI_Comm *)ctx);
}

static void oob_allgather(void *ctx, const void *in, void *out, size_t len)
{
    PMPI_Allgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, *(MPI_Comm *)ctx);
}

static void oob_barrier(void *ctx) { PMPI_Barrier(*(MPI_Comm *)ctx); }

/* Creates, shares and opens the node segment; collective over comm, which
 * lies within one node. Returns false (on every rank alike) when shoal must
 * pass this communicator through. */
static bool open_team(shim_comm *sc, MPI_Comm comm)
{
    coll_oob oob = {.ctx = &comm,
                    .n = sc->size,
                    .me = sc->rank,
                    .bcast = oob_bcast,
                    .allgather = oob_allgather,
                    .barrier = oob_barrier};
    size_t shm_size = core_config_get()->shm_size;
    bool try_cma = core_config_get()->cma != CORE_CMA_OFF;
    coll_team_made made;
    coll_team_outcome outcome =
        coll_team_create(&sc->team, &oob, shim_node_ranks, shim_node_cores, shm_size, try_cma, &made);
    if (outcome == COLL_TEAM_NO_ROOM) {
        /* Parked teams hold /dev/shm pages: give them back (every rank
         * alike: all know the error) and try once more, when all have (a
         * segment's pages are freed with its last mapping). */
        core_log_debug(1, "no room for a %llu-byte segment (%s): dropping parked teams and trying again",
                       (unsigned long long)made.size, strerror(made.err));
        drop_all_parked();
        oob.barrier(oob.ctx);
        outcome = coll_team_create(&sc->team, &oob, shim_node_ranks, shim_node_cores, shm_size, try_cma, &made);
    }
    if (outcome == COLL_TEAM_NO_ROOM) {
        core_log_warn_once("cannot create a shared-memory segment in /dev/shm (%s): collectives on such "
                           "communicators go to the host MPI (SHOAL_SHM_SIZE sets the segment size)",
                           strerror(made.err));
        core_log_debug(1, "the segment asked for had %llu bytes", (unsigned long long)made.size);
        return false;
    }
    if (outcome == COLL_TEAM_NO_MAP) {
        if (made.err)
            core_log_warn_once("cannot map the node's shared-memory segment (%s): collectives on this "
                               "communicator go to the host MPI",
                               strerror(made.err));
        return false;
    }
    sc->team_id = made.id;
    return true;
}

static shim_comm *state_of(MPI_Comm comm);

/* Builds comm's team, or settles on passing it through: collective. */
static void take_over(shim_comm *sc)
{
    MPI_Comm comm = sc->comm;
    sc->mode = SHIM_PASS;
    team_agreement a = agree(sc);
    if (a.adopt) {
        coll_team_move(&sc->team, &a.adopt->team);
        sc->team_id = a.adopt->id;
        free(a.adopt);
        core_log_debug(1, "communicator of %d ranks: adopted the team of a freed one", sc->size);
    } else {
        MPI_Comm node = shim_node_part(comm);
        if (node == MPI_COMM_NULL) {
            core_log_once("a communicator of %d ranks could not be split by node: its collectives go to the host MPI",
                          sc->size);
            return;
        }
        int node_size = 0;
        PMPI_Comm_size(node, &node_size);
        if (node_size != sc->size) {
            /* Every node sees a node part smaller than comm: all agree. Nodes
             * may plan with figures of their own (each probed itself): only
             * a node part's ranks must agree, when it is taken over. */
            if (core_config_get()->across_nodes == CORE_ACROSS_NODES_OFF) {
                PMPI_Comm_free(&node);
                core_log_once("communicator of %d ranks spans several nodes: its collectives go to the host MPI "
                              "(SHOAL_ACROSS_NODES=0)",
                              sc->size);
                return;
            }
            if (!shim_nodes_open(sc, node)) {
                core_log_once("communicator of %d ranks has one rank per node: its collectives go to the host MPI",
                              sc->size);
                return;
            }
            sc->mode = SHIM_NODES;
            /* From now on every call of comm runs steps on its node part:
             * comm's warm-up showed it in use, so the node part's team is
             * built at its first step, not after a warm-up of its own. */
            shim_comm *part = state_of(sc->nodes.node);
            if (part && part->mode == SHIM_WARMING)
                part->calls = LONG_MAX;
            give_sizes(sc);
            return;
        }
        PMPI_Comm_free(&node);
        if (!a.same_plans) {
            core_log_warn_once("the ranks of a communicator of %d ranks plan with different cost figures "
                               "(processes started apart, or different tuning files): its collectives go to "
                               "the host MPI",
                               sc->size);
            return;
        }
        if (!open_team(sc, comm))
            return;
    }
    sc->mode = SHIM_TEAM;
    coll_team_set_host_lane(&sc->team, &shim_host_lane, &sc->host);
    give_sizes(sc);
}

/* The record of a communicator shoal has not seen before: local, cheap. */
static shim_comm *first_sight(MPI_Comm comm)
{
    shim_comm *sc = calloc(1, sizeof *sc);
    if (!sc)
        core_fatal("out of memory for communicator state");
    sc->mode = SHIM_WARMING;
    sc->comm = comm;
    /* MPI_COMM_NULL is not 0 under Open MPI: calloc's zero would not do. */
    sc->host = (shim_host_state){.parent = comm, .comm = MPI_COMM_NULL};
    PMPI_Comm_size(comm, &sc->size);
    PMPI_Comm_rank(comm, &sc->rank);

    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        core_log_once("intercommunicator: its collectives go to the host MPI");
        sc->mode = SHIM_PASS;
    }

    pthread_mutex_lock(&comms_lock);
    sc->next = all_comms;
    all_comms = sc;
    pthread_mutex_unlock(&comms_lock);
    PMPI_Comm_set_attr(comm, keyval, sc);
    return sc;
}

/* comm's record, NULL if MPI cannot tell. */
static shim_comm *state_of(MPI_Comm comm)
{
    unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (last_used.comm == comm && last_used.generation == gen)
        return last_used.sc;
    void *value;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS)
        return NULL;
    shim_comm *sc = found ? value : first_sight(comm);
    last_used.comm = comm;
    last_used.sc = sc;
    last_used.generation = gen;
    return sc;
}

/* sc, taken over now if it is still warming; NULL when it passes through. */
static shim_comm *taken(shim_comm *sc)
{
    if (sc->mode == SHIM_WARMING)
        take_over(sc);
    return sc->mode == SHIM_TEAM || sc->mode == SHIM_NODES ? sc : NULL;
}

shim_comm *shim_comm_taken(MPI_Comm comm, bool at_once)
{
    shim_comm *sc = state_of(comm);
    if (!sc)
        return NULL;
    if (sc->mode == SHIM_WARMING && !at_once) {
        long warmup = core_config_get()->comm_warmup;
        if (sc->calls < warmup) {
            sc->calls++;
            core_log_once("a communicator's first %ld collectives go to the host MPI; shoal takes over at the "
                          "next (SHOAL_COMM_WARMUP)",
                          warmup);
            return NULL;
        }
    }
    return taken(sc);
}

shim_comm *shim_comm_team_now(MPI_Comm comm)
{
    shim_comm *sc = shim_comm_taken(comm, true);
    return sc && sc->mode == SHIM_TEAM ? sc : NULL;
}
