#!/usr/bin/env bash
# hosts-bench.sh: shoal-bench across separate hosts made of Linux namespaces
# on this machine (tests/multihost/mh-hosts.sh: a network, hostname and
# /dev/shm each, TCP between them), each layout after `shoal tune --link`
# on it, against the host MPI's own collectives (and Open MPI's han), with
# a summary per layout. Needs root, as the multi-host tests do.
#
#   scripts/hosts-bench.sh [--tree DIR] [--layouts "4 4 4 4,2 2,1 3"] [--sizes MIN:MAX]
#                          [--colls "scan exscan"] [--han] [--quick] [--env NAME=VALUE]... [--out DIR]
#
#   --tree     a build tree (default build/openmpi): its shoal, shoal-bench,
#              launcher and MPI flavour (CMakeCache.txt)
#   --layouts  ranks per host, one layout per comma (default "2 2,1 3,1 1 1 1")
#   --sizes    shoal-bench's -m (default 4:4M)
#   --colls    shoal-bench's collectives (default: allreduce bcast allgather
#              alltoall reduce gather)
#   --han      Open MPI: also a run with its hierarchical component
#              (--mca coll_han_priority 100), beside its default
#   --quick    tune --link --quick, and fewer iterations
#   --env      a setting for every rank of the tune and the runs, such as
#              SHOAL_NODE_BCAST=rails: one form against another, run by run
#   --out      results (default results/hosts-<tree name>): per layout and
#              run, shoal-bench's table (.txt) and JSON; summary.txt
#
# Each layout: a one-node `shoal tune --quick` (once, on as many ranks as
# the largest host holds) copied, `shoal tune --link` on the layout adding
# its link and timed calls, then shoal-bench with that file. The summary
# gives per collective the range of host/shoal up to 32 KiB and from
# 64 KiB, and the sizes below 0.95. Exit status 77 where the hosts cannot
# be made here (as the tests skip), else the first failure's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$root/build/openmpi
layouts="2 2,1 3,1 1 1 1"
sizes=4:4M
colls="allreduce bcast allgather alltoall reduce gather"
han=0 quick=0 out=""
settings=()
while [ $# -gt 0 ]; do
    case $1 in
        --tree) tree=$(cd "$2" && pwd); shift 2 ;;
        --layouts) layouts=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --colls) colls=$2; shift 2 ;;
        --han) han=1; shift ;;
        --quick) quick=1; shift ;;
        --env) settings+=(--env "$2"); shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "hosts-bench: unknown option $1 (see the head of $0)" >&2; exit 2 ;;
    esac
done
cache=$tree/CMakeCache.txt
[ -f "$cache" ] || { echo "hosts-bench: $tree is not a build tree (no CMakeCache.txt)" >&2; exit 2; }
launcher=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$cache")
mpi=$(sed -n 's/^SHOAL_MPI_FLAVOUR:INTERNAL=//p' "$cache")
shoal=$tree/bin/shoal bench=$tree/bin/shoal-bench
for f in "$shoal" "$bench" "$launcher"; do
    [ -x "$f" ] || { echo "hosts-bench: $f is missing (build the tree first)" >&2; exit 2; }
done
out=${out:-$root/results/hosts-$(basename "$tree")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ "$mpi" = openmpi ] || han=0

# Open MPI 5's UCX one-sided component complains at every start where UCX
# finds no device; shoal-bench's collectives need no window.
envs=()
[ "$mpi" = openmpi ] && envs=(--env OMPI_MCA_osc=^ucx)
envs+=("${settings[@]}")
iters=(-i 100 -x 10 --iterations-large 20 --warmup-large 3)
link_quick=()
if [ $quick = 1 ]; then
    # Fewer calls; shoal-bench itself keeps a communicator's warm-up and
    # shoal's set-up on it out of the first size's figures.
    iters=(-i 20 -x 10 --iterations-large 5 --warmup-large 1)
    link_quick=(--quick)
fi

# One node's tuning, on as many ranks as the largest host holds (at least 2).
most=2
IFS=, read -ra all_layouts <<<"$layouts"
for l in "${all_layouts[@]}"; do
    for c in $l; do [ "$c" -gt $most ] && most=$c; done
