# Which host MPI this tree is built against: one libshoal per MPI ABI.
#
#   SHOAL_MPI=auto      the MPI that CMake's FindMPI finds: MPI_HOME (or
#                       $MPI_HOME), MPI_C_COMPILER, else the mpiexec and mpicc
#                       on PATH. The default: a site's module-loaded MPI.
#   SHOAL_MPI=openmpi   Debian's Open MPI (/usr/bin/mpicc.openmpi); a preset
#   SHOAL_MPI=mpich     Debian's MPICH (/usr/bin/mpicc.mpich); a preset
#
# `make build` and `make test` use the two presets. Either way the flavour is
# read from the MPI header (cmake/ShoalMPIInfo.c), never from a path:
#   SHOAL_MPI_FLAVOUR   openmpi, mpich (the MPICH family: MPICH, Intel MPI,
#                       MVAPICH, Cray MPICH), abi (the MPI-5 standard ABI,
#                       MPICH 5's mpicc_abi: any MPI that implements it and
#                       its launcher), or other
#   SHOAL_MPI_VARIANT   the family member (openmpi, mpich, intel, mvapich, ...)
#   SHOAL_MPI_VERSION   the library's version from its header
# and afterwards SHOAL_MPI, as a normal variable over the cache entry, names
# the flavour: the tests are named after it (openmpi.coll.np2, ...) and shaped
# by it, in a preset tree exactly as before.

# Where a C wrapper's siblings (launcher, Fortran wrapper) are looked for:
# its folder, and the suffix its name carries after "mpicc" (".mpich" in
# mpicc.mpich gives mpiexec.mpich), empty for a plain mpicc.
function(shoal_wrapper_siblings wrapper bin_var suffix_var)
  get_filename_component(bin "${wrapper}" DIRECTORY)
  get_filename_component(name "${wrapper}" NAME)
  string(REGEX REPLACE "^mpicc" "" suffix "${name}")
  if(suffix STREQUAL name)
    set(suffix "")
  endif()
  set(${bin_var} "${bin}" PARENT_SCOPE)
  set(${suffix_var} "${suffix}" PARENT_SCOPE)
endfunction()

set(SHOAL_MPI_REQUEST "${SHOAL_MPI}")
if(SHOAL_MPI STREQUAL "openmpi")
  # Point FindMPI at one flavour's compiler wrapper and launcher, so that the
  # Open MPI and MPICH trees never mix headers, libraries or mpirun.
  set(MPI_C_COMPILER /usr/bin/mpicc.openmpi CACHE FILEPATH "" FORCE)
  set(MPI_Fortran_COMPILER /usr/bin/mpif90.openmpi CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpirun.openmpi CACHE FILEPATH "" FORCE)
elseif(SHOAL_MPI STREQUAL "mpich")
  set(MPI_C_COMPILER /usr/bin/mpicc.mpich CACHE FILEPATH "" FORCE)
  set(MPI_Fortran_COMPILER /usr/bin/mpif90.mpich CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.mpich CACHE FILEPATH "" FORCE)
elseif(SHOAL_MPI STREQUAL "auto")
  # A compiler wrapper the user names fixes the MPI. FindMPI would look for
  # the launcher on PATH first, which may be another MPI's: take the one
  # beside the wrapper, with the wrapper's suffix where it has one
  # (mpicc.mpich: mpiexec.mpich).
  if(MPI_C_COMPILER)
    if(IS_ABSOLUTE "${MPI_C_COMPILER}")
      set(_shoal_mpicc "${MPI_C_COMPILER}")
    else()
      find_program(_shoal_found NAMES "${MPI_C_COMPILER}")
      set(_shoal_mpicc "${_shoal_found}")
      unset(_shoal_found CACHE)
    endif()
    if(NOT _shoal_mpicc OR NOT EXISTS "${_shoal_mpicc}")
      message(FATAL_ERROR "shoal: MPI_C_COMPILER=${MPI_C_COMPILER} is not a program")
    endif()
    shoal_wrapper_siblings("${_shoal_mpicc}" _shoal_mpi_bin _shoal_suffix)
    if(NOT MPIEXEC_EXECUTABLE)
      find_program(_shoal_found NAMES mpiexec${_shoal_suffix} mpirun${_shoal_suffix} mpiexec mpirun
                   HINTS "${_shoal_mpi_bin}" NO_DEFAULT_PATH)
      set(_shoal_mpiexec "${_shoal_found}")
      unset(_shoal_found CACHE)
      if(_shoal_mpiexec)
        set(MPIEXEC_EXECUTABLE "${_shoal_mpiexec}" CACHE FILEPATH "Executable for running MPI programs.")
      endif()
    endif()
  endif()
