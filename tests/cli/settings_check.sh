#!/usr/bin/env bash
# usage: settings_check.sh SHOAL README [--update]
# README's Configuration table is generated from the settings table in
# src/core/core_config.c (shoal settings --markdown): fails where the two
# differ, rewrites README's copy with --update. Also checks that every
# SHOAL_* variable the library's sources read with getenv is in the table.
set -u
shoal=$1; readme=$2; update=${3:-}
marker='<!-- generated from src/core/core_config.c'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$shoal" settings --markdown >"$tmp/want" || { echo "FAIL: shoal settings --markdown failed"; exit 1; }
# README's table: the lines after the marker up to the first blank line.
awk -v m="$marker" 'found && /^$/ {exit} found {print} index($0, m) == 1 {found = 1}' "$readme" >"$tmp/have"
[ -s "$tmp/have" ] || { echo "FAIL: no generated settings table in $readme (marker: $marker)"; exit 1; }
if [ "$update" = --update ]; then
  awk -v m="$marker" -v table="$tmp/want" '
    skipping && /^$/ {skipping = 0}
    skipping {next}
    {print}
    index($0, m) == 1 {while ((getline line < table) > 0) print line; skipping = 1}' "$readme" >"$tmp/readme"
  cat "$tmp/readme" >"$readme"; echo "rewrote the settings table in $readme"; exit 0
fi
failures=0
if ! cmp -s "$tmp/want" "$tmp/have"; then
  echo "FAIL: README's settings table differs from shoal settings --markdown (settings_check.sh --update rewrites it):"
  diff "$tmp/have" "$tmp/want" | head -n 20; failures=$((failures + 1))
else
  echo "ok: README's settings table is the generated one ($(($(wc -l <"$tmp/want") - 2)) settings)"
fi
# Every getenv("SHOAL_...") in the library has a row (the table is the one place settings are read).
src=$(cd "$(dirname "$0")/../../src" && pwd)
for name in $(grep -rhoE 'getenv\("SHOAL_[A-Z_]+' "$src" | sed 's/getenv("//' | sort -u); do
  if ! grep -q "| \`$name\` |" "$tmp/want"; then
    echo "FAIL: $name is read in src/ but has no row in the settings table"; failures=$((failures + 1))
  fi
done
# Every setting the table documents is one the library knows (no stale rows).
while read -r name; do
  grep -rq "\"$name\"" "$src/core/core_config.c" || { echo "FAIL: $name is documented but not in the table"; failures=$((failures + 1)); }
done < <(grep -oE '^\| `SHOAL_[A-Z_]+`' "$tmp/have" | tr -d '|` ')
[ "$failures" -eq 0 ]
