/* MPI_Init, MPI_Init_thread, MPI_Finalize: where shoal turns on and off. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "shim_comm.h"
#include "shim_init.h"
#include "shim_probe.h"
#include "shim_types.h"

bool shim_active;
int shim_node_ranks = 1, shim_node_cores = 1;
_Atomic int shim_open_windows;

/* Probed, never sent on: a duplicate of MPI_COMM_WORLD of shoal's own. */
static MPI_Comm progress_comm = MPI_COMM_NULL;
/* How often a wait that has spun in vain drives the host's progress: often
 * enough that a peer's one-sided access waits little, rarely enough that a
 * probe (about a microsecond) costs ranks taking turns on cores nothing. */
#define HOST_PROGRESS_EVERY_NS 20000u

void shim_host_progress(void)
{
    /* Not MPI_COMM_SELF: MPICH answers a probe there from its queue of
     * messages to self, without running its progress engine. */
    int arrived;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress_comm, &arrived, MPI_STATUS_IGNORE);
}

static void abort_job(void) { PMPI_Abort(MPI_COMM_WORLD, 1); }

/* Ranks of the job on this machine's kernel, which MPI's node (one host
 * name) does not show where hosts are containers or network namespaces of
 * one machine: they share its cores and memory all the same. Collective. */
static int ranks_on_this_kernel(void)
{
    uint64_t mine = core_kernel_id();
    int n = 0, same = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    uint64_t *all = malloc((size_t)n * sizeof *all);
    if (!all)
        core_fatal("out of memory for %d kernel names", n);
    PMPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++)
        same += mine && all[r] == mine;
    free(all);
    return same;
}

/* How many ranks of the job share this node (or, more, this machine), and
 * how many cores they may use between them (the union of their affinity
 * masks), so that waiting knows whether ranks take turns on cores; then,
 * without a tuning file, the node's figures for the planner. */
static void learn_node(void)
{
    int on_kernel = ranks_on_this_kernel();
    MPI_Comm node;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    int node_size = 1;
    PMPI_Comm_size(node, &node_size);
    shim_node_ranks = on_kernel > node_size ? on_kernel : node_size;
    cpu_set_t mine, all, *masks = malloc((size_t)node_size * sizeof *masks);
    if (!masks)
        core_fatal("out of memory for %d affinity masks", node_size);
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        CPU_ZERO(&mine);
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, masks, (int)sizeof mine, MPI_BYTE, node);
    CPU_ZERO(&all);
    for (int r = 0; r < node_size; r++)
        CPU_OR(&all, &all, &masks[r]);
    shim_node_cores = CPU_COUNT(&all);
    if (shim_node_cores < 1)
        shim_node_cores = core_cpu_count();
    shim_probe_startup(node, masks);
    free(masks);
    PMPI_Comm_free(&node);
}

/* True when every rank has the same settings and tuning figures: each rank
 * decides alone what all must do alike (whether shoal runs at all, which
 * algorithm a call takes), so ranks that differ would wait for each other
 * forever. Collective over MPI_COMM_WORLD, made even with SHOAL_DISABLE. */
static bool ranks_agree(void)
{
    uint64_t mine = shim_plans_fingerprint();
    bool alike;
    shim_all_alike(&mine, &alike, 1, MPI_COMM_WORLD);
    return alike;
}

void shim_start(void)
{
    static bool started;
    if (started)
        return;
    started = true;
    const core_config *cfg = core_config_get();
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    core_log_set_rank(rank);
    if (!ranks_agree()) {
        if (rank == 0)
            core_log_warn_once("the ranks of this job have different SHOAL_* settings or tuning files "
                               "(SHOAL_TUNING_FILE, XDG_CACHE_HOME, HOME): shoal is off and every call goes to "
                               "the host MPI");
        return;
    }
    if (cfg->disabled) {
        core_log_once("SHOAL_DISABLE is set: every call goes to the host MPI");
        return;
    }
    core_set_fatal_handler(abort_job);
    shim_types_init();
    shim_comm_setup_keyval();
    learn_node();
    /* MPI lets a peer's passive-target access to this rank (a lock, a put,
     * a flush) complete while this rank is blocked in any MPI call; MPICH
     * serves it in this rank's progress engine, which shoal's own waits
     * would otherwise never run. */
    PMPI_Comm_dup(MPI_COMM_WORLD, &progress_comm);
    PMPI_Comm_set_errhandler(progress_comm, MPI_ERRORS_RETURN);
    core_flag_set_idle(shim_host_progress, HOST_PROGRESS_EVERY_NS);
    shim_active = true;
    core_log_once("active: %d ranks on this node (or on this machine, where hosts share it), %d cores", shim_node_ranks,
                  shim_node_cores);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        shim_start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        shim_start();
    return rc;
}

void shim_stop(void)
{
    if (shim_active) {
        shim_active = false;
        shim_comm_release_all(); /* drops the idle hook */
        PMPI_Comm_free(&progress_comm);
    }
}

int MPI_Finalize(void)
{
    shim_stop();
    return PMPI_Finalize();
}
