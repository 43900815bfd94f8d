/* shmem_init: a PE's start and end, its symmetric regions, and the queries
 * on them (my_pe, n_pes, ptr, accessible, info).
 *
 * The heap: each PE creates a segment of SHMEM_SYMMETRIC_SIZE bytes (its
 * pages reserved at once, so a full /dev/shm fails here with a message, not
 * later with SIGBUS), the node's PEs exchange names, map each other's, and
 * unlink theirs: nothing is left in /dev/shm once shmem_init returns.
 * The program's global and static data: each PE copies its data and bss
 * into a segment and maps that over them at the same address, so its
 * globals stay where the program's code expects them while its node's
 * peers map them too (ASLR puts them at a different address in each
 * process: the engine translates by the offset from their start).
 * Calls: rma, core, MPI; shim_node_part of the MPI layer (a node, or a
 * pretend node under SHOAL_NODE_CLIQUES). */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core_config.h"
#include "core_sys.h"
#include "shim_nodes.h"
#include "shmem_internal.h"

osh_state osh = {.world = MPI_COMM_NULL, .node = MPI_COMM_NULL};
struct shoal_shmem_ctx shoal_shmem_ctx_default = {.team = &shoal_shmem_team_world};

_Noreturn void osh_fail(const char *call, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    core_log_error("%s: %s", call, what);
    core_log_settle();
    int started = 0, ended = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&ended);
    if (started && !ended)
        MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

static void engine_fail(const char *call, const char *what)
{
    osh_fail(call, "%s%s", what,
             osh.data_start ? ""
                            : " (global variables are not remotely accessible in this run: SHOAL_SHMEM_GLOBALS=0, "
                              "the PEs run different programs, or /dev/shm had no room for them)");
}

static void abort_job(void) { MPI_Abort(MPI_COMM_WORLD, 1); }

void osh_require_init(const char *call)
{
    if (!osh.initialized || osh.finalized)
        osh_fail(call, "called %s shmem_init", osh.finalized ? "after shmem_finalize, without a new" : "before");
}

/* The program's writable data and bss, page-aligned, less the part the
 * loader makes read-only after relocation (RELRO). */
static int find_program_data(struct dl_phdr_info *info, size_t info_size, void *arg)
{
    (void)info_size;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start = 0, end = 0, relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && hi > lo) {
            start = lo / page * page;
            end = (hi + page - 1) / page * page;
        } else if (ph->p_type == PT_GNU_RELRO) {
            relro_end = hi / page * page;
        }
    }
    if (relro_end > start && relro_end < end)
        start = relro_end;
    char **range = arg;
    range[0] = (char *)start;
    range[1] = (char *)end;
    return 1; /* the first object is the program */
}

/* Copies a whole range of the program's data, the padding between its
 * variables included: word by word (volatile, so that the compiler makes
 * no memcpy of it) and unseen by AddressSanitizer, whose red zones lie in
 * that padding. size is a multiple of 8 (whole pages). */
__attribute__((no_sanitize_address)) static void copy_program_data(void *dst, const void *src, size_t size)
{
    const volatile uint64_t *from = src;
    uint64_t *to = dst;
    for (size_t i = 0; i < size / sizeof *to; i++)
        to[i] = from[i];
}

/* The heap's own mapping starts at a multiple of this (the smallest power
 * of two that holds the heap, within these bounds): the allocator aligns
 * offsets, and shmem_align's addresses are aligned only where the base is. */
#define HEAP_MIN_ALIGNMENT ((size_t)4096)
#define HEAP_MAX_ALIGNMENT ((size_t)1 << 30)

static size_t heap_alignment_for(size_t size)
{
    size_t alignment = HEAP_MIN_ALIGNMENT;
    while (alignment < size && alignment < HEAP_MAX_ALIGNMENT)
        alignment <<= 1;
    return alignment;
}

/* Moves seg's mapping (still linked) to a multiple of alignment: reserves
 * room for it anywhere, maps the segment over the aligned part and gives
 * back the rest. 0 or an errno value. */
static int align_mapping(core_segment *seg, size_t alignment)
{
    if ((uintptr_t)seg->base % alignment == 0)
        return 0;
    size_t span = seg->size + alignment;
    char *room = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (room == MAP_FAILED)
        return errno;
    char *aligned = (char *)(((uintptr_t)room + alignment - 1) / alignment * alignment);
    int err = core_segment_move_to(seg, aligned);
    if (err) {
        munmap(room, span);
        return err;
    }
    if (aligned > room)
        munmap(room, (size_t)(aligned - room));
    char *tail = aligned + seg->size, *end = room + span;
    if (end > tail)
        munmap(tail, (size_t)(end - tail));
    return 0;
}

