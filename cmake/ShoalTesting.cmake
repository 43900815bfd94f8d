# Test helpers shared by every tests/ folder.
#
# Every test's name begins with SHOAL_TEST_PREFIX, by default SHOAL_MPI: the
# preset's name (openmpi.coll.np2, mpich.coll.np2), or in a SHOAL_MPI=auto tree
# the flavour read from the MPI's header (cmake/HostMPI.cmake): openmpi, mpich
# or other. A tree of another MPI of the same flavour names its own (make
# test's wheel trees: ompi5, mpich5), so that its tests are told apart.
#
# SHOAL_TEST_SAMPLED=ON registers a sampled subset (tests/mpi, the install
# test, mpi4py): every collective, lane and datatype class at random sizes
# from a printed seed, in a few minutes; no unit, simulator, bench, CLI or
# multi-host tests. make test runs the MPIs from PyPI's wheels that way.
#
# shoal_add_mpi_test(NAME <name> NP <n> COMMAND <exe> [args...]
#                    [TIMEOUT <s>] [LABELS <l>...] [ENV <K=V>...])
# runs <exe> under this tree's launcher through scripts/mpi-test-run.sh, which
# kills the whole process group on timeout so that no rank outlives its test.

set(SHOAL_TEST_RUNNER ${CMAKE_SOURCE_DIR}/scripts/mpi-test-run.sh)
set(SHOAL_TEST_PREFIX "" CACHE STRING "what test names begin with (empty: the MPI flavour, SHOAL_MPI)")
option(SHOAL_TEST_SAMPLED "register only a sampled subset of the MPI tests (trees of further MPIs)" OFF)
if(SHOAL_TEST_PREFIX)
  set(SHOAL_TEST_NAME ${SHOAL_TEST_PREFIX})
else()
  set(SHOAL_TEST_NAME ${SHOAL_MPI})
endif()

function(shoal_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;NP;TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  list(GET T_COMMAND 0 exe)
  list(REMOVE_AT T_COMMAND 0)
  if(TARGET ${exe})
    set(exe $<TARGET_FILE:${exe}>)
  endif()
  add_test(NAME ${SHOAL_TEST_NAME}.${T_NAME}
           COMMAND ${SHOAL_TEST_RUNNER} ${T_TIMEOUT}
                   ${MPIEXEC_EXECUTABLE} ${SHOAL_MPIEXEC_FLAGS} -np ${T_NP} ${exe} ${T_COMMAND})
  math(EXPR backstop "${T_TIMEOUT} + 30")
  set_tests_properties(${SHOAL_TEST_NAME}.${T_NAME} PROPERTIES TIMEOUT ${backstop}
                       LABELS "mpi;${T_LABELS}" ENVIRONMENT "${T_ENV}")
endfunction()

# shoal_add_unit_test(NAME <name> COMMAND <exe> [args...] [LABELS ...])
function(shoal_add_unit_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${SHOAL_TEST_NAME}.${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${SHOAL_TEST_NAME}.${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
                       LABELS "unit;${T_LABELS}" ENVIRONMENT "${T_ENV}")
endfunction()

# shoal_sanitize_shoal_only(): called at the end of a folder whose tests run
# MPI programs, so that a sanitizer tree judges shoal's code, not the host
# MPI's. The host keeps what MPI_Init allocated until exit (LeakSanitizer
# would fail every MPI program on it), and its uninstrumented libraries
# take locks ThreadSanitizer cannot follow: the folder's tests that set no
# options of their own run as the sanitize label's do, with leak detection
# off and uninstrumented modules ignored. Tests without MPI (tests/unit)
# keep leak detection.
function(shoal_sanitize_shoal_only)
  if(NOT SHOAL_SANITIZE)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    get_test_property(${t} ENVIRONMENT env)
    if(NOT env MATCHES "ASAN_OPTIONS")
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
    if(NOT env MATCHES "TSAN_OPTIONS")
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "TSAN_OPTIONS=ignore_noninstrumented_modules=1")
    endif()
  endforeach()
endfunction()
