#!/usr/bin/env bash
# usage: kill_check.sh LIMIT LAUNCHER... -- PROGRAM ARGS...
# A rank of PROGRAM dies mid-collective; the job must end within LIMIT
# seconds with a non-zero status, and leave no shoal segment in /dev/shm.
set -u
limit=$1; shift
# Segments other tests running beside this one create and unlink within
# moments: a name counts as left behind only if it is new and still there a
# second later.
before=$(ls /dev/shm | grep '^shoal-' | sort || true)
start=$(date +%s)
out=$(timeout -k 5 "$limit" "$@" 2>&1); rc=$?
elapsed=$(( $(date +%s) - start ))
printf '%s\n' "$out" | grep -E "shoal|died|terminated|signal|BAD TERMINATION" | head -5
new=$(comm -13 <(printf '%s\n' "$before") <(ls /dev/shm | grep '^shoal-' | sort) | grep . || true)
[ -n "$new" ] && sleep 1
left=$(for name in $new; do [ -e "/dev/shm/$name" ] && echo "$name"; done)
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "kill_check: the job hung (killed after ${limit}s)"; exit 1; fi
if [ $rc -eq 0 ]; then echo "kill_check: the job claims success although a rank died"; exit 1; fi
if [ -n "$left" ]; then echo "kill_check: shoal segments left in /dev/shm:" $left; exit 1; fi
echo "kill_check: the job ended in ${elapsed}s with status $rc, nothing left behind"
exit 0
