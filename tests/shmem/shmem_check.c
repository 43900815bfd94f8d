/* shmem_check: shoal's OpenSHMEM API against values computed locally.
 *
 * Every RMA type through put, get, p, g, iput, iget and the nbi forms, to
 * every other PE; the sized forms; atomics of every kind under contention
 * from every PE (counts add up exactly, fetched values are a permutation);
 * ordering with fence, quiet and put_signal; the wait and test forms;
 * global and static variables (which sit at a different address in each
 * process); collectives on teams and on active sets; team splits and
 * contexts on them; locks; the symmetric heap, its exhaustion included.
 * With --threads N, shmem_init_thread asks for SHMEM_THREAD_MULTIPLE, which
 * must be given, and N threads of every PE run atomics and puts at once.
 * Sizes and roots are drawn from a seed printed by PE 0 (--seed S repeats
 * a run). Exits non-zero on any PE where a check failed. */
#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmem.h>

static int me, npes, failures;
static long checks;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            if (failures++ < 20) {                                         \
                fprintf(stderr, "PE %d: %s:%d: ", me, __func__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                              \
                fputc('\n', stderr);                                       \
            }                                                              \
        }                                                                  \
    } while (0)

/* Symmetric globals and statics: the data segment path of the engine. */
long global_counter;
int global_block[64];
static long static_block[48];
static uint64_t static_signal;

static unsigned long long seed;
static unsigned long long rng_state;
static unsigned next_random(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}
/* Alike on every PE: draws from the shared seed. */
static unsigned draw(unsigned below) { return next_random() % below; }

/* The value element i of a block sent by PE src holds in round r: small
 * integers, exact in every type. */
static int pattern(int src, size_t i, int r) { return (int)((src * 31 + (int)i * 7 + r * 13) % 100); }

