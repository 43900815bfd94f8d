/* MPI datatypes and operations as shoal sees them. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "shim_types.h"

/* Operations allowed per datatype category (MPI 3.1, 5.9.2). */
#define OPS(...) (op_bits((const core_op[]){__VA_ARGS__, CORE_OP_COUNT}))
static unsigned op_bits(const core_op *ops)
{
    unsigned bits = 0;
    for (; *ops != CORE_OP_COUNT; ops++)
        bits |= 1u << *ops;
    return bits;
}

typedef struct predefined {
    MPI_Datatype type;
    core_type ctype; /* CORE_TYPE_COUNT: moved as bytes, never reduced */
    unsigned ops;    /* allowed operations */
    shim_layout layout;
} predefined;

#define TABLE_SLOTS 256 /* open addressing over the handle value */
static predefined table[TABLE_SLOTS];
static bool table_used[TABLE_SLOTS];

static size_t slot_of(MPI_Datatype type)
{
    uint64_t h = (uint64_t)(uintptr_t)type;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 56) % TABLE_SLOTS;
}

/* The entry found last by this thread: a program's calls mostly name one
 * type, and each call looks it up once or twice. Entries are written at
 * start-up and never change, so the check is the type itself. */
static CORE_THREAD_LOCAL const predefined *last_found;

static const predefined *lookup(MPI_Datatype type)
{
    const predefined *last = last_found;
    if (last && last->type == type)
        return last;
    for (size_t i = slot_of(type), probes = 0; probes < TABLE_SLOTS; i = (i + 1) % TABLE_SLOTS, probes++) {
        if (!table_used[i])
            return NULL;
        if (table[i].type == type)
            return last_found = &table[i];
    }
    return NULL;
}

static bool query_layout(MPI_Datatype type, shim_layout *out)
{
    MPI_Count size;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || size < 0)
        return false;
    out->size = (size_t)size;
    out->extent = extent;
    out->lb = true_lb;
    out->dense = (MPI_Aint)size == true_extent && extent == (MPI_Aint)size;
    return true;
}

static core_type int_type(size_t size, bool is_signed)
{
    switch (size) {
    case 1: return is_signed ? CORE_INT8 : CORE_UINT8;
    case 2: return is_signed ? CORE_INT16 : CORE_UINT16;
    case 4: return is_signed ? CORE_INT32 : CORE_UINT32;
    case 8: return is_signed ? CORE_INT64 : CORE_UINT64;
    default: return CORE_TYPE_COUNT;
    }
}

static void add(MPI_Datatype type, core_type ctype, unsigned ops)
{
    if (type == MPI_DATATYPE_NULL || lookup(type))
        return;
    shim_layout layout;
    if (!query_layout(type, &layout))
        return; /* a type this MPI does not provide */
    if (ctype != CORE_TYPE_COUNT) {
        size_t want = core_type_is_pair(ctype) ? core_pair_struct_size(ctype) : core_type_size(ctype);
        /* Reduce only when MPI's element is exactly the C object we compute on. */
        if ((size_t)layout.extent != want || layout.lb != 0 || (!core_type_is_pair(ctype) && layout.size != want))
            ctype = CORE_TYPE_COUNT;
    }
    size_t i = slot_of(type);
    while (table_used[i])
        i = (i + 1) % TABLE_SLOTS;
    table_used[i] = true;
    table[i] = (predefined){type, ctype, ctype == CORE_TYPE_COUNT ? 0 : ops, layout};
}

static void add_int(MPI_Datatype type, bool is_signed, unsigned ops)
{
    MPI_Count size = 0;
    if (type != MPI_DATATYPE_NULL && PMPI_Type_size_x(type, &size) == MPI_SUCCESS)
        add(type, int_type((size_t)size, is_signed), ops);
}