/* Each local PE's segment of size bytes, mine created (and filled with
 * contents, where given; its mapping at a multiple of alignment, where not
 * 0), the others mapped by name. Collective over the node. False (on every
 * PE alike) where any PE failed; why in *err. */
static bool share_segments(core_segment *segs, size_t size, const void *contents, size_t alignment, int *err)
{
    int local;
    MPI_Comm_rank(osh.node, &local);
    char *names = calloc((size_t)osh.n_local, CORE_SHM_NAME_MAX);
    *err = core_segment_create(&segs[local], size);
    if (*err == 0 && alignment)
        *err = align_mapping(&segs[local], alignment);
    if (*err == 0 && contents)
        copy_program_data(segs[local].base, contents, size);
    MPI_Allgather(segs[local].name, CORE_SHM_NAME_MAX, MPI_CHAR, names, CORE_SHM_NAME_MAX, MPI_CHAR, osh.node);
    int failed = *err != 0, any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, osh.node);
    for (int i = 0; i < osh.n_local && !any_failed; i++)
        if (i != local && (*err = core_segment_attach(&segs[i], names + (size_t)i * CORE_SHM_NAME_MAX, size)))
            failed = 1;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, osh.node);
    free(names);
    if (any_failed) {
        for (int i = 0; i < osh.n_local; i++)
            core_segment_release(&segs[i]);
        if (!*err)
            *err = EAGAIN;
        return false;
    }
    return true;
}

static void open_heap(void)
{
    size_t size = osh_env_heap_size(), lo = size, hi = size;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, osh.world);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, osh.world);
    if (lo != hi)
        osh_fail("shmem_init", "PEs were given different SHMEM_SYMMETRIC_SIZE (%zu to %zu bytes)", lo, hi);
    osh.heap_segments = calloc((size_t)osh.n_local, sizeof *osh.heap_segments);
    int err;
    osh.heap_alignment = heap_alignment_for(size);
    if (!share_segments(osh.heap_segments, size, NULL, osh.heap_alignment, &err))
        osh_fail("shmem_init",
                 "cannot reserve the symmetric heap (%zu bytes per PE, %d PEs on this node) in /dev/shm: %s; "
                 "free space there or set SHMEM_SYMMETRIC_SIZE lower",
                 size, osh.n_local, strerror(err));
    int local;
    MPI_Comm_rank(osh.node, &local);
    rma_region *heap = &osh.engine.region[RMA_REGION_HEAP];
    heap->base = osh.heap_segments[local].base;
    heap->size = size;
    heap->peer_base = calloc((size_t)osh.n_local, sizeof *heap->peer_base);
    for (int i = 0; i < osh.n_local; i++)
        heap->peer_base[i] = osh.heap_segments[i].base;
    osh.heap = rma_heap_create(size);
}

/* The program's data becomes a shared segment at its own address. Every PE
 * must run the same program (the same data size), or none shares. */
static void open_data(void)
{
    char *range[2] = {NULL, NULL};
    if (core_config_get()->shmem_globals)
        dl_iterate_phdr(find_program_data, range);
    uint64_t size = range[1] > range[0] ? (uint64_t)(range[1] - range[0]) : 0, lo = size, hi = size;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, osh.world);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, osh.world);
    if (lo != hi || lo == 0) {
        if (lo != hi)
            core_log_warn_once("shmem_init: the PEs' programs differ (data of %llu to %llu bytes): global "
                               "variables are not symmetric, only the symmetric heap is",
                               (unsigned long long)lo, (unsigned long long)hi);
        return;
    }
    osh.data_segments = calloc((size_t)osh.n_local, sizeof *osh.data_segments);
    int err, local;
    MPI_Comm_rank(osh.node, &local);
    /* Filled with the data as it is now: the move below must lose no
     * global's value (no other thread of the program writes globals while
     * shmem_init runs). */
    if (!share_segments(osh.data_segments, size, range[0], 0, &err)) {
        core_log_warn_once("shmem_init: global variables stay private (no room for them in /dev/shm: %s): only "
                           "the symmetric heap is remotely accessible",
                           strerror(err));
        free(osh.data_segments);
        osh.data_segments = NULL;
        return;
    }
    err = core_segment_move_to(&osh.data_segments[local], range[0]);
    int failed = err != 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, osh.world);
    if (failed)
        osh_fail("shmem_init",
                 "cannot map the program's global data into shared memory (%s); run with "
                 "SHOAL_SHMEM_GLOBALS=0 to keep globals private",
                 err ? strerror(err) : "on another PE");
    rma_region *data = &osh.engine.region[RMA_REGION_DATA];
    data->base = osh.data_start = range[0];
    data->size = osh.data_size = size;
    data->peer_base = calloc((size_t)osh.n_local, sizeof *data->peer_base);
    for (int i = 0; i < osh.n_local; i++)
        data->peer_base[i] = osh.data_segments[i].base;
}

