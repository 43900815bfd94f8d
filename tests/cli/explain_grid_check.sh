#!/usr/bin/env bash
# usage: explain_grid_check.sh SHOAL [--update]
# The planner's whole grid (shoal explain --grid: every collective, size,
# team size, lane set, on the built-in figures, on the recorded tuning file,
# and with forced choices) against the copies recorded in data/. A change
# that should not change behaviour (a refactoring) must leave every choice
# and every modelled time as it was; a change that means to re-records them
# with --update and says why in its commit.
set -u
shoal=$1; update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tuning=$here/../../docs/cost-model/tuning-2core-vm.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
# grid NAME ENV... : runs the grid with ENV and compares it with data/explain-grid-NAME.txt.xz
grid() {
  local name=$1; shift
  local want=$here/data/explain-grid-$name.txt.xz
  if ! env -u SHOAL_LANES -u SHOAL_ALGO "$@" >"$tmp/$name.txt" 2>"$tmp/$name.err"; then
    echo "FAIL: $name: shoal explain --grid failed"; cat "$tmp/$name.err"; failures=$((failures + 1)); return
  fi
  if [ "$update" = --update ]; then
    xz -9 -c "$tmp/$name.txt" >"$want"; echo "recorded $want ($(wc -l <"$tmp/$name.txt") lines)"; return
  fi
  xz -dc "$want" >"$tmp/$name.want"
  if ! cmp -s "$tmp/$name.want" "$tmp/$name.txt"; then
    echo "FAIL: $name: $(diff "$tmp/$name.want" "$tmp/$name.txt" | grep -c '^>') of $(wc -l <"$tmp/$name.want") lines differ from the recorded grid; the first:"
    diff "$tmp/$name.want" "$tmp/$name.txt" | head -n 12
    failures=$((failures + 1))
  else
    echo "ok: $name: $(wc -l <"$tmp/$name.txt") queries, every choice and modelled time as recorded"
  fi
}
grid builtin "$shoal" explain --grid
grid tuned "$shoal" explain --grid --tuning "$tuning"
grid forced SHOAL_LANES=cma+host SHOAL_ALGO=bcast:tree,reduce:sliced,allreduce:gathered "$shoal" explain --grid
[ "$failures" -eq 0 ] || { echo "$failures grid(s) differ"; exit 1; }