static void add_float(MPI_Datatype type, unsigned ops, bool is_complex)
{
    MPI_Count size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return;
    core_type ct = CORE_TYPE_COUNT;
    if (!is_complex)
        ct = size == sizeof(float) ? CORE_FLOAT : size == sizeof(double) ? CORE_DOUBLE : CORE_TYPE_COUNT;
    else
        ct = size == sizeof(float _Complex)    ? CORE_FLOAT_COMPLEX
             : size == sizeof(double _Complex) ? CORE_DOUBLE_COMPLEX
                                               : CORE_TYPE_COUNT;
    add(type, ct, ops);
}

void shim_types_init(void)
{
    /* Some handles (Fortran kinds) may be absent from this MPI: ask with
     * errors returned instead of fatal, then restore the handlers. */
    MPI_Errhandler world_eh, self_eh;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &self_eh);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    unsigned c_int = OPS(CORE_OP_SUM, CORE_OP_PROD, CORE_OP_MIN, CORE_OP_MAX, CORE_OP_LAND, CORE_OP_LOR, CORE_OP_LXOR,
                         CORE_OP_BAND, CORE_OP_BOR, CORE_OP_BXOR);
    unsigned f_int = OPS(CORE_OP_SUM, CORE_OP_PROD, CORE_OP_MIN, CORE_OP_MAX, CORE_OP_BAND, CORE_OP_BOR, CORE_OP_BXOR);
    unsigned floating = OPS(CORE_OP_SUM, CORE_OP_PROD, CORE_OP_MIN, CORE_OP_MAX);
    unsigned complex_ops = OPS(CORE_OP_SUM, CORE_OP_PROD);
    unsigned logical = OPS(CORE_OP_LAND, CORE_OP_LOR, CORE_OP_LXOR);
    unsigned byte = OPS(CORE_OP_BAND, CORE_OP_BOR, CORE_OP_BXOR);
    unsigned pair = OPS(CORE_OP_MINLOC, CORE_OP_MAXLOC);
    /* Host MPIs disagree on the sign of the multi-language types in MIN/MAX
     * (Open MPI 4.1 compares MPI_OFFSET as unsigned): shoal keeps the ops
     * whose result does not depend on it and leaves MIN/MAX to the host. */
    unsigned multi_language = OPS(CORE_OP_SUM, CORE_OP_PROD, CORE_OP_BAND, CORE_OP_BOR, CORE_OP_BXOR);

    /* Most used first: they take the first probe of the hash. */
    add_float(MPI_DOUBLE, floating, false);
    add_int(MPI_INT, true, c_int);
    add_float(MPI_FLOAT, floating, false);
    add_int(MPI_LONG, true, c_int);
    add_int(MPI_UNSIGNED, false, c_int);
    add_int(MPI_UNSIGNED_LONG, false, c_int);
    add_int(MPI_LONG_LONG, true, c_int);
    add_int(MPI_LONG_LONG_INT, true, c_int);
    add_int(MPI_UNSIGNED_LONG_LONG, false, c_int);
    add_int(MPI_SHORT, true, c_int);
    add_int(MPI_UNSIGNED_SHORT, false, c_int);
    add_int(MPI_SIGNED_CHAR, true, c_int);
    add_int(MPI_UNSIGNED_CHAR, false, c_int);
    /* MPI lists MPI_CHAR among no operation's types, but Open MPI and MPICH
     * both reduce it with every C integer operation as the platform's char
     * (signed on x86: MIN and MAX compare signed), and the OSU benchmarks
     * reduce MPI_CHAR by default: shoal does as the hosts do. */
    add_int(MPI_CHAR, CHAR_MIN < 0, c_int);
    add_int(MPI_INT8_T, true, c_int);
    add_int(MPI_INT16_T, true, c_int);
    add_int(MPI_INT32_T, true, c_int);
    add_int(MPI_INT64_T, true, c_int);
    add_int(MPI_UINT8_T, false, c_int);
    add_int(MPI_UINT16_T, false, c_int);
    add_int(MPI_UINT32_T, false, c_int);
    add_int(MPI_UINT64_T, false, c_int);
    add_int(MPI_AINT, true, multi_language);
    add_int(MPI_OFFSET, true, multi_language);
    add_int(MPI_COUNT, true, multi_language);
    add_int(MPI_INTEGER, true, f_int);
    add_int(MPI_INTEGER1, true, f_int);
    add_int(MPI_INTEGER2, true, f_int);
    add_int(MPI_INTEGER4, true, f_int);
    add_int(MPI_INTEGER8, true, f_int);
    add(MPI_LONG_DOUBLE, CORE_LONG_DOUBLE, floating);
    add_float(MPI_REAL, floating, false);
    add_float(MPI_DOUBLE_PRECISION, floating, false);
    add_float(MPI_REAL4, floating, false);
    add_float(MPI_REAL8, floating, false);
    add_float(MPI_C_FLOAT_COMPLEX, complex_ops, true);
    add_float(MPI_C_COMPLEX, complex_ops, true);
    add_float(MPI_C_DOUBLE_COMPLEX, complex_ops, true);
    add(MPI_C_LONG_DOUBLE_COMPLEX, CORE_LONG_DOUBLE_COMPLEX, complex_ops);
    add_float(MPI_COMPLEX, complex_ops, true);
    add_float(MPI_DOUBLE_COMPLEX, complex_ops, true);
    add(MPI_C_BOOL, sizeof(_Bool) == 1 ? CORE_BOOL : CORE_TYPE_COUNT, logical);
    add(MPI_BYTE, CORE_UINT8, byte);
    add(MPI_FLOAT_INT, CORE_FLOAT_INT, pair);
    add(MPI_DOUBLE_INT, CORE_DOUBLE_INT, pair);
    add(MPI_LONG_INT, CORE_LONG_INT, pair);
    add(MPI_2INT, CORE_INT_INT, pair);
    add(MPI_SHORT_INT, CORE_SHORT_INT, pair);
    add(MPI_LONG_DOUBLE_INT, CORE_LONG_DOUBLE_INT, pair);
    add(MPI_2REAL, sizeof(float) == 4 ? CORE_FLOAT_FLOAT : CORE_TYPE_COUNT, pair);
    add(MPI_2DOUBLE_PRECISION, CORE_DOUBLE_DOUBLE, pair);
    add(MPI_2INTEGER, CORE_INT_INT, pair);
    /* Moved but never reduced by shoal. */
    add(MPI_WCHAR, CORE_TYPE_COUNT, 0);
    add(MPI_PACKED, CORE_TYPE_COUNT, 0);
    add(MPI_CHARACTER, CORE_TYPE_COUNT, 0);
    add(MPI_LOGICAL, CORE_TYPE_COUNT, 0);

    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh);
    PMPI_Errhandler_free(&world_eh);
    PMPI_Errhandler_free(&self_eh);
}