static void unlink_segments(core_segment *segs)
{
    for (int i = 0; segs && i < osh.n_local; i++)
        core_segment_unlink(&segs[i]);
}

/* Who is on this node: each PE's index among the node's PEs, and pids. */
static void find_node(void)
{
    osh.node = shim_node_part(osh.world);
    if (osh.node == MPI_COMM_NULL)
        osh_fail("shmem_init", "cannot find this node's PEs (MPI_Comm_split_type failed)");
    MPI_Comm_size(osh.node, &osh.n_local);
    MPI_Group world_group, node_group;
    MPI_Comm_group(osh.world, &world_group);
    MPI_Comm_group(osh.node, &node_group);
    int *pes = malloc((size_t)osh.n_pes * sizeof *pes);
    osh.local_index = malloc((size_t)osh.n_pes * sizeof *osh.local_index);
    for (int pe = 0; pe < osh.n_pes; pe++)
        pes[pe] = pe;
    MPI_Group_translate_ranks(world_group, osh.n_pes, pes, node_group, osh.local_index);
    for (int pe = 0; pe < osh.n_pes; pe++)
        if (osh.local_index[pe] == MPI_UNDEFINED)
            osh.local_index[pe] = -1;
    free(pes);
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    osh.local_pid = malloc((size_t)osh.n_local * sizeof *osh.local_pid);
    int me = (int)getpid(), *pids = malloc((size_t)osh.n_local * sizeof *pids);
    MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, osh.node);
    for (int i = 0; i < osh.n_local; i++)
        osh.local_pid[i] = (pid_t)pids[i];
    free(pids);
}

static void finalize_at_exit(void)
{
    if (osh.initialized && !osh.finalized)
        shmem_finalize();
}

static int mpi_thread_level(int shmem_level)
{
    switch (shmem_level) {
    case SHMEM_THREAD_SINGLE: return MPI_THREAD_SINGLE;
    case SHMEM_THREAD_FUNNELED: return MPI_THREAD_FUNNELED;
    case SHMEM_THREAD_SERIALIZED: return MPI_THREAD_SERIALIZED;
    default: return MPI_THREAD_MULTIPLE;
    }
}

/* Open MPI 4's one-sided component osc/rdma crashes on an 8-byte
 * MPI_Compare_and_swap that a rank aims at itself (btl/vader has no endpoint
 * for self: open-mpi/ompi#7027 and #7967), which a compare-and-swap or a
 * lock on one's own PE is once the job spans nodes; its osc/ucx completed a
 * flush before the tail of a put had landed, now and then on a loaded
 * machine (shmem.np4.cliques2, 3 runs of 6 under 4.1.4). Where shoal starts
 * MPI and the user chose no one-sided component, pt2pt serves the windows
 * over the PEs' memory and sm those MPI allocates itself. pt2pt refuses
 * to make a window under MPI_THREAD_MULTIPLE (the call aborts the job), so
 * there ucx serves, the one component left that makes them. */
static void avoid_host_mpi_faults(int mpi_level)
{
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    setenv("OMPI_MCA_osc", mpi_level == MPI_THREAD_MULTIPLE ? "ucx,sm" : "pt2pt,sm", 0);
#else
    (void)mpi_level;
#endif
}

