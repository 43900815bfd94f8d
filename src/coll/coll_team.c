#include "coll_team.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_internal.h"

#define SEGMENT_MAGIC 0x676573206c616f68ull /* "hoal seg" */
#define SEGMENT_VERSION 3
#define PAGE 4096
/* Staging per rank and round buffer when SHOAL_SHM_SIZE is not set. */
#define DEFAULT_STAGE_SIZE (128 * 1024)
/* Slot-0 offsets travel as 32-bit counts of cache lines. */
#define MAX_STAGE_SIZE (((size_t)1 << 32) * CORE_CACHELINE)

typedef struct segment_header {
    uint64_t magic;
    uint32_t version;
    uint32_t n;
    uint64_t stage_size;
    uint64_t total;
} segment_header;

typedef struct layout {
    size_t flags, notes, info, slots, requests, nreq, staging, stage_stride, total;
    int nslots, nrequests;
} layout;

static layout layout_for(int n, size_t stage_size)
{
    layout l;
    l.nslots = n + 1; /* one per rank; a rank alone still exposes slot 1 (allreduce) */
    /* Each transfer a rank makes may take two messages on a two-sided lane. */
    l.nrequests = 2 * (n + 2);
    l.flags = PAGE;
    l.notes = l.flags + (size_t)n * sizeof(core_flag);
    l.info = l.notes + (size_t)n * LANE_ROUNDS * sizeof(lane_note);
    l.slots = core_align_up(l.info + (size_t)n * sizeof(coll_rank_info), 128);
    l.requests = core_align_up(l.slots + (size_t)n * LANE_ROUNDS * (size_t)l.nslots * sizeof(lane_slot), 128);
    l.nreq = core_align_up(l.requests + (size_t)n * LANE_ROUNDS * (size_t)l.nrequests * sizeof(lane_request), 128);
    l.staging = core_align_up(l.nreq + (size_t)n * LANE_ROUNDS * sizeof(uint32_t), PAGE);
    l.stage_stride = core_align_up(stage_size, PAGE);
    l.total = l.staging + (size_t)n * LANE_ROUNDS * l.stage_stride;
    return l;
}

/* The smallest staging that still holds one cache line per peer (alltoall
 * through the cells lane exposes n pieces per round). */
static size_t min_stage_size(int n) { return core_align_up((size_t)(n + 2) * 2 * CORE_CACHELINE, PAGE); }

size_t coll_segment_size(int n, size_t shm_size)
{
    size_t stage = DEFAULT_STAGE_SIZE;
    if (shm_size) {
        size_t fixed = layout_for(n, 0).total;
        stage = shm_size > fixed ? (shm_size - fixed) / (LANE_ROUNDS * (size_t)n) / PAGE * PAGE : 0;
        if (stage < min_stage_size(n)) {
            core_log_warn_once("SHOAL_SHM_SIZE=%zu is too small for %d ranks; using %zu bytes", shm_size, n,
                               layout_for(n, min_stage_size(n)).total);
            stage = min_stage_size(n);
        }
    }
    if (stage < min_stage_size(n))
        stage = min_stage_size(n);
    if (stage > MAX_STAGE_SIZE)
        stage = MAX_STAGE_SIZE;
    return layout_for(n, stage).total;
}

void coll_segment_format(void *base, size_t size, int n)
{
    segment_header *h = base;
    size_t fixed = layout_for(n, 0).total;
    memset(base, 0, layout_for(n, 0).staging);
    h->magic = SEGMENT_MAGIC;
    h->version = SEGMENT_VERSION;
    h->n = (uint32_t)n;
    h->stage_size = (size - fixed) / (LANE_ROUNDS * (size_t)n) / PAGE * PAGE;
    h->total = size;
}

void coll_wait_all(coll_team *t, uint64_t e)
{
    if (t->all_seen >= e)
        return; /* what the last look at every flag showed covers it */
    uint64_t low = UINT64_MAX;
    for (int i = 1; i < t->n; i++) {
        int p = coll_rank_plus(t->me, i, t->n);
        coll_wait(t, p, e);
        low = t->seen[p] < low ? t->seen[p] : low;
    }
    t->all_seen = low;
}

bool coll_any(coll_team *t, bool mine)
{
    uint64_t e = coll_next_epoch(t);
    int slot = (int)(t->votes++ & 1);
    atomic_store_explicit(&t->info[t->me].vote[slot], e << 1 | (uint64_t)mine, memory_order_relaxed);
    coll_post(t, e); /* releases the answer */
    coll_wait_all(t, e);
    bool any = mine;
    for (int p = 0; p < t->n && !any; p++) {
        uint64_t said = atomic_load_explicit(&t->info[p].vote[slot], memory_order_relaxed);
        if (said >> 1 != e)
            core_fatal("team vote at epoch %" PRIu64 ": rank %d's answer is of epoch %" PRIu64, e, p, said >> 1);
        any = said & 1;
    }
    return any;
}

