#!/usr/bin/env bash
# usage: with_fast_link.sh SHOAL LAUNCHER [FLAGS...] -- COMMAND [args...]
# Runs COMMAND with a tuning file of this machine (shoal tune --quick on 2
# ranks) whose link between nodes reads as measured and faster than a
# node's own memory, so the cost model prices some collectives across
# (pretend) nodes below two levels and hands them to the host MPI flat.
# The file lives in a directory of its own, removed on exit.
set -euo pipefail
shoal=$1 launcher=$2
shift 2
flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
[ "${1:-}" = -- ] || { echo "usage: with_fast_link.sh SHOAL LAUNCHER [FLAGS...] -- COMMAND..." >&2; exit 2; }
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-fast-link.XXXXXX")
trap 'rm -rf "$work"' EXIT
file=$work/tuning.json
env -u SHOAL_NODE_CLIQUES SHOAL_TUNING_FILE=$file "$launcher" "${flags[@]}" -np 2 "$shoal" tune --quick -o "$file" >"$work/tune.out" 2>&1 ||
    { cat "$work/tune.out"; echo "with_fast_link: shoal tune failed" >&2; exit 1; }
sed -i -e 's/"link_latency_ns": [0-9.e+-]*/"link_latency_ns": 500.0/' \
       -e 's/"link_bw": [0-9.e+-]*/"link_bw": 50.0/' \
       -e 's/"link_bw_node": [0-9.e+-]*/"link_bw_node": 100.0/' "$file"
grep -q '"link_bw_node": 100.0' "$file" || { echo "with_fast_link: no link figures in $file" >&2; exit 1; }
export SHOAL_TUNING_FILE=$file
"$@"