else()
  message(FATAL_ERROR "SHOAL_MPI must be auto, openmpi or mpich, not '${SHOAL_MPI}'")
endif()

# Fortran only builds the tests of shoal's Fortran entry points (the library
# itself is C): without a Fortran compiler they are left out.
include(CheckLanguage)
check_language(Fortran)
if(NOT SHOAL_MPI STREQUAL "auto")
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    find_package(MPI REQUIRED COMPONENTS C OPTIONAL_COMPONENTS Fortran)
  else()
    find_package(MPI REQUIRED COMPONENTS C)
  endif()
else()
  # C first; then Fortran only through the wrapper beside the C one (or the
  # one the user names): FindMPI would otherwise take any mpif90 on PATH,
  # possibly another MPI's, and a test would mix two MPIs.
  find_package(MPI REQUIRED COMPONENTS C)
  if(CMAKE_Fortran_COMPILER AND MPI_C_COMPILER AND NOT MPI_Fortran_COMPILER)
    shoal_wrapper_siblings("${MPI_C_COMPILER}" _shoal_mpi_bin _shoal_suffix)
    find_program(_shoal_found NAMES mpifort${_shoal_suffix} mpif90${_shoal_suffix} mpifort mpif90
                 HINTS "${_shoal_mpi_bin}" NO_DEFAULT_PATH)
    if(_shoal_found)
      set(MPI_Fortran_COMPILER "${_shoal_found}" CACHE FILEPATH "MPI compiler for Fortran")
    endif()
    unset(_shoal_found CACHE)
  endif()
  if(CMAKE_Fortran_COMPILER AND MPI_Fortran_COMPILER)
    enable_language(Fortran)
    find_package(MPI REQUIRED COMPONENTS C OPTIONAL_COMPONENTS Fortran)
  endif()
endif()

# The flavour and version, from what the header defines: one compile of
# ShoalMPIInfo.c, whose object holds "SHOAL_MPI_INFO:key=value" strings.
# Redone when the MPI changes (its wrapper, headers or libraries), or the probe.
file(MD5 ${CMAKE_CURRENT_LIST_DIR}/ShoalMPIInfo.c _shoal_info_md5)
set(_shoal_mpi_key "${MPI_C_COMPILER}|${MPI_C_INCLUDE_DIRS}|${MPI_C_LIBRARIES}|${MPI_C_COMPILE_OPTIONS}|${_shoal_info_md5}")
if(NOT SHOAL_MPI_INFO_KEY STREQUAL _shoal_mpi_key)
  set(_shoal_info_bin ${CMAKE_BINARY_DIR}/CMakeFiles/ShoalMPIInfo)
  try_compile(_shoal_info_ok ${_shoal_info_bin} ${CMAKE_CURRENT_LIST_DIR}/ShoalMPIInfo.c
              LINK_LIBRARIES MPI::MPI_C
              COPY_FILE ${_shoal_info_bin}/shoal_mpi_info.bin
              OUTPUT_VARIABLE _shoal_info_out)
  if(NOT _shoal_info_ok)
    message(FATAL_ERROR "shoal: cannot build a program with the MPI FindMPI found "
                        "(${MPI_C_COMPILER}):\n${_shoal_info_out}")
  endif()
  file(STRINGS ${_shoal_info_bin}/shoal_mpi_info.bin _shoal_info REGEX "SHOAL_MPI_INFO:[a-z]+=")
  foreach(kv flavour variant version)
    set(_v "")
    foreach(line ${_shoal_info})
      if(line MATCHES "SHOAL_MPI_INFO:${kv}=([^\n]*)")
        string(STRIP "${CMAKE_MATCH_1}" _v)
      endif()
    endforeach()
    string(TOUPPER ${kv} KV)
    set(SHOAL_MPI_${KV} "${_v}" CACHE INTERNAL "host MPI ${kv}, from its header")
  endforeach()
  set(SHOAL_MPI_INFO_KEY "${_shoal_mpi_key}" CACHE INTERNAL "what SHOAL_MPI_FLAVOUR was read from")
endif()
if(NOT SHOAL_MPI_FLAVOUR MATCHES "^(openmpi|mpich|abi|other)$")
  message(FATAL_ERROR "shoal: could not read the MPI flavour from ${_shoal_info_bin}/shoal_mpi_info.bin")
endif()
if(NOT SHOAL_MPI_REQUEST STREQUAL "auto" AND NOT SHOAL_MPI_REQUEST STREQUAL SHOAL_MPI_FLAVOUR)
  message(FATAL_ERROR "shoal: SHOAL_MPI=${SHOAL_MPI_REQUEST} but ${MPI_C_COMPILER}'s mpi.h is ${SHOAL_MPI_FLAVOUR}'s")
