#!/usr/bin/env bash
# usage: with_tuning.sh SHOAL LAUNCHER [FLAGS...] -- EDIT -- COMMAND [args...]
# Runs COMMAND with a tuning file of this machine (shoal tune --quick on 2
# ranks) edited so that the planner's choice is known whatever the machine
# measured. The file lives in a directory of its own, removed on exit.
#   fast-link          the link between nodes reads as measured and faster
#                      than a node's own memory: some collectives across
#                      (pretend) nodes are priced below two levels and go
#                      to the host MPI flat
#   host-faster:C,...  the host MPI's own runs of collectives C read as
#                      1 ns: the calls go to the host
#   host-repeat-faster:C,...
#                      the host MPI's own runs of collectives C read as 1 ns
#                      on unchanged inputs (host_repeat_ns) and as not
#                      measured on fresh ones (host_ns 0): repeated calls go
#                      to the host, fresh calls stay shoal's
#   host-fresh-faster:C,...
#                      the other way round (1 ns fresh, 9e11 ns unchanged,
#                      and shoal's own unchanged time 1 ns, so that the
#                      host's worse ratio, 9e11, is beyond shoal's, its
#                      priced fresh time in ns: against shoal's measured
#                      repeat time, 8 MiB went to the host once when a
#                      loaded tune priced it past 1.3 ms): a first call of a
#                      size goes to the host, its repeats stay shoal's
#   single-copy-wins   the cells and host lanes' bandwidths read as 0.05 GB/s:
#                      large blocks go single copy (the v-variants' large
#                      lane is cma), small ones still with the size headers
set -euo pipefail
shoal=$1 launcher=$2
shift 2
flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
[ "${1:-}" = -- ] && [ $# -ge 4 ] && [ "$3" = -- ] ||
    { echo "usage: with_tuning.sh SHOAL LAUNCHER [FLAGS...] -- EDIT -- COMMAND..." >&2; exit 2; }
edit=$2
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-tuning.XXXXXX")
trap 'rm -rf "$work"' EXIT
file=$work/tuning.json
env -u SHOAL_NODE_CLIQUES SHOAL_TUNING_FILE=$file "$launcher" "${flags[@]}" -np 2 "$shoal" tune --quick -o "$file" \
    >"$work/tune.out" 2>&1 || { cat "$work/tune.out"; echo "with_tuning: shoal tune failed" >&2; exit 1; }
case $edit in
fast-link)
    sed -i -e 's/"link_latency_ns": [0-9.e+-]*/"link_latency_ns": 500.0/' \
           -e 's/"link_bw": [0-9.e+-]*/"link_bw": 50.0/' \
           -e 's/"link_bw_node": [0-9.e+-]*/"link_bw_node": 100.0/' "$file"
    grep -q '"link_bw_node": 100.0' "$file" || { echo "with_tuning: no link figures in $file" >&2; exit 1; }
    ;;
single-copy-wins)
    # Each lane's object is on a line of its own, as the tune writes it.
    sed -i -E '/"(cells|host)": \{/ s#("bw_(dedicated|shared)"): [0-9.e+-]+#\1: 0.05#g' "$file"
    [ "$(grep -cE '"(cells|host)": \{.*"bw_dedicated": 0.05, "bw_shared": 0.05' "$file")" = 2 ] ||
        { echo "with_tuning: no cells and host lane figures in $file" >&2; exit 1; }
    ;;
host-faster:*)
    for c in $(tr , ' ' <<<"${edit#host-faster:}"); do
        # Both kinds of input; shoal's own repeat times stay as measured.
        sed -i -E "/\"shoal_repeat_ns\": \{/,/\}/! s#(\"$c/b[0-9]+/n[0-9]+\"): [0-9.e+-]+#\\1: 1.0#" "$file"
        grep -Eq "\"$c/b[0-9]+/n[0-9]+\": 1.0" "$file" || { echo "with_tuning: no host times of $c in $file" >&2; exit 1; }
    done
    ;;
host-repeat-faster:* | host-fresh-faster:*)
    fresh=0.0 repeat=1.0 own=
    [[ $edit = host-fresh-faster:* ]] && fresh=1.0 repeat=900000000000.0 own=1.0
    for c in $(tr , ' ' <<<"${edit#*:}"); do
        # Each object of the file's host times by its own key (the same
        # "C/bN/nM" keys appear in each).
        sed -i -E -e "/\"host_ns\": \{/,/\}/ s#(\"$c/b[0-9]+/n[0-9]+\"): [0-9.e+-]+#\\1: $fresh#" \
                  -e "/\"host_repeat_ns\": \{/,/\}/ s#(\"$c/b[0-9]+/n[0-9]+\"): [0-9.e+-]+#\\1: $repeat#" "$file"
        [ -z "$own" ] ||
            sed -i -E "/\"shoal_repeat_ns\": \{/,/\}/ s#(\"$c/b[0-9]+/n[0-9]+\"): [0-9.e+-]+#\\1: $own#" "$file"
        grep -Eq "\"$c/b[0-9]+/n[0-9]+\": $fresh(,|\$)" "$file" &&
            grep -Eq "\"$c/b[0-9]+/n[0-9]+\": $repeat(,|\$)" "$file" ||
            { echo "with_tuning: no host times of $c on both kinds of input in $file" >&2; exit 1; }
    done
    ;;
*) echo "with_tuning: unknown edit $edit" >&2; exit 2 ;;
esac
export SHOAL_TUNING_FILE=$file
"$@"
