# `cmake --install <tree> --prefix P`: what a site or a user installs.
#
#   P/lib/libshoal.so                  the library (LD_PRELOAD it, or link it before the MPI)
#   P/include/shoal.h                  its API (shoal_enabled, shoal_last_choice, ...)
#   P/bin/shoal, shoal-bench[, shoal-sim]   the tools (shoal-sim: trees that build it)
#   P/share/shoal/*.py                 the report and plot scripts the tools' output feeds
#   P/lib/pkgconfig/shoal.pc           pkg-config --cflags --libs shoal
#   P/lib/cmake/shoal/                 find_package(shoal): the target shoal::shoal
#
# (lib is CMAKE_INSTALL_LIBDIR, and so on: GNUInstallDirs.) One libshoal works
# under one MPI ABI only, so both descriptions carry the MPI it was built
# against: shoal.pc its flags, shoalConfig.cmake a find_dependency(MPI) that
# looks for that MPI first. Tests are not installed.

include(CMakePackageConfigHelpers)

# Installed binaries find the MPI where they were linked from (a site's MPI
# is rarely in the loader's default path), and shoal-bench finds libshoal
# beside it. Where the tree's bin/ and lib/ mirror the prefix's (LIBDIR lib),
# that RPATH holds in the tree as it is and is linked in from the start: the
# build-tree RPATH then stays what it was (the same directories) instead of
# being padded for an edit at install, with an empty entry that would search
# the current directory.
set(_shoal_tools shoal-cli shoal-bench)
if(TARGET shoal-sim)
  list(APPEND _shoal_tools shoal-sim)
endif()
file(RELATIVE_PATH _shoal_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(shoal ${_shoal_tools} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
set_target_properties(shoal-bench PROPERTIES INSTALL_RPATH "$ORIGIN/${_shoal_bin_to_lib}")
if(_shoal_bin_to_lib STREQUAL "../lib")
  set_target_properties(shoal ${_shoal_tools} PROPERTIES BUILD_WITH_INSTALL_RPATH TRUE)
endif()

install(TARGETS shoal EXPORT shoalTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/shoal.h ${CMAKE_SOURCE_DIR}/include/mpix_threadcomm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${_shoal_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${CMAKE_SOURCE_DIR}/tools/bench/report.py ${CMAKE_SOURCE_DIR}/tools/shoal/tune_report.py
                 ${CMAKE_SOURCE_DIR}/tools/sim/shoal_sim_plot.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/shoal)

# pkg-config: paths relative to the file itself (${pcfiledir}), so that the
# prefix given to `cmake --install --prefix` (or a later move) holds; the
# MPI's own flags follow shoal's, so that a plain cc builds a program too.
set(_shoal_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH _shoal_pc_PREFIX /prefix/${_shoal_pc_dir} /prefix)
string(REGEX REPLACE "/$" "" _shoal_pc_PREFIX "${_shoal_pc_PREFIX}")
set(_shoal_pc_PREFIX "\${pcfiledir}/${_shoal_pc_PREFIX}")
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(_shoal_pc_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(_shoal_pc_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
# The MPI's flags as pkg-config words, each with a leading space.
list(TRANSFORM MPI_C_COMPILE_DEFINITIONS PREPEND "-D" OUTPUT_VARIABLE _shoal_pc_defs)
list(TRANSFORM MPI_C_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE _shoal_pc_incs)
set(_shoal_pc_words ${MPI_C_COMPILE_OPTIONS} ${_shoal_pc_defs} ${_shoal_pc_incs})
list(TRANSFORM _shoal_pc_words PREPEND " ")
list(JOIN _shoal_pc_words "" _shoal_pc_cflags)
set(_shoal_pc_words ${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES})
list(TRANSFORM _shoal_pc_words PREPEND " ")
list(JOIN _shoal_pc_words "" _shoal_pc_libs)
configure_file(${CMAKE_CURRENT_LIST_DIR}/shoal.pc.in ${CMAKE_BINARY_DIR}/install/shoal.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/shoal.pc DESTINATION ${_shoal_pc_dir})

# CMake: shoal::shoal carries shoal.h and MPI::MPI_C.
set(_shoal_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/shoal)
install(EXPORT shoalTargets NAMESPACE shoal:: FILE shoalTargets.cmake DESTINATION ${_shoal_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/shoalConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/install/shoalConfig.cmake
                              INSTALL_DESTINATION ${_shoal_cmake_dir})
# 0.x: a minor version may change what a program sees.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/shoalConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/shoalConfig.cmake ${CMAKE_BINARY_DIR}/install/shoalConfigVersion.cmake
        DESTINATION ${_shoal_cmake_dir})