void coll_wait_all_exposed(coll_team *t, const lane_ops *lane, int slot, uint64_t e, size_t off, size_t len)
{
    for (int i = 1; i < t->n; i++)
        coll_wait_exposed(t, lane, coll_rank_plus(t->me, i, t->n), slot, e, off, len);
}

void coll_round_begin(coll_team *t, bool exposing, bool idle_after)
{
    int buffer = (int)(t->round % LANE_ROUNDS);
    if (exposing && t->reuse_epoch[buffer])
        coll_wait_all(t, t->reuse_epoch[buffer]);
    lane_begin_round(&t->lane, buffer);
    /* Idle only once every reader of the next round's buffer is known done
     * with it: a staged lane may then claim its lines without taking one a
     * reader still copies. */
    t->lane.idle_after_round = idle_after && t->all_seen >= t->reuse_epoch[(buffer + 1) % LANE_ROUNDS];
}

void *coll_temp(coll_team *t, size_t size)
{
    if (size > t->temp_size) {
        free(t->temp);
        size = core_align_up(size, PAGE);
        if (posix_memalign(&t->temp, PAGE, size))
            core_fatal("out of memory for a %zu-byte temporary buffer", size);
        t->temp_size = size;
    }
    return t->temp;
}

int coll_team_open(coll_team *t, const core_segment *seg, int n, int me, int node_ranks, int node_cores, bool try_cma)
{
    memset(t, 0, sizeof *t);
    const segment_header *h = seg->base;
    if (h->magic != SEGMENT_MAGIC || h->version != SEGMENT_VERSION || h->n != (uint32_t)n || h->total != seg->size)
        return -1;
    layout l = layout_for(n, h->stage_size);
    if (l.total > seg->size)
        return -1;

    t->n = n;
    t->me = me;
    t->seg = *seg;
    for (int c = 0; c < CORE_COLL_COUNT; c++)
        t->plan_hot[c].bytes = SIZE_MAX; /* no call's size: the first call of each hashes */
    char *base = seg->base;
    t->flags = (core_flag *)(base + l.flags);
    t->info = (coll_rank_info *)(base + l.info);
    t->wait = core_wait_policy_for(node_ranks, node_cores);
    t->node_ranks = node_ranks;
    t->node_cores = node_cores;
    t->doing = "communicator setup";
    t->pids = calloc((size_t)n, sizeof *t->pids);
    t->seen = calloc((size_t)n, sizeof *t->seen);
    for (int i = 0; i < 3; i++)
        if (posix_memalign((void **)&t->block[i], CORE_CACHELINE, PLAN_REDUCE_BLOCK))
            t->block[i] = NULL;
    t->outs = calloc((size_t)n + 1, sizeof *t->outs);
    t->xfers = calloc((size_t)n + 1, sizeof *t->xfers);
    if (!t->pids || !t->seen || !t->outs || !t->xfers || !t->block[0] || !t->block[1] || !t->block[2]) {
        coll_team_close(t);
        return -1;
    }
    for (int i = 0; i < n; i++)
        t->pids[i] = 0; /* unknown until the first synchronisation */

    t->lane = (lane_ctx){
        .n = n,
        .me = me,
        .epoch = &t->epoch,
        .notes = (lane_note *)(base + l.notes),
        .pids = t->pids,
        .slots = (lane_slot *)(base + l.slots),
        .nslots = l.nslots,
        .staging = base + l.staging,
        .stage_stride = l.stage_stride,
        .stage_size = h->stage_size,
        .requests = (lane_request *)(base + l.requests),
        .nreq = (uint32_t *)(base + l.nreq),
        .nrequests = l.nrequests,
    };

    /* Epoch 1: everyone has published its pid and probe word. */
    core_random_bytes(&t->probe_word, sizeof t->probe_word);
    coll_rank_info *mine = &t->info[me];
    mine->pid = (int32_t)getpid();
    mine->probe_addr = (uint64_t)(uintptr_t)&t->probe_word;
    mine->probe_value = t->probe_word;
    coll_post(t, coll_next_epoch(t));
    coll_wait_all(t, t->epoch);
    for (int i = 0; i < n; i++)
        t->pids[i] = t->info[i].pid;

    /* Epoch 2: everyone has tried to read every peer with CMA. */
    int err = try_cma ? 0 : EPERM;
    for (int i = 1; i < n && !err; i++) {
        int p = coll_rank_plus(me, i, n);
        err = lane_cma_probe(t->pids[p], (const void *)(uintptr_t)t->info[p].probe_addr, t->info[p].probe_value);
    }
    mine->cma_errno = err;
    coll_post(t, coll_next_epoch(t));
    coll_wait_all(t, t->epoch);
    t->cma_usable = true;
    for (int i = 0; i < n; i++)
        if (t->info[i].cma_errno) {
            t->cma_usable = false;
            if (try_cma && n > 1)
                core_log_once("single copy (process_vm_readv) refused between local ranks (%s); "
                              "large messages are copied through shared memory instead",
                              strerror(t->info[i].cma_errno));
            break;
        }
    if (n == 1)
        t->cma_usable = try_cma;
    t->lanes[LANE_CELLS] = &lane_cells;
    t->lanes[LANE_CMA] = t->cma_usable ? &lane_cma : NULL;
    t->doing = NULL;
    return 0;
}

