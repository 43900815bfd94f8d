/* Every lane's description: its name, what it can do, its default figures.
 * The planner prices candidates by these capabilities, so a new lane is a
 * row here (and its ops table where its code lives). */
#include <string.h>

#include "lane.h"

static const lane_desc descriptions[LANE_COUNT] = {
    /* Default figures: a 2-core x86 VM, a handoff of ~0.25 us, two memcpys at ~10 GB/s. */
    [LANE_CELLS] = {LANE_CELLS,
                    "cells",
                    LANE_CAP_STAGED | LANE_CAP_VIEW | LANE_CAP_NOTES | LANE_CAP_SEGMENT | LANE_CAP_EVERY_TEAM,
                    {.latency_ns = 250, .overhead_ns = 30, .per_byte_ns = 0, .bw_dedicated = 3.0, .bw_shared = 4.0}},
    /* A system call and page pinning per call, about 2 us all told where
     * measured (shoal tune: 1.1-2.0 us); ~5 GB/s per process. */
    [LANE_CMA] = {LANE_CMA,
                  "cma",
                  LANE_CAP_SINGLE_COPY | LANE_CAP_KERNEL_COPY | LANE_CAP_PUT | LANE_CAP_VIEW | LANE_CAP_SEGMENT,
                  {.latency_ns = 1200, .overhead_ns = 700, .per_byte_ns = 0.02, .bw_dedicated = 4.0, .bw_shared = 6.0}},
    /* The host MPI's point-to-point (its code is in the MPI layer). Its
     * figures are deliberately behind the shared-memory lanes: inside a node
     * the host MPI is the fallback, and only a measurement may prefer it. */
    [LANE_HOST] =
        {LANE_HOST,
         "host",
         LANE_CAP_TWO_SIDED | LANE_CAP_SEGMENT | LANE_CAP_CROSSES_NODES,
         {.latency_ns = 1500, .overhead_ns = 1000, .per_byte_ns = 0.05, .bw_dedicated = 1.5, .bw_shared = 1.5}},
};

const lane_desc *lane_describe(lane_id l) { return &descriptions[l]; }

lane_id lane_every_team(void)
{
    for (int l = 0; l < LANE_COUNT; l++)
        if (descriptions[l].caps & LANE_CAP_EVERY_TEAM)
            return (lane_id)l;
    return LANE_COUNT;
}

lane_id lane_from_name(const char *name, size_t len)
{
    for (int l = 0; l < LANE_COUNT; l++)
        if (strlen(descriptions[l].name) == len && !strncmp(name, descriptions[l].name, len))
            return (lane_id)l;
    return LANE_COUNT;
}
