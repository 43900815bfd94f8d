#!/usr/bin/env bash
# hosts_bench_test.sh: scripts/hosts-bench.sh on two namespace hosts of two
# ranks, quickly, as CTest runs it: its summary must give the link, the
# calls tune --link timed, and a host/shoal range for each of the six
# collectives, each a number. Exits 77 where the hosts cannot be made.
#   hosts_bench_test.sh TREE
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$1
work=$(mktemp -d "$PWD/hosts-bench-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "hosts_bench_test: $*" >&2; cat "$work/summary.txt" 2>/dev/null >&2 || true; exit 1; }
rc=0
"$here/../../scripts/hosts-bench.sh" --tree "$tree" --layouts "2 2" --quick --sizes 4:1K --out "$work" \
    >"$work/out.txt" 2>&1 || rc=$?
[ $rc = 77 ] && { cat "$work/out.txt"; exit 77; }
[ $rc = 0 ] || { cat "$work/out.txt"; fail "hosts-bench.sh failed ($rc)"; }
grep -q '^\[2-2\]   link  one sender a node: latency' "$work/summary.txt" || fail "no link figures"
grep -q '^\[2-2\]     allgather  [hs-]' "$work/summary.txt" || fail "no timed calls"
for c in allreduce bcast allgather alltoall reduce gather; do
    grep -Eq "^  $c +up to 32 KiB [0-9.]+-[0-9.]+ " "$work/summary.txt" || fail "no range for $c"
done
[ -s "$work/2-2-default.json" ] || fail "no JSON"
echo "hosts_bench_test: summary of $(grep -c '^  ' "$work/summary.txt") lines, every collective ranged"
