/* core: the services every other shoal layer stands on.
 *
 * Owns: logging and fatal errors (core_log.h), SHOAL_* configuration
 * (core_config.h), shared-memory segments (core_shm.h), sequence flags and
 * polite waiting (core_flag.h), element types and reduction kernels
 * (core_types.h), small system facts (core_sys.h), a small JSON reader
 * (core_json.h), the node-list file of rank mappings (core_nodelist.h).
 *
 * May call: libc and the kernel only. Never MPI, never an upper layer. */
#ifndef SHOAL_CORE_H
#define SHOAL_CORE_H

#include "core_config.h"
#include "core_flag.h"
#include "core_json.h"
#include "core_log.h"
#include "core_nodelist.h"
#include "core_shm.h"
#include "core_sys.h"
#include "core_types.h"

#endif
