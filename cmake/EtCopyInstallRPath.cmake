#===- EtCopyInstallRPath.cmake - Relocatable installed binaries -----------===#
#
# Installed etcopy tools and shared libraries must run from any install
# prefix without LD_LIBRARY_PATH. Each gets an install RPATH with
#
#   * $ORIGIN/<path from its own install directory to the library
#     directory>, so it finds etcopy's shared libraries wherever the prefix
#     is put (bin/etcopy-opt: $ORIGIN/../lib, lib/libX.so: $ORIGIN), and
#   * LLVM's library directory (/usr/lib/llvm-22/lib on Debian), which holds
#     libMLIR.so and libLLVM.so and is not on the loader's default path.
#
# The build tree keeps CMake's own build RPATHs; install() rewrites them.
#
#===----------------------------------------------------------------------===#

# Relative path from install directory `from` to the library directory, as
# an $ORIGIN-based RPATH entry (or the library directory itself if it is
# absolute).
function(etcopy_origin_rpath from out)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(${out} "${CMAKE_INSTALL_LIBDIR}" PARENT_SCOPE)
    return()
  endif()
  file(RELATIVE_PATH to_lib "/${from}" "/${CMAKE_INSTALL_LIBDIR}")
  if(to_lib STREQUAL "")
    set(${out} "\$ORIGIN" PARENT_SCOPE)
  else()
    set(${out} "\$ORIGIN/${to_lib}" PARENT_SCOPE)
  endif()
endfunction()

# Sets INSTALL_RPATH on every executable (installed to CMAKE_INSTALL_BINDIR)
# and shared or module library (installed to CMAKE_INSTALL_LIBDIR) defined
# in `dir` or below it. Called once, after every subdirectory is added, so
# that targets added later by anyone are covered too.
function(etcopy_set_install_rpaths dir)
  etcopy_origin_rpath("${CMAKE_INSTALL_BINDIR}" bin_rpath)
  etcopy_origin_rpath("${CMAKE_INSTALL_LIBDIR}" lib_rpath)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      set(origin "${bin_rpath}")
    elseif(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY")
      set(origin "${lib_rpath}")
    else()
      continue()
    endif()
    set_target_properties(${target} PROPERTIES
      INSTALL_RPATH "${origin};${LLVM_LIBRARY_DIR}")
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    etcopy_set_install_rpaths("${subdir}")
  endforeach()
endfunction()
