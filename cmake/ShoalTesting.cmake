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
