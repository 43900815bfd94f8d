#!/usr/bin/env bash
# usage: expect_output.sh REGEX [--and REGEX]... [--not REGEX2] COMMAND...
# Passes when COMMAND exits 0, its output (stdout and stderr) has a line
# matching REGEX (and one matching each --and REGEX) and, with --not, no
# line matching REGEX2. Exit status 77 (skipped) passes through.
set -u
regexes=("$1"); shift
while [ "${1:-}" = "--and" ]; do regexes+=("$2"); shift 2; done
absent=
if [ "${1:-}" = "--not" ]; then absent=$2; shift 2; fi
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -eq 77 ]; then echo "expect_output: skipped (exit status 77)"; exit 77; fi
if [ $rc -ne 0 ]; then echo "expect_output: exit status $rc"; exit 1; fi
for regex in "${regexes[@]}"; do
  if ! grep -Eq -- "$regex" <<<"$out"; then echo "expect_output: no line matches /$regex/"; exit 1; fi
done
if [ -n "$absent" ] && grep -Eq -- "$absent" <<<"$out"; then echo "expect_output: a line matches /$absent/"; exit 1; fi
exit 0