#define CHECK_RMA_TYPE(T, N)                                                                                   \
    static void check_rma_##N(int round)                                                                       \
    {                                                                                                          \
        size_t n = 1 + draw(700);                                                                              \
        T *dest = shmem_malloc(3 * n * sizeof(T)), *from = shmem_malloc(3 * n * sizeof(T));                    \
        T *local = malloc(3 * n * sizeof(T));                                                                  \
        int to = (me + 1 + round) % npes, src = (me + npes - (1 + round) % npes) % npes;                       \
        for (size_t i = 0; i < 3 * n; i++) {                                                                   \
            local[i] = (T)pattern(me, i, round);                                                               \
            from[i] = (T)pattern(me, i, round + 1);                                                            \
            dest[i] = (T)0;                                                                                    \
        }                                                                                                      \
        shmem_barrier_all();                                                                                   \
        shmem_##N##_put(dest, local, n, to);                                                                   \
        shmem_##N##_put_nbi(dest + n, local + n, n, to);                                                       \
        shmem_quiet();                                                                                         \
        shmem_##N##_p(dest + 2 * n, (T)pattern(me, 2 * n, round), to);                                         \
        shmem_barrier_all();                                                                                   \
        int sender = src;                                                                                      \
        for (size_t i = 0; i < 2 * n; i++)                                                                     \
            CHECK(dest[i] == (T)pattern(sender, i, round), #N " put: element %zu of %zu from PE %d", i, 2 * n, \
                  sender);                                                                                     \
        CHECK(dest[2 * n] == (T)pattern(sender, 2 * n, round), #N " p");                                       \
        /* get, get_nbi and g from the PE before me read its `from`. */                                        \
        T *got = malloc(2 * n * sizeof(T));                                                                    \
        shmem_##N##_get(got, from, n, src);                                                                    \
        shmem_##N##_get_nbi(got + n, from + n, n, src);                                                        \
        shmem_quiet();                                                                                         \
        for (size_t i = 0; i < 2 * n; i++)                                                                     \
            CHECK(got[i] == (T)pattern(src, i, round + 1), #N " get: element %zu from PE %d", i, src);         \
        CHECK(shmem_##N##_g(from + n / 2, src) == (T)pattern(src, n / 2, round + 1), #N " g");                 \
        /* Strided: every third element of mine into every other of the target. */                             \
        shmem_barrier_all();                                                                                   \
        size_t k = n / 3;                                                                                      \
        if (k) {                                                                                               \
            shmem_##N##_iput(dest, local, 2, 3, k, to);                                                        \
            shmem_barrier_all();                                                                               \
            for (size_t i = 0; i < k; i++)                                                                     \
                CHECK(dest[2 * i] == (T)pattern(sender, 3 * i, round),                                         \
                      #N " iput: element %zu of %zu: %g, expected %d (before: %d)", i, k, (double)dest[2 * i], \
                      pattern(sender, 3 * i, round), pattern(sender, 2 * i, round));                           \
            shmem_##N##_iget(got, from, 3, 2, k / 2, src);                                                     \
            for (size_t i = 0; i < k / 2; i++)                                                                 \
                CHECK(got[3 * i] == (T)pattern(src, 2 * i, round + 1), #N " iget: element %zu", i);            \
        }                                                                                                      \
        free(got);                                                                                             \
        free(local);                                                                                           \
        shmem_free(from);                                                                                      \
        shmem_free(dest);                                                                                      \
    }
SHOAL_SHMEM_RMA_TYPES(CHECK_RMA_TYPE)

static void check_rma_every_type(int round)
{
#define CALL_RMA_CHECK(T, N) check_rma_##N(round);
    SHOAL_SHMEM_RMA_TYPES(CALL_RMA_CHECK)
}

/* Transfers of more than a MiB, an odd number of bytes at an odd offset
 * (the engine copies long ones in pieces): a put to the next PE, then a
 * get of the previous PE's block (which holds what the PE before it put). */
static void check_long_transfer(void)
{
    size_t bytes = ((size_t)1 << 20) + 1 + 2 * draw(1 << 19);
    unsigned char *block = shmem_malloc(bytes + 1), *mine = malloc(bytes), *back = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        mine[i] = (unsigned char)(me * 29 + i * 7 + i / 4099);
    shmem_barrier_all();
    shmem_putmem(block + 1, mine, bytes, (me + 1) % npes);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes, second_left = (me + 2 * npes - 2) % npes;
    shmem_getmem(back, block + 1, bytes, left);
    size_t wrong_put = 0, wrong_got = 0;
    for (size_t i = 0; i < bytes; i++) {
        wrong_put += block[1 + i] != (unsigned char)(left * 29 + i * 7 + i / 4099);
        wrong_got += back[i] != (unsigned char)(second_left * 29 + i * 7 + i / 4099);
    }
    CHECK(wrong_put == 0, "%zu of %zu bytes put by PE %d are wrong", wrong_put, bytes, left);
    CHECK(wrong_got == 0, "%zu of %zu bytes got from PE %d are wrong", wrong_got, bytes, left);
    shmem_barrier_all();
    free(back);
    free(mine);
    shmem_free(block);
}

/* putmem and put8..put128 with byte counts drawn at random, to every PE. */
static void check_sized(void)
{
    size_t bytes = 16 * (1 + draw(4096));
    unsigned char *dest = shmem_malloc(bytes * (size_t)npes), *mine = malloc(bytes);
    memset(dest, 0, bytes * (size_t)npes);
    for (size_t i = 0; i < bytes; i++)
        mine[i] = (unsigned char)(me * 7 + i);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++) {
        unsigned char *slot = dest + (size_t)me * bytes;
        switch (pe % 6) {
        case 0: shmem_putmem(slot, mine, bytes, pe); break;
        case 1: shmem_put8(slot, mine, bytes, pe); break;
        case 2: shmem_put16(slot, mine, bytes / 2, pe); break;
        case 3: shmem_put32(slot, mine, bytes / 4, pe); break;
        case 4: shmem_put64_nbi(slot, mine, bytes / 8, pe); break;
        default: shmem_put128(slot, mine, bytes / 16, pe);
        }
    }
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        for (size_t i = 0; i < bytes; i++)
            if (dest[(size_t)pe * bytes + i] != (unsigned char)(pe * 7 + i)) {
                CHECK(0, "sized put from PE %d: byte %zu of %zu", pe, i, bytes);
                break;
            }
    /* Many small nonblocking puts outstanding at once, completed by one quiet. */
    int *cells = shmem_calloc(512, sizeof(int)), sources[512];
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    /* An nbi put's source stays untouched until the quiet: one each. */
    for (int i = 0; i < 512; i++) {
        sources[i] = me * 1000 + i;
        shmem_int_put_nbi(&cells[i], &sources[i], 1, to);
    }
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 512; i++)
        if (cells[i] != from * 1000 + i) {
            CHECK(0, "put_nbi %d of 512 from PE %d: %d", i, from, cells[i]);
            break;
        }
    shmem_free(cells);
    unsigned char *back = malloc(bytes);
    int src = (me + 1) % npes;
    shmem_getmem(back, dest + (size_t)me * bytes, bytes, src);
    CHECK(!memcmp(back, mine, bytes), "getmem of my block on PE %d", src);
    free(back);
    free(mine);
    shmem_free(dest);
}

/* Every PE adds to every PE's counters K times (--amo-rounds, 40 unless
 * told): each counter ends at npes*K, and the values fetched from one
 * counter are 0..npes*K-1 once each. Between nodes every atomic is an MPI
 * RMA operation and a flush: where the host MPI's ranks poll busily on
 * shared cores, the tests ask for fewer rounds. */
#define MAX_CONTENTION_ROUNDS 40
static int contention_rounds = MAX_CONTENTION_ROUNDS;
#define CHECK_AMO_TYPE(T, N)                                                                                  \
    static void check_amo_##N(void)                                                                           \
    {                                                                                                         \
        T *counter = shmem_calloc(3, sizeof(T));                                                              \
        long *fetched = shmem_malloc((size_t)npes * contention_rounds * sizeof(long));                        \
        long mine[MAX_CONTENTION_ROUNDS];                                                                     \
        for (int k = 0; k < contention_rounds; k++) {                                                         \
            for (int pe = 0; pe < npes; pe++) {                                                               \
                T old = shmem_##N##_atomic_fetch_inc(&counter[0], pe);                                        \
                if (pe == 0)                                                                                  \
                    mine[k] = (long)old;                                                                      \
                shmem_##N##_atomic_add(&counter[1], (T)2, pe);                                                \
                /* An increment by compare-and-swap, retried until it lands. */                               \
                T seen = shmem_##N##_atomic_fetch(&counter[2], pe), was;                                      \
                while ((was = shmem_##N##_atomic_compare_swap(&counter[2], seen, (T)(seen + 1), pe)) != seen) \
                    seen = was;                                                                               \
            }                                                                                                 \
        }                                                                                                     \
        shmem_barrier_all();                                                                                  \
        CHECK(counter[0] == (T)(npes * contention_rounds), #N " fetch_inc: %lld", (long long)counter[0]);     \
        CHECK(counter[1] == (T)(2 * npes * contention_rounds), #N " add: %lld", (long long)counter[1]);       \
        CHECK(counter[2] == (T)(npes * contention_rounds), #N " compare_swap: %lld", (long long)counter[2]);  \
        shmem_long_fcollect(SHMEM_TEAM_WORLD, fetched, mine, contention_rounds);                              \
        char *seen_value = calloc((size_t)npes * contention_rounds, 1);                                       \
        for (int i = 0; i < npes * contention_rounds; i++)                                                    \
            if (fetched[i] >= 0 && fetched[i] < npes * contention_rounds && !seen_value[fetched[i]])          \
                seen_value[fetched[i]] = 1;                                                                   \
            else                                                                                              \
                CHECK(0, #N " fetch_inc handed out %ld twice or out of range", fetched[i]);                   \
        free(seen_value);                                                                                     \
        shmem_free(fetched);                                                                                  \
        shmem_free(counter);                                                                                  \
    }
SHOAL_SHMEM_AMO_TYPES(CHECK_AMO_TYPE)

static void check_amo_every_type(void)
{
#define CALL_AMO_CHECK(T, N) check_amo_##N();
    SHOAL_SHMEM_AMO_TYPES(CALL_AMO_CHECK)
}

/* Bitwise: each PE sets, clears and flips its own bit on PE 0's word. */
#define CHECK_BITWISE_TYPE(T, N)                            \
    static void check_bitwise_##N(void)                     \
    {                                                       \
        T *word = shmem_calloc(3, sizeof(T));               \
        int bits = (int)(8 * sizeof(T));                    \
        T bit = (T)((T)1 << (me % bits)), all = 0;          \
        for (int pe = 0; pe < npes; pe++)                   \
            all |= (T)((T)1 << (pe % bits));                \
        if (me == 0)                                        \
            word[1] = (T) ~(T)0;                            \
        shmem_barrier_all();                                \
        shmem_##N##_atomic_or(&word[0], bit, 0);            \
        shmem_##N##_atomic_fetch_and(&word[1], (T)~bit, 0); \
        shmem_##N##_atomic_xor(&word[2], (T)1, 0);          \
        shmem_barrier_all();                                \
        if (me == 0) {                                      \
            CHECK(word[0] == all, #N " or");                \
            CHECK(word[1] == (T)(~all), #N " and");         \
            CHECK(word[2] == (T)(npes % 2), #N " xor");     \
        }                                                   \
        shmem_free(word);                                   \
    }
SHOAL_SHMEM_BITWISE_AMO_TYPES(CHECK_BITWISE_TYPE)

/* swap: the values swapped out and the one left are every PE's id once,
 * and the initial value. set and fetch on floating point. */
static void check_swap_set_fetch(void)
{
    long *word = shmem_malloc(sizeof(long));
    double *real = shmem_malloc(sizeof(double));
    *word = -1;
    *real = 0;
    long *outs = shmem_malloc((size_t)npes * sizeof(long));
    shmem_barrier_all();
    long out = shmem_long_atomic_swap(word, me, 0);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, outs, &out, 1);
    long final = shmem_long_atomic_fetch(word, 0);
    int count[65] = {0};
    count[final + 1]++;
    for (int i = 0; i < npes; i++)
        if (outs[i] >= -1 && outs[i] < npes && outs[i] < 64)
            count[outs[i] + 1]++;
    for (int v = -1; v < npes && v < 64; v++)
        CHECK(count[v + 1] == 1, "swap: value %d seen %d times", v, count[v + 1]);
    shmem_barrier_all();
    if (me == npes - 1)
        shmem_double_atomic_set(real, 2.5, 0);
    shmem_barrier_all();
    CHECK(shmem_double_atomic_fetch(real, 0) == 2.5, "double set/fetch");
    shmem_free(outs);
    shmem_free(real);
    shmem_free(word);
}

/* A fetching atomic has written the target's word by the time it returns:
 * a get right after it, with no quiet between, reads the new value. Each
 * PE swaps, adds and compare-swaps its own word on every PE. */
#define READBACK_ROUNDS 20
static void check_atomic_then_get(void)
{
    int *words = shmem_calloc((size_t)npes, sizeof(int));
    shmem_barrier_all();
    for (int r = 1; r <= READBACK_ROUNDS; r++)
        for (int pe = 0; pe < npes; pe++) {
            int *mine = &words[me];
            int before = shmem_int_atomic_swap(mine, 3 * r, pe);
            CHECK(before == 3 * r - 3, "swap on PE %d fetched %d, expected %d", pe, before, 3 * r - 3);
            CHECK(shmem_int_g(mine, pe) == 3 * r, "get after swap on PE %d", pe);
            shmem_int_atomic_fetch_add(mine, 1, pe);
            CHECK(shmem_int_g(mine, pe) == 3 * r + 1, "get after fetch_add on PE %d", pe);
            shmem_int_atomic_compare_swap(mine, 3 * r + 1, 3 * r, pe);
            CHECK(shmem_int_g(mine, pe) == 3 * r, "get after compare_swap on PE %d", pe);
        }
    shmem_barrier_all();
    shmem_free(words);
}

/* Ordering: data, then fence or put_signal, then a flag; the receiver that
 * sees the flag must see the data. The receiver acknowledges each round. */
#define ORDER_ROUNDS 30
#define ORDER_LONGS 256
static void check_ordering(void)
{
    if (npes < 2)
        return;
    long *data = shmem_calloc(ORDER_LONGS, sizeof(long));
    long *flag = shmem_calloc(2, sizeof(long));
    uint64_t *signal = shmem_calloc(1, sizeof(uint64_t));
    long *mine = malloc(ORDER_LONGS * sizeof(long));
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    shmem_barrier_all();
    for (int r = 1; r <= ORDER_ROUNDS; r++) {
        for (int i = 0; i < ORDER_LONGS; i++)
            mine[i] = r * 1000 + i;
        shmem_long_put(data, mine, ORDER_LONGS, to);
        if (r % 3 == 0) {
            shmem_quiet();
            shmem_long_p(&flag[0], r, to);
        } else if (r % 3 == 1) {
            shmem_fence();
            shmem_long_atomic_set(&flag[0], r, to);
        } else {
            shmem_long_put_signal(data, mine, ORDER_LONGS, signal, 1, SHMEM_SIGNAL_ADD, to);
        }
        if (r % 3 == 2)
            shmem_signal_wait_until(signal, SHMEM_CMP_GE, (uint64_t)(r / 3 + 1));
        else
            shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, r);
        for (int i = 0; i < ORDER_LONGS; i++)
            if (data[i] != r * 1000 + i) {
                CHECK(0, "round %d: element %d is %ld after the flag from PE %d", r, i, data[i], from);
                break;
            }
        /* The sender may overwrite data only once I have read it. */
        shmem_long_atomic_set(&flag[1], r, from);
        shmem_long_wait_until(&flag[1], SHMEM_CMP_GE, r);
    }
    free(mine);
    shmem_free(signal);
    shmem_free(flag);
    shmem_free(data);
}

/* A stream of blocking puts to the next PE (on another node where the job
 * spans nodes: small ones leave from the engine's bounce ring), each from
 * one source buffer that is overwritten as soon as the call returns, sizes
 * on both sides of the ring's 8 KiB limit and enough bytes to wrap the ring
 * several times. The puts of an epoch go to slots of their own (puts to the
 * same bytes are ordered only by a fence); epochs end with a fence or a
 * quiet by turns. Now and then a get of the bytes just put must read them
 * back at once, and some puts go through the default context. At the end
 * every PE rebuilds what its sender wrote (the sizes are drawn alike
 * everywhere) and compares. */
#define STREAM_EPOCHS 48
#define STREAM_PER_EPOCH 16
#define STREAM_SLOT ((size_t)12 << 10)
#define STREAM_PUTS (STREAM_EPOCHS * STREAM_PER_EPOCH)
static unsigned char stream_byte(int sender, int k, size_t i) { return (unsigned char)(sender * 37 + k * 11 + (int)i); }

static void check_put_stream(void)
{
    size_t region = STREAM_PER_EPOCH * STREAM_SLOT;
    unsigned char *stream = shmem_calloc(region, 1), *source = malloc(STREAM_SLOT), *back = malloc(STREAM_SLOT);
    unsigned char *expected = calloc(region, 1);
    size_t *bytes = malloc(STREAM_PUTS * sizeof *bytes);
    for (int k = 0; k < STREAM_PUTS; k++)
        bytes[k] = k % 5 == 4 ? 1 + draw(STREAM_SLOT) : 1 + draw(256); /* mostly small, as a loop of p's */
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    shmem_barrier_all();
    for (int k = 0; k < STREAM_PUTS; k++) {
        unsigned char *slot = stream + (size_t)(k % STREAM_PER_EPOCH) * STREAM_SLOT;
        for (size_t i = 0; i < bytes[k]; i++)
            source[i] = stream_byte(me, k, i);
        if (k % 3 == 2)
            shmem_ctx_putmem(SHMEM_CTX_DEFAULT, slot, source, bytes[k], to);
        else
            shmem_putmem(slot, source, bytes[k], to);
        memset(source, 0xA5, bytes[k]); /* the source is free once the call returned */
        if (k % 13 == 0) {
            shmem_getmem(back, slot, bytes[k], to);
            size_t i = 0;
            while (i < bytes[k] && back[i] == stream_byte(me, k, i))
                i++;
            CHECK(i == bytes[k], "put %d of %zu bytes to PE %d, got back at once: byte %zu differs", k, bytes[k], to,
                  i);
        }
        if (k % STREAM_PER_EPOCH == STREAM_PER_EPOCH - 1) {
            if ((k / STREAM_PER_EPOCH) % 2)
                shmem_quiet();
            else
                shmem_fence();
        }
    }
    shmem_barrier_all();
    for (int k = 0; k < STREAM_PUTS; k++)
        for (size_t i = 0; i < bytes[k]; i++)
            expected[(size_t)(k % STREAM_PER_EPOCH) * STREAM_SLOT + i] = stream_byte(from, k, i);
    size_t first_wrong = region;
    for (size_t i = 0; i < region && first_wrong == region; i++)
        if (stream[i] != expected[i])
            first_wrong = i;
    CHECK(first_wrong == region, "stream of blocking puts from PE %d: byte %zu (slot %zu) is %d, expected %d", from,
          first_wrong, first_wrong / STREAM_SLOT, first_wrong < region ? stream[first_wrong] : 0,
          first_wrong < region ? expected[first_wrong] : 0);
    shmem_barrier_all();
    free(bytes);
    free(expected);
    free(back);
    free(source);
    shmem_free(stream);
}

/* PE 0 waits on one flag per PE, which each PE sets in turn. */
static void check_wait_forms(void)
{
    int *flags = shmem_calloc((size_t)npes, sizeof(int));
    int *status = calloc((size_t)npes, sizeof(int));
    shmem_barrier_all();
    if (npes > 1) {
        if (me == 0) {
            status[0] = 1; /* nobody sets mine */
            CHECK(shmem_int_test(&flags[0], SHMEM_CMP_EQ, 0) == 1 && !shmem_int_test(&flags[0], SHMEM_CMP_NE, 0),
                  "test");
            size_t first = shmem_int_wait_until_any(flags, (size_t)npes, status, SHMEM_CMP_EQ, 1);
            CHECK(first > 0 && first < (size_t)npes && flags[first] == 1, "wait_until_any gave %zu", first);
            size_t *indices = malloc((size_t)npes * sizeof *indices);
            size_t some = shmem_int_wait_until_some(flags, (size_t)npes, indices, status, SHMEM_CMP_EQ, 1);
            CHECK(some >= 1 && some < (size_t)npes, "wait_until_some gave %zu", some);
            for (size_t i = 0; i < some; i++)
                CHECK(flags[indices[i]] == 1 && indices[i] != 0, "wait_until_some index %zu", indices[i]);
            shmem_int_wait_until_all(flags, (size_t)npes, status, SHMEM_CMP_EQ, 1);
            for (int pe = 1; pe < npes; pe++)
                CHECK(flags[pe] == 1, "wait_until_all returned before PE %d set its flag", pe);
            CHECK(shmem_int_test_all(flags, (size_t)npes, status, SHMEM_CMP_EQ, 1), "test_all after all set");
            int *values = malloc((size_t)npes * sizeof *values);
            for (int pe = 0; pe < npes; pe++)
                values[pe] = 1;
            CHECK(shmem_int_test_any_vector(flags, (size_t)npes, status, SHMEM_CMP_EQ, values) != SIZE_MAX,
                  "test_any_vector");
            free(values);
            free(indices);
        } else {
            shmem_int_atomic_set(&flags[me], 1, 0);
        }
    }
    shmem_barrier_all();
    free(status);
    shmem_free(flags);
}

/* Globals and statics: puts, gets and atomics on them from every PE. */
static void check_globals(int round)
{
    memset(global_block, 0, sizeof global_block);
    memset(static_block, 0, sizeof static_block);
    global_counter = 0;
    static_signal = 0;
    shmem_barrier_all();
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    int values[64];
    long longs[48];
    for (int i = 0; i < 64; i++)
        values[i] = pattern(me, (size_t)i, round);
    for (int i = 0; i < 48; i++)
        longs[i] = pattern(me, (size_t)i, round + 5);
    shmem_int_put(global_block, values, 64, to);
    shmem_long_put(static_block, longs, 48, to);
    for (int pe = 0; pe < npes; pe++)
        shmem_long_atomic_add(&global_counter, me + 1, pe);
    shmem_uint64_atomic_inc(&static_signal, 0);
    shmem_barrier_all();
    for (int i = 0; i < 64; i++)
        CHECK(global_block[i] == pattern(from, (size_t)i, round), "global int %d from PE %d", i, from);
    for (int i = 0; i < 48; i++)
        CHECK(static_block[i] == pattern(from, (size_t)i, round + 5), "static long %d from PE %d", i, from);
    CHECK(global_counter == (long)npes * (npes + 1) / 2, "global counter %ld", global_counter);
    if (me == 0)
        CHECK(static_signal == (uint64_t)npes, "static atomic %llu", (unsigned long long)static_signal);
    long peer_long = shmem_long_g(&static_block[3], to);
    CHECK(peer_long == pattern(me, 3, round + 5), "g of a static on PE %d", to);
    /* A direct pointer, where the peer shares this node, reaches its copy. */
    int *direct = shmem_ptr(global_block, to);
    if (direct)
        CHECK(direct[5] == pattern(me, 5, round), "shmem_ptr to PE %d's global", to);
    CHECK(shmem_ptr(global_block, me) == global_block, "shmem_ptr to my own global");
    CHECK(shmem_addr_accessible(static_block, to) && !shmem_addr_accessible(values, to), "addr_accessible");
    shmem_barrier_all();
}

/* Collectives on the world team, a strided team and active sets. */
/* What check_collectives_on draws and allocates (alike on every PE, as the
 * heap is the world's) for run_collectives, which a team's members run. */
typedef struct collective_case {
    int round, root;
    size_t count, k; /* elements a block; alltoalls' elements a pair */
    int *src, *dst, *sparse;
    long *lsrc, *ldst;
    double *dsrc, *ddst;
    double _Complex *csrc, *cdst;
} collective_case;

static void run_collectives(shmem_team_t team, const collective_case *c);

/* Called by every PE (the heap is the world's); team's members run the
 * collectives, the others only allocate alike. */
static void check_collectives_on(shmem_team_t team, int members, int round)
{
    size_t count = 1 + draw(300), n = (size_t)members, k = count / 3 ? count / 3 : 1;
    collective_case c = {.round = round, .root = (int)draw((unsigned)members), .count = count, .k = k};
    /* One statement each: every PE allocates in the same order. */
    c.src = shmem_malloc(count * n * sizeof(int));
    c.dst = shmem_malloc(count * n * sizeof(int));
    c.sparse = shmem_malloc(3 * k * n * sizeof(int));
    c.lsrc = shmem_malloc(count * sizeof(long));
    c.ldst = shmem_malloc(count * sizeof(long));
    c.dsrc = shmem_malloc(count * sizeof(double));
    c.ddst = shmem_malloc(count * sizeof(double));
    c.csrc = shmem_malloc(count * sizeof(double _Complex));
    c.cdst = shmem_malloc(count * sizeof(double _Complex));
    if (team != SHMEM_TEAM_INVALID)
        run_collectives(team, &c);
    shmem_free(c.cdst);
    shmem_free(c.csrc);
    shmem_free(c.ddst);
    shmem_free(c.dsrc);
    shmem_free(c.ldst);
    shmem_free(c.lsrc);
    shmem_free(c.sparse);
    shmem_free(c.dst);
    shmem_free(c.src);
}

static void run_collectives(shmem_team_t team, const collective_case *c)
{
    int n = shmem_team_n_pes(team), rank = shmem_team_my_pe(team), round = c->round, root = c->root;
    size_t count = c->count, k = c->k;
    int *src = c->src, *dst = c->dst, *sparse = c->sparse;
    long *lsrc = c->lsrc, *ldst = c->ldst;
    double *dsrc = c->dsrc, *ddst = c->ddst;
    double _Complex *csrc = c->csrc, *cdst = c->cdst;
    CHECK(root < n, "root %d of %d", root, n);
    for (size_t i = 0; i < count * (size_t)n; i++)
        src[i] = pattern(rank, i, round);
    memset(dst, 0xff, count * (size_t)n * sizeof(int));
    shmem_team_sync(team);
    shmem_int_broadcast(team, dst, src, count, root);
    for (size_t i = 0; i < count; i++)
        CHECK(dst[i] == pattern(root, i, round), "broadcast from %d: element %zu", root, i);
    shmem_int_fcollect(team, dst, src, count);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++)
            CHECK(dst[(size_t)r * count + i] == pattern(r, i, round), "fcollect: block %d element %zu", r, i);
    /* collect: rank r brings r+1 elements. */
    shmem_int_collect(team, dst, src, (size_t)rank + 1);
    size_t at = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i <= (size_t)r; i++, at++)
            CHECK(dst[at] == pattern(r, i, round), "collect: block %d element %zu", r, i);
    shmem_int_alltoall(team, dst, src, count);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++)
            CHECK(dst[(size_t)r * count + i] == pattern(r, (size_t)rank * count + i, round), "alltoall %d %zu", r, i);
    /* alltoalls: every other element out, every third in. */
    if (2 * k * (size_t)n <= count * (size_t)n) {
        memset(sparse, 0, 3 * k * (size_t)n * sizeof(int));
        shmem_int_alltoalls(team, sparse, src, 3, 2, k);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < k; i++)
                CHECK(sparse[((size_t)r * k + i) * 3] == pattern(r, ((size_t)rank * k + i) * 2, round),
                      "alltoalls %d %zu", r, i);
    }
    shmem_team_sync(team);
    /* Reductions, exact in every type. */
    for (size_t i = 0; i < count; i++) {
        lsrc[i] = pattern(rank, i, round);
        dsrc[i] = pattern(rank, i, round) - 50;
        csrc[i] = pattern(rank, i, round) + 1.0 * I * rank;
    }
    shmem_team_sync(team);
    shmem_long_sum_reduce(team, ldst, lsrc, count);
    shmem_double_max_reduce(team, ddst, dsrc, count);
    shmem_complexd_sum_reduce(team, cdst, csrc, count);
    for (size_t i = 0; i < count; i++) {
        long sum = 0;
        double max = -1e9;
        double _Complex csum = 0;
        for (int r = 0; r < n; r++) {
            sum += pattern(r, i, round);
            max = pattern(r, i, round) - 50 > max ? pattern(r, i, round) - 50 : max;
            csum += pattern(r, i, round) + 1.0 * I * r;
        }
        CHECK(ldst[i] == sum, "long sum %zu: %ld, expected %ld", i, ldst[i], sum);
        CHECK(ddst[i] == max, "double max %zu", i);
        CHECK(cdst[i] == csum, "complexd sum %zu", i);
    }
    shmem_ulong_xor_reduce(team, (unsigned long *)ldst, (unsigned long *)lsrc, count);
    for (size_t i = 0; i < count; i++) {
        unsigned long x = 0;
        for (int r = 0; r < n; r++)
            x ^= (unsigned long)pattern(r, i, round);
        CHECK((unsigned long)ldst[i] == x, "ulong xor %zu", i);
    }
    /* In place: source and dest the same. */
    shmem_long_min_reduce(team, lsrc, lsrc, count);
    for (size_t i = 0; i < count; i++) {
        long min = 1000;
        for (int r = 0; r < n; r++)
            min = pattern(r, i, round) < min ? pattern(r, i, round) : min;
        CHECK(lsrc[i] == min, "long min in place %zu", i);
    }
    shmem_team_sync(team);
}

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int pwork[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];

/* The forms before teams: PEs start, start + 2^log, ... */
static void check_active_sets(int round)
{
    int log_stride = npes >= 4 ? 1 : 0, start = npes >= 3 ? 1 : 0;
    int size = (npes - 1 - start) / (1 << log_stride) + 1;
    bool member = me >= start && (me - start) % (1 << log_stride) == 0;
    int index = (me - start) >> log_stride;
    long *dst = shmem_malloc(64 * sizeof(long) * (size_t)npes), *src = shmem_malloc(64 * sizeof(long));
    int *isrc = shmem_malloc(16 * sizeof(int)), *idst = shmem_malloc(16 * sizeof(int));
    for (int i = 0; i < 64; i++)
        src[i] = pattern(index, (size_t)i, round);
    for (int i = 0; i < 16; i++)
        isrc[i] = pattern(index, (size_t)i, round);
    for (int i = 0; i < 64 * npes; i++)
        dst[i] = -7;
    int root = (int)draw((unsigned)size);
    shmem_barrier_all();
    if (member) {
        shmem_broadcast64(dst, src, 64, root, start, log_stride, size, psync);
        for (int i = 0; i < 64; i++)
            CHECK(dst[i] == (index == root ? -7 : pattern(root, (size_t)i, round)),
                  "broadcast64 (root keeps its dest) element %d", i);
        shmem_barrier(start, log_stride, size, psync);
        shmem_fcollect64(dst, src, 64, start, log_stride, size, psync);
        for (int r = 0; r < size; r++)
            CHECK(dst[r * 64 + 7] == pattern(r, 7, round), "fcollect64 block %d", r);
        shmem_int_sum_to_all(idst, isrc, 16, start, log_stride, size, pwork, psync);
        for (int i = 0; i < 16; i++) {
            int sum = 0;
            for (int r = 0; r < size; r++)
                sum += pattern(r, (size_t)i, round);
            CHECK(idst[i] == sum, "int sum_to_all %d", i);
        }
        shmem_sync(start, log_stride, size, psync);
    }
    shmem_barrier_all();
    shmem_free(idst);
    shmem_free(isrc);
    shmem_free(src);
    shmem_free(dst);
}

static void check_teams(int round)
{
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes && shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "world team");
    int shared_n = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    CHECK(shared_n >= 1 && shared_n <= npes, "shared team of %d", shared_n);
    shmem_team_t even;
    int size = (npes + 1) / 2;
    int *box = shmem_calloc(1, sizeof(int));
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, size, NULL, 0, &even) == 0, "split_strided");
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID && shmem_team_my_pe(even) == me / 2 && shmem_team_n_pes(even) == size,
              "even team: my_pe %d", shmem_team_my_pe(even));
        CHECK(shmem_team_translate_pe(even, 1 % size, SHMEM_TEAM_WORLD) == (1 % size) * 2, "translate");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, even) == me / 2, "translate back");
        /* A context on the team numbers PEs as the team does. */
        shmem_ctx_t ctx;
        CHECK(shmem_team_create_ctx(even, 0, &ctx) == 0, "team context");
        shmem_ctx_int_p(ctx, box, 100 + me, (shmem_team_my_pe(even) + 1) % size);
        shmem_ctx_quiet(ctx);
        shmem_team_sync(even);
        int left = shmem_team_translate_pe(even, (me / 2 + size - 1) % size, SHMEM_TEAM_WORLD);
        CHECK(*box == 100 + left, "context put on the team: %d, expected %d", *box, 100 + left);
        shmem_team_sync(even);
        shmem_ctx_destroy(ctx);
    } else {
        CHECK(even == SHMEM_TEAM_INVALID, "odd PE got a team");
    }
    shmem_free(box);
    check_collectives_on(even, size, round);
    if (even != SHMEM_TEAM_INVALID)
        shmem_team_destroy(even);
    shmem_team_t row, column;
    int xrange = npes >= 2 ? 2 : 1;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, NULL, 0, &row, NULL, 0, &column) == 0, "split_2d");
    CHECK(shmem_team_my_pe(row) == me % xrange && shmem_team_my_pe(column) == me / xrange, "2d ranks");
    shmem_team_destroy(row);
    shmem_team_destroy(column);
}

