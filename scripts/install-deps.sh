#!/usr/bin/env bash
# Installs what shoal needs on a Debian-like machine, only what is missing.
# Idempotent and quiet when everything is present; run by `make` targets.
set -euo pipefail

# gfortran: only for the tests of shoal's Fortran entry points. python3-venv
# and python3-dev: the PyPI wheel MPIs' environments and mpi4py built in them
# (scripts/pypi-mpis.sh).
debs=(cmake make gcc gfortran pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev python3 python3-pip
      python3-venv python3-dev)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for the report and plot scripts only.
py=python3
if ! $py -c 'import matplotlib' 2>/dev/null; then
  echo "install-deps: installing matplotlib"
  $py -m pip install -q matplotlib 2>/dev/null || $py -m pip install -q --break-system-packages matplotlib
fi