bool shim_layout_of(MPI_Datatype type, shim_layout *out)
{
    if (type == MPI_DATATYPE_NULL)
        return false;
    const predefined *p = lookup(type);
    if (p) {
        *out = p->layout;
        return true;
    }
    return query_layout(type, out);
}

static bool core_op_of(MPI_Op op, core_op *out)
{
    /* static: built once, not on every reduction (sum, the usual op, first) */
    static const MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    static const core_op cops[] = {CORE_OP_SUM,  CORE_OP_PROD, CORE_OP_MIN,    CORE_OP_MAX,
                                   CORE_OP_LAND, CORE_OP_LOR,  CORE_OP_LXOR,   CORE_OP_BAND,
                                   CORE_OP_BOR,  CORE_OP_BXOR, CORE_OP_MINLOC, CORE_OP_MAXLOC};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i] == op) {
            *out = cops[i];
            return true;
        }
    return false;
}

bool shim_reduction_of(MPI_Datatype type, MPI_Op op, core_type *ctype, core_op *cop)
{
    const predefined *p = lookup(type);
    if (!p || p->ctype == CORE_TYPE_COUNT || !core_op_of(op, cop) || !(p->ops & (1u << *cop)))
        return false;
    *ctype = p->ctype;
    return core_reduce_kernel(*ctype, *cop) != NULL;
}
