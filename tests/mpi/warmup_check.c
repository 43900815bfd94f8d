/* SHOAL_COMM_WARMUP: a communicator's first W intercepted collectives go to
 * the host MPI, shoal takes it over at the next, and every result along the
 * way is the host's. Short-lived communicators never reach shoal. A
 * floating-point reduction skips the warm-up: the same input gives the same
 * bits on every call of a communicator's life, shoal's rank order
 * ((x0 + x1) + x2) ..., never the host's order first. A communicator made
 * after one was freed, of the same ranks in the same order, adopts its
 * segment (seen in /proc/self/maps); one in another order gets its own.
 *   warmup_check --warmup W   (W: the SHOAL_COMM_WARMUP the run was given) */
#include <stdbool.h>
#include <string.h>

#include "check_common.h"
#include "shoal.h"

static int failures;

static void expect(int ok, int rank, const char *what, int call)
{
    if (!ok) {
        fprintf(stderr, "rank %d: FAIL %s (call %d)\n", rank, what, call);
        failures++;
    }
}

/* Collective k of a communicator's life: allreduce, bcast or gather in turn,
 * checked against the host MPI. Returns whether shoal ran it. */
static int one_call(MPI_Comm comm, int k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long in[4], out[4], ref[4], all[64], all_ref[64];
    for (int i = 0; i < 4; i++)
        in[i] = 1000L * rank + 10L * k + i;
    int by_shoal = 0;
    switch (k % 3) {
    case 0:
        MPI_Allreduce(in, out, 4, MPI_LONG, MPI_SUM, comm);
        by_shoal = shoal_last_choice(NULL, NULL);
        PMPI_Allreduce(in, ref, 4, MPI_LONG, MPI_SUM, comm);
        expect(!memcmp(out, ref, sizeof out), rank, "allreduce result", k);
        break;
    case 1:
        memcpy(out, in, sizeof out);
        MPI_Bcast(out, 4, MPI_LONG, size - 1, comm);
        by_shoal = shoal_last_choice(NULL, NULL);
        memcpy(ref, in, sizeof ref);
        PMPI_Bcast(ref, 4, MPI_LONG, size - 1, comm);
        expect(!memcmp(out, ref, sizeof out), rank, "bcast result", k);
        break;
    default:
        MPI_Gather(in, 4, MPI_LONG, all, 4, MPI_LONG, 0, comm);
        by_shoal = shoal_last_choice(NULL, NULL);
        PMPI_Gather(in, 4, MPI_LONG, all_ref, 4, MPI_LONG, 0, comm);
        if (rank == 0)
            expect(!memcmp(all, all_ref, sizeof(long) * 4 * (size_t)size), rank, "gather result", k);
        break;
    }
    return by_shoal;
}

enum { FLOATS = 37 };

/* Inputs whose sum depends on the order they are added in. */
static void float_input(double *in, int rank)
{
    for (int i = 0; i < FLOATS; i++)
        in[i] = (i % 2 ? -1 : 1) * (1.0 / 3 + rank * 1e-9 + i * 1e8) * (rank % 2 ? 1e-7 : 1);
}

/* A floating-point allreduce on comm: shoal's, and the rank-order sum. */
static void float_allreduce(MPI_Comm comm, int k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double in[FLOATS], all[16 * FLOATS], expected[FLOATS], out[FLOATS];
    float_input(in, rank);
    PMPI_Allgather(in, FLOATS, MPI_DOUBLE, all, FLOATS, MPI_DOUBLE, comm);
    for (int i = 0; i < FLOATS; i++) {
        expected[i] = all[i];
        for (int r = 1; r < size; r++)
            expected[i] += all[r * FLOATS + i];
    }
    MPI_Allreduce(in, out, FLOATS, MPI_DOUBLE, MPI_SUM, comm);
    expect(shoal_last_choice(NULL, NULL), rank, "floating-point allreduce went to the host", k);
    expect(!memcmp(out, expected, sizeof out), rank, "floating-point allreduce is not the rank-order sum", k);
}

/* A fresh communicator whose life starts with integer collectives (host,
 * during the warm-up) and then floating-point reductions: every one is
 * shoal's at once, and allreduce's bits are the rank-order sum on every
 * call. */
