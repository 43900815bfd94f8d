#!/usr/bin/env bash
# End-to-end checks of the shoal-sim command line: the documented commands
# run and print what the docs say, bad input fails with a message naming the
# field, a mapping written by `map` is accepted by `--mapping`, the figures
# are drawn, docs/SIM.md documents every parameter with its default.
# Usage: test_sim_cli.sh SHOAL_SIM [PLOT_SCRIPT [SIM_MD]]
set -u
sim=$1
plot=${2:-}
doc=${3:-}
work=$(mktemp -d /tmp/shoal-sim-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# expect_ok NAME REGEX CMD...: exit 0 and stdout matches REGEX
expect_ok() {
  local name=$1 regex=$2; shift 2
  checks=$((checks + 1))
  local out
  if ! out=$("$@" 2>&1); then
    echo "FAIL $name: exit $? from: $*"; echo "$out" | tail -5; fails=$((fails + 1)); return
  fi
  if ! grep -Eq -- "$regex" <<<"$out"; then
    echo "FAIL $name: output lacks /$regex/"; echo "$out" | tail -8; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}

# expect_fail NAME REGEX CMD...: non-zero exit, stderr matches REGEX
expect_fail() {
  local name=$1 regex=$2; shift 2
  checks=$((checks + 1))
  local out
  if out=$("$@" 2>&1); then
    echo "FAIL $name: succeeded but should fail: $*"; fails=$((fails + 1)); return
  fi
  if ! grep -Eq -- "$regex" <<<"$out"; then
    echo "FAIL $name: error lacks /$regex/: $out"; fails=$((fails + 1)); return
  fi
  echo "ok   $name ($(head -1 <<<"$out" | cut -c1-110))"
}

expect_ok help "commands:" "$sim" --help
expect_ok params "^vc_depth +=  *32" "$sim" params
expect_ok alltoall-4x4 "conflict-free phases at ideal: 15 of 15" "$sim" alltoall --topo torus:4x4 --msg 2K
expect_ok alltoall-table "^ +29 +29 .* 3 +0.3333 +below" "$sim" alltoall --topo torus:8x8 --msg 1K --phases 29 --threads 2
expect_ok alltoall-load "mean max link weight W +2.5079" "$sim" alltoall --topo torus:8x8 --engine load --quiet
expect_ok alltoall-nobarrier "whole all-to-all throughput" "$sim" alltoall --topo torus:4x4 --msg 1K --no-barrier --quiet
expect_ok alltoall-16x16x16-load "mean max link weight W" "$sim" alltoall --topo torus:16x16x16 --engine load --quiet --threads 2
expect_ok alltoall-auto-large "note: flit level would simulate .* running the link-load engine only" "$sim" alltoall --topo torus:16x16x16 --quiet --threads 2
expect_ok stride-ring "max link weight W_i +2" "$sim" stride --topo ring:8 --stride 4
expect_ok stride-3 "max link weight W_i +3" "$sim" stride --topo ring:8 --stride 3 --engine load
expect_ok latency "equal" "$sim" latency --topo torus:8x8 --router-stages 3 --link-latency 2
expect_ok random "saturated" "$sim" random --topo torus:4x4 --loads 0.2,1.0 --measure 3000
printf '%s\n' 1 2 3 0 > "$work/perm4.txt"
expect_ok perm "4 messages" "$sim" perm --topo ring:4 --perm "$work/perm4.txt" --msg 512
printf 'topo = ring:8\nmsg = 1K   # a comment\nvcs = 4\n' > "$work/sim.conf"
expect_ok config "torus:8, 8 nodes.*4 VCs" "$sim" alltoall --config "$work/sim.conf" --quiet
expect_ok set "2 VCs" "$sim" alltoall --config "$work/sim.conf" --set vcs=2 --quiet

# the mapper writes a mapping that any command then accepts
expect_ok map "W after" "$sim" map --topo torus:4x4 --map-iters 3000 --msg 1K --out "$work/map.txt" --seed 3
expect_ok mapping "mapping $work/map.txt" "$sim" alltoall --topo torus:4x4 --msg 1K --mapping "$work/map.txt" --quiet
checks=$((checks + 1))
if [ "$(grep -cv '^#' "$work/map.txt")" = 16 ]; then echo "ok   map-file-lines"; else echo "FAIL map-file-lines"; fails=$((fails + 1)); fi

# bad input names the field
expect_fail bad-topo "field 'topo'" "$sim" alltoall --topo torus:8x0
expect_fail bad-kind "unknown kind 'tours'" "$sim" alltoall --topo tours:8x8
expect_fail zero-width "field 'link_width'" "$sim" alltoall --topo torus:4x4 --link-width 0
expect_fail vct-too-big "field 'packet_flits'.*never" "$sim" alltoall --topo torus:4x4 --flow-control vct
expect_fail unknown-param "unknown field 'vcz'" "$sim" alltoall --vcz 3
expect_fail bad-msg "field 'msg'" "$sim" alltoall --msg lots
expect_fail bad-config "line 2: field 'vcs'" bash -c "printf 'msg = 1K\nvcs = many\n' > $work/bad.conf; $sim alltoall --config $work/bad.conf"
printf '%s\n' 0 1 2 2 > "$work/dup.txt"
expect_fail mapping-dup "already used by logical rank 2" "$sim" alltoall --topo ring:4 --mapping "$work/dup.txt"
printf '%s\n' 0 1 2 > "$work/short.txt"
expect_fail mapping-short "3 entries, but the topology has 4" "$sim" alltoall --topo ring:4 --mapping "$work/short.txt"
expect_fail perm-bad "permutation file" "$sim" perm --topo ring:4 --perm "$work/dup.txt"
expect_fail stride-range "needs a stride in 1..7" "$sim" stride --topo ring:8 --stride 9
expect_fail deadlock "deadlock: no flit moved" "$sim" stride --topo ring:8 --stride 3 --dateline off --vcs 1 --vc-depth 2 --msg 512 --deadlock-window 1000
expect_fail unknown-command "unknown command" "$sim" simulate

# figures, when the plot script and matplotlib are there
if [ -n "$plot" ] && python3 -c 'import matplotlib' 2>/dev/null; then
  expect_ok png "wrote .*-links.png" env SHOAL_SIM_PLOT="$plot" "$sim" alltoall --topo torus:4x4 --msg 1K --quiet --png "$work/fig" --links-phase 5
  checks=$((checks + 1))
  if [ -s "$work/fig-phases.png" ] && [ -s "$work/fig-phase-links.png" ] && python3 -c "import json; json.load(open('$work/fig.json'))"; then
    echo "ok   png-files"; else echo "FAIL png-files"; fails=$((fails + 1)); fi
  expect_ok png-random "wrote .*-latency.png" env SHOAL_SIM_PLOT="$plot" "$sim" random --topo ring:8 --loads 0.3,0.6 --measure 2000 --png "$work/rnd"
fi

# the user documentation lists every parameter with the default the code has
if [ -n "$doc" ]; then
  while read -r row; do
    checks=$((checks + 1))
    if grep -qF -- "$row" "$doc"; then :; else echo "FAIL doc: docs/SIM.md lacks the row starting '$row'"; fails=$((fails + 1)); fi
  done < <("$sim" params --markdown | tail -n +3 | cut -d'|' -f1-3)
  echo "ok   doc rows checked"
fi

echo "test_sim_cli: $checks checks, $fails failures"
[ "$fails" = 0 ]
