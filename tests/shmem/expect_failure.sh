#!/usr/bin/env bash
# usage: expect_failure.sh LIMIT REGEX COMMAND...
# Passes when COMMAND ends within LIMIT seconds with a non-zero status and
# its output (stdout and stderr) has a line matching REGEX: a misuse is
# reported, not survived, crashed through or hung on.
set -u
limit=$1 regex=$2; shift 2
start=$(date +%s)
out=$(timeout -k 5 "$limit" "$@" 2>&1); rc=$?
elapsed=$(( $(date +%s) - start ))
printf '%s\n' "$out" | head -20
# By the clock: mpirun itself exits 137 when a rank died of SIGKILL.
if [ $elapsed -ge "$limit" ]; then echo "expect_failure: hung (killed after ${limit}s)"; exit 1; fi
if [ $rc -eq 0 ]; then echo "expect_failure: the job claims success"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$out"; then echo "expect_failure: no line matches /$regex/"; exit 1; fi
echo "expect_failure: ended with status $rc and the message"
exit 0
