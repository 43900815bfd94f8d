/* One-sided access to a rank that sits in a collective shoal runs.
 *
 * MPI's progress rule lets a passive-target epoch (a lock, a put, a get, a
 * flush) aimed at a rank complete while that rank is blocked in any MPI
 * call. Some MPIs (MPICH's ch4) serve such an epoch on the target's side,
 * in its progress engine: a target waiting in shoal's own shared-memory
 * wait must keep driving that engine, or the origin waits forever.
 *
 * Each rank in turn is the origin: it opens an epoch on every other rank
 * (one lock per target, a lock on all, with flushes per target, of all, and
 * local ones; or an active-target epoch the others expose their windows
 * to), puts values computed here, reads them back and compares;
 * meanwhile the others wait in a barrier, an allreduce or a bcast, whose
 * results are compared too, and which shoal must have taken
 * (--expect-shoal 1). The windows are both kinds a program makes: memory
 * MPI allocates and memory the program lends. Last, every rank reads its
 * own window under a lock on itself and finds what each origin put last.
 *
 * --skip-known-host-bugs leaves out the window MPI allocates: under MPICH
 * 4.0.2 (Debian's, ch4:ucx) a put into one lands in the origin's own
 * window, whatever the transport (UCX_TLS) or hint (alloc_shm), without
 * shoal as with it.
 *
 * rma_check [--rounds N] [--expect-shoal 0|1] [--skip-known-host-bugs] */
#include <stdbool.h>
#include <string.h>

#include "check_common.h"
#include "shoal.h"

enum { EPOCH_LOCK_EACH, EPOCH_LOCK_ALL, EPOCH_FLUSH_ALL, EPOCH_START_COMPLETE, EPOCH_KINDS };
enum { WAIT_BARRIER, WAIT_ALLREDUCE, WAIT_BCAST, WAIT_KINDS };

static int rank, size, errors;

static void fail(const char *what, int round, int origin, int target, int got, int want)
{
    if (errors++ < 10)
        fprintf(stderr, "rma_check: rank %d, %s, round %d, origin %d, target %d: %d, expected %d\n", rank, what, round,
                origin, target, got, want);
}

/* What origin puts into target's slot for origin in this round and window. */
static int value_of(int window, int round, int origin, int target)
{
    return 1 + window * 10000000 + round * 10000 + origin * 100 + target;
}

/* One origin's epoch on every other rank: put, make sure it is there, read
 * it back. */
