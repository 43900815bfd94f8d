#!/usr/bin/env bash
# usage: expect-run.sh EXPECTED_EXIT_CODE [PATTERN...] -- COMMAND [ARGS...]
# Runs COMMAND, and passes when it exits with EXPECTED_EXIT_CODE and its
# output (stdout and stderr together) matches every extended-regex PATTERN.
# A test of a failure must see the failure, and see it said.
set -u
expected=$1; shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do patterns+=("$1"); shift; done
shift # the --
# Into a file, not $(...): a command substitution waits until every process
# holding the pipe has gone, and the test runner's watchdog holds it until
# its timeout even after the command has finished.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
rc=$?
output=$(cat "$log")
ok=1
if [ "$rc" -ne "$expected" ]; then
  echo "expect-run: exit code $rc, expected $expected"
  ok=0
fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" <<<"$output"; then
    echo "expect-run: output does not match: $p"
    ok=0
  fi
done
if [ $ok -eq 0 ]; then
  echo "---- output of: $*"
  echo "$output" | tail -n 60
  echo "0 passed, 1 failed"
  exit 1
fi
echo "expect-run: exit code $rc and ${#patterns[@]} pattern(s) as expected"
echo "1 passed, 0 failed"
