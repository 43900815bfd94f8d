#include "shoal.h"
#include "coll.h"
#include "plan.h"
#include "shim_init.h"
#include "shoal_commit.h" /* generated: SHOAL_COMMIT_STRING */

const char *shoal_version(void) { return SHOAL_VERSION_STRING; }
const char *shoal_commit(void) { return SHOAL_COMMIT_STRING; }
int shoal_enabled(void) { return shim_active; }

int shoal_last_choice(const char **algorithm, const char **lane)
{
    const coll_ran *ch = coll_last_choice();
    if (algorithm)
        *algorithm = ch ? plan_algo_name(ch->algo) : "host MPI";
    if (lane)
        *lane = ch ? plan_lanes_label(ch->lane, ch->stripe) : "-";
    return ch != NULL;
}
