/* libshoal.so is the shoal_mpi objects linked whole; this file only gives
 * the shared library a translation unit of its own. */
#include "shoal.h"
