#!/usr/bin/env bash
# osu-compare: the OSU micro-benchmarks' own collective programs, each run
# without and with shoal preloaded, run after run, under one MPI; then the
# medians per size and their ratio (host / shoal). Outside CI: OSU is not
# part of shoal, so build it yourself against the same MPI first (its
# configure with CC=that MPI's mpicc, then make install), and point --osu at
# the folder holding osu_allreduce and the others
# (PREFIX/libexec/osu-micro-benchmarks/mpi/collective).
#
#   scripts/osu-compare.sh --osu DIR [--mpi openmpi|mpich|ompi5|ompi5-han|mpich5]
#                          [--tree DIR] [--np N] [--runs R] [--sizes MIN:MAX]
#                          [benchmark ...] [-- osu options]
#
# The MPI's launcher is scripts/launchers.sh's; shoal is --tree's libshoal
# (default build/<mpi>, build/ompi5 for ompi5-han). Benchmarks are OSU's
# names without osu_ (default: the blocking collectives OSU 7.4 has, barrier
# to reduce_scatter_block). OSU options default to -i 200 -x 20 (OSU's
# iteration counts at every size). Each run's output stays in $OUT (default
# a new directory under /tmp); the table goes to standard output. A ratio
# below 0.95 is listed per benchmark: shoal's own benchmark
# (shoal-bench --method osu) should show the same.
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/launchers.sh
. scripts/launchers.sh

osu="" mpi=openmpi tree="" np=2 runs=3 sizes=1:4194304
usage() {
  echo "usage: $0 --osu DIR [--mpi M] [--tree DIR] [--np N] [--runs R] [--sizes MIN:MAX] [benchmark ...] [-- osu options]" >&2
  exit 2
}
benchmarks=() osu_opts=(-i 200 -x 20)
while [ $# -gt 0 ]; do
  case $1 in
    --osu) osu=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --tree) tree=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --) shift; osu_opts=("$@"); break ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) benchmarks+=("$1"); shift ;;
  esac
done
[ -n "$osu" ] || usage
[ ${#benchmarks[@]} -gt 0 ] || benchmarks=(barrier bcast reduce allreduce gather gatherv allgather allgatherv
                                            scatter scatterv alltoall alltoallv reduce_scatter reduce_scatter_block)
launcher=$(launcher_for "$mpi" "$np")
[ -n "$launcher" ] || { echo "osu-compare: unknown MPI '$mpi'" >&2; usage; }
if [ -z "$tree" ]; then
  tree=build/$mpi
  [ "$mpi" = ompi5-han ] && tree=build/ompi5
fi
lib=$(cd "$tree" 2>/dev/null && pwd)/lib/libshoal.so
[ -f "$lib" ] || { echo "osu-compare: $lib is missing: build the $tree tree first (make build)" >&2; exit 2; }
case $mpi in
  openmpi|ompi5*) preload=(-x "LD_PRELOAD=$lib") ;;
  *) preload=(-genv LD_PRELOAD "$lib") ;;
esac
for b in "${benchmarks[@]}"; do
  [ -x "$osu/osu_$b" ] || { echo "osu-compare: $osu/osu_$b is missing (is --osu OSU's mpi/collective folder?)" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /tmp/osu-compare.XXXXXX)}
mkdir -p "$out"

echo "osu-compare: $mpi, np $np, $runs runs, OSU ${osu_opts[*]} -m $sizes, shoal from $lib; outputs in $out" >&2
status=0
for r in $(seq 1 "$runs"); do
  for b in "${benchmarks[@]}"; do
    # Alternate which side goes first, so that neither always runs on a
    # machine the other has just warmed.
    sides="host shoal"
    [ $((r % 2)) = 0 ] && sides="shoal host"
    for side in $sides; do
      extra=()
      [ "$side" = shoal ] && extra=("${preload[@]}")
      # shellcheck disable=SC2086 # the launcher is a command line
      if ! timeout -k 10 600 $launcher "${extra[@]}" "$osu/osu_$b" -m "$sizes" "${osu_opts[@]}" \
          > "$out/$b-$side-$r.txt" 2>&1; then
        echo "osu-compare: osu_$b failed ($side, run $r): see $out/$b-$side-$r.txt" >&2
        status=1
      fi
    done
  done
  echo "osu-compare: run $r of $runs done" >&2
done

python3 - "$out" "$runs" "${benchmarks[@]}" <<'PY'
import statistics, sys
out, runs, benchmarks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def rows(path):
    """OSU's table: '# Size  Avg Latency(us)' then 'size value' lines (barrier: one value)."""
    got = {}
    try:
        for line in open(path):
            f = line.split()
            if not f or f[0].startswith('#'):
                continue
            try:
                if len(f) == 1:
                    got[0] = float(f[0])
                else:
                    got[int(f[0])] = float(f[1])
            except ValueError:
                pass
    except OSError:
        pass
    return got

def size_name(s):
    for unit, div in (('M', 1 << 20), ('K', 1 << 10)):
        if s >= div and s % div == 0:
            return f'{s // div}{unit}'
    return str(s)

for b in benchmarks:
    host = [rows(f'{out}/{b}-host-{r}.txt') for r in range(1, runs + 1)]
    shoal = [rows(f'{out}/{b}-shoal-{r}.txt') for r in range(1, runs + 1)]
    sizes = sorted(set().union(*host) & set().union(*shoal))
    if not sizes:
        print(f'osu_{b}: no figures (see {out}/{b}-*.txt)')
        continue
    print(f'osu_{b} (us, medians of {runs}; ratio = host / shoal)')
    print(f'{"size":>8} {"host":>10} {"shoal":>10} {"ratio":>6}  ratios run by run')
    low, big = [], []
    for s in sizes:
        h = [t[s] for t in host if s in t]
        o = [t[s] for t in shoal if s in t]
        mh, mo = statistics.median(h), statistics.median(o)
        ratio = mh / mo if mo > 0 else float('inf')
        each = ' '.join(f'{a / c:.2f}' for a, c in zip(h, o) if c > 0)
        print(f'{size_name(s):>8} {mh:10.2f} {mo:10.2f} {ratio:6.2f}  {each}')
        if ratio < 0.95:
            low.append(f'{size_name(s)} {ratio:.2f}')
        if s >= 1 << 20:
            big.append(ratio)
    summary = f'  below 0.95: {", ".join(low) if low else "none"}'
    if big:
        summary += f'; from 1M: {min(big):.2f}-{max(big):.2f}'
    print(summary)
    print()
PY
exit $status
