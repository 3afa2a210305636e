# cmake -DNM=nm -DLIB=libfdk.so -P check_no_test_seams.cmake
#
# Fails (FATAL_ERROR) when LIB could let a process change what the library
# does through a test seam: when it holds the name of a test knob
# ("FDK_TEST_...", which it could only be there to look up in the
# environment), when it contains the setter of the CUDA backend's test
# seams (fdk::cuda::set_fault_plan, ScopedFaultPlan; kept in an object of
# its own that only tests link), or when it exports anything of the seams.
foreach(var NM LIB)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_no_test_seams.cmake: -D${var}=... is required")
  endif()
endforeach()

set(bad "")
file(STRINGS "${LIB}" knobs REGEX "FDK_TEST_")
foreach(text IN LISTS knobs)
  string(REGEX MATCHALL "FDK_TEST_[A-Z0-9_]*" names "${text}")
  foreach(name IN LISTS names)
    list(APPEND bad "string ${name} (a test knob's name)")
  endforeach()
endforeach()

# The whole symbol table (a stripped library has none: the strings above
# and the dynamic table below still hold), then the exported one.
foreach(table "" "-D")
  execute_process(COMMAND "${NM}" ${table} -C --defined-only "${LIB}"
    OUTPUT_VARIABLE nm_out ERROR_VARIABLE nm_err RESULT_VARIABLE nm_rc)
  if(NOT nm_rc EQUAL 0 AND NOT nm_err MATCHES "no symbols")
    message(FATAL_ERROR "${NM} ${table} -C --defined-only ${LIB} failed (${nm_rc}): ${nm_err}")
  endif()
  string(REPLACE "\n" ";" lines "${nm_out}")
  foreach(line IN LISTS lines)
    if(table STREQUAL "" AND line MATCHES "(set_fault_plan|ScopedFaultPlan)")
      list(APPEND bad "symbol ${CMAKE_MATCH_1} (the test seams' setter: ${line})")
    elseif(table STREQUAL "-D" AND line MATCHES "(fault_plan|FaultPlan|test_seam)")
      list(APPEND bad "exported symbol ${CMAKE_MATCH_1} (${line})")
    endif()
  endforeach()
endforeach()

list(REMOVE_DUPLICATES bad)
if(bad)
  list(JOIN bad "; " text)
  # On one line (FATAL_ERROR wraps its text), for the self-test's pattern.
  message("${LIB} carries test seams: ${text}")
  message(FATAL_ERROR "${LIB} carries test seams (above)")
endif()
message(STATUS "${LIB}: no test knob names, no test seam setter, nothing of the seams exported")
