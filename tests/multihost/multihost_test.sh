#!/usr/bin/env bash
# multihost_test.sh: one multi-host test, as CTest runs it.
#
#   multihost_test.sh --mpi openmpi|mpich --launcher PATH --layout "N1 N2 ..."
#                     [--env NAME=VALUE]... [--expect TEXT]... HOSTS_CHECK PROGRAM [ARGS...]
#
# Makes one host per count of the layout (mh-hosts.sh), checks with
# HOSTS_CHECK that the job really spans them as laid out, then runs PROGRAM
# ARGS (the collective matrix, coll_check) on the same hosts; every --env is
# given to every rank of both. Each --expect TEXT must appear in PROGRAM's
# output (with SHOAL_VERBOSE=1: that shoal ran the collectives in two levels). Exits with the first failure's status, or 77
# (skipped) where the hosts cannot be made here. Wrap it in a time limit
# (scripts/mpi-test-run.sh): a timeout's SIGTERM tears the hosts down.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

on_hosts=0
[ "${1:-}" = "--on-hosts" ] && { on_hosts=1; shift; }
all_args=("$@")
mpi="" launcher="" layout=""
run_opts=()
expects=()
while [ $# -gt 0 ]; do
    case $1 in
        --mpi) mpi=$2; run_opts+=("$1" "$2"); shift 2 ;;
        --launcher) launcher=$2; run_opts+=("$1" "$2"); shift 2 ;;
        --env) run_opts+=("$1" "$2"); shift 2 ;;
        --layout) layout=$2; shift 2 ;;
        --expect) expects+=("$2"); shift 2 ;;
        -*) echo "multihost_test: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ] || [ -z "$mpi" ] || [ -z "$launcher" ] || [ -z "$layout" ]; then
    echo "usage: multihost_test.sh --mpi M --launcher PATH --layout \"N1 N2 ...\" [--env K=V]... [--expect TEXT]... HOSTS_CHECK PROGRAM [ARGS...]" >&2
    exit 2
fi
hosts_check=$1
shift

if [ $on_hosts = 0 ]; then
    # shellcheck disable=SC2086 # the layout is a list of counts
    exec "$here/mh-hosts.sh" $layout -- "$here/multihost_test.sh" --on-hosts "${all_args[@]}"
fi

# On the hosts (the COMMAND of mh-hosts.sh).
echo "multihost_test: $mpi on $MH_HOSTS"
start=$SECONDS
"$here/mh-mpirun.sh" "${run_opts[@]}" "$hosts_check" $MH_COUNTS
out=$MH_STATE/program.out
rc=0
"$here/mh-mpirun.sh" "${run_opts[@]}" "$@" 2>&1 | tee "$out" | grep -v '^shoal\[' || rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "multihost_test: the program failed ($rc)"; exit "$rc"; }
for text in "${expects[@]}"; do
    grep -qF -- "$text" "$out" || { echo "multihost_test: FAIL: no '$text' in the program's output"; exit 1; }
done
echo "multihost_test: passed in $((SECONDS - start)) s (set-up of the hosts not counted)"
