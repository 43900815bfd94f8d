#include "shoal.h"
#include "shim.h"

const char *shoal_version(void) { return SHOAL_VERSION_STRING; }
const char *shoal_commit(void) { return SHOAL_COMMIT_STRING; }
int shoal_enabled(void) { return shim_active; }
