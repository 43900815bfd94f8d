/* huge_check: MPI-4's large-count collectives (the `_c` bindings) past what
 * an int can say, each against the host's own PMPI_*_c on the same input.
 *
 *   huge_check [--seed S]
 *
 * Displacements beyond INT_MAX: gatherv, allgatherv, scatterv and alltoallv
 * with blocks more than 2 GiB apart in their buffers (the gaps are never
 * touched, so this needs little memory). Counts beyond INT_MAX: bcast and
 * allreduce of 2^31 + 17 bytes, when the node has the memory for them (about
 * 7 GiB per rank); otherwise the program says so and runs the first part only.
 * Each call must also reach shoal wherever the same call through the classic
 * binding would (one node, shoal on). Exit status 0 only when all matched. */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_common.h"
#include "shoal.h"

#if MPI_VERSION >= 4

static int me, n;
static long failures;

static void fail(const char *what, const char *detail)
{
    failures++;
    fprintf(stderr, "MISMATCH huge_check: world rank %d: %s: %s\n", me, what, detail);
}

/* Bytes [from, from + len) equal in both buffers. */
static void compare(const char *what, const unsigned char *shoal, const unsigned char *host, size_t from, size_t len)
{
    if (!memcmp(shoal + from, host + from, len))
        return;
    size_t i = from;
    while (shoal[i] == host[i])
        i++;
    char d[128];
    snprintf(d, sizeof d, "byte %zu: shoal 0x%02x, host 0x%02x", i, shoal[i], host[i]);
    fail(what, d);
}

static void fill(unsigned char *b, size_t len, uint64_t salt)
{
    rng r = rng_make(salt, (uint64_t)me, 1);
    uint64_t x = rng_next(&r);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(b + i, &x, 8);
    }
    for (; i < len; i++)
        b[i] = (unsigned char)(x >> (8 * (i & 7)));
}

/* Whether shoal handled the last call, where it should have. */
static void expect_shoal(const char *what)
{
    const char *algo;
    if (shoal_enabled() && n > 1 && !shoal_last_choice(&algo, NULL))
        fail(what, "went to the host MPI");
}

/* Virtual buffers spanning more than 2 GiB: only the blocks and a guard
 * around each are ever touched. */
static unsigned char *sparse(size_t span)
{
    unsigned char *b = calloc(span, 1);
    if (!b)
        CHECK_FATAL("huge_check: cannot reserve %zu bytes of address space", span);
    return b;
}

#define GUARD 64

/* Blocks of count bytes, block j at displacement j * stride + 64 + 8 j. */
static MPI_Aint displ_of(int j, MPI_Aint stride) { return (MPI_Aint)j * stride + GUARD + 8 * j; }

static void compare_blocks(const char *what, const unsigned char *s, const unsigned char *h, const MPI_Count *counts,
                           const MPI_Aint *displs)
{
    for (int j = 0; j < n; j++)
        compare(what, s, h, (size_t)displs[j] - GUARD, (size_t)counts[j] + 2 * GUARD);
}