static void origin_epoch(MPI_Win win, int window, int round, int kind)
{
    int put[size], got[size];
    for (int t = 0; t < size; t++) {
        put[t] = value_of(window, round, rank, t);
        got[t] = -1;
    }
    if (kind == EPOCH_START_COMPLETE) {
        /* Active target: the others expose their windows (expose_to). No
         * read-back here (a get of what the same epoch puts conflicts): each
         * target looks after the collective. */
        MPI_Group all, others;
        MPI_Win_get_group(win, &all);
        MPI_Group_excl(all, 1, &rank, &others);
        MPI_Win_start(others, 0, win);
        for (int t = 0; t < size; t++)
            if (t != rank)
                MPI_Put(&put[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Group_free(&others);
        MPI_Group_free(&all);
        return;
    }
    if (kind == EPOCH_LOCK_EACH) {
        for (int t = 0; t < size; t++) {
            if (t == rank)
                continue;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
            MPI_Put(&put[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
            MPI_Win_flush(t, win);
            MPI_Get(&got[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
            MPI_Win_unlock(t, win);
        }
    } else {
        MPI_Win_lock_all(0, win);
        for (int t = 0; t < size; t++) {
            if (t == rank)
                continue;
            MPI_Put(&put[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
            if (kind == EPOCH_LOCK_ALL) {
                MPI_Win_flush(t, win);
                MPI_Get(&got[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
                MPI_Win_flush_local(t, win);
            }
        }
        if (kind == EPOCH_FLUSH_ALL) {
            MPI_Win_flush_all(win);
            for (int t = 0; t < size; t++)
                if (t != rank)
                    MPI_Get(&got[t], 1, MPI_INT, t, rank, 1, MPI_INT, win);
            MPI_Win_flush_local_all(win);
        }
        MPI_Win_unlock_all(win);
    }
    for (int t = 0; t < size; t++)
        if (t != rank && got[t] != put[t])
            fail("read back after a flush", round, rank, t, got[t], put[t]);
}

/* A target of the origin's active-target epoch exposes its window to it
 * before the collective ... */
static void expose_to(MPI_Win win, int origin)
{
    MPI_Group all, just_origin;
    MPI_Win_get_group(win, &all);
    MPI_Group_incl(all, 1, &origin, &just_origin);
    MPI_Win_post(just_origin, 0, win);
    MPI_Group_free(&just_origin);
    MPI_Group_free(&all);
}

/* ... and after it waits for the exposure to end (MPI_Win_test first: the
 * origin completed its epoch before it entered the collective, and the
 * host's collectives often deliver that news before they return, though MPI
 * does not promise it: the times it did are counted, not checked). Then the
 * window holds what the origin put. */
static int exposures, over_at_once;

static void wait_exposure_over(MPI_Win win, const int *base, int window, int round, int origin)
{
    int over = 0;
    MPI_Win_test(win, &over);
    exposures++;
    over_at_once += over;
    if (!over)
        MPI_Win_wait(win);
    int want = value_of(window, round, origin, rank);
    if (base[origin] != want)
        fail("window after an active-target epoch", round, origin, rank, base[origin], want);
}

/* The collective everybody meets in after the origin's epoch; the other
 * ranks are in it while the origin works on their windows. */
static void meet(int round, int origin, int kind, int expect_shoal)
{
    int got = -1, want = -1;
    if (kind == WAIT_BARRIER) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (kind == WAIT_ALLREDUCE) {
        int mine = rank + round;
        MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        want = size * (size - 1) / 2 + size * round;
    } else {
        got = rank == origin ? round * 7 + origin : -1;
        MPI_Bcast(&got, 1, MPI_INT, origin, MPI_COMM_WORLD);
        want = round * 7 + origin;
    }
    if (got != want)
        fail(kind == WAIT_ALLREDUCE ? "allreduce beside the epoch" : "bcast beside the epoch", round, origin, rank, got,
             want);
    if (expect_shoal >= 0 && shoal_last_choice(NULL, NULL) != expect_shoal && errors++ < 10)
        fprintf(stderr, "rma_check: rank %d, round %d: the collective %s shoal\n", rank, round,
                expect_shoal ? "did not go through" : "went through");
}

/* Every rank reads its own window under a lock on itself: slot o holds what
 * origin o put in the last round. */
static void check_own(MPI_Win win, const int *base, int window, int rounds)
{
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int o = 0; o < size; o++) {
        int want = o == rank ? 0 : value_of(window, rounds - 1, o, rank);
        if (base[o] != want)
            fail("own window at the end", rounds - 1, o, rank, base[o], want);
    }
    MPI_Win_unlock(rank, win);
}

int main(int argc, char **argv)
{
    int rounds = 8, expect_shoal = -1, first_window = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-shoal") && i + 1 < argc)
            expect_shoal = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--skip-known-host-bugs"))
            first_window = 1;
        else
            CHECK_FATAL("usage: rma_check [--rounds N] [--expect-shoal 0|1] [--skip-known-host-bugs]");
    }
    if (rounds < 1)
        CHECK_FATAL("rma_check: --rounds must be at least 1");

    MPI_Win wins[2];
    int *bases[2];
    int *lent = malloc(sizeof(int) * (size_t)size);
    MPI_Win_allocate((MPI_Aint)(sizeof(int) * (size_t)size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &bases[0],
                     &wins[0]);
    MPI_Win_create(lent, (MPI_Aint)(sizeof(int) * (size_t)size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wins[1]);
    bases[1] = lent;
    for (int w = first_window; w < 2; w++) {
        /* Local stores to a window belong in an epoch on oneself. */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wins[w]);
        memset(bases[w], 0, sizeof(int) * (size_t)size);
        MPI_Win_unlock(rank, wins[w]);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    for (int round = 0; round < rounds; round++)
        for (int w = first_window; w < 2; w++)
            for (int origin = 0; origin < size; origin++) {
                int kind = (round + origin) % EPOCH_KINDS;
                bool exposed = kind == EPOCH_START_COMPLETE && rank != origin;
                if (exposed)
                    expose_to(wins[w], origin);
                if (rank == origin)
                    origin_epoch(wins[w], w, round, kind);
                meet(round, origin, (round + w + origin) % WAIT_KINDS, expect_shoal);
                if (exposed)
                    wait_exposure_over(wins[w], bases[w], w, round, origin);
            }
    for (int w = first_window; w < 2; w++)
        check_own(wins[w], bases[w], w, rounds);

    MPI_Win_free(&wins[0]);
    MPI_Win_free(&wins[1]);
    free(lent);
    int all, counts[2] = {exposures, over_at_once}, sums[2];
    PMPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_check: active-target exposures over when the collective returned: %d of %d\n", sums[1], sums[0]);
    if (rank == 0)
        printf("rma_check: %d ranks, %d rounds, %s, shoal %s, %d errors\n", size, rounds,
               first_window ? "a window the program lends" : "windows MPI allocates and the program lends",
               shoal_enabled() ? "active" : "off", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
