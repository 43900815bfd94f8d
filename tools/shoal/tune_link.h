/* shoal tune --link (tune_link.c): the link between nodes, measured
 * through the host MPI. */
#ifndef SHOAL_CLI_TUNE_LINK_H
#define SHOAL_CLI_TUNE_LINK_H

#include "plan_model.h"

/* Measures the link between the first two nodes and sets m's link figures
 * (on every rank alike), then times the collectives both ways on this
 * layout into m's link_timed (quick: every fourth size class, fewer
 * rounds). Collective over MPI_COMM_WORLD; ends the job with a message
 * when every rank is on one node. */
void tune_link(plan_model *m, bool quick);

#endif
