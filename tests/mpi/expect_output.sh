#!/usr/bin/env bash
# usage: expect_output.sh REGEX COMMAND...
# Passes when COMMAND exits 0 and its output (stdout and stderr) matches REGEX.
set -u
regex=$1; shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then echo "expect_output: exit status $rc"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$out"; then echo "expect_output: no line matches /$regex/"; exit 1; fi
exit 0
