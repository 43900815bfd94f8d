#!/usr/bin/env bash
# usage: check-no-leftovers.sh [STAMP]
# Fails if a test run left shoal shared-memory segments or processes behind,
# or, with STAMP (a file touched when the run began), the host MPIs'
# segments (MPICH's mpich_shm_*, Open MPI's sm_segment.* and vader_segment.*)
# or MPICH Hydra's topology files in /tmp made since then.
set -u
rc=0
left=$(ls /dev/shm 2>/dev/null | grep -i '^shoal' || true)
if [ -n "$left" ]; then
  echo "check-no-leftovers: /dev/shm still holds: $left"
  rc=1
fi
if [ $# -ge 1 ] && [ -e "$1" ]; then
  host=$(find /dev/shm /tmp -maxdepth 1 -newer "$1" \( -name 'mpich_shm_*' -o -name 'sm_segment.*' \
         -o -name 'vader_segment.*' -o -name 'hydra_hwloc_xmlfile_*' \) 2>/dev/null || true)
  if [ -n "$host" ]; then
    echo "check-no-leftovers: the host MPIs left behind: $host"
    rc=1
  fi
fi
procs=$(pgrep -a -f 'build/[a-z0-9]+/(tests|tools)/|tests/mpi4py/mpi4py_check' 2>/dev/null | grep -v pgrep || true)
if [ -n "$procs" ]; then
  echo "check-no-leftovers: processes still running: $procs"
  rc=1
fi
[ $rc -eq 0 ] && echo "check-no-leftovers: nothing left behind"
exit $rc
