#!/usr/bin/env bash
# usage: lean_entries.sh LIBSHOAL
# The point-to-point entry points a program calls once a message or more
# (HOT_ENTRY in src/mpi/shim_thread.c) must reach the host's call with no
# frame built: on x86-64, no push and no call from the symbol's start to its
# first jump. A few nanoseconds more a call turned Open MPI 4.1.4's fast path
# for 16-32 B messages slow (osu_bw at 0.66-0.70 of its rate with shoal
# loaded); speed itself is measured in benchmarks, this checks the shape.
# Skipped (77) where objdump is missing or the library is not x86-64.
set -u
lib=$1
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 77; }
objdump -f "$lib" | grep -q "x86-64" || { echo "SKIP: not an x86-64 library"; exit 77; }
dis=$(objdump -d --no-show-raw-insn "$lib") || { echo "FAIL: objdump -d $lib"; exit 1; }
failures=0
for f in MPI_Send MPI_Isend MPI_Recv MPI_Irecv MPI_Comm_rank MPI_Comm_size MPI_Iprobe MPI_Probe MPI_Rsend MPI_Ssend; do
  # The instructions of f up to and including its first jump.
  head=$(awk -v f="<$f>:" '$2 == f {on = 1; next} on && NF == 0 {exit} on {print; if ($2 ~ /^(jmp|je|jne)$/) exit}' <<<"$dis")
  if [ -z "$head" ]; then
    echo "FAIL: $f not found in $lib"; failures=$((failures + 1)); continue
  fi
  if grep -Eq "[[:space:]](push|call)[[:space:]]" <<<"$head"; then
    echo "FAIL: $f builds a frame or calls out before its check:"; echo "$head"; failures=$((failures + 1))
  else
    echo "ok: $f: $(wc -l <<<"$head") instructions to its first jump"
  fi
done
[ "$failures" -eq 0 ]
