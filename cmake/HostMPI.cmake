# Point FindMPI at one flavour's compiler wrapper and launcher, so that the
# Open MPI and MPICH trees never mix headers, libraries or mpirun.
if(SHOAL_MPI STREQUAL "openmpi")
  set(MPI_C_COMPILER /usr/bin/mpicc.openmpi CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpirun.openmpi CACHE FILEPATH "" FORCE)
  # Root in CI, more ranks than cores in tests: both must be allowed.
  set(SHOAL_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe)
elseif(SHOAL_MPI STREQUAL "mpich")
  set(MPI_C_COMPILER /usr/bin/mpicc.mpich CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.mpich CACHE FILEPATH "" FORCE)
  set(SHOAL_MPIEXEC_FLAGS)
else()
  message(FATAL_ERROR "SHOAL_MPI must be openmpi or mpich, not '${SHOAL_MPI}'")
endif()
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "shoal: building against ${SHOAL_MPI} (${MPI_C_LIBRARIES})")