static void far_displacements(uint64_t seed)
{
    const MPI_Aint stride = (MPI_Aint)INT_MAX + 4096; /* every block past the first lies beyond INT_MAX */
    const MPI_Count count = 40000;
    size_t span = (size_t)displ_of(n - 1, stride) + (size_t)count + 2 * (size_t)n + GUARD; /* blocks grow by rank */
    MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)n);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)n), *at0 = malloc(sizeof(MPI_Aint) * (size_t)n);
    for (int j = 0; j < n; j++) {
        counts[j] = count + j; /* unequal blocks */
        displs[j] = displ_of(j, stride);
    }
    MPI_Count mine = counts[me];
    unsigned char *send = malloc((size_t)mine), *rs = sparse(span), *rh = sparse(span);
    fill(send, (size_t)mine, seed);
    int root = n - 1;

    check_forget_last_choice();
    MPI_Gatherv_c(send, mine, MPI_BYTE, rs, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD);
    expect_shoal("MPI_Gatherv_c");
    PMPI_Gatherv_c(send, mine, MPI_BYTE, rh, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD);
    if (me == root)
        compare_blocks("MPI_Gatherv_c", rs, rh, counts, displs);

    check_forget_last_choice();
    MPI_Allgatherv_c(send, mine, MPI_BYTE, rs, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    expect_shoal("MPI_Allgatherv_c");
    PMPI_Allgatherv_c(send, mine, MPI_BYTE, rh, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    compare_blocks("MPI_Allgatherv_c", rs, rh, counts, displs);

    /* The root scatters from a sparse buffer: its blocks are filled. */
    unsigned char *from = sparse(span), *got_s = calloc((size_t)mine + 1, 1), *got_h = calloc((size_t)mine + 1, 1);
    if (me == root)
        for (int j = 0; j < n; j++)
            fill(from + displs[j], (size_t)counts[j], seed + 1 + (uint64_t)j);
    check_forget_last_choice();
    MPI_Scatterv_c(from, counts, displs, MPI_BYTE, got_s, mine, MPI_BYTE, root, MPI_COMM_WORLD);
    expect_shoal("MPI_Scatterv_c");
    PMPI_Scatterv_c(from, counts, displs, MPI_BYTE, got_h, mine, MPI_BYTE, root, MPI_COMM_WORLD);
    compare("MPI_Scatterv_c", got_s, got_h, 0, (size_t)mine + 1);

    /* Alltoallv: what i sends to j is count + i + j bytes, both sides sparse. */
    MPI_Count *scounts = malloc(sizeof(MPI_Count) * (size_t)n), *rcounts = malloc(sizeof(MPI_Count) * (size_t)n);
    for (int j = 0; j < n; j++) {
        scounts[j] = count + me + j;
        rcounts[j] = count + j + me;
        at0[j] = displs[j];
    }
    for (int j = 0; j < n; j++)
        fill(from + displs[j], (size_t)scounts[j], seed + 100 + (uint64_t)j);
    unsigned char *as = sparse(span), *ah = sparse(span);
    check_forget_last_choice();
    MPI_Alltoallv_c(from, scounts, displs, MPI_BYTE, as, rcounts, at0, MPI_BYTE, MPI_COMM_WORLD);
    expect_shoal("MPI_Alltoallv_c");
    PMPI_Alltoallv_c(from, scounts, displs, MPI_BYTE, ah, rcounts, at0, MPI_BYTE, MPI_COMM_WORLD);
    compare_blocks("MPI_Alltoallv_c", as, ah, rcounts, at0);

    free(counts), free(displs), free(at0), free(send), free(rs), free(rh), free(from), free(got_s), free(got_h),
        free(scounts), free(rcounts), free(as), free(ah);
}

/* MemAvailable of this node, in bytes (0 when unknown). */
static size_t available_memory(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    size_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kib) == 1)
            break;
    fclose(f);
    return kib * 1024;
}

static void huge_counts(uint64_t seed)
{
    const MPI_Count count = (MPI_Count)INT_MAX + 18; /* 2^31 + 17 */
    size_t len = (size_t)count;
    unsigned char *s = malloc(len), *h = malloc(len);
    if (!s || !h)
        CHECK_FATAL("huge_check: cannot allocate 2 x %zu bytes", len);

    int root = n - 1;
    if (me == root) {
        fill(s, len, seed + 7);
        memcpy(h, s, len);
    } else {
        memset(s, 0xa5, len);
        memset(h, 0xa5, len);
    }
    check_forget_last_choice();
    MPI_Bcast_c(s, count, MPI_BYTE, root, MPI_COMM_WORLD);
    expect_shoal("MPI_Bcast_c");
    PMPI_Bcast_c(h, count, MPI_BYTE, root, MPI_COMM_WORLD);
    compare("MPI_Bcast_c", s, h, 0, len);

    unsigned char *in = malloc(len);
    if (!in)
        CHECK_FATAL("huge_check: cannot allocate %zu more bytes", len);
    fill(in, len, seed + 8);
    /* s and h hold the same broadcast bytes: a result byte left unwritten
     * shows against the host's result. */
    check_forget_last_choice();
    MPI_Allreduce_c(in, s, count, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD);
    expect_shoal("MPI_Allreduce_c");
    PMPI_Allreduce_c(in, h, count, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD);
    compare("MPI_Allreduce_c", s, h, 0, len);
    free(in), free(s), free(h);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    if (argc == 3 && !strcmp(argv[1], "--seed"))
        seed = strtoull(argv[2], NULL, 0);
    PMPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("huge_check: %d ranks, seed %llu\n", n, (unsigned long long)seed);

    double t0 = MPI_Wtime();
    far_displacements(seed);
    if (me == 0)
        printf("huge_check: displacements beyond INT_MAX done, %.1f s\n", MPI_Wtime() - t0);

    /* Three buffers of 2 GiB per rank, with room to spare. */
    int enough = available_memory() > (size_t)n * 7 * ((size_t)1 << 30);
    PMPI_Bcast(&enough, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (enough)
        huge_counts(seed);
    else if (me == 0)
        printf("huge_check: less than %d GiB of memory available: counts beyond INT_MAX not run\n", 7 * n);

    long total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("huge_check: %s, %ld mismatches, %.1f s\n", enough ? "all parts" : "displacements only", total,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return total ? 1 : 0;
}

#else

int main(void)
{
    fprintf(stderr, "huge_check: this MPI has no large-count bindings (MPI %d.%d)\n", MPI_VERSION, MPI_SUBVERSION);
    return 1;
}

#endif
