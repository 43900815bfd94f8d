/* shim_types: MPI datatypes and operations as shoal sees them
 * (shim_types.c): the memory layout of a datatype, and the core type and
 * operation of a predefined reduction.
 *
 * May call: every lower layer, and PMPI. */
#ifndef SHOAL_SHIM_TYPES_H
#define SHOAL_SHIM_TYPES_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "core.h"

void shim_types_init(void);

/* Memory layout of count elements of a datatype as shoal moves them. */
typedef struct shim_layout {
    size_t size;     /* bytes of data per element (MPI_Type_size) */
    MPI_Aint extent; /* distance between consecutive elements */
    MPI_Aint lb;     /* where an element's bytes begin, from its address */
    bool dense;      /* an element is its size bytes at lb, elements abut */
} shim_layout;

/* False for MPI_DATATYPE_NULL or a handle MPI rejects. */
bool shim_layout_of(MPI_Datatype type, shim_layout *out);

/* Reductions: the core type and op for a predefined datatype and a
 * predefined operation valid on it (MPI 5.9.2); false otherwise. */
bool shim_reduction_of(MPI_Datatype type, MPI_Op op, core_type *ctype, core_op *cop);

#endif