int shmem_init_thread(int requested, int *provided)
{
    if (osh.initialized && !osh.finalized) {
        if (provided)
            *provided = osh.thread_level;
        return 0;
    }
    if (osh.finalized)
        osh_fail("shmem_init", "the OpenSHMEM library cannot start again after shmem_finalize");
    int started, mpi_level;
    MPI_Initialized(&started);
    if (!started) {
        avoid_host_mpi_faults(mpi_thread_level(requested));
        if (MPI_Init_thread(NULL, NULL, mpi_thread_level(requested), &mpi_level) != MPI_SUCCESS)
            osh_fail("shmem_init", "MPI_Init_thread failed");
        osh.started_mpi = true;
    } else {
        MPI_Query_thread(&mpi_level);
    }
    osh_env_debug();
    /* The MPI levels are numbered in the same order as OpenSHMEM's. */
    osh.thread_level = requested;
    if (mpi_level < mpi_thread_level(requested))
        osh.thread_level = mpi_level == MPI_THREAD_SINGLE       ? SHMEM_THREAD_SINGLE
                           : mpi_level == MPI_THREAD_FUNNELED   ? SHMEM_THREAD_FUNNELED
                           : mpi_level == MPI_THREAD_SERIALIZED ? SHMEM_THREAD_SERIALIZED
                                                                : SHMEM_THREAD_MULTIPLE;
    if (provided)
        *provided = osh.thread_level;
    core_set_fatal_handler(abort_job);
    MPI_Comm_dup(MPI_COMM_WORLD, &osh.world);
    MPI_Comm_rank(osh.world, &osh.my_pe);
    MPI_Comm_size(osh.world, &osh.n_pes);
    core_log_set_rank(osh.my_pe);
    find_node();
    open_heap();
    open_data();
    MPI_Barrier(osh.node);
    unlink_segments(osh.heap_segments);
    unlink_segments(osh.data_segments);

    rma_engine *e = &osh.engine;
    e->my_pe = osh.my_pe;
    e->n_pes = osh.n_pes;
    e->n_local = osh.n_local;
    e->local_index = osh.local_index;
    e->local_pid = osh.local_pid;
    e->fail = engine_fail;
    if (osh.n_local < osh.n_pes) {
        osh_remote_open();
        e->remote = &osh_remote_ops;
        e->remote_atomics = true;
    }
    osh_teams_open();
    osh.initialized = true;
    static bool registered;
    if (!registered) {
        atexit(finalize_at_exit);
        registered = true;
    }
    core_log_once("OpenSHMEM: %d PEs, %d on this node, symmetric heap of %zu bytes, global data of %zu bytes "
                  "shared%s",
                  osh.n_pes, osh.n_local, e->region[RMA_REGION_HEAP].size, osh.data_size,
                  e->remote ? "; other nodes through MPI-3 RMA windows" : "");
    osh_env_announce(osh.my_pe, e->region[RMA_REGION_HEAP].size);
    MPI_Barrier(osh.world);
    return 0;
}

void shmem_init(void) { shmem_init_thread(SHMEM_THREAD_SINGLE, NULL); }

void start_pes(int npes)
{
    (void)npes;
    shmem_init();
}

void shmem_query_thread(int *provided)
{
    osh_require_init("shmem_query_thread");
    *provided = osh.thread_level;
}

void shmem_finalize(void)
{
    if (!osh.initialized || osh.finalized)
        return;
    shmem_barrier_all();
    osh_teams_close();
    if (osh.engine.remote)
        osh_remote_close();
    int local;
    MPI_Comm_rank(osh.node, &local);
    for (int i = 0; i < osh.n_local; i++) {
        core_segment_release(&osh.heap_segments[i]);
        /* Mine holds this program's globals now: it stays mapped. */
        if (osh.data_segments && i != local)
            core_segment_release(&osh.data_segments[i]);
    }
    for (int r = 0; r < RMA_REGIONS; r++) {
        free(osh.engine.region[r].peer_base);
        osh.engine.region[r] = (rma_region){0};
    }
    rma_heap_destroy(osh.heap);
    osh.heap = NULL;
    MPI_Comm_free(&osh.node);
    MPI_Comm_free(&osh.world);
    osh.finalized = true;
    if (osh.started_mpi) {
        int ended;
        MPI_Finalized(&ended);
        if (!ended)
            MPI_Finalize();
    }
}

void shmem_global_exit(int status)
{
    core_log_settle();
    MPI_Abort(MPI_COMM_WORLD, status);
    _exit(status);
}

int shmem_my_pe(void)
{
    osh_require_init("shmem_my_pe");
    return osh.my_pe;
}

int shmem_n_pes(void)
{
    osh_require_init("shmem_n_pes");
    return osh.n_pes;
}

int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }

int shmem_pe_accessible(int pe)
{
    osh_require_init("shmem_pe_accessible");
    return pe >= 0 && pe < osh.n_pes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    osh_require_init("shmem_addr_accessible");
    rma_region_id region;
    size_t offset;
    return pe >= 0 && pe < osh.n_pes && rma_locate(&osh.engine, addr, 1, &region, &offset);
}

void *shmem_ptr(const void *dest, int pe) { return rma_peer_address(osh_engine("shmem_ptr"), dest, pe); }

void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name) { snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING); }

/* The profiling interface's switch: shoal has no profiling library to
 * tell, so every level is accepted and ignored, as the specification
 * allows. */
void shmem_pcontrol(const int level, ...) { (void)level; }
