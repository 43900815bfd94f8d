#!/usr/bin/env bash
# usage: install_check.sh --tree DIR --cc CC --cmake CMAKE --pkg-config PKGCONFIG
#                         --runner RUNNER --mpicc MPICC [--np N] -- LAUNCHER [FLAGS...]
#
# The install as a user meets it. Installs the built tree DIR into a fresh
# temporary prefix, checks what landed there, then builds app.c against that
# prefix alone, twice:
#   pkg-config  CC app.c $(pkg-config --cflags --libs shoal)  (the .pc carries the MPI's flags)
#   CMake       a project of its own (consumer/) with find_package(shoal)
#               and target_link_libraries(... shoal::shoal); FindMPI must
#               land on the tree's MPI (MPICC, LAUNCHER), whatever is on PATH
# and runs each at np N (2) under LAUNCHER with SHOAL_VERBOSE=1: each must
# run the installed libshoal, have shoal take every allreduce with the right
# result (app.c checks both), and the library must log its plan.
# Then builds shoal's OpenSHMEM check with the installed oshcc and runs it
# with the installed oshrun.
# The prefix and the builds are removed on exit, on failure and on signals.
set -u

np=2
while [ $# -gt 0 ]; do
    case $1 in
        --tree) tree=$2; shift 2 ;;
        --cc) cc=$2; shift 2 ;;
        --cmake) cmake=$2; shift 2 ;;
        --pkg-config) pkgconfig=$2; shift 2 ;;
        --runner) runner=$2; shift 2 ;;
        --mpicc) mpicc=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "install_check: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "${tree:-}" ] || [ -z "${cc:-}" ] || [ -z "${cmake:-}" ] || [ -z "${pkgconfig:-}" ] ||
   [ -z "${runner:-}" ] || [ -z "${mpicc:-}" ] || [ $# -lt 1 ]; then
    echo "install_check: missing arguments (see the usage at the top of $0)" >&2
    exit 2
fi
launch=("$@")
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
prefix=$tmp/prefix
failures=0
fail() { echo "install_check: FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "install_check: ok: $*"; }

# 1. Install.
if ! "$cmake" --install "$tree" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "install_check: FAIL: cmake --install $tree --prefix $prefix"
    exit 1
fi
pc=$(find "$prefix" -name shoal.pc -path '*/pkgconfig/*' | head -1)
config=$(find "$prefix" -name shoalConfig.cmake -path '*/cmake/shoal/*' | head -1)
[ -n "$pc" ] && pass "shoal.pc installed ($pc)" || fail "no shoal.pc under $prefix"
[ -n "$config" ] && [ -f "$(dirname "$config")/shoalConfigVersion.cmake" ] &&
    pass "shoalConfig.cmake and its version file installed" || fail "no shoalConfig.cmake + version file under $prefix"
[ -f "$prefix/include/shoal.h" ] && pass "include/shoal.h installed" || fail "no include/shoal.h"
libshoal=$(find "$prefix" -name libshoal.so | head -1)
[ -n "$libshoal" ] && pass "libshoal.so installed ($libshoal)" || fail "no libshoal.so under $prefix"
tools=(shoal shoal-bench)
[ -e "$tree/bin/shoal-sim" ] && tools+=(shoal-sim)   # built in some trees only
for tool in "${tools[@]}"; do
    [ -x "$prefix/bin/$tool" ] || { fail "no bin/$tool"; continue; }
    # Run from the prefix: its RUNPATH must find libshoal and the MPI there.
    if "$prefix/bin/$tool" --help >"$tmp/tool.log" 2>&1 && grep -q "usage: $tool" "$tmp/tool.log"; then
        pass "bin/$tool runs from the prefix"
    else
        cat "$tmp/tool.log"
        fail "bin/$tool --help"
    fi
done
for wrapper in oshcc oshrun shoalcc; do
    [ -x "$prefix/bin/$wrapper" ] && pass "bin/$wrapper installed" || fail "no bin/$wrapper"
done
[ -f "$prefix/include/shmem.h" ] && [ -f "$prefix/include/shmemx.h" ] && [ -n "$(find "$prefix" -name libshoal-shmem.so)" ] &&
    pass "OpenSHMEM: include/shmem.h, shmemx.h and libshoal-shmem.so installed" || fail "no shmem.h, shmemx.h or libshoal-shmem.so"
extra=$(ls "$prefix/bin" | grep -vxE 'shoal|shoal-bench|shoal-sim|oshcc|oshrun|shoalcc' || true)
[ -z "$extra" ] && pass "bin/ holds the tools only" || fail "bin/ holds more than the tools: $extra"
[ $failures -eq 0 ] || { echo "install_check: $failures failure(s)"; exit 1; }

# 2. Build app.c through pkg-config, with the plain C compiler.
export PKG_CONFIG_PATH=$(dirname "$pc")
if flags=$("$pkgconfig" --cflags --libs shoal) && libdir=$("$pkgconfig" --variable=libdir shoal); then
    echo "install_check: pkg-config --cflags --libs shoal: $flags"
    # shellcheck disable=SC2086  # the flags are words
    if "$cc" -std=c11 -o "$tmp/app_pkgconfig" "$here/app.c" $flags -Wl,-rpath,"$libdir" -ldl >"$tmp/cc.log" 2>&1; then
        pass "built with pkg-config"
    else
        cat "$tmp/cc.log"
        fail "$cc app.c \$(pkg-config --cflags --libs shoal)"
    fi
else
    fail "pkg-config cannot read $pc"
fi
unset PKG_CONFIG_PATH

# 3. Build it with CMake: find_package(shoal) from the prefix. MPI_HOME
# would point FindMPI elsewhere than the package does: leave it out.
if env -u MPI_HOME "$cmake" -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release >"$tmp/consumer.log" 2>&1 &&
   "$cmake" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1; then
    pass "built with find_package(shoal) and shoal::shoal"
    cat "$tmp/consumer/found.txt"
    grep -qx "shoal_DIR=$(dirname "$config")" "$tmp/consumer/found.txt" ||
        fail "find_package(shoal) did not take the installed package"
    grep -qx "MPI_C_COMPILER=$mpicc" "$tmp/consumer/found.txt" ||
        fail "find_package(shoal) found another MPI than the tree's ($mpicc)"
    grep -qx "MPIEXEC_EXECUTABLE=${launch[0]}" "$tmp/consumer/found.txt" ||
        fail "find_package(shoal) found another launcher than the tree's (${launch[0]})"
else
    cat "$tmp/consumer.log"
    fail "the CMake project with find_package(shoal) did not build"
fi

# 4. Run both at np N: the installed libshoal, shoal's allreduce, right sums.
for app in "$tmp/app_pkgconfig" "$tmp/consumer/install_app"; do
    [ -x "$app" ] || continue
    name=$(basename "$app")
    SHOAL_VERBOSE=1 "$runner" 60 "${launch[@]}" -np "$np" "$app" >"$tmp/run.log" 2>&1
    rc=$?
    sed "s/^/  $name | /" "$tmp/run.log"
    if [ $rc -ne 0 ]; then
        fail "$name exited with $rc at np $np"
    elif ! grep -q "^install_app: libshoal $prefix/" "$tmp/run.log"; then
        fail "$name did not run the installed libshoal"
    elif ! grep -q "^install_app: $np ranks, .*: OK$" "$tmp/run.log"; then
        fail "$name: no OK verdict"
    elif ! grep -Eq "allreduce of .*bytes on $np local ranks.*: .* over " "$tmp/run.log"; then
        fail "$name: SHOAL_VERBOSE=1 logged no allreduce plan"
    else
        pass "$name at np $np: shoal took every allreduce, every result right"
    fi
done

# 5. An OpenSHMEM program (shoal's own check) built with the installed oshcc
# and started with the installed oshrun: it must link the installed
# libshoal-shmem and pass.
if "$prefix/bin/oshcc" -std=gnu11 -o "$tmp/shmem_check" "$here/../shmem/shmem_check.c" >"$tmp/oshcc.log" 2>&1; then
    pass "oshcc built an OpenSHMEM program"
    ldd "$tmp/shmem_check" | grep -q "libshoal-shmem.so => $prefix/" ||
        fail "the program built by oshcc does not load the installed libshoal-shmem"
    "$runner" 60 "$prefix/bin/oshrun" "${launch[@]:1}" -np "$np" "$tmp/shmem_check" --rounds 1 >"$tmp/shmem.log" 2>&1
    rc=$?
    grep -v "no room" "$tmp/shmem.log" | sed "s/^/  shmem_check | /"
    [ $rc -eq 0 ] && grep -q "checks of PE 0 passed" "$tmp/shmem.log" &&
        pass "oshrun -np $np shmem_check: every check passed" || fail "oshrun -np $np shmem_check (status $rc)"
else
    cat "$tmp/oshcc.log"
    fail "oshcc shmem_check.c"
fi

if [ $failures -ne 0 ]; then
    echo "install_check: $failures failure(s)"
    exit 1
fi
echo "install_check: passed"
