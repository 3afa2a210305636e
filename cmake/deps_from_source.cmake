# zstd and KissFFT compiled from their sources into static libraries of this
# build, for targets where Debian's packages cannot be linked: the win-x64
# cross build (.ci/windows.sh fetches Debian's own source packages with
# `apt-get source libzstd kissfft`) and MSVC builds (CMakePresets.json).
# Gives the same two interface targets as the package search in the
# top-level CMakeLists.txt: fdk_zstd and fdk_kissfft. Both are linked into
# fdk.dll, which then depends on neither.
#
#   FDK_ZSTD_SOURCE_DIR     a zstd source tree (holds lib/zstd.h)
#   FDK_KISSFFT_SOURCE_DIR  a KissFFT source tree (holds kiss_fftr.h)
foreach(_fdk_dep_file IN ITEMS "${FDK_ZSTD_SOURCE_DIR}/lib/zstd.h" "${FDK_KISSFFT_SOURCE_DIR}/kiss_fftr.h")
  if(NOT EXISTS "${_fdk_dep_file}")
    message(FATAL_ERROR "deps from source: ${_fdk_dep_file} not found")
  endif()
endforeach()

# ---- zstd (BSD-3-Clause): the library only, single-threaded --------------------
# The store compresses each band on the caller's threads (one context per
# worker), so zstd's own worker pool (ZSTD_MULTITHREAD) is not built; nor
# the dictionary builder, the legacy formats or the x86-64 Huffman decoder
# in GNU assembler (its .S file is for ELF/Mach-O, not PE).
set(_fdk_zstd_lib "${FDK_ZSTD_SOURCE_DIR}/lib")
file(GLOB _fdk_zstd_sources CONFIGURE_DEPENDS
  "${_fdk_zstd_lib}/common/*.c" "${_fdk_zstd_lib}/compress/*.c" "${_fdk_zstd_lib}/decompress/*.c")
add_library(fdk_zstd_static STATIC ${_fdk_zstd_sources})
target_include_directories(fdk_zstd_static SYSTEM PUBLIC "${_fdk_zstd_lib}")
target_compile_definitions(fdk_zstd_static PRIVATE ZSTD_DISABLE_ASM ZSTD_LEGACY_SUPPORT=0)
set_target_properties(fdk_zstd_static PROPERTIES C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)

# ---- KissFFT (BSD-3-Clause): float, the real transforms --------------------------
# Its own CMakeLists' flags, which Debian's libkissfft-float is built with,
# so that the filter computes as it does on Linux.
add_library(fdk_kissfft_static STATIC
  "${FDK_KISSFFT_SOURCE_DIR}/kiss_fft.c" "${FDK_KISSFFT_SOURCE_DIR}/kiss_fftr.c")
target_include_directories(fdk_kissfft_static SYSTEM PUBLIC "${FDK_KISSFFT_SOURCE_DIR}")
target_compile_definitions(fdk_kissfft_static PUBLIC kiss_fft_scalar=float)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(fdk_kissfft_static PRIVATE -ffast-math -fomit-frame-pointer)
endif()
set_target_properties(fdk_kissfft_static PROPERTIES C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)

add_library(fdk_kissfft INTERFACE)
target_link_libraries(fdk_kissfft INTERFACE fdk_kissfft_static)
add_library(fdk_zstd INTERFACE)
target_link_libraries(fdk_zstd INTERFACE fdk_zstd_static)
message(STATUS "fdk: zstd from ${FDK_ZSTD_SOURCE_DIR}, KissFFT from ${FDK_KISSFFT_SOURCE_DIR} (static)")
