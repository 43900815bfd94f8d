#include "sim_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int sim_fail(sim_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return -1;
}

void *sim_calloc(size_t count, size_t size, const char *what, sim_err *err)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        sim_fail(err, SIM_ENOMEM, "out of memory while allocating %s (%zu x %zu bytes)", what, count, size);
    return p;
}
