/* shmem_bench: OpenSHMEM one-sided figures with the OSU methodology
 * (osu_oshm_put, _get, _put_mr, _atomics), written against the OpenSHMEM
 * API alone (and libc), so that the same source builds with any
 * OpenSHMEM's compiler wrapper: shoal's oshcc and Open MPI's oshcc make
 * the standalone `shmem-bench` (shmem_bench_main.c) from it. `shoal-bench
 * shmem` runs it with a second path beside it, the host MPI's MPI-3 RMA
 * (shmem_bench_rma.c), interleaved batch by batch.
 *
 * PE 0 is the origin, PE 1 the target (which calls nothing meanwhile).
 * Every batch is checked: the target's bytes (put) or the origin's (get)
 * must be the pattern sent. */
#ifndef SHOAL_SHMEM_BENCH_H
#define SHOAL_SHMEM_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#define SHMEM_BENCH_MR_WINDOW 64 /* puts between two quiets in the message rate (OSU's window) */

typedef enum {
    SHMEM_BENCH_PUT,
    SHMEM_BENCH_GET,
    SHMEM_BENCH_PUT_RATE,
    SHMEM_BENCH_PUT_BLOCKING_RATE, /* put_bl_mr: blocking puts, a quiet per window */
    SHMEM_BENCH_FETCH_ADD,
    SHMEM_BENCH_ADD,
    SHMEM_BENCH_CSWAP,
    SHMEM_BENCH_SWAP,
    SHMEM_BENCH_FETCH,
    SHMEM_BENCH_OPS
} shmem_bench_op;

extern const char *const shmem_bench_op_names[SHMEM_BENCH_OPS];

/* Message rates are per message, over windows of SHMEM_BENCH_MR_WINDOW
 * puts and a quiet: put_mr of non-blocking ones (OSU's), put_bl_mr of
 * blocking ones, each of which returns only once its source may be reused
 * (a loop of small puts; to a PE on another node, where that used to wait
 * for the MPI's local completion). */
static inline bool shmem_bench_is_rate(shmem_bench_op op)
{
    return op == SHMEM_BENCH_PUT_RATE || op == SHMEM_BENCH_PUT_BLOCKING_RATE;
}

typedef struct shmem_bench_options {
    size_t min, max; /* bytes of put, get, put_mr and put_bl_mr (powers of two between) */
    int batches;     /* per size; the median is printed */
    const char *title;
    double core_latency_us; /* printed where > 0 */
} shmem_bench_options;

/* A path measured beside OpenSHMEM's, batch after batch. The origin's
 * bytes to put are in local (put, put_mr: the pattern of salt 1); a get
 * leaves its bytes in local. */
typedef struct shmem_bench_peer {
    const char *column; /* its column's header */
    const char *what;   /* what it is, for the header */
    void *state;
    /* Time per operation in us as PE 0 measured it (the others: 0). */
    double (*batch)(void *state, shmem_bench_op op, size_t bytes, int iterations, char *local);
    /* Collective, after a batch: this PE's part of the check (the target's
     * bytes after a put, the origin's local after a get). */
    bool (*check)(void *state, shmem_bench_op op, size_t bytes, const char *local, int me);
} shmem_bench_peer;

/* Parses -m MIN:MAX and --batches B from argv[first..]; false on an
 * unknown argument. */
bool shmem_bench_parse(int argc, char **argv, int first, shmem_bench_options *opt);

/* The pattern both paths send: byte i of salt s. */
void shmem_bench_fill(char *buf, size_t bytes, int salt);
bool shmem_bench_holds(const char *buf, size_t bytes, int salt);
double shmem_bench_now_us(void);

/* Runs every operation at every size on an initialized OpenSHMEM; with
 * peer (or NULL) beside it. open_peer, where given, makes the peer once
 * the heap is there (max: the largest size). Prints on PE 0 as it goes.
 * Returns 0, or 1 where a batch's bytes were wrong; 2 with fewer than 2
 * PEs. */
int shmem_bench_run(const shmem_bench_options *opt, shmem_bench_peer *peer);

#endif
