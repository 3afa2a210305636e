# cmake -DNM=nm -DREADELF=readelf -DLIB=libfdk.so -DHEADER=fdk.h -DSONAME=libfdk.so.0
#       [-DALLOW_MISSING=ON] -P check_exports.cmake
#
# Fails (FATAL_ERROR) when the dynamic symbol table of LIB defines any symbol
# that is not an fdk_* function (the version node FDK_<n> of fdk.map aside),
# when an FDK_API function of HEADER is not exported (unless ALLOW_MISSING),
# when LIB exports an fdk_* name that HEADER does not declare, or when its
# SONAME is not SONAME.
foreach(var NM READELF LIB HEADER SONAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_exports.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${NM}" -D --defined-only "${LIB}"
  OUTPUT_VARIABLE nm_out ERROR_VARIABLE nm_err RESULT_VARIABLE nm_rc)
if(NOT nm_rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed (${nm_rc}): ${nm_err}")
endif()

# The FDK_API functions the header declares, with the headers it includes
# from its folder (fdk.h: fdk_preview.h).
get_filename_component(header_dir "${HEADER}" DIRECTORY)
file(GLOB header_files "${header_dir}/*.h")
set(header_text "")
foreach(h IN LISTS header_files)
  file(READ "${h}" text)
  string(APPEND header_text "${text}")
endforeach()
string(REGEX MATCHALL "FDK_API[^;(]*[ *](fdk_[a-z0-9_]+)[ ]*\\(" decls "${header_text}")
set(declared "")
foreach(decl IN LISTS decls)
  string(REGEX REPLACE ".*[ *](fdk_[a-z0-9_]+)[ ]*\\($" "\\1" name "${decl}")
  list(APPEND declared "${name}")
endforeach()
list(REMOVE_DUPLICATES declared)
list(LENGTH declared n_declared)
if(n_declared LESS 10)
  message(FATAL_ERROR "found only ${n_declared} FDK_API functions in ${HEADER}: parse error?")
endif()

string(REPLACE "\n" ";" lines "${nm_out}")
set(bad "")
set(exported "")
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  # "<address> <type> <name>[@@version]" (absolute symbols may lack the address)
  if(NOT line MATCHES "^([0-9a-fA-F]+ +)?([A-Za-z]) +([^ ]+)$")
    list(APPEND bad "unparsed line: ${line}")
    continue()
  endif()
  set(type "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_3}")
  if(type STREQUAL "A" AND name MATCHES "^FDK_[0-9]+$")
    continue()  # the version node of packaging/fdk.map
  endif()
  if(NOT name MATCHES "^fdk_")
    list(APPEND bad "${type} ${name}")
    continue()
  endif()
  if(NOT type STREQUAL "T")
    list(APPEND bad "${type} ${name} (an exported fdk_ symbol that is not a function)")
  endif()
  list(FIND declared "${name}" at)
  if(at LESS 0)
    list(APPEND bad "${type} ${name} (fdk_ but not declared FDK_API in fdk.h)")
  endif()
  list(APPEND exported "${name}")
endforeach()

if(NOT ALLOW_MISSING)
  foreach(name IN LISTS declared)
    list(FIND exported "${name}" at)
    if(at LESS 0)
      list(APPEND bad "missing: ${name} is declared in fdk.h but not exported")
    endif()
  endforeach()
endif()

execute_process(COMMAND "${READELF}" -d "${LIB}"
  OUTPUT_VARIABLE re_out RESULT_VARIABLE re_rc)
if(NOT re_rc EQUAL 0 OR NOT re_out MATCHES "Library soname: \\[([^]]*)\\]")
  list(APPEND bad "no SONAME in ${LIB}")
elseif(NOT CMAKE_MATCH_1 STREQUAL SONAME)
  list(APPEND bad "SONAME is ${CMAKE_MATCH_1}, expected ${SONAME}")
endif()

list(LENGTH exported n_exported)
if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "${LIB}: ${n_exported} fdk_ symbols, and these problems:\n  ${text}")
endif()
message(STATUS "${LIB}: exports exactly the ${n_exported} FDK_API functions of fdk.h; SONAME ${SONAME}")
