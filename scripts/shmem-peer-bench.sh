#!/usr/bin/env bash
# shmem-peer-bench: shoal's OpenSHMEM beside Open MPI's own (oshmem) and the
# host MPI's MPI-3 RMA, at 2 PEs on this node, run by run. Outside CI.
#
#   scripts/shmem-peer-bench.sh [--runs R] [--build DIR] [-- shmem-bench options]
#
# The same source, tools/bench/shmem_bench{,_main}.c (the OpenSHMEM API
# alone), is built with Open MPI's /usr/bin/oshcc here and by DIR's tree
# (shoal's oshcc: DIR/bin/shmem-bench, default build/openmpi, a tree over
# Debian's Open MPI 4.1). Each run starts shoal's build under DIR/bin/oshrun,
# Open MPI's under /usr/bin/oshrun, then `shoal-bench shmem` (shoal and
# MPI_Put/MPI_Get + MPI_Win_flush interleaved) for the MPI-3 RMA column.
# Open MPI's oshmem may crash at exit: its figures are printed as they are
# measured, and its exit status is ignored. The medians over runs of each
# figure, and the ratios to shoal's, are printed at the end; each run's
# output stays in $OUT (default a new directory under /tmp).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
runs=5 build=$here/build/openmpi
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--runs R] [--build DIR] [-- shmem-bench options]" >&2; exit 2 ;;
  esac
done
for tool in /usr/bin/oshcc /usr/bin/oshrun "$build/bin/shmem-bench" "$build/bin/shoal-bench" "$build/bin/oshrun"; do
  [ -x "$tool" ] || { echo "shmem-peer-bench: $tool is missing (build the tree, install Open MPI's oshmem)" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /tmp/shmem-peer-bench.XXXXXX)}
mkdir -p "$out"
/usr/bin/oshcc -O2 -I"$here/tools/bench" "$here/tools/bench/shmem_bench_main.c" "$here/tools/bench/shmem_bench.c" \
  -o "$out/shmem-bench.oshmem" || exit 2

# Open MPI's shared-memory files of a run that crashed, and only those
# that appeared during it and no process maps any more.
run_and_tidy() {
  local before; before=$(ls /dev/shm | sort)
  timeout -k 5 600 "$@"
  local rc=$?
  for f in $(comm -13 <(echo "$before") <(ls /dev/shm | sort)); do
    case $f in vader_segment*|sm_segment*) grep -qs "/dev/shm/$f" /proc/[0-9]*/maps || rm -f "/dev/shm/$f" ;; esac
  done
  return $rc
}

for r in $(seq 1 "$runs"); do
  echo "shmem-peer-bench: run $r of $runs" >&2
  "$build/bin/oshrun" -np 2 "$build/bin/shmem-bench" "$@" > "$out/run$r-shoal.txt" 2>&1
  run_and_tidy /usr/bin/oshrun -np 2 "$out/shmem-bench.oshmem" "$@" > "$out/run$r-oshmem.txt" 2>&1
  "$build/bin/oshrun" -np 2 "$build/bin/shoal-bench" shmem "$@" > "$out/run$r-rma.txt" 2>&1
done

python3 - "$out" "$runs" <<'PY'
import statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def figures(path, column):
    rows = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return rows
    for line in lines:
        f = line.split()
        if len(f) > column and not line.startswith('#') and f[1].isdigit() and f[-1] == 'ok':
            rows[(f[0], int(f[1]))] = float(f[column])
    return rows
paths = {'shoal': ('shoal', 2), 'oshmem': ('oshmem', 2), 'mpi_rma': ('rma', 3)}
seen = {name: {} for name in paths}
for r in range(1, runs + 1):
    for name, (suffix, column) in paths.items():
        for key, us in figures(f'{out}/run{r}-{suffix}.txt', column).items():
            seen[name].setdefault(key, []).append(us)
keys = sorted(seen['shoal'], key=lambda k: (['put', 'get', 'put_mr', 'put_bl_mr', 'fetch_add', 'add', 'compare_swap', 'swap', 'fetch'].index(k[0]), k[1]))
print(f'# medians over {runs} runs, us per operation (put_mr, put_bl_mr: per message); ratio = the other / shoal')
print(f"# {'op':<12} {'bytes':>8} {'shoal':>9} {'oshmem':>9} {'mpi_rma':>9} {'oshmem/shoal':>13} {'rma/shoal':>10}  runs")
for key in keys:
    med = {n: statistics.median(seen[n][key]) if seen[n].get(key) else float('nan') for n in paths}
    n = '/'.join(str(len(seen[p].get(key, []))) for p in paths)
    print(f"  {key[0]:<12} {key[1]:>8} {med['shoal']:9.3f} {med['oshmem']:9.3f} {med['mpi_rma']:9.3f} "
          f"{med['oshmem'] / med['shoal']:12.2f}x {med['mpi_rma'] / med['shoal']:9.2f}x  {n}")
print(f'# each run: {out}')
PY
