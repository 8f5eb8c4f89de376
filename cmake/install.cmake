# Package files of an install (included by the top CMakeLists.txt after every target is defined):
# tridiConfig.cmake with its version file and export, and the pkg-config files tridi.pc and
# tridi_fortran.pc. Neither names a path of the build machine: dependencies are found again at the
# consumer (tridiConfig.cmake) or named by -l and a variable the consumer may redefine (pkg-config).
include(CMakePackageConfigHelpers)

install(EXPORT tridiTargets NAMESPACE tridi:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tridi)
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
install(FILES ${CMAKE_BINARY_DIR}/tridiConfig.cmake ${CMAKE_BINARY_DIR}/tridiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tridi)

# ---- pkg-config ----
# A shared libtridi carries its dependencies (NEEDED, RUNPATH): Libs names it alone and Libs.private
# what a static link would add. A static-only install has no library that carries them, so Libs names
# them too and `pkg-config --libs tridi` links without --static (the README's command), and MPI is a
# Requires, not a Requires.private.
function(tridi_pc_dir_flag out var dir)
  # -L${var} for a directory the compiler does not search already; var=dir goes into the variables.
  if(dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    set(${out} "" PARENT_SCOPE)
  else()
    set(TRIDI_PC_VARIABLES "${TRIDI_PC_VARIABLES}${var}=${dir}\n" PARENT_SCOPE)
    set(${out} "-L\${${var}} " PARENT_SCOPE)
  endif()
endfunction()

set(TRIDI_PC_VARIABLES "")
set(_deps "")
set(_requires "")
if(TRIDI_ENABLE_CUDA)
  # The CUDA toolkit's library directory as found here; pkg-config --define-variable=cuda_libdir=...
  # points it at the consumer's toolkit.
  tridi_pc_dir_flag(_cuda_l cuda_libdir "${CUDAToolkit_LIBRARY_DIR}")
  string(APPEND _deps "${_cuda_l}-lcudart_static -ldl -lrt -lpthread -lstdc++ ")
endif()
if(TRIDI_ENABLE_NCCL)
  get_filename_component(_nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
  tridi_pc_dir_flag(_nccl_l nccl_libdir "${_nccl_dir}")
  string(APPEND _deps "${_nccl_l}-lnccl ")
endif()
if(TRIDI_ENABLE_MPI)
  # MPI by its own pkg-config module when it has one (Open MPI: ompi-c, MPICH: mpich), else by name.
  find_package(PkgConfig QUIET)
  set(_mpi_module "")
  if(PKG_CONFIG_FOUND)
    foreach(_m ompi-c mpich)
      pkg_check_modules(_TRIDI_PC_${_m} QUIET ${_m})
      if(_TRIDI_PC_${_m}_FOUND)
        set(_mpi_module ${_m})
        break()
      endif()
    endforeach()
  endif()
  if(_mpi_module)
    set(_requires "${_mpi_module}")
  else()
    foreach(_l IN LISTS MPI_C_LIB_NAMES)
      string(APPEND _deps "-l${_l} ")
    endforeach()
  endif()
endif()
foreach(_l IN LISTS OpenMP_C_LIB_NAMES)
  string(APPEND _deps "-l${_l} ")
endforeach()
string(APPEND _deps "-lm")
if(TRIDI_PACKAGE_SHARED)
  set(TRIDI_PC_LIBS "")
  set(TRIDI_PC_LIBS_PRIVATE "${_deps}")
  set(TRIDI_PC_REQUIRES "")
  set(TRIDI_PC_REQUIRES_PRIVATE "${_requires}")
else()
  set(TRIDI_PC_LIBS "${_deps}")
  set(TRIDI_PC_LIBS_PRIVATE "")
  set(TRIDI_PC_REQUIRES "${_requires}")
  set(TRIDI_PC_REQUIRES_PRIVATE "")
endif()
configure_file(cmake/tridi.pc.in ${CMAKE_BINARY_DIR}/tridi.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tridi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TRIDI_ENABLE_FORTRAN)
  configure_file(cmake/tridi_fortran.pc.in ${CMAKE_BINARY_DIR}/tridi_fortran.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/tridi_fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
