#!/usr/bin/env bash
# link_test.sh: shoal tune --link between real hosts, as CTest runs it.
#
#   link_test.sh --mpi openmpi|mpich --launcher PATH SHOAL HOSTS_CHECK COLL_CHECK
#
# A quick tune on this host writes a tuning file; tune --link --quick
# across two namespace hosts of two ranks (multihost_test.sh) adds the
# link's figures and the collectives it timed both ways on that layout;
# then the library must read them back (shoal explain names the file and
# the rate of a node with every rank sending, and routes a call of the
# timed layout by its timing), a job on that layout must route by them and
# still give the host MPI's results (coll_check), a tune --link at one rank
# a host must time nothing, and a new tune on one node must keep them.
# Exits 77 where the hosts cannot be made.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$1" = --mpi ] && [ "$3" = --launcher ] && [ $# -eq 7 ] || {
    echo "usage: link_test.sh --mpi M --launcher PATH SHOAL HOSTS_CHECK COLL_CHECK" >&2
    exit 2
}
mpi=$2 launcher=$4 shoal=$5 hosts_check=$6 coll_check=$7
flags=() check_flags=()
[ "$mpi" = openmpi ] && flags=(--allow-run-as-root --oversubscribe)
[ "$mpi" = mpich ] && check_flags=(--skip-known-host-bugs)
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
    --expect "calls on this layout (2,2)" \
    --done "wrote $file" "$hosts_check" "$shoal" tune --link --quick -o "$file" || rc=$?
[ $rc -eq 0 ] || exit $rc

bw=$(link_of link_bw) node_bw=$(link_of link_bw_node) latency=$(link_of link_latency_ns)
awk -v b="$bw" -v n="$node_bw" -v l="$latency" 'BEGIN { exit !(b > 0 && n > 0 && l > 0 && l < 1e7) }' ||
    fail "implausible link figures: latency $latency ns, $bw and $node_bw bytes/ns"
SHOAL_TUNING_FILE=$file "$shoal" explain bcast 4M --nodes 2 --ppn 2 >"$work/explain.out"
grep -q "GB/s a node while all its ranks send; $file)" "$work/explain.out" ||
    { cat "$work/explain.out"; fail "shoal explain does not price the measured link"; }
# Every priced collective timed, one letter a size class (quick: every
# fourth from 4 B to 4 MiB; alltoall up to 32 KiB; the barrier once).
grep -q '"layout": "2,2"' "$file" || fail "no timed layout in the file"
for c in barrier bcast reduce allreduce gather scatter allgather alltoall scan exscan; do
    letters=$(grep -o "\"$c\": \"[hs-]*\"" "$file" | sed 's/.*: "//; s/"$//')
    [ ${#letters} = 41 ] && [ -n "$(tr -d '-' <<<"$letters")" ] || fail "$c timed as '$letters'"
done
SHOAL_TUNING_FILE=$file "$shoal" explain allgather 64 --nodes 2 --ppn 2 >"$work/explain.out"
grep -q "on this layout by shoal tune --link" "$work/explain.out" ||
    { cat "$work/explain.out"; fail "shoal explain does not route the timed layout by its timing"; }
SHOAL_TUNING_FILE=$file "$shoal" explain allgather 64 --nodes 2 --ppn 3 >"$work/explain.out"
! grep -q "on this layout by shoal tune --link" "$work/explain.out" ||
    { cat "$work/explain.out"; fail "a layout not timed was routed by another's timing"; }

# A job on the timed layout routes by the letters, and its results are
# still the host MPI's: allgather timed the host's at every size, so its
# calls go flat and say why. Under MPICH, coll_check leaves out the host's
# own known bugs, as the other multi-host tests do (MPICH 4.0.2's
# MPI_Reduce on a communicator of 2 + 1 ranks across hosts is wrong from
# about 2 KiB: tests/mpi/coll_check.c).
sed -i 's/"allgather": "[hs-]*"/"allgather": "'"$(printf 'h%.0s' $(seq 41))"'"/' "$file"
"$here/multihost_test.sh" --mpi "$mpi" --launcher "$launcher" --layout "2 2" \
    --env SHOAL_TUNING_FILE="$file" --env SHOAL_VERBOSE=1 --env SHOAL_COMM_WARMUP=0 \
    --expect "bytes a rank or more on a communicator of 4 ranks over 2 nodes: the host MPI's, flat (as shoal tune --link timed it on this layout)" \
    --done " 0 mismatches," "$hosts_check" "$coll_check" --cases 40 --max-bytes 65536 "${check_flags[@]}" || rc=$?
[ $rc -eq 0 ] || exit $rc
# One rank a host: nothing runs in two levels there, so nothing is timed,
# and the letters of another layout are not kept under this one's name.
cp "$file" "$work/one-a-host.json"
"$here/multihost_test.sh" --mpi "$mpi" --launcher "$launcher" --layout "1 1" \
    --expect "calls: every node holds one rank" \
    --done "wrote $work/one-a-host.json" "$hosts_check" "$shoal" tune --link --quick -o "$work/one-a-host.json" || rc=$?
[ $rc -eq 0 ] || exit $rc
! grep -q '"link_timed"' "$work/one-a-host.json" || fail "a layout of one rank a host recorded timed calls"

"$launcher" "${flags[@]}" -np 2 "$shoal" tune --quick -o "$file" >"$work/again.out" 2>&1 ||
    { cat "$work/again.out"; fail "the second tune on one host failed"; }
[ "$(link_of link_bw_node)" = "$node_bw" ] && [ "$(link_of link_bw)" = "$bw" ] ||
    fail "a tune on one host lost the measured link ($node_bw -> $(link_of link_bw_node))"
grep -q '"layout": "2,2"' "$file" || fail "a tune on one host lost the timed calls"
echo "link_test: latency $latency ns, one sender $bw bytes/ns, a node $node_bw bytes/ns; kept by a later tune with the timed calls"
