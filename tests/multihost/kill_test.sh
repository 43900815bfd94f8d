#!/usr/bin/env bash
# kill_test.sh: a rank on one host dies in the middle of collectives that
# span hosts; the job must end within LIMIT seconds with a non-zero status
# (shoal's message or the launcher's), not hang, and leave no shoal segment
# in any host's /dev/shm.
#
#   kill_test.sh --mpi openmpi|mpich --launcher PATH --layout "N1 N2 ..." --limit S
#                KILL_CHECK VICTIM DELAY_MS
#
# 77 (skipped) where the hosts cannot be made (mh-hosts.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

on_hosts=0
[ "${1:-}" = "--on-hosts" ] && { on_hosts=1; shift; }
all_args=("$@")
mpi="" launcher="" layout="" limit=""
while [ $# -gt 0 ]; do
    case $1 in
        --mpi) mpi=$2; shift 2 ;;
        --launcher) launcher=$2; shift 2 ;;
        --layout) layout=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        -*) echo "kill_test: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -ne 3 ] || [ -z "$mpi" ] || [ -z "$launcher" ] || [ -z "$layout" ] || [ -z "$limit" ]; then
    echo "usage: kill_test.sh --mpi M --launcher PATH --layout \"N1 N2 ...\" --limit S KILL_CHECK VICTIM DELAY_MS" >&2
    exit 2
fi
if [ $on_hosts = 0 ]; then
    # shellcheck disable=SC2086 # the layout is a list of counts
    exec "$here/mh-hosts.sh" $layout -- "$here/kill_test.sh" --on-hosts "${all_args[@]}"
fi

echo "kill_test: $mpi on $MH_HOSTS, rank $2 dies after $3 ms"
start=$SECONDS
rc=0
timeout -k 5 "$limit" "$here/mh-mpirun.sh" --mpi "$mpi" --launcher "$launcher" --env SHOAL_COMM_WARMUP=0 "$@" \
    >"$MH_STATE/job.out" 2>&1 || rc=$?
grep -E "shoal|died|terminated|signal|BAD TERMINATION" "$MH_STATE/job.out" | head -5 || true
left=""
for host in $MH_HOSTNAMES; do
    left+=$("$MH_AGENT" "$host" "ls /dev/shm | grep '^shoal-' | sed 's|^|$host:|'" || true)
done
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "kill_test: FAIL: the job hung (ended after ${limit} s)"; exit 1; fi
if [ $rc -eq 0 ]; then echo "kill_test: FAIL: the job claims success although a rank died"; exit 1; fi
if [ -n "$left" ]; then echo "kill_test: FAIL: shoal segments left in /dev/shm:" $left; exit 1; fi
echo "kill_test: the job ended in $((SECONDS - start)) s with status $rc, nothing left behind"