/* What rank 0 tells the others about the segment it made. */
typedef struct segment_offer {
    int err;
    unsigned long long size;
    unsigned long long team_id;
    char name[CORE_SHM_NAME_MAX];
} segment_offer;

/* Rank 0 creates the segment and tells everyone its name, or the error. */
static segment_offer offer_segment(const coll_oob *oob, size_t shm_size, core_segment *seg)
{
    segment_offer offer = {0};
    if (oob->me == 0) {
        size_t size = coll_segment_size(oob->n, shm_size);
        offer.size = size;
        offer.err = core_segment_create(seg, size);
        if (!offer.err) {
            coll_segment_format(seg->base, size, oob->n);
            snprintf(offer.name, sizeof offer.name, "%s", seg->name);
            uint64_t id = 0;
            core_random_bytes(&id, sizeof id);
            offer.team_id = id | 1; /* 0 means none */
        }
    }
    oob->bcast(oob->ctx, &offer, sizeof offer, 0);
    return offer;
}

/* The largest of every rank's err (0: all succeeded), the same on every rank. */
static int worst_of(const coll_oob *oob, int err)
{
    int *all = malloc((size_t)oob->n * sizeof *all);
    if (!all)
        core_fatal("out of memory for %d ranks' outcomes", oob->n);
    oob->allgather(oob->ctx, &err, all, sizeof err);
    int worst = 0;
    for (int i = 0; i < oob->n; i++)
        if (all[i] > worst)
            worst = all[i];
    free(all);
    return worst;
}

coll_team_outcome coll_team_create(coll_team *t, const coll_oob *oob, int node_ranks, int node_cores, size_t shm_size,
                                   bool try_cma, coll_team_made *made)
{
    coll_team_made m = {0};
    core_segment seg = {0};
    segment_offer offer = offer_segment(oob, shm_size, &seg);
    m.size = (size_t)offer.size;
    if (offer.err) {
        m.err = offer.err;
        if (made)
            *made = m;
        return COLL_TEAM_NO_ROOM;
    }
    if (oob->me != 0)
        m.err = core_segment_attach(&seg, offer.name, (size_t)offer.size);
    int worst = worst_of(oob, m.err);
    /* Everyone has it mapped (or gave up): the name can go. */
    if (oob->me == 0)
        core_segment_unlink(&seg);
    if (worst) {
        core_segment_release(&seg);
        if (made)
            *made = m;
        return COLL_TEAM_NO_MAP;
    }
    if (coll_team_open(t, &seg, oob->n, oob->me, node_ranks, node_cores, try_cma) != 0)
        core_fatal("the shared-memory segment %s does not have the expected layout", offer.name);
    m.id = offer.team_id;
    if (made)
        *made = m;
    return COLL_TEAM_MADE;
}

void coll_team_move(coll_team *to, coll_team *from)
{
    *to = *from;
    to->lane.epoch = &to->epoch; /* the one pointer into the team itself */
    memset(from, 0, sizeof *from);
}

void coll_team_set_host_lane(coll_team *t, const lane_ops *host, void *state)
{
    t->lanes[LANE_HOST] = host;
    t->lane.host = state;
    /* Cached choices hold the lanes resolved: price them anew. */
    for (int i = 0; i < COLL_PLAN_SETS * COLL_PLAN_WAYS; i++)
        t->plan_cache[i].generation = 0;
}

void coll_team_close(coll_team *t)
{
    for (int i = 0; i < 3; i++)
        free(t->block[i]);
    free(t->temp);
    free(t->pids);
    free(t->seen);
    free(t->outs);
    free(t->xfers);
    core_segment_release(&t->seg);
    memset(t, 0, sizeof *t);
}
