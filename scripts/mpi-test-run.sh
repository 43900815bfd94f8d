#!/usr/bin/env bash
# usage: mpi-test-run.sh <timeout-seconds> <launcher> [args...]
# coreutils timeout puts the launcher in a process group of its own and, on
# expiry, signals the whole group (the launcher and every rank), then kills
# what is left 5 s later: no rank outlives its test.
limit=$1; shift
timeout -k 5 "$limit" "$@"
rc=$?
[ $rc -eq 124 ] && echo "mpi-test-run: timed out after ${limit}s, the job was killed" >&2
exit $rc
