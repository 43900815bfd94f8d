#include "core_types.h"

#include <complex.h>
#include <stdint.h>
#include <string.h>

/* ---- elementwise kernels ------------------------------------------------ */

/* Each kernel is also built for AVX2, chosen at load time where the CPU has
 * it: twice the vector width for blocks in cache. Elementwise, so every
 * element comes out the same either way (no contraction into FMA: see
 * CMakeLists.txt). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) /* both run load-time resolvers before their own start */
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL_CLONES
#endif

#define KERNEL(name, T, expr)                                                 \
    KERNEL_CLONES                                                             \
    static void name(void *out, const void *a_, const void *b_, size_t count) \
    {                                                                         \
        T *o = out;                                                           \
        const T *a = a_, *b = b_;                                             \
        for (size_t i = 0; i < count; i++) {                                  \
            T x = a[i], y = b[i];                                             \
            o[i] = (expr);                                                    \
        }                                                                     \
    }

#define ARITH_KERNELS(sfx, T)              \
    KERNEL(sum_##sfx, T, x + y)            \
    KERNEL(prod_##sfx, T, x *y)            \
    KERNEL(replace_##sfx, T, ((void)x, y)) \
    KERNEL(noop_##sfx, T, ((void)y, x))

/* Integers wrap on overflow, as every MPI's do: the arithmetic runs in the
 * unsigned type of the same width (signed overflow is undefined in C), and
 * converting back is modulo 2^N. */
#define WRAP_KERNELS(sfx, T, U)             \
    KERNEL(sum_##sfx, T, (T)((U)x + (U)y))  \
    KERNEL(prod_##sfx, T, (T)((U)x * (U)y)) \
    KERNEL(replace_##sfx, T, ((void)x, y))  \
    KERNEL(noop_##sfx, T, ((void)y, x))

#define ORDER_KERNELS(sfx, T)           \
    KERNEL(min_##sfx, T, y < x ? y : x) \
    KERNEL(max_##sfx, T, y > x ? y : x)

#define LOGIC_KERNELS(sfx, T)          \
    KERNEL(land_##sfx, T, (T)(x && y)) \
    KERNEL(lor_##sfx, T, (T)(x || y))  \
    KERNEL(lxor_##sfx, T, (T)(!x != !y))

#define BIT_KERNELS(sfx, T)           \
    KERNEL(band_##sfx, T, (T)(x & y)) \
    KERNEL(bor_##sfx, T, (T)(x | y))  \
    KERNEL(bxor_##sfx, T, (T)(x ^ y))

/* U is the type the arithmetic runs in: at least unsigned int, so that
 * narrow types are not promoted back to a signed int before multiplying. */
#define INT_KERNELS(sfx, T, U) WRAP_KERNELS(sfx, T, U) ORDER_KERNELS(sfx, T) LOGIC_KERNELS(sfx, T) BIT_KERNELS(sfx, T)

INT_KERNELS(i8, int8_t, unsigned)
INT_KERNELS(i16, int16_t, unsigned)
INT_KERNELS(i32, int32_t, uint32_t)
INT_KERNELS(i64, int64_t, uint64_t)
INT_KERNELS(u8, uint8_t, unsigned)
INT_KERNELS(u16, uint16_t, unsigned)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(u64, uint64_t, uint64_t)
ARITH_KERNELS(f, float)
ORDER_KERNELS(f, float)
ARITH_KERNELS(d, double)
ORDER_KERNELS(d, double)
ARITH_KERNELS(ld, long double)
ORDER_KERNELS(ld, long double)
ARITH_KERNELS(cf, float _Complex)
ARITH_KERNELS(cd, double _Complex)
ARITH_KERNELS(cld, long double _Complex)
LOGIC_KERNELS(b, uint8_t)
KERNEL(replace_b, uint8_t, ((void)x, y))
KERNEL(noop_b, uint8_t, ((void)y, x))

/* ---- pairs: packed {V value; I index} ------------------------------------ */

/* MINLOC keeps the smaller value; MAXLOC the larger; on a tie, the smaller
 * index (MPI 5.9.4). */
#define PAIR_KERNELS(sfx, V, I)                                                                                  \
    typedef struct {                                                                                             \
        V v;                                                                                                     \
        I i;                                                                                                     \
    } pair_struct_##sfx;                                                                                         \
    enum { PACKED_##sfx = sizeof(V) + sizeof(I) };                                                               \
    static void pair_loc_##sfx(void *out, const void *a_, const void *b_, size_t count, int want_max)            \
    {                                                                                                            \
        unsigned char *o = out;                                                                                  \
        const unsigned char *a = a_, *b = b_;                                                                    \
        for (size_t k = 0; k < count; k++, o += PACKED_##sfx, a += PACKED_##sfx, b += PACKED_##sfx) {            \
            V av, bv;                                                                                            \
            I ai, bi;                                                                                            \
            memcpy(&av, a, sizeof av);                                                                           \
            memcpy(&ai, a + sizeof(V), sizeof ai);                                                               \
            memcpy(&bv, b, sizeof bv);                                                                           \
            memcpy(&bi, b + sizeof(V), sizeof bi);                                                               \
            int take_b = want_max ? (bv > av) : (bv < av);                                                       \
            if (!take_b && bv == av && bi < ai)                                                                  \
                take_b = 1;                                                                                      \
            V rv = take_b ? bv : av;                                                                             \
            I ri = take_b ? bi : ai;                                                                             \
            memcpy(o, &rv, sizeof rv);                                                                           \
            memcpy(o + sizeof(V), &ri, sizeof ri);                                                               \
        }                                                                                                        \
    }                                                                                                            \
    static void minloc_##sfx(void *o, const void *a, const void *b, size_t n) { pair_loc_##sfx(o, a, b, n, 0); } \
    static void maxloc_##sfx(void *o, const void *a, const void *b, size_t n) { pair_loc_##sfx(o, a, b, n, 1); } \
    static void replace_##sfx(void *o, const void *a, const void *b, size_t n)                                   \
    {                                                                                                            \
        (void)a;                                                                                                 \
        memmove(o, b, n *PACKED_##sfx);                                                                          \
    }                                                                                                            \
    static void noop_##sfx(void *o, const void *a, const void *b, size_t n)                                      \
    {                                                                                                            \
        (void)b;                                                                                                 \
        memmove(o, a, n *PACKED_##sfx);                                                                          \
    }                                                                                                            \
    static void pack_##sfx(void *packed, const void *structs, size_t n)                                          \
    {                                                                                                            \
        const pair_struct_##sfx *s = structs;                                                                    \
        unsigned char *p = packed;                                                                               \
        for (size_t k = 0; k < n; k++, p += PACKED_##sfx) {                                                      \
            memcpy(p, &s[k].v, sizeof(V));                                                                       \
            memcpy(p + sizeof(V), &s[k].i, sizeof(I));                                                           \
        }                                                                                                        \
    }                                                                                                            \
    static void unpack_##sfx(void *structs, const void *packed, size_t n)                                        \
    {                                                                                                            \
        pair_struct_##sfx *s = structs;                                                                          \
        const unsigned char *p = packed;                                                                         \
        for (size_t k = 0; k < n; k++, p += PACKED_##sfx) {                                                      \
            memcpy(&s[k].v, p, sizeof(V));                                                                       \
            memcpy(&s[k].i, p + sizeof(V), sizeof(I));                                                           \
        }                                                                                                        \
    }

PAIR_KERNELS(fi, float, int)
PAIR_KERNELS(di, double, int)
PAIR_KERNELS(li, long, int)
PAIR_KERNELS(ii, int, int)
PAIR_KERNELS(si, short, int)
PAIR_KERNELS(ldi, long double, int)
PAIR_KERNELS(ff, float, float)
PAIR_KERNELS(dd, double, double)

/* ---- tables --------------------------------------------------------------- */

typedef struct {
    const char *name;
    size_t size;        /* shoal layout */
    size_t struct_size; /* C struct, pairs only */
    void (*pack)(void *, const void *, size_t);
    void (*unpack)(void *, const void *, size_t);
    core_reduce_fn ops[CORE_OP_COUNT];
} type_info;

#define INT_OPS(sfx)                                                                                                  \
    {                                                                                                                 \
        [CORE_OP_SUM] = sum_##sfx, [CORE_OP_PROD] = prod_##sfx, [CORE_OP_MIN] = min_##sfx, [CORE_OP_MAX] = max_##sfx, \
        [CORE_OP_LAND] = land_##sfx, [CORE_OP_LOR] = lor_##sfx, [CORE_OP_LXOR] = lxor_##sfx,                          \
        [CORE_OP_BAND] = band_##sfx, [CORE_OP_BOR] = bor_##sfx, [CORE_OP_BXOR] = bxor_##sfx,                          \
        [CORE_OP_REPLACE] = replace_##sfx, [CORE_OP_NO_OP] = noop_##sfx                                               \
    }
#define FLOAT_OPS(sfx)                                                                                                \
    {                                                                                                                 \
        [CORE_OP_SUM] = sum_##sfx, [CORE_OP_PROD] = prod_##sfx, [CORE_OP_MIN] = min_##sfx, [CORE_OP_MAX] = max_##sfx, \
        [CORE_OP_REPLACE] = replace_##sfx, [CORE_OP_NO_OP] = noop_##sfx                                               \
    }
#define COMPLEX_OPS(sfx)                                                                           \
    {                                                                                              \
        [CORE_OP_SUM] = sum_##sfx, [CORE_OP_PROD] = prod_##sfx, [CORE_OP_REPLACE] = replace_##sfx, \
        [CORE_OP_NO_OP] = noop_##sfx                                                               \
    }
#define PAIR_INFO(name, sfx)                                                                                     \
    {                                                                                                            \
        name, PACKED_##sfx, sizeof(pair_struct_##sfx), pack_##sfx, unpack_##sfx,                                 \
        {                                                                                                        \
            [CORE_OP_MINLOC] = minloc_##sfx, [CORE_OP_MAXLOC] = maxloc_##sfx, [CORE_OP_REPLACE] = replace_##sfx, \
            [CORE_OP_NO_OP] = noop_##sfx                                                                         \
        }                                                                                                        \
    }

static const type_info types[CORE_TYPE_COUNT] = {
    [CORE_INT8] = {"int8", 1, 0, NULL, NULL, INT_OPS(i8)},
    [CORE_INT16] = {"int16", 2, 0, NULL, NULL, INT_OPS(i16)},
    [CORE_INT32] = {"int32", 4, 0, NULL, NULL, INT_OPS(i32)},
    [CORE_INT64] = {"int64", 8, 0, NULL, NULL, INT_OPS(i64)},
    [CORE_UINT8] = {"uint8", 1, 0, NULL, NULL, INT_OPS(u8)},
    [CORE_UINT16] = {"uint16", 2, 0, NULL, NULL, INT_OPS(u16)},
    [CORE_UINT32] = {"uint32", 4, 0, NULL, NULL, INT_OPS(u32)},
    [CORE_UINT64] = {"uint64", 8, 0, NULL, NULL, INT_OPS(u64)},
    [CORE_FLOAT] = {"float", sizeof(float), 0, NULL, NULL, FLOAT_OPS(f)},
    [CORE_DOUBLE] = {"double", sizeof(double), 0, NULL, NULL, FLOAT_OPS(d)},
    [CORE_LONG_DOUBLE] = {"long double", sizeof(long double), 0, NULL, NULL, FLOAT_OPS(ld)},
    [CORE_BOOL] = {"bool",
                   1,
                   0,
                   NULL,
                   NULL,
                   {[CORE_OP_LAND] = land_b,
                    [CORE_OP_LOR] = lor_b,
                    [CORE_OP_LXOR] = lxor_b,
                    [CORE_OP_REPLACE] = replace_b,
                    [CORE_OP_NO_OP] = noop_b}},
    [CORE_FLOAT_COMPLEX] = {"float complex", sizeof(float _Complex), 0, NULL, NULL, COMPLEX_OPS(cf)},
    [CORE_DOUBLE_COMPLEX] = {"double complex", sizeof(double _Complex), 0, NULL, NULL, COMPLEX_OPS(cd)},
    [CORE_LONG_DOUBLE_COMPLEX] = {"long double complex", sizeof(long double _Complex), 0, NULL, NULL, COMPLEX_OPS(cld)},
    [CORE_FLOAT_INT] = PAIR_INFO("float-int", fi),
    [CORE_DOUBLE_INT] = PAIR_INFO("double-int", di),
    [CORE_LONG_INT] = PAIR_INFO("long-int", li),
    [CORE_INT_INT] = PAIR_INFO("int-int", ii),
    [CORE_SHORT_INT] = PAIR_INFO("short-int", si),
    [CORE_LONG_DOUBLE_INT] = PAIR_INFO("long-double-int", ldi),
    [CORE_FLOAT_FLOAT] = PAIR_INFO("float-float", ff),
    [CORE_DOUBLE_DOUBLE] = PAIR_INFO("double-double", dd),
};

static const char *const op_names[CORE_OP_COUNT] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc", "replace", "no_op",
};

core_reduce_fn core_reduce_kernel(core_type type, core_op op)
{
    if ((unsigned)type >= CORE_TYPE_COUNT || (unsigned)op >= CORE_OP_COUNT)
        return NULL;
    return types[type].ops[op];
}

size_t core_type_size(core_type type) { return types[type].size; }
const char *core_type_name(core_type type) { return types[type].name; }
const char *core_op_name(core_op op) { return (unsigned)op < CORE_OP_COUNT ? op_names[op] : "?"; }
bool core_type_is_pair(core_type type) { return types[type].pack != NULL; }

bool core_type_is_floating(core_type type)
{
    switch (type) {
    case CORE_FLOAT:
    case CORE_DOUBLE:
    case CORE_LONG_DOUBLE:
    case CORE_FLOAT_COMPLEX:
    case CORE_DOUBLE_COMPLEX:
    case CORE_LONG_DOUBLE_COMPLEX:
    case CORE_FLOAT_INT:
    case CORE_DOUBLE_INT:
    case CORE_LONG_DOUBLE_INT:
    case CORE_FLOAT_FLOAT:
    case CORE_DOUBLE_DOUBLE: return true;
    default: return false;
    }
}
size_t core_pair_struct_size(core_type type) { return types[type].struct_size; }

void core_pair_pack(core_type type, void *packed, const void *structs, size_t count)
{
    types[type].pack(packed, structs, count);
}

void core_pair_unpack(core_type type, void *structs, const void *packed, size_t count)
{
    types[type].unpack(structs, packed, count);
}