endif()

# The launcher must be the same MPI's: a program started by another MPI's
# launcher runs as separate singletons or fails to start. Its --version says
# whose it is; one that says nothing known is taken as it is.
if(MPIEXEC_EXECUTABLE AND NOT SHOAL_MPIEXEC_CHECKED STREQUAL "${MPIEXEC_EXECUTABLE}|${SHOAL_MPI_FLAVOUR}")
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version TIMEOUT 30
                  OUTPUT_VARIABLE _shoal_ver ERROR_VARIABLE _shoal_ver RESULT_VARIABLE _shoal_rc)
  set(_shoal_launcher "")
  if(_shoal_ver MATCHES "Open MPI|OpenRTE|PRRTE|prterun")
    set(_shoal_launcher openmpi)
  elseif(_shoal_ver MATCHES "HYDRA|Hydra|Intel\\(R\\) MPI")
    set(_shoal_launcher mpich)
  endif()
  if(_shoal_launcher AND NOT SHOAL_MPI_FLAVOUR STREQUAL "abi" AND NOT _shoal_launcher STREQUAL SHOAL_MPI_FLAVOUR)
    message(FATAL_ERROR "shoal: the launcher ${MPIEXEC_EXECUTABLE} is ${_shoal_launcher}'s, the MPI "
                        "(${MPI_C_COMPILER}) is ${SHOAL_MPI_FLAVOUR}'s: set MPIEXEC_EXECUTABLE to its mpiexec")
  endif()
  set(_shoal_launcher_version "")
  if(_shoal_ver MATCHES "Version: *([0-9]+(\\.[0-9]+)*)")
    set(_shoal_launcher_version "${CMAKE_MATCH_1}")
  endif()
  set(SHOAL_MPIEXEC_KIND "${_shoal_launcher}" CACHE INTERNAL "whose launcher MPIEXEC_EXECUTABLE is")
  set(SHOAL_MPIEXEC_VERSION "${_shoal_launcher_version}" CACHE INTERNAL "its version, where it says one")
  set(SHOAL_MPIEXEC_CHECKED "${MPIEXEC_EXECUTABLE}|${SHOAL_MPI_FLAVOUR}" CACHE INTERNAL "")
endif()

# From here on SHOAL_MPI is the flavour (see the top of this file).
set(SHOAL_MPI ${SHOAL_MPI_FLAVOUR})
if(SHOAL_MPI STREQUAL "openmpi" OR SHOAL_MPIEXEC_KIND STREQUAL "openmpi")
  # Root in CI, more ranks than cores in tests: both must be allowed.
  set(SHOAL_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe)
elseif(SHOAL_MPIEXEC_KIND STREQUAL "mpich" AND SHOAL_MPIEXEC_VERSION VERSION_GREATER_EQUAL 5)
  # More ranks than cores in tests: MPICH's ranks poll without yielding, so
  # each wait on a rank that is not running costs a time slice (a test 10-45
  # times Open MPI's). MPICH 5's progress throttle (a usleep after a poll that
  # found nothing, as MPICH's own CI runs oversubscribed) gives the core back;
  # 4.0.2 has no such setting.
  set(SHOAL_MPIEXEC_FLAGS -genv MPIR_CVAR_CH4_PROGRESS_THROTTLE 1
                          -genv MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT 1)
else()
  set(SHOAL_MPIEXEC_FLAGS)
endif()
# Where nothing above gives the core back, tests size their oversubscribed
# runs for ranks that poll busily.
set(SHOAL_MPIEXEC_POLLS_BUSILY OFF)
if(SHOAL_MPIEXEC_KIND STREQUAL "mpich" AND NOT SHOAL_MPIEXEC_FLAGS)
  set(SHOAL_MPIEXEC_POLLS_BUSILY ON)
endif()

if(SHOAL_MPI_REQUEST STREQUAL "auto")
  message(STATUS "shoal: building against ${SHOAL_MPI_VARIANT} ${SHOAL_MPI_VERSION} (flavour ${SHOAL_MPI}) "
                 "found by FindMPI: ${MPI_C_COMPILER}, ${MPIEXEC_EXECUTABLE}")
endif()
message(STATUS "shoal: building against ${SHOAL_MPI} (${MPI_C_LIBRARIES})")
if(NOT TARGET MPI::MPI_Fortran)
  message(STATUS "shoal: no Fortran compiler or MPI Fortran bindings: the Fortran tests are left out")
endif()
