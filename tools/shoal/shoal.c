#include <stdio.h>
#include <string.h>

#include "shoal_cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: shoal COMMAND [options]\n\n"
                 "  explain COLLECTIVE SIZE [-np N] [--ppn P] [--lanes cells,cma,host] [--window BYTES]\n"
                 "        every candidate (algorithm, lane) the planner prices for the call, its\n"
                 "        modelled time, which one is chosen and why. No MPI needed.\n"
                 "  explain --grid [--tuning FILE]\n"
                 "        the choice and every candidate's modelled time over the planner's whole\n"
                 "        grid (collectives, sizes, team sizes, lane sets), on the built-in figures\n"
                 "        or FILE's, with a fixed cache size: the same output on any machine.\n"
                 "  tune [-o FILE] [--quick] [--merge] [--samples FILE]   (under mpirun, np >= 2)\n"
                 "        measures the lanes on this machine (per size, per number of processes\n"
                 "        moving data at once), fits the cost model, checks the fit, calibrates the\n"
                 "        algorithm formulas for np ranks, and writes the tuning file the library\n"
                 "        reads (default: $SHOAL_TUNING_FILE, else $XDG_CACHE_HOME/shoal/tuning.json).\n"
                 "        --merge: keep the file's figures, add the calibration for np ranks (run it\n"
                 "        at each process count you use; the nearest calibrated count is used).\n"
                 "  evaluate [--json FILE] [-m MIN:MAX] [--colls LIST]   (under mpirun)\n"
                 "        measures every candidate of every collective over a grid of sizes and\n"
                 "        records which the planner chose: the data of the choice-quality report.\n"
                 "  settings [--markdown]\n"
                 "        every SHOAL_* variable: the value this environment gives it and its\n"
                 "        default, or README's Configuration table (--markdown).\n\n"
                 "Collectives: barrier bcast reduce allreduce gather allgather scatter alltoall\n"
                 "reduce_scatter_block. Sizes like 4096, 64K, 4M.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "explain"))
        return explain_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "tune"))
        return tune_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "evaluate"))
        return evaluate_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "settings"))
        return settings_main(argc - 1, argv + 1);
    fprintf(stderr, "shoal: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
