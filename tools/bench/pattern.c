/* Input patterns and the reference each result is checked against.
 *
 * The reference is computed locally from the same formulas that produced
 * every rank's inputs, never by an MPI call, so it is independent of both
 * paths under test. Generating and checking must be cheap (they run on
 * every call, between the timed regions), so a block is an arithmetic
 * sequence of 64-bit words from a hashed key: every word of a block differs,
 * and blocks of another call, rank or position differ from it. */
#include <string.h>

#include "bench.h"

/* An odd multiplier makes word j of a block distinct for every j < 2^64. */
static const uint64_t word_step = 0x9E3779B97F4A7C15ull;

/* splitmix64's finaliser: a bijective mix so that nearby (seed, rank,
 * block) triples give unrelated keys. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

uint64_t pattern_key(uint64_t seed, int source_rank, int block)
{
    return mix64(mix64(seed) ^ ((uint64_t)(uint32_t)source_rank << 32 | (uint32_t)block));
}

static inline uint64_t pattern_word(uint64_t key, size_t word) { return key + word * word_step; }

uint8_t pattern_expected_byte(uint64_t key, size_t offset)
{
    uint64_t word = pattern_word(key, offset / 8);
    uint8_t bytes[8];
    memcpy(bytes, &word, 8);
    return bytes[offset % 8];
}

void pattern_fill_bytes(void *buf, size_t len, uint64_t key)
{
    unsigned char *out = buf;
    size_t words = len / 8;
    for (size_t j = 0; j < words; j++) {
        uint64_t word = pattern_word(key, j);
        memcpy(out + 8 * j, &word, 8);
    }
    if (len % 8) {
        uint64_t word = pattern_word(key, words);
        memcpy(out + 8 * words, &word, len % 8);
    }
}

long pattern_check_bytes(const void *buf, size_t len, uint64_t key)
{
    const unsigned char *in = buf;
    size_t words = len / 8;
    for (size_t j = 0; j < words; j++) {
        uint64_t got;
        memcpy(&got, in + 8 * j, 8);
        if (got != pattern_word(key, j))
            for (size_t k = 8 * j;; k++)
                if (in[k] != pattern_expected_byte(key, k))
                    return (long)k;
    }
    for (size_t k = 8 * words; k < len; k++)
        if (in[k] != pattern_expected_byte(key, k))
            return (long)k;
    return -1;
}

/* 12-bit integers: exact in a float, and so is their sum over <= 4096 ranks. */
static inline uint32_t float_pattern_value(uint64_t key, size_t element)
{
    return (uint32_t)(((uint32_t)key + (uint32_t)element * 2654435761u) >> 20);
}

float pattern_float(uint64_t key, size_t element) { return (float)float_pattern_value(key, element); }

void pattern_fill_floats(float *buf, size_t count, uint64_t key)
{
    for (size_t e = 0; e < count; e++)
        buf[e] = (float)float_pattern_value(key, e);
}

long pattern_check_float_sum(const float *buf, size_t count, const uint64_t *keys, int nkeys, size_t first_element,
                             float *expected)
{
    for (size_t e = 0; e < count; e++) {
        uint32_t sum = 0;
        for (int r = 0; r < nkeys; r++)
            sum += float_pattern_value(keys[r], first_element + e);
        if (buf[e] != (float)sum) {
            *expected = (float)sum;
            return (long)e;
        }
    }
    return -1;
}
