# Cross-compiling for 64-bit Windows (win-x64) with Debian's MinGW-w64:
#   apt install g++-mingw-w64-x86-64-posix
#   cmake -S . -B build-win -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake \
#     -DFDK_ZSTD_SOURCE_DIR=... -DFDK_KISSFFT_SOURCE_DIR=...
# .ci/windows.sh does all of it, and runs the tests under Wine.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

# The -posix flavour: its libstdc++ has std::thread and std::mutex (over
# winpthreads); the -win32 flavour of GCC 12 has neither.
set(_fdk_mingw x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${_fdk_mingw}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_fdk_mingw}-g++-posix)
set(CMAKE_RC_COMPILER ${_fdk_mingw}-windres)

# Libraries and headers of the target only; programs of the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/${_fdk_mingw})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config would answer with the build machine's Linux libraries (zstd,
# KissFFT): point it at the target's tree, which has none of them.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/${_fdk_mingw}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# fdk.dll and the test programs depend on Windows system DLLs only: the GCC
# runtime, libstdc++ and winpthreads are linked in statically, so nothing
# else has to be shipped beside fdk.dll (runtimes/win-x64/native/).
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static")

# Programs built here run under Wine (try_run, gtest discovery, ctest).
find_program(FDK_WINE NAMES wine64 wine)
if(FDK_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FDK_WINE})
endif()
