/* sim_rng: a small, fast, seedable random number generator (xoshiro256**
 * seeded through splitmix64), so every random choice of the simulator is
 * reproducible from the `seed` parameter on any platform.
 * Owns: sim_rng. May call: nothing. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} sim_rng;

static inline uint64_t sim_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = sim_splitmix64(&x);
}

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1). */
static inline double sim_rng_uniform(sim_rng *r) { return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in [0, n), n > 0 (Lemire's multiply; the tiny bias is irrelevant here). */
static inline uint32_t sim_rng_below(sim_rng *r, uint32_t n)
{
    return (uint32_t)(((sim_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

#endif
