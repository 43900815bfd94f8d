/* Every reduction kernel against an independent scalar reference, with the
 * output separate from, equal to a, and equal to b; pair packing. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "unit.h"

#define N 1037 /* odd, longer than any vector width */

static uint64_t state = 12345;
static uint64_t next(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 17;
}

/* One element of a C scalar type as the reference sees it. */
typedef struct val {
    int64_t i;
    uint64_t u;
    long double f;
    long double im;
} val;

static bool is_int(core_type t) { return t <= CORE_UINT64 || t == CORE_BOOL; }
static bool is_unsigned(core_type t) { return (t >= CORE_UINT8 && t <= CORE_UINT64) || t == CORE_BOOL; }

static val load(core_type t, const char *p)
{
    val v = {0};
    switch (t) {
    case CORE_INT8: v.i = *(const int8_t *)p; break;
    case CORE_INT16: v.i = *(const int16_t *)p; break;
    case CORE_INT32: v.i = *(const int32_t *)p; break;
    case CORE_INT64: v.i = *(const int64_t *)p; break;
    case CORE_UINT8:
    case CORE_BOOL: v.u = *(const uint8_t *)p; break;
    case CORE_UINT16: v.u = *(const uint16_t *)p; break;
    case CORE_UINT32: v.u = *(const uint32_t *)p; break;
    case CORE_UINT64: v.u = *(const uint64_t *)p; break;
    case CORE_FLOAT: v.f = *(const float *)p; break;
    case CORE_DOUBLE: v.f = *(const double *)p; break;
    case CORE_LONG_DOUBLE: v.f = *(const long double *)p; break;
    case CORE_FLOAT_COMPLEX: v.f = ((const float *)p)[0], v.im = ((const float *)p)[1]; break;
    case CORE_DOUBLE_COMPLEX: v.f = ((const double *)p)[0], v.im = ((const double *)p)[1]; break;
    case CORE_LONG_DOUBLE_COMPLEX: v.f = ((const long double *)p)[0], v.im = ((const long double *)p)[1]; break;
    default: break;
    }
    if (is_unsigned(t))
        v.i = (int64_t)v.u;
    else
        v.u = (uint64_t)v.i;
    return v;
}

/* x op y for scalar types, computed in the type's own arithmetic. */
static void reference(core_type t, core_op op, const char *a, const char *b, char *out)
{
    val x = load(t, a), y = load(t, b);
    size_t sz = core_type_size(t);
    if (op == CORE_OP_REPLACE) {
        memcpy(out, b, sz);
        return;
    }
    if (op == CORE_OP_NO_OP) {
        memcpy(out, a, sz);
        return;
    }
    if (is_int(t)) {
        uint64_t r = 0;
        bool lx = is_unsigned(t) ? x.u != 0 : x.i != 0, ly = is_unsigned(t) ? y.u != 0 : y.i != 0;
        bool less = is_unsigned(t) ? y.u < x.u : y.i < x.i, more = is_unsigned(t) ? y.u > x.u : y.i > x.i;
        switch (op) {
        case CORE_OP_SUM: r = x.u + y.u; break;
        case CORE_OP_PROD: r = x.u * y.u; break;
        case CORE_OP_MIN: r = less ? y.u : x.u; break;
        case CORE_OP_MAX: r = more ? y.u : x.u; break;
        case CORE_OP_LAND: r = lx && ly; break;
        case CORE_OP_LOR: r = lx || ly; break;
        case CORE_OP_LXOR: r = lx != ly; break;
        case CORE_OP_BAND: r = x.u & y.u; break;
        case CORE_OP_BOR: r = x.u | y.u; break;
        case CORE_OP_BXOR: r = x.u ^ y.u; break;
        default: break;
        }
        memcpy(out, &r, sz); /* little-endian truncation */
        return;
    }
    if (t == CORE_FLOAT) {
        float p = (float)x.f, q = (float)y.f,
              r = op == CORE_OP_SUM    ? p + q
                  : op == CORE_OP_PROD ? p * q
                  : op == CORE_OP_MIN  ? (q < p ? q : p)
                                       : (q > p ? q : p);
        memcpy(out, &r, sizeof r);
    } else if (t == CORE_DOUBLE) {
        double p = (double)x.f, q = (double)y.f,
               r = op == CORE_OP_SUM    ? p + q
                   : op == CORE_OP_PROD ? p * q
                   : op == CORE_OP_MIN  ? (q < p ? q : p)
                                        : (q > p ? q : p);
        memcpy(out, &r, sizeof r);
    } else if (t == CORE_LONG_DOUBLE) {
        long double p = x.f, q = y.f,
                    r = op == CORE_OP_SUM    ? p + q
                        : op == CORE_OP_PROD ? p * q
                        : op == CORE_OP_MIN  ? (q < p ? q : p)
                                             : (q > p ? q : p);
        memset(out, 0, sz);
        memcpy(out, &r, 10);
    } else if (t == CORE_FLOAT_COMPLEX) {
        float _Complex p = (float)x.f + (float)x.im * I, q = (float)y.f + (float)y.im * I;
        float _Complex r = op == CORE_OP_SUM ? p + q : p * q;
        memcpy(out, &r, sizeof r);
    } else if (t == CORE_DOUBLE_COMPLEX) {
        double _Complex p = (double)x.f + (double)x.im * I, q = (double)y.f + (double)y.im * I;
        double _Complex r = op == CORE_OP_SUM ? p + q : p * q;
        memcpy(out, &r, sizeof r);
    } else {
        long double _Complex p = x.f + x.im * I, q = y.f + y.im * I;
        long double _Complex r = op == CORE_OP_SUM ? p + q : p * q;
        long double parts[2] = {creall(r), cimagl(r)};
        memcpy(out, parts, sizeof parts);
    }
}

