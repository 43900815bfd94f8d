#!/usr/bin/env bash
# usage: mpi-test-run.sh <timeout-seconds> <launcher> [args...]
# Runs the launcher in a process group of its own; on timeout (or if this
# script is killed) the whole group goes, so no rank is left behind.
set -u
limit=$1; shift
setsid "$@" &
pid=$!
cleanup() { kill -TERM -- -"$pid" 2>/dev/null; sleep 1; kill -KILL -- -"$pid" 2>/dev/null; }
trap 'cleanup; exit 143' TERM INT HUP
( sleep "$limit"; echo "mpi-test-run: timed out after ${limit}s, killing the job" >&2; kill -TERM -- -"$pid" 2>/dev/null; sleep 3; kill -KILL -- -"$pid" 2>/dev/null ) &
watchdog=$!
wait "$pid"; rc=$?
kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
# A launcher can exit before every member of its group is gone.
kill -KILL -- -"$pid" 2>/dev/null
exit $rc
