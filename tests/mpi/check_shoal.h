/* For test programs linked with shoal: asking what shoal did with a call. */
#ifndef SHOAL_CHECK_SHOAL_H
#define SHOAL_CHECK_SHOAL_H

#include "check_common.h"
#include "shoal.h"

static inline void check_first_of(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

/* shoal_last_choice tells of the last call shoal intercepted. One it passes
 * to the host (an allreduce with a user-defined op) makes it say "host MPI"
 * again, so a later call that never reaches shoal cannot inherit an
 * earlier choice. */
static inline void check_forget_last_choice(void)
{
    static MPI_Op user_op = MPI_OP_NULL;
    if (user_op == MPI_OP_NULL)
        MPI_Op_create(check_first_of, 1, &user_op);
    int x = 0, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, user_op, MPI_COMM_SELF);
    if (shoal_last_choice(NULL, NULL))
        CHECK_FATAL("a call with a user-defined op did not reset shoal_last_choice");
}

#endif