/* Same value: bytes for integers, value for floats (long double padding is
 * not data). */
static bool same(core_type t, const char *a, const char *b)
{
    if (is_int(t))
        return !memcmp(a, b, core_type_size(t));
    val x = load(t, a), y = load(t, b);
    return (x.f == y.f || (x.f != x.f && y.f != y.f)) && (x.im == y.im || (x.im != x.im && y.im != y.im));
}

static void fill(core_type t, core_op op, char *buf, size_t n)
{
    size_t sz = core_type_size(t);
    for (size_t k = 0; k < n; k++) {
        char *p = buf + k * sz;
        uint64_t r = next();
        if (is_int(t)) {
            /* Mix zeros and small values with arbitrary bits. */
            uint64_t v = r % 4 == 0 ? 0 : r % 4 == 1 ? r % 7 : r;
            if (t == CORE_BOOL)
                v &= 1;
            memcpy(p, &v, sz);
        } else {
            long double re = (long double)((int64_t)(r % 2001) - 1000) / 8, im = (long double)(r % 97) / 4;
            if (op == CORE_OP_MIN || op == CORE_OP_MAX)
                re = (long double)(r % 5); /* ties */
            memset(p, 0, sz);
            if (t == CORE_FLOAT || t == CORE_FLOAT_COMPLEX) {
                float v[2] = {(float)re, (float)im};
                memcpy(p, v, t == CORE_FLOAT ? 4 : 8);
            } else if (t == CORE_DOUBLE || t == CORE_DOUBLE_COMPLEX) {
                double v[2] = {(double)re, (double)im};
                memcpy(p, v, t == CORE_DOUBLE ? 8 : 16);
            } else if (t == CORE_LONG_DOUBLE) {
                memcpy(p, &re, 10);
            } else {
                long double v[2] = {re, im};
                memcpy(p, v, sizeof v);
            }
        }
    }
}

static void test_scalars(void)
{
    int kernels = 0;
    for (int t = 0; t < CORE_TYPE_COUNT; t++) {
        if (core_type_is_pair(t))
            continue;
        size_t sz = core_type_size(t);
        char *a = malloc(N * sz), *b = malloc(N * sz), *out = malloc(N * sz), *ref = malloc(N * sz);
        char *alias = malloc(N * sz);
        for (int op = 0; op < CORE_OP_COUNT; op++) {
            core_reduce_fn fn = core_reduce_kernel(t, op);
            if (!fn)
                continue;
            kernels++;
            fill(t, op, a, N);
            fill(t, op, b, N);
            for (size_t k = 0; k < N; k++)
                reference(t, op, a + k * sz, b + k * sz, ref + k * sz);
            fn(out, a, b, N);
            size_t bad = N;
            for (size_t k = 0; k < N && bad == N; k++)
                if (!same(t, out + k * sz, ref + k * sz))
                    bad = k;
            CHECK(bad == N, "%s %s: element %zu differs", core_type_name(t), core_op_name(op), bad);
            /* out may be a or b itself */
            memcpy(alias, a, N * sz);
            fn(alias, alias, b, N);
            CHECK(!memcmp(alias, out, N * sz) || !is_int(t), "%s %s: out == a gives another result", core_type_name(t),
                  core_op_name(op));
            memcpy(alias, b, N * sz);
            fn(alias, a, alias, N);
            CHECK(!memcmp(alias, out, N * sz) || !is_int(t), "%s %s: out == b gives another result", core_type_name(t),
                  core_op_name(op));
            fn(out, a, b, 0); /* count 0 touches nothing */
        }
        free(a), free(b), free(out), free(ref), free(alias);
    }
    CHECK(kernels > 100, "only %d scalar kernels", kernels);
    /* Combinations MPI does not define stay undefined. */
    CHECK(core_reduce_kernel(CORE_FLOAT, CORE_OP_BAND) == NULL, "bitwise and on float");
    CHECK(core_reduce_kernel(CORE_DOUBLE_COMPLEX, CORE_OP_MAX) == NULL, "max on complex");
    CHECK(core_reduce_kernel(CORE_INT32, CORE_OP_MINLOC) == NULL, "minloc on a scalar");
    CHECK(core_reduce_kernel(CORE_DOUBLE_INT, CORE_OP_SUM) == NULL, "sum on a pair");
}

