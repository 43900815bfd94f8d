#!/usr/bin/env bash
# usage: cli_check.sh [--two-ranks] SHOAL REPORT_PY LAUNCH...
# The shoal command end to end, as a user meets it: explain on the built-in
# defaults, forced choices and bad input; then a quick tune at np=2 whose
# file the library must accept (explain names it and uses its factors);
# then evaluate on a small grid and the report made from both. Timings are
# never asserted, only that everything is measured, written and read back.
# --two-ranks: no run of more ranks than the machine's 2 cores (the merge of a
# 3-rank tune is left out), for an MPI whose ranks poll without yielding.
set -u
oversubscribe=1
if [ "${1:-}" = "--two-ranks" ]; then
  oversubscribe=0
  shift
fi
shoal=$1; report=$2; shift 2
launch=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CODE PATTERN -- CMD...: runs CMD into a file (see expect-run.sh).
expect() {
  local code=$1 pattern=$2; shift 3
  "$@" >"$tmp/out" 2>&1
  local rc=$?
  if [ "$rc" -ne "$code" ] || { [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$tmp/out"; }; then
    fail "$* exited $rc (expected $code) or did not print /$pattern/"
    tail -n 30 "$tmp/out"
  fi
}
export SHOAL_TUNING_FILE=$tmp/absent.json

expect 0 "^chosen: [a-z]+ over (cells|cma|host)" -- "$shoal" explain allreduce 1M -np 4
expect 0 "figures: built-in defaults" -- "$shoal" explain bcast 64 -np 2
expect 0 "^chosen: [a-z]+ over host" -- env SHOAL_LANES=host "$shoal" explain allgather 64K -np 4
expect 0 "^chosen: tree over" -- env SHOAL_ALGO=reduce:tree "$shoal" explain reduce 64K -np 8
expect 0 "excluded by SHOAL_LANES" -- env SHOAL_LANES=cells "$shoal" explain gather 1M -np 4
expect 2 "not a collective" -- "$shoal" explain allreduse 1M
expect 2 "not a size" -- "$shoal" explain allreduce 12Q
expect 0 "least regret of [0-9]+ candidates" -- "$shoal" explain bcast 256K -np 2 --inputs repeat
# The guard band between lanes: the defaults price a 1 MiB gather at np 2
# over the cells 2 % below push over cma, and the single copy is taken.
expect 0 "^chosen: push over cma, .*single copy, taken within the 15 % guard band of pull over cells" -- \
  "$shoal" explain gather 1M -np 2 --cores 2
expect 0 "^planning: [0-9.]+ us, once per size" -- "$shoal" explain allreduce 4K -np 4
# Across nodes: the steps, each node step's plan, and the calls the host runs whole.
expect 0 "^  first    reduce on the node's 8 ranks: [a-z]+ over" -- "$shoal" explain allreduce 1M --nodes 4 --ppn 8
expect 0 "^  between  allreduce by the host MPI on 4 leaders" -- "$shoal" explain allreduce 1M --nodes 4 --ppn 8
expect 0 "^  last     bcast on the node's 8 ranks" -- "$shoal" explain allreduce 1M --nodes 4 --ppn 8
expect 0 "^two levels: node gather of every row" -- "$shoal" explain alltoall 1K --nodes 2 --ppn 4
# Two levels or the host flat: both priced; a guessed link keeps two levels
# but for alltoall's measured crossover.
expect 0 "the host MPI runs it flat .alltoall above 32 KiB a pair" -- "$shoal" explain alltoall 1M --nodes 2 --ppn 4
expect 0 "modelled [0-9.]+ us; the host MPI flat on all 8 ranks [0-9.]+ us .*two levels .the link is a guess" -- "$shoal" explain allgather 1M --nodes 2 --ppn 4
expect 0 "two levels .SHOAL_ACROSS_NODES=two" -- env SHOAL_ACROSS_NODES=two "$shoal" explain alltoall 1M --nodes 2 --ppn 4
expect 0 "^two levels: node gatherv of every row to each leader, the leaders' exchange point-to-point in uniform-stride" -- "$shoal" explain alltoallv 1K --nodes 3 --ppn 4
expect 0 "host MPI runs it whole: no two-level form" -- "$shoal" explain alltoallv 64K --nodes 2 --ppn 4
# Scans: their steps, the host's on a guessed link, the node step the host's above 8 KiB a rank.
expect 0 "^  between  exscan by the host MPI on 3 nodes' last ranks" -- "$shoal" explain scan 64 --nodes 3 --ppn 4
expect 0 "the host MPI runs it flat .a scan where ranks outnumber cores" -- "$shoal" explain exscan 64 --nodes 3 --ppn 4 --cores 2
expect 0 "two levels .the link is a guess" -- "$shoal" explain exscan 64 --nodes 3 --ppn 4 --cores 4
expect 0 "two levels .SHOAL_ACROSS_NODES=two" -- env SHOAL_ACROSS_NODES=two "$shoal" explain exscan 64 --nodes 3 --ppn 4
expect 0 "^  first    exscan on the node's 4 ranks: the host MPI's .above 8 KiB a rank" -- "$shoal" explain exscan 64K --nodes 3 --ppn 4
expect 0 "^the host MPI's own: the MPI layer leaves scans above 8 KiB a rank to it" -- "$shoal" explain scan 64K -np 2
expect 0 "host MPI runs it whole: one rank per node" -- "$shoal" explain bcast 8 --nodes 3 --ppn 1
expect 0 "host MPI runs it whole: SHOAL_ACROSS_NODES=0" -- env SHOAL_ACROSS_NODES=0 "$shoal" explain bcast 8 --nodes 2 --ppn 2
expect 2 "with --nodes, only --ppn and --cores" -- "$shoal" explain bcast 8 --nodes 2 --ppn 2 -np 4
# Long messages: every segment size priced, the link's figures named.
expect 0 "link: 3.00 us a message \+ 0.100 ns a byte; built-in guess" -- "$shoal" explain bcast 4M --nodes 2 --ppn 4
expect 0 "^ +4194304 +1 .*<- chosen .the link is a guess: whole.$" -- "$shoal" explain bcast 4M --nodes 2 --ppn 4 --cores 8
expect 0 "segments run one after another" -- "$shoal" explain allreduce 4M --nodes 2 --ppn 8 --cores 2
expect 0 "^ +4096 +1024 .*<- forced .SHOAL_NODE_SEGMENT.$" -- env SHOAL_NODE_SEGMENT=4K "$shoal" explain reduce 4M --nodes 2 --ppn 2
expect 0 "unchanged \(us\) +regret" -- "$shoal" explain allgather 1M -np 4 --inputs repeat
expect 0 "inputs: unchanged since the last call" -- "$shoal" explain scatter 1M -np 2 --inputs unchanged
expect 0 "excluded by the first call's grouping" -- "$shoal" explain reduce 4M -np 8 --cores 2 --inputs repeat
expect 2 "fresh, unchanged or repeat" -- "$shoal" explain bcast 1M --inputs warm
expect 2 "unknown command" -- "$shoal" frobnicate
expect 0 "usage: shoal COMMAND" -- "$shoal" --help

# tune: a file the library reads back.
expect 0 "wrote $tmp/tuning.json" -- "${launch[@]}" -np 2 "$shoal" tune --quick -o "$tmp/tuning.json" \
  --samples "$tmp/samples.json"
# The version the library writes, from its own header.
version=$(sed -n 's/^#define PLAN_TUNING_VERSION \([0-9]*\).*/\1/p' "$(dirname "$0")/../../src/planner/plan_model.h")
python3 - "$tmp/tuning.json" "$tmp/samples.json" "$version" <<'PY' || fail "the tuning file or the samples are not as written"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["shoal_tuning"] == int(sys.argv[3]), "version"
for lane in ("cells", "cma", "host"):
    c = t["lanes"][lane]
    assert c["latency_ns"] > 0 and c["bw_dedicated"] + c["bw_shared"] > 0, lane
assert t["copy_bw"] > 0 and t["copy_mem_bw"] > 0 and t["reduce_bw"] > 0
assert t["sync_ns"] > 0 and t["oversub_step_ns"] >= 0
assert len(t["factors"]) >= 20, "calibration factors"
assert all(0.125 <= f <= 8 for f in t["factors"].values())
s = json.load(open(sys.argv[2]))
assert {x["lane"] for x in s["lanes"]} >= {"cells", "host"}
assert {x["movers"] for x in s["lanes"]} == {1, 2}
assert all(x["measured_ns"] > 0 and x["modelled_ns"] > 0 for x in s["lanes"])
PY
# --merge adds the calibration of another process count and keeps the rest.
if ((oversubscribe)); then
  expect 0 "merging into $tmp/tuning.json" -- "${launch[@]}" -np 3 "$shoal" tune --quick --merge -o "$tmp/tuning.json"
  python3 - "$tmp/tuning.json" <<'PY' || fail "--merge did not keep n2 and add n4 factors"
import json, sys
keys = json.load(open(sys.argv[1]))["factors"]
assert any(k.endswith("/n2") for k in keys) and any(k.endswith("/n4") for k in keys), sorted(keys)[:5]
PY
fi
# ... and refuses to merge into nothing (MPI_Abort: the exit code is the launcher's).
"${launch[@]}" -np 2 "$shoal" tune --quick --merge -o "$tmp/absent-too.json" >"$tmp/out" 2>&1 &&
  fail "tune --merge into a missing file succeeded"
grep -q "not a usable tuning file" "$tmp/out" || { fail "tune --merge into a missing file: no message"; tail "$tmp/out"; }
SHOAL_TUNING_FILE=$tmp/tuning.json expect 0 "figures: $tmp/tuning.json, measured on" -- \
  "$shoal" explain allreduce 64K -np 2
# A measured link faster than a node's memory: the host's flat allgather wins.
sed -e 's/"link_latency_ns": [0-9.]*/"link_latency_ns": 500.0/' -e 's/"link_bw": [0-9.]*/"link_bw": 50.0/' \
  -e 's/"link_bw_node": [0-9.]*/"link_bw_node": 100.0/' "$tmp/tuning.json" >"$tmp/fast-link.json"
SHOAL_TUNING_FILE=$tmp/fast-link.json expect 0 "ranks [0-9.]+ us .x1.25 guard band.: the host MPI runs it flat$" -- \
  "$shoal" explain allgather 1M --nodes 2 --ppn 2
# A tuning file written elsewhere refuses to load: reported, defaults used.
sed 's/"machine": "[^"]*"/"machine": "another machine, 4096 cores"/' "$tmp/tuning.json" >"$tmp/foreign.json"
SHOAL_TUNING_FILE=$tmp/foreign.json expect 0 "another machine" -- "$shoal" explain allreduce 64K -np 2
SHOAL_TUNING_FILE=$tmp/foreign.json expect 0 "figures: built-in defaults" -- "$shoal" explain allreduce 64K -np 2
expect 2 "needs at least 2 ranks" -- "${launch[@]}" -np 1 "$shoal" tune --quick -o "$tmp/one.json"
# Two ranks that may run only on one CPU would time the scheduler: refused,
# no file written.
one_cpu=$(awk '/^Cpus_allowed_list/ { split($2, c, "[-,]"); print c[1] }' /proc/self/status)
expect 2 "ranks 0 and 1 may run only on one CPU" -- "${launch[@]}" -np 2 taskset -c "$one_cpu" "$shoal" tune --quick \
  -o "$tmp/one-cpu.json"
[ -e "$tmp/one-cpu.json" ] && fail "tune on one CPU wrote a tuning file"

# evaluate on a small grid, then the report from both files.
SHOAL_TUNING_FILE=$tmp/tuning.json expect 0 "" -- "${launch[@]}" -np 2 "$shoal" evaluate -m 4:1K \
  --colls barrier,allreduce,gather --batches 1 --json "$tmp/eval.json"
python3 - "$tmp/eval.json" <<'PY' || fail "evaluate's JSON"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["np"] == 2 and e["model"].endswith("tuning.json")
colls = {p["coll"] for p in e["points"]}
assert colls == {"barrier", "allreduce", "gather"}, colls
assert len([p for p in e["points"] if p["coll"] == "allreduce"]) == 5  # 4, 16, 64, 256, 1K
for p in e["points"]:
    assert p["candidates"], p
    assert any(c["algo"] == p["chosen"]["algo"] for c in p["candidates"])
PY
if python3 -c "import matplotlib" 2>/dev/null; then
  expect 0 "wrote .*report.md" -- python3 "$report" --samples "$tmp/samples.json" --evaluate "$tmp/eval.json" \
    --out "$tmp/report"
  # 11 points; one whose chosen candidate could not be timed forced is left out of the share.
  grep -Eq "^\| 2 \| powers of 4 \(calibrated\) \| tuning.json \| (9|10|11) \| [0-9]+ \| [0-9.]+ % \| [0-9.]+ % \| [0-9.]+ \|" \
    "$tmp/report/report.md" ||
    { fail "report: choice-quality row"; grep -A4 "^| np" "$tmp/report/report.md"; }
  [ -s "$tmp/report/lanes.png" ] || fail "report: no lanes.png"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every check passed"