done
flags=()
[ "$mpi" = openmpi ] && flags=(--allow-run-as-root --oversubscribe)
echo "hosts-bench: $(basename "$tree") ($mpi, $launcher); one node's tune on $most ranks"
"$launcher" "${flags[@]}" -np $most "$shoal" tune --quick -o "$out/node.json" >"$out/node-tune.txt" 2>&1 ||
    { cat "$out/node-tune.txt"; echo "hosts-bench: the tune on one node failed" >&2; exit 1; }

# The summary of one shoal-bench table: per collective, host/shoal ranges
# up to 32 KiB and from 64 KiB, and every size below 0.95.
summarise() {
    awk -v label="$2" '
        function size(s) { return s < 1024 ? s : s < 1048576 ? s / 1024 "K" : s / 1048576 "M" }
        /^# shoal-bench [a-z_]+:/ { c = $3; sub(":", "", c); order[++n] = c; next }
        /^[0-9]+ / && c != "" {
            r = $4 + 0; s = $1 + 0
            if (s <= 32768) { if (!(c in slo) || r < slo[c]) slo[c] = r; if (!(c in shi) || r > shi[c]) shi[c] = r }
            else { if (!(c in blo) || r < blo[c]) blo[c] = r; if (!(c in bhi) || r > bhi[c]) bhi[c] = r }
            if (r < 0.95) below[c] = below[c] " " size(s) "=" r
        }
        END {
            print label
            for (i = 1; i <= n; i++) {
                c = order[i]
                printf "  %-10s up to 32 KiB %s-%s  from 64 KiB %s-%s  below 0.95:%s\n", c,
                       (c in slo) ? slo[c] : "-", (c in shi) ? shi[c] : "-",
                       (c in blo) ? blo[c] : "-", (c in bhi) ? bhi[c] : "-", (c in below) ? below[c] : " none"
            }
        }' "$1"
}

rc=0
: >"$out/summary.txt"
for l in "${all_layouts[@]}"; do
    name=$(tr ' ' - <<<"$l")
    tuning=$out/tune-$name.json
    cp "$out/node.json" "$tuning"
    runs=(default)
    [ $han = 1 ] && runs+=(han)
    # On the hosts: the link and the timed calls, then each run.
    # shellcheck disable=SC2086 # the layout is a list of counts
    "$root/tests/multihost/mh-hosts.sh" $l -- bash -c '
        set -e
        mh=$1/tests/multihost; shift
        mpi=$1 launcher=$2 shoal=$3 bench=$4 tuning=$5 out=$6 name=$7 sizes=$8 han=$9 colls=${10}; shift 10
        run() { "$mh/mh-mpirun.sh" --mpi "$mpi" --launcher "$launcher" --env SHOAL_TUNING_FILE="$tuning" "$@"; }
        envs=() iters=() quick=()
        while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
        while [ "$1" != -- ]; do iters+=("$1"); shift; done; shift
        quick=("$@")
        run "${envs[@]}" "$shoal" tune --link "${quick[@]}" -o "$tuning" >"$out/$name-link.txt" 2>&1
        run "${envs[@]}" "$bench" -m "$sizes" "${iters[@]}" --json "$out/$name-default.json" \
            $colls >"$out/$name-default.txt" 2>&1
        if [ "$han" = 1 ]; then
            run "${envs[@]}" --env OMPI_MCA_coll_han_priority=100 "$bench" -m "$sizes" "${iters[@]}" \
                --json "$out/$name-han.json" $colls >"$out/$name-han.txt" 2>&1
        fi' hosts-bench "$root" "$mpi" "$launcher" "$shoal" "$bench" "$tuning" "$out" "$name" "$sizes" "$han" \
        "$colls" "${envs[@]}" -- "${iters[@]}" -- "${link_quick[@]}" || { rc=$?; [ $rc = 77 ] && exit 77; echo "hosts-bench: layout $l failed ($rc)" >&2; continue; }
    grep -E "^  (link|calls|  )" "$out/$name-link.txt" | sed "s/^/[$name] /" >>"$out/summary.txt" || true
    for r in "${runs[@]}"; do
        summarise "$out/$name-$r.txt" "$name ($r collectives of the host): host/shoal" >>"$out/summary.txt"
    done
done
cat "$out/summary.txt"
echo "hosts-bench: tables and JSON in $out"
exit $rc