static void test_pairs(void)
{
    /* double-int: the C struct has 4 bytes of padding; packed has none. */
    typedef struct {
        double v;
        int i;
    } di;
    CHECK(core_type_size(CORE_DOUBLE_INT) == 12, "packed double-int is %zu bytes", core_type_size(CORE_DOUBLE_INT));
    CHECK(core_pair_struct_size(CORE_DOUBLE_INT) == sizeof(di), "struct size");
    di a[6] = {{1, 5}, {2, 0}, {3, 9}, {-1, 4}, {7, 7}, {7, 2}};
    di b[6] = {{1, 3}, {1, 8}, {3, 9}, {-2, 6}, {7, 1}, {8, 9}};
    char pa[72], pb[72], po[72];
    core_pair_pack(CORE_DOUBLE_INT, pa, a, 6);
    core_pair_pack(CORE_DOUBLE_INT, pb, b, 6);
    core_reduce_kernel(CORE_DOUBLE_INT, CORE_OP_MINLOC)(po, pa, pb, 6);
    di out[6];
    memset(out, 0x77, sizeof out);
    core_pair_unpack(CORE_DOUBLE_INT, out, po, 6);
    /* ties take the smaller index */
    const di want_min[6] = {{1, 3}, {1, 8}, {3, 9}, {-2, 6}, {7, 1}, {7, 2}};
    for (int k = 0; k < 6; k++)
        CHECK(out[k].v == want_min[k].v && out[k].i == want_min[k].i, "minloc %d: (%g,%d)", k, out[k].v, out[k].i);
    unsigned char pad[4];
    memcpy(pad, (char *)&out[0] + 12, 4);
    CHECK(pad[0] == 0x77 && pad[3] == 0x77, "unpack wrote into the struct's padding");
    core_reduce_kernel(CORE_DOUBLE_INT, CORE_OP_MAXLOC)(po, pa, pb, 6);
    core_pair_unpack(CORE_DOUBLE_INT, out, po, 6);
    const di want_max[6] = {{1, 3}, {2, 0}, {3, 9}, {-1, 4}, {7, 1}, {8, 9}};
    for (int k = 0; k < 6; k++)
        CHECK(out[k].v == want_max[k].v && out[k].i == want_max[k].i, "maxloc %d: (%g,%d)", k, out[k].v, out[k].i);

    /* Every pair type round-trips through packing. */
    for (int t = CORE_FLOAT_INT; t <= CORE_DOUBLE_DOUBLE; t++) {
        size_t ss = core_pair_struct_size(t), ps = core_type_size(t);
        char s1[8 * 32], s2[8 * 32], p[8 * 32];
        for (size_t k = 0; k < sizeof s1; k++)
            s1[k] = (char)next();
        memcpy(s2, s1, sizeof s1);
        core_pair_pack(t, p, s1, 8);
        memset(s2, 0, sizeof s2);
        core_pair_unpack(t, s2, p, 8);
        core_pair_pack(t, p + 0, s2, 8);
        char p2[8 * 32];
        core_pair_pack(t, p2, s1, 8);
        CHECK(!memcmp(p, p2, 8 * ps), "%s: pack/unpack does not round-trip", core_type_name(t));
        CHECK(ps <= ss, "%s: packed larger than the struct", core_type_name(t));
    }
}

int main(void)
{
    test_scalars();
    test_pairs();
    return unit_done("test_kernels");
}