static void floating_reductions(int warmup)
{
    int rank, size;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    if (warmup > 1)
        expect(!one_call(c, 0), rank, "integer allreduce during the warm-up reached shoal", 0);

    double in[FLOATS], out[FLOATS], first[FLOATS];
    float_input(in, rank);
    for (int k = 0; k < warmup + 3; k++) {
        float_allreduce(c, k);
        MPI_Reduce(in, out, FLOATS, MPI_DOUBLE, MPI_SUM, size - 1, c);
        expect(shoal_last_choice(NULL, NULL), rank, "floating-point reduce went to the host", k);
        if (rank == size - 1) {
            if (k == 0)
                memcpy(first, out, sizeof first);
            expect(!memcmp(out, first, sizeof out), rank, "floating-point reduce changed bits between calls", k);
        }
    }
    MPI_Comm_free(&c);
}

/* The distinct inodes of the shoal segments this process has mapped, in
 * the order /proc/self/maps lists them; -1 when it cannot be read. */
enum { MAX_SEGMENTS = 64 };
static int mapped_segments(unsigned long *inodes)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long inode;
        if (!strstr(line, "/dev/shm/shoal-") || sscanf(line, "%*s %*s %*s %*s %lu", &inode) != 1)
            continue;
        bool known = false;
        for (int i = 0; i < n; i++)
            known |= inodes[i] == inode;
        if (!known && n < MAX_SEGMENTS)
            inodes[n++] = inode;
    }
    fclose(f);
    return n;
}

static bool among(unsigned long inode, const unsigned long *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == inode)
            return true;
    return false;
}

/* Communicators made and freed in a loop reuse one segment; a communicator
 * of the same ranks in another order gets a segment of its own. */
static void parked_teams(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long first[MAX_SEGMENTS], now[MAX_SEGMENTS];
    int nfirst = 0;
    for (int round = 0; round < 10; round++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        float_allreduce(c, round);
        int n = mapped_segments(round ? now : first);
        expect(n > 0, rank, "no shoal segment in /proc/self/maps", round);
        if (round == 0)
            nfirst = n;
        else {
            bool same = n == nfirst;
            for (int i = 0; i < n; i++)
                same &= among(now[i], first, nfirst);
            expect(same, rank, "a communicator made after a free built a segment instead of adopting one", round);
        }
        MPI_Comm_free(&c);
    }

    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    float_allreduce(reversed, 0);
    int n = mapped_segments(now);
    bool fresh = false;
    for (int i = 0; i < n; i++)
        fresh |= !among(now[i], first, nfirst);
    expect(fresh, rank, "a communicator of the ranks in another order adopted a team", 0);
    MPI_Comm_free(&reversed);

    /* The parked teams now disagree between ranks; whatever is adopted or
     * built, results stay right. */
    for (int round = 0; round < 3; round++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        float_allreduce(c, round);
        one_call(c, 0);
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int warmup = argc > 2 && !strcmp(argv[1], "--warmup") ? atoi(argv[2]) : -1;
    if (warmup < 0 || size < 2 || size > 16) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2..16 warmup_check --warmup W\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* A communicator's life: W calls by the host, then shoal, also after an
     * interleaved second communicator has started its own count. */
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b); /* all ranks, reversed */
    for (int k = 0; k < warmup + 4; k++) {
        expect(one_call(a, k) == (k >= warmup), rank, "communicator a: host for the warm-up, then shoal", k);
        expect(one_call(b, k) == (k >= warmup), rank, "communicator b: host for the warm-up, then shoal", k);
    }

    /* Short-lived communicators: made, used W times, freed, many times over;
     * none reaches shoal, and freeing them (and a taken-over one between)
     * leaves everything consistent. */
    for (int round = 0; round < 100; round++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 || size == 2, rank, &c);
        for (int k = 0; k < warmup; k++)
            expect(!one_call(c, k), rank, "short-lived communicator reached shoal", k);
        if (round % 25 == 0) {
            /* A single rank's collectives may or may not plan: only
             * communicators of several ranks are asserted. */
            int csize;
            MPI_Comm_size(c, &csize);
            expect(one_call(c, warmup) || csize == 1, rank, "short-lived communicator: shoal after the warm-up",
                   warmup);
        }
        MPI_Comm_free(&c);
    }
    floating_reductions(warmup);
    parked_teams();
    expect(one_call(a, warmup + 4) == 1, rank, "communicator a after the others were freed", warmup + 4);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);

    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("warmup_check: %d ranks, warm-up %d, %d failures\n", size, warmup, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
