#!/usr/bin/env bash
# Fails if a test run left shoal shared-memory segments or processes behind.
set -u
rc=0
left=$(ls /dev/shm 2>/dev/null | grep -i '^shoal' || true)
if [ -n "$left" ]; then
  echo "check-no-leftovers: /dev/shm still holds: $left"
  rc=1
fi
procs=$(pgrep -a -f 'build/[a-z0-9]+/(tests|tools)/|tests/mpi4py/mpi4py_check' 2>/dev/null | grep -v pgrep || true)
if [ -n "$procs" ]; then
  echo "check-no-leftovers: processes still running: $procs"
  rc=1
fi
[ $rc -eq 0 ] && echo "check-no-leftovers: nothing left behind"
exit $rc
