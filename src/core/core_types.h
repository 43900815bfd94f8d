/* core_types: element types and reduction kernels, independent of MPI.
 *
 * A kernel computes out[i] = a[i] op b[i] for i < count. out may be the same
 * buffer as a or b (never a partial overlap). Every collective reduces in
 * rank order, ((x0 op x1) op x2) ..., so a result depends only on the inputs,
 * never on timing.
 *
 * Pair types (for MINLOC/MAXLOC) are handled in a packed layout, the value
 * followed directly by the index, because some C structs behind MPI's pair
 * types have padding that must never be written into a user's buffer;
 * core_pair_pack/unpack convert from and to the C struct layout. */
#ifndef SHOAL_CORE_TYPES_H
#define SHOAL_CORE_TYPES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    CORE_INT8,
    CORE_INT16,
    CORE_INT32,
    CORE_INT64,
    CORE_UINT8,
    CORE_UINT16,
    CORE_UINT32,
    CORE_UINT64,
    CORE_FLOAT,
    CORE_DOUBLE,
    CORE_LONG_DOUBLE,
    CORE_BOOL, /* one byte, logical ops only */
    CORE_FLOAT_COMPLEX,
    CORE_DOUBLE_COMPLEX,
    CORE_LONG_DOUBLE_COMPLEX,
    /* pairs: value, then a C int index (or a value of the same type) */
    CORE_FLOAT_INT,
    CORE_DOUBLE_INT,
    CORE_LONG_INT,
    CORE_INT_INT,
    CORE_SHORT_INT,
    CORE_LONG_DOUBLE_INT,
    CORE_FLOAT_FLOAT,
    CORE_DOUBLE_DOUBLE,
    CORE_TYPE_COUNT
} core_type;

typedef enum {
    CORE_OP_SUM,
    CORE_OP_PROD,
    CORE_OP_MIN,
    CORE_OP_MAX,
    CORE_OP_LAND,
    CORE_OP_LOR,
    CORE_OP_LXOR,
    CORE_OP_BAND,
    CORE_OP_BOR,
    CORE_OP_BXOR,
    CORE_OP_MINLOC,
    CORE_OP_MAXLOC,
    CORE_OP_REPLACE, /* out = b: the newer value (RMA accumulate) */
    CORE_OP_NO_OP,   /* out = a */
    CORE_OP_COUNT
} core_op;

typedef void (*core_reduce_fn)(void *out, const void *a, const void *b, size_t count);

/* NULL when op is not defined on type. */
core_reduce_fn core_reduce_kernel(core_type type, core_op op);

/* Bytes per element in shoal's layout (packed for pairs). */
size_t core_type_size(core_type type);
const char *core_type_name(core_type type);
const char *core_op_name(core_op op);

bool core_type_is_pair(core_type type);
/* Whether type holds floating-point values. Only their reductions depend on
 * the order values are combined in (rounding, and which of -0.0 and +0.0 or
 * which NaN MIN/MAX keep); integer ones are exact in any order. */
bool core_type_is_floating(core_type type);
/* Bytes per element of the C struct {value; index} behind a pair type. */
size_t core_pair_struct_size(core_type type);
void core_pair_pack(core_type type, void *packed, const void *structs, size_t count);
/* Writes only the value and index fields of each struct, never padding. */
void core_pair_unpack(core_type type, void *structs, const void *packed, size_t count);

#endif