/* Mutual exclusion: a read-modify-write by get and put on PE 0, under the
 * lock (on the heap: the test also runs with globals private). */
#define LOCK_ROUNDS 25
static void check_locks(void)
{
    long *lock_word = shmem_calloc(2, sizeof(long)), *lock = &lock_word[0], *counter = &lock_word[1];
    shmem_barrier_all();
    for (int k = 0; k < LOCK_ROUNDS; k++) {
        if (k % 2)
            shmem_set_lock(lock);
        else
            while (shmem_test_lock(lock))
                ;
        long v = shmem_long_g(counter, 0);
        shmem_long_p(counter, v + 1, 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(*counter == (long)npes * LOCK_ROUNDS, "lock: %ld increments of %d", *counter, npes * LOCK_ROUNDS);
    shmem_free(lock_word);
}

/* The heap: blocks alike on every PE, realloc keeps the data, align aligns,
 * and a request too big gives NULL on every PE (not a crash). */
static void check_heap(void)
{
    void *blocks[8];
    for (int i = 0; i < 8; i++)
        blocks[i] = shmem_malloc(1 + draw(100000));
    for (int i = 0; i < 8; i += 2)
        shmem_free(blocks[i]);
    long *grown = shmem_malloc(10 * sizeof(long));
    for (int i = 0; i < 10; i++)
        grown[i] = me * 100 + i;
    grown = shmem_realloc(grown, 5000 * sizeof(long));
    for (int i = 0; i < 10; i++)
        CHECK(grown[i] == me * 100 + i, "realloc kept element %d", i);
    /* Symmetric: a put into the block on the next PE lands. */
    shmem_long_p(&grown[4999], me, (me + 1) % npes);
    shmem_barrier_all();
    CHECK(grown[4999] == (me + npes - 1) % npes, "put into a reallocated block");
    void *aligned = shmem_align(4096, 100);
    CHECK(aligned && (uintptr_t)aligned % 4096 == 0, "align");
    int *zeros = shmem_calloc(1000, sizeof(int));
    for (int i = 0; i < 1000; i++)
        if (zeros[i]) {
            CHECK(0, "calloc left %d at %d", zeros[i], i);
            break;
        }
    void *too_big = shmem_malloc((size_t)1 << 50);
    CHECK(too_big == NULL, "a block larger than the heap");
    shmem_free(zeros);
    shmem_free(aligned);
    shmem_free(grown);
    for (int i = 1; i < 8; i += 2)
        shmem_free(blocks[i]);
}

/* Threads of every PE at once: each adds to every PE's counter, puts its
 * own slot on every PE, and streams small blocking puts into chunks of its
 * own on every PE from one buffer it overwrites right after each call (the
 * engine's bounce ring, which the threads share), reading some back at
 * once; then the counts add up and every slot and chunk holds its
 * writer's values. */
#define THREAD_ADDS 200
#define THREAD_PUTS 24
#define THREAD_CHUNK 16 /* longs */
static long *thread_counter, *thread_slots, *thread_stream;
static int n_threads;
static int thread_readback_wrong[16];

static long thread_value(int pe, long thread, int put, int i) { return ((pe * 100 + thread) * 100 + put) * 100 + i; }

static long *thread_chunk(int writer, long thread, int put)
{
    return &thread_stream[(((size_t)writer * (size_t)n_threads + (size_t)thread) * THREAD_PUTS + (size_t)put) *
                          THREAD_CHUNK];
}

static void *thread_traffic(void *arg)
{
    long thread = (long)(intptr_t)arg;
    for (int i = 0; i < THREAD_ADDS; i++)
        for (int pe = 0; pe < npes; pe++)
            shmem_long_atomic_add(thread_counter, 1, pe);
    long mark = me * 1000 + thread;
    for (int pe = 0; pe < npes; pe++)
        shmem_long_put(&thread_slots[me * n_threads + thread], &mark, 1, pe);
    long chunk[THREAD_CHUNK];
    for (int pe = 0; pe < npes; pe++)
        for (int k = 0; k < THREAD_PUTS; k++) {
            for (int i = 0; i < THREAD_CHUNK; i++)
                chunk[i] = thread_value(me, thread, k, i);
            long *target = thread_chunk(me, thread, k);
            shmem_long_put(target, chunk, THREAD_CHUNK, pe);
            memset(chunk, 0xA5, sizeof chunk);
            if (k % 8 == 0 &&
                shmem_long_g(&target[THREAD_CHUNK - 1], pe) != thread_value(me, thread, k, THREAD_CHUNK - 1))
                thread_readback_wrong[thread]++;
        }
    shmem_quiet();
    return NULL;
}

static void check_threads(void)
{
    thread_counter = shmem_calloc(1, sizeof(long));
    thread_slots = shmem_calloc((size_t)(npes * n_threads), sizeof(long));
    thread_stream = shmem_calloc((size_t)npes * (size_t)n_threads * THREAD_PUTS * THREAD_CHUNK, sizeof(long));
    pthread_t tid[16];
    for (long t = 0; t < n_threads; t++)
        pthread_create(&tid[t], NULL, thread_traffic, (void *)(intptr_t)t);
    for (int t = 0; t < n_threads; t++)
        pthread_join(tid[t], NULL);
    shmem_barrier_all();
    long expected = (long)npes * n_threads * THREAD_ADDS;
    CHECK(shmem_long_atomic_fetch(thread_counter, me) == expected, "threads' adds: %ld, expected %ld", *thread_counter,
          expected);
    for (int pe = 0; pe < npes; pe++)
        for (int t = 0; t < n_threads; t++) {
            CHECK(thread_slots[pe * n_threads + t] == pe * 1000 + t, "slot of PE %d thread %d: %ld", pe, t,
                  thread_slots[pe * n_threads + t]);
            int wrong = 0;
            for (int k = 0; k < THREAD_PUTS; k++)
                for (int i = 0; i < THREAD_CHUNK; i++)
                    wrong += thread_chunk(pe, t, k)[i] != thread_value(pe, t, k, i);
            CHECK(wrong == 0, "%d longs of the chunks PE %d thread %d put here are wrong", wrong, pe, t);
        }
    for (int t = 0; t < n_threads; t++)
        CHECK(thread_readback_wrong[t] == 0, "thread %d read %d of its puts back wrong right after them", t,
              thread_readback_wrong[t]);
    shmem_free(thread_stream);
    shmem_free(thread_slots);
    shmem_free(thread_counter);
}

int main(int argc, char **argv)
{
    int rounds = 2;
    bool globals = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-globals"))
            globals = false; /* SHOAL_SHMEM_GLOBALS=0: only the heap is symmetric */
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            n_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--amo-rounds") && i + 1 < argc)
            contention_rounds = atoi(argv[++i]);
    }
    if (contention_rounds < 1 || contention_rounds > MAX_CONTENTION_ROUNDS)
        contention_rounds = MAX_CONTENTION_ROUNDS;
    if (n_threads < 0 || n_threads > 16)
        n_threads = 16;
    int provided = SHMEM_THREAD_SINGLE;
    if (n_threads)
        shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    else
        shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    unsigned long long *shared_seed = shmem_malloc(sizeof *shared_seed);
    if (me == 0) {
        *shared_seed = seed ? seed : (unsigned long long)time(NULL) ^ ((unsigned long long)clock() << 20);
        printf("shmem_check: %d PEs, seed %llu (repeat with --seed %llu)\n", npes, *shared_seed, *shared_seed);
        fflush(stdout);
    }
    shmem_barrier_all();
    rng_state = shmem_ulonglong_g(shared_seed, 0);
    int major, minor;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    CHECK(major == 1 && minor == 5 && !strcmp(name, "shoal"), "version %d.%d of %s", major, minor, name);
    if (n_threads) {
        CHECK(provided == SHMEM_THREAD_MULTIPLE, "shmem_init_thread gave thread level %d", provided);
        check_threads();
    }
    for (int round = 0; round < rounds; round++) {
        check_rma_every_type(round);
        check_sized();
        check_long_transfer();
        if (globals)
            check_globals(round);
        check_collectives_on(SHMEM_TEAM_WORLD, npes, round);
        check_active_sets(round);
        check_teams(round);
    }
    check_amo_every_type();
#define CALL_BITWISE_CHECK(T, N) check_bitwise_##N();
    SHOAL_SHMEM_BITWISE_AMO_TYPES(CALL_BITWISE_CHECK)
    check_swap_set_fetch();
    check_atomic_then_get();
    check_ordering();
    check_put_stream();
    check_wait_forms();
    check_locks();
    check_heap();
    /* The line that says all is well speaks for every PE (the multi-host
     * tests end a job that hangs in the host's finalize once it is out). */
    int *mine = shmem_malloc(sizeof *mine), *all = shmem_malloc(sizeof *all);
    *mine = failures;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, all, mine, 1);
    int total = *all;
    shmem_free(all);
    shmem_free(mine);
    if (failures)
        fprintf(stderr, "PE %d: %d checks failed\n", me, failures);
    if (me == 0 && total == 0)
        printf("shmem_check: all %ld checks of PE 0 passed, none failed on any of the %d PEs\n", checks, npes);
    else if (me == 0 && total > failures)
        fprintf(stderr, "shmem_check: %d checks failed on other PEs\n", total - failures);
    if (me == 0)
        failures = total;
    shmem_finalize();
    return failures ? 1 : 0;
}
