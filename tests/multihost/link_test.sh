#!/usr/bin/env bash
# link_test.sh: shoal tune --link between real hosts, as CTest runs it.
#
#   link_test.sh --mpi openmpi|mpich --launcher PATH SHOAL HOSTS_CHECK
#
# A quick tune on this host writes a tuning file; tune --link across two
# namespace hosts of two ranks (multihost_test.sh) adds the link's figures;
# then the library must read them back (shoal explain names the file and
# the rate of a node with every rank sending), and a new tune on one node
# must keep them. Exits 77 where the hosts cannot be made.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$1" = --mpi ] && [ "$3" = --launcher ] && [ $# -eq 6 ] || {
    echo "usage: link_test.sh --mpi M --launcher PATH SHOAL HOSTS_CHECK" >&2
    exit 2
}
mpi=$2 launcher=$4 shoal=$5 hosts_check=$6
flags=()
[ "$mpi" = openmpi ] && flags=(--allow-run-as-root --oversubscribe)
work=$(mktemp -d "$PWD/link-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
file=$work/tuning.json
fail() { echo "link_test: $*" >&2; exit 1; }
link_of() { grep -o "\"$1\": [0-9.e+-]*" "$file" | awk '{print $2}'; }

"$launcher" "${flags[@]}" -np 2 "$shoal" tune --quick -o "$file" >"$work/one.out" 2>&1 ||
    { cat "$work/one.out"; fail "the tune on one host failed"; }
[ "$(link_of link_bw_node)" = 0.0000 ] || fail "a tune on one host wrote a measured link"

rc=0
"$here/multihost_test.sh" --mpi "$mpi" --launcher "$launcher" --layout "2 2" \
    --expect "link  one sender a node: latency" --expect "link  2 senders a node at once" \
    --done "wrote $file" "$hosts_check" "$shoal" tune --link -o "$file" || rc=$?
[ $rc -eq 0 ] || exit $rc

bw=$(link_of link_bw) node_bw=$(link_of link_bw_node) latency=$(link_of link_latency_ns)
awk -v b="$bw" -v n="$node_bw" -v l="$latency" 'BEGIN { exit !(b > 0 && n > 0 && l > 0 && l < 1e7) }' ||
    fail "implausible link figures: latency $latency ns, $bw and $node_bw bytes/ns"
SHOAL_TUNING_FILE=$file "$shoal" explain bcast 4M --nodes 2 --ppn 2 >"$work/explain.out"
grep -q "GB/s a node while all its ranks send; $file)" "$work/explain.out" ||
    { cat "$work/explain.out"; fail "shoal explain does not price the measured link"; }

"$launcher" "${flags[@]}" -np 2 "$shoal" tune --quick -o "$file" >"$work/again.out" 2>&1 ||
    { cat "$work/again.out"; fail "the second tune on one host failed"; }
[ "$(link_of link_bw_node)" = "$node_bw" ] && [ "$(link_of link_bw)" = "$bw" ] ||
    fail "a tune on one host lost the measured link ($node_bw -> $(link_of link_bw_node))"
echo "link_test: latency $latency ns, one sender $bw bytes/ns, a node $node_bw bytes/ns; kept by a later tune"
