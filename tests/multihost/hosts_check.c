/* hosts_check: asserts that a job really runs on separate hosts, laid out as
 * expected, before other tests rely on it.
 *
 *   hosts_check N1 N2 ...   (ranks 0..N1-1 on the first host, the next N2 on
 *                            the second, ...: the MPIs' default block mapping)
 *
 * Checks that MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives exactly those
 * node groups, that ranks of one node see one gethostname() and ranks of
 * different nodes different ones, and that a POSIX shared-memory name made on
 * one host is visible on that host only. Each failure is printed by the rank
 * that sees it; the exit status is 0 only when everything holds. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NAME_LEN 256

static int failures;
static int world_rank;
static char my_host[NAME_LEN];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hosts_check: rank %d on %s: FAIL ", world_rank, my_host);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int world_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (gethostname(my_host, sizeof my_host - 1) != 0)
        strcpy(my_host, "?");

    /* The expected layout: host of every world rank, first rank of every host. */
    int nhosts = argc - 1, total = 0;
    int *host_of = calloc((size_t)world_size, sizeof(int));
    int *first_of = calloc((size_t)(nhosts > 0 ? nhosts : 1), sizeof(int));
    for (int h = 0; h < nhosts; h++) {
        int n = atoi(argv[h + 1]);
        if (n < 1) {
            if (world_rank == 0)
                fprintf(stderr, "hosts_check: not a rank count: '%s'\nusage: hosts_check N1 N2 ...\n", argv[h + 1]);
            MPI_Finalize();
            return 2;
        }
        first_of[h] = total;
        for (int r = total; r < total + n && r < world_size; r++)
            host_of[r] = h;
        total += n;
    }
    if (nhosts < 1 || total != world_size) {
        if (world_rank == 0)
            fprintf(stderr, "hosts_check: the layout given (%d ranks on %d hosts) is not the job's %d ranks\n", total,
                    nhosts, world_size);
        MPI_Finalize();
        return 2;
    }
    int my_h = host_of[world_rank];
    int expect_size = (my_h + 1 < nhosts ? first_of[my_h + 1] : world_size) - first_of[my_h];

    /* 1. The node groups MPI reports. Exchanges below use the host MPI
     *    directly (PMPI): this program judges the layout, not shoal. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size, node_rank;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    int *members = calloc((size_t)node_size, sizeof(int));
    PMPI_Allgather(&world_rank, 1, MPI_INT, members, 1, MPI_INT, node);
    if (node_size != expect_size)
        fail("MPI_COMM_TYPE_SHARED gives a node of %d ranks, expected %d (are the hosts real?)", node_size,
             expect_size);
    else
        for (int i = 0; i < node_size; i++)
            if (members[i] != first_of[my_h] + i) {
                fail("node rank %d is world rank %d, not of this host's block", i, members[i]);
                break;
            }
    int leader = members[0];
    int *leaders = calloc((size_t)world_size, sizeof(int));
    PMPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    int nnodes = 0;
    for (int r = 0; r < world_size; r++)
        nnodes += leaders[r] == r;
    if (world_rank == 0 && nnodes != nhosts)
        fail("MPI sees %d nodes, expected %d", nnodes, nhosts);

    /* 2. Host names: one per node, different across nodes. */
    char *names = calloc((size_t)world_size, NAME_LEN);
    PMPI_Allgather(my_host, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < world_size; r++) {
        int same_node = leaders[r] == leader;
        int same_name = strcmp(names + (size_t)r * NAME_LEN, my_host) == 0;
        if (same_node && !same_name)
            fail("rank %d on this node has another host name, %s", r, names + (size_t)r * NAME_LEN);
        if (!same_node && same_name)
            fail("rank %d on another node has this host name too, %s", r, names + (size_t)r * NAME_LEN);
    }

    /* 3. /dev/shm: a name one host's first rank creates is seen there only. */
    uint64_t tag = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    PMPI_Bcast(&tag, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int h = 0; h < nhosts; h++) {
        char shm_name[96];
        snprintf(shm_name, sizeof shm_name, "/hosts_check.%llx.%d", (unsigned long long)tag, h);
        int made = 1;
        if (world_rank == first_of[h]) {
            int fd = shm_open(shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
            if (fd < 0) {
                fail("cannot create %s: %s", shm_name, strerror(errno));
                made = 0;
            } else
                close(fd);
        }
        PMPI_Bcast(&made, 1, MPI_INT, first_of[h], MPI_COMM_WORLD);
        if (made) {
            int fd = shm_open(shm_name, O_RDONLY, 0);
            int seen = fd >= 0;
            if (fd >= 0)
                close(fd);
            if (my_h == h && !seen)
                fail("%s, made by rank %d (expected on this host), is not visible here", shm_name, first_of[h]);
            if (my_h != h && seen)
                fail("%s, made by rank %d (expected on another host), is visible here: /dev/shm is shared", shm_name,
                     first_of[h]);
        }
        PMPI_Barrier(MPI_COMM_WORLD);
        if (made && world_rank == first_of[h])
            shm_unlink(shm_name);
    }

    int total_failures = 0;
    PMPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0) {
        printf("hosts_check: %d ranks on %d nodes:", world_size, nnodes);
        for (int r = 0; r < world_size; r++)
            if (leaders[r] == r) {
                printf(" %s [", names + (size_t)r * NAME_LEN);
                for (int s = r; s < world_size; s++)
                    if (leaders[s] == r)
                        printf(s == r ? "%d" : " %d", s);
                printf("]");
            }
        printf("\n%s\n", total_failures
                             ? "hosts_check: FAILED: the job is not laid out on separate hosts as expected"
                             : "hosts_check: OK: the expected nodes, each with its own host name and /dev/shm");
        fflush(stdout);
    }
    free(names), free(leaders), free(members), free(host_of), free(first_of);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
