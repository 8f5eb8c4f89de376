# SPDX-License-Identifier: BSD-3-Clause
# Package files of an install (included by the top CMakeLists.txt after every target is defined):
# tridiConfig.cmake with its version file and export, one pkg-config file per library, tridi-config,
# LICENSE and CHANGELOG.md. None names a path of the build machine: dependencies are found again at the
# consumer (tridiConfig.cmake) or named by -l and a variable the consumer may redefine (pkg-config).
include(CMakePackageConfigHelpers)

install(EXPORT tridiTargets NAMESPACE tridi:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tridi)
# CMake writes the export files itself: the licence line is put in front of them once installed.
install(CODE "
  file(GLOB _tridi_exports \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/cmake/tridi/tridiTargets*.cmake\")
  foreach(_f IN LISTS _tridi_exports)
    file(READ \${_f} _text)
    if(NOT _text MATCHES \"^# SPDX-License-Identifier\")
      file(WRITE \${_f} \"# SPDX-License-Identifier: BSD-3-Clause\\n\${_text}\")
    endif()
  endforeach()")
# What the installed package holds, for tridiConfig.cmake's components and dependencies.
set(TRIDI_PACKAGE_SHARED ${BUILD_SHARED_LIBS})
if(NOT TRIDI_PACKAGE_SHARED)
  set(TRIDI_PACKAGE_SHARED OFF)
endif()
foreach(_part CUDA MPI NCCL FORTRAN)
  if(TRIDI_ENABLE_${_part})
    set(TRIDI_PACKAGE_HAS_${_part} ON)
  else()
    set(TRIDI_PACKAGE_HAS_${_part} OFF)
  endif()
endforeach()
configure_package_config_file(cmake/tridiConfig.cmake.in ${CMAKE_BINARY_DIR}/tridiConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tridi)
# SameMinorVersion matches the SONAME libtridi.so.0.MINOR (src/CMakeLists.txt): before 1.0 a minor
# release may change the API and ABI, so find_package(tridi 0.1) accepts 0.1.x and nothing else.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tridiConfigVersion.cmake COMPATIBILITY SameMinorVersion)
file(READ ${CMAKE_BINARY_DIR}/tridiConfigVersion.cmake _tridi_version_file)
file(WRITE ${CMAKE_BINARY_DIR}/tridiConfigVersion.cmake "# SPDX-License-Identifier: BSD-3-Clause\n${_tridi_version_file}")
install(FILES ${CMAKE_BINARY_DIR}/tridiConfig.cmake ${CMAKE_BINARY_DIR}/tridiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tridi)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/tridi)

# ---- pkg-config: tridi, tridi_mpi, tridi_nccl, tridi_fortran, tridi_mpi_fortran, tridi_mohid ----
# A shared library carries its dependencies (NEEDED, RUNPATH): Libs names it alone, with an rpath to the
# install's libdir so the program runs without LD_LIBRARY_PATH, and Libs.private what a static link would
# add. A static-only install has no library that carries them, so Libs names them too and
# `pkg-config --libs tridi` links without --static, and MPI is a Requires, not a Requires.private.
function(tridi_pc_dir_flag out var dir)
  # -L${var} for a directory the compiler does not search already; var=dir goes into the variables.
  if(dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    set(${out} "" PARENT_SCOPE)
  else()
    set(TRIDI_PC_VARIABLES "${TRIDI_PC_VARIABLES}${var}=${dir}\n" PARENT_SCOPE)
    set(${out} "-L\${${var}} " PARENT_SCOPE)
  endif()
endfunction()

# name: the .pc file and library; description; requires: tridi's own modules it builds on; deps: the
# other libraries a static link needs (-l...); ext_requires: pkg-config modules of other projects;
# extra_libs: link flags every link needs; cflags: beyond -I${includedir}.
function(tridi_pc name description requires deps ext_requires extra_libs cflags)
  set(TRIDI_PC_NAME ${name})
  set(TRIDI_PC_DESCRIPTION "${description}")
  set(TRIDI_PC_CFLAGS "${cflags}")
  set(_req "${requires}")
  foreach(_r IN LISTS requires)
    string(REPLACE "${_r}" "${_r} = ${PROJECT_VERSION}" _req "${_req}")
  endforeach()
  string(REPLACE ";" ", " _req "${_req}")
  string(REPLACE ";" " " ext_requires "${ext_requires}")
  if(TRIDI_PACKAGE_SHARED)
    set(TRIDI_PC_LIBS "-L\${libdir} -Wl,-rpath,\${libdir} ${extra_libs} -l${name}")
    set(TRIDI_PC_LIBS_PRIVATE "${deps}")
    set(TRIDI_PC_REQUIRES "${_req}")
    set(TRIDI_PC_REQUIRES_PRIVATE "${ext_requires}")
  else()
    set(TRIDI_PC_LIBS "-L\${libdir} ${extra_libs} -l${name} ${deps}")
    set(TRIDI_PC_LIBS_PRIVATE "")
    string(JOIN ", " TRIDI_PC_REQUIRES ${_req} ${ext_requires})
    string(REPLACE ", , " ", " TRIDI_PC_REQUIRES "${TRIDI_PC_REQUIRES}")
    set(TRIDI_PC_REQUIRES_PRIVATE "")
  endif()
  # The same link line flattened (tridi's own modules resolved, MPI's flags of a static link included),
  # for tridi-config.
  # extra_libs first: an --undefined must come before the library that defines the symbol.
  set(_flat "${extra_libs} -l${name}")
  foreach(_r IN LISTS requires)
    string(APPEND _flat " ${TRIDI_CONFIG_FLAT_${_r}}")
  endforeach()
  if(NOT TRIDI_PACKAGE_SHARED)
    string(APPEND _flat " ${deps}")
    foreach(_m IN LISTS ext_requires)
      string(REPLACE ";" " " _m_flags "${_TRIDI_PC_${_m}_LDFLAGS}")
      string(APPEND _flat " ${_m_flags}")
    endforeach()
  endif()
  string(REGEX REPLACE "  +" " " _flat "${_flat}")
  set(TRIDI_CONFIG_FLAT_${name} "${_flat}" PARENT_SCOPE)
  if(TRIDI_PACKAGE_SHARED)
    set(TRIDI_CONFIG_LIBS_${name} "-L\${libdir} -Wl,-rpath,\${libdir} ${_flat}" PARENT_SCOPE)
  else()
    set(TRIDI_CONFIG_LIBS_${name} "-L\${libdir} ${_flat}" PARENT_SCOPE)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/tridi.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

set(TRIDI_PC_VARIABLES "")
set(_core_deps "")
if(TRIDI_ENABLE_CUDA)
  # The CUDA toolkit's library directory as found here; pkg-config --define-variable=cuda_libdir=...
  # points it at the consumer's toolkit.
  tridi_pc_dir_flag(_cuda_l cuda_libdir "${CUDAToolkit_LIBRARY_DIR}")
  string(APPEND _core_deps "${_cuda_l}-lcudart_static -ldl -lrt -lpthread -lstdc++ ")
endif()
foreach(_l IN LISTS OpenMP_C_LIB_NAMES)
  string(APPEND _core_deps "-l${_l} ")
endforeach()
string(APPEND _core_deps "-lm")
tridi_pc(tridi "Batched tridiagonal (Thomas) solves on grid-shaped arrays, CPU (OpenMP) and CUDA" "" "${_core_deps}" "" "" "")

if(TRIDI_ENABLE_MPI)
  # MPI by its own pkg-config module when it has one (Open MPI: ompi-c, MPICH: mpich), else by name.
  find_package(PkgConfig QUIET)
  set(_mpi_module "")
  set(_mpi_deps "")
  if(PKG_CONFIG_FOUND)
    foreach(_m ompi-c mpich)
      pkg_check_modules(_TRIDI_PC_${_m} QUIET ${_m})
      if(_TRIDI_PC_${_m}_FOUND)
        set(_mpi_module ${_m})
        break()
      endif()
    endforeach()
  endif()
  if(NOT _mpi_module)
    foreach(_l IN LISTS MPI_C_LIB_NAMES)
      string(APPEND _mpi_deps "-l${_l} ")
    endforeach()
  endif()
  tridi_pc(tridi_mpi "The MPI layer of tridi (tridi_mpi.h)" "tridi" "${_mpi_deps}" "${_mpi_module}" "" "")
endif()
if(TRIDI_ENABLE_NCCL)
  get_filename_component(_nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
  tridi_pc_dir_flag(_nccl_l nccl_libdir "${_nccl_dir}")
  # The undefined reference pulls the transport in from a static archive; a shared libtridi_mpi loads
  # libtridi_nccl by itself when a halo plan considers NCCL (src/mpi/halo_table.c).
  tridi_pc(tridi_nccl "The NCCL transport of tridi's device halos" "tridi_mpi" "${_nccl_l}-lnccl" ""
    "-Wl,--undefined=tridi_halo_nccl" "")
endif()
if(TRIDI_ENABLE_FORTRAN)
  set(_fc "built with ${CMAKE_Fortran_COMPILER_ID} ${CMAKE_Fortran_COMPILER_VERSION}")
  # The modules' directory; tridi_version.h (for .F90 sources) comes with tridi's -I${includedir}.
  set(_fmod "-I\${includedir}/tridi")
  tridi_pc(tridi_fortran "Fortran modules tridi and tridi_adi, ${_fc}" "tridi" "" "" "" "${_fmod}")
  tridi_pc(tridi_mohid "Fortran module tridi_mohid (MOHID's THOMAS routines on tridi), ${_fc}" "tridi_fortran"
    "" "" "" "${_fmod}")
  if(TRIDI_ENABLE_MPI)
    tridi_pc(tridi_mpi_fortran "Fortran module tridi_mpi, ${_fc}" "tridi_fortran;tridi_mpi" "" "" "" "${_fmod}")
  endif()
endif()

# ---- tridi-config (nf-config style): what this install holds and how to compile and link with it ----
set(TRIDI_CONFIG_CUDA_ARCHS "${TRIDI_CUDA_ARCHITECTURES_INFO}")
set(TRIDI_CONFIG_FC "")
if(TRIDI_ENABLE_FORTRAN)
  set(TRIDI_CONFIG_FC "${CMAKE_Fortran_COMPILER}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/tools/tridi-config.in ${CMAKE_BINARY_DIR}/tridi-config @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/tridi-config DESTINATION ${CMAKE_INSTALL_BINDIR})
