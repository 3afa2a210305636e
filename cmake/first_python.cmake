# fdk_first_python(<var> <imports> [candidates...]): sets <var> to the first
# Python interpreter among the candidates, then the one find_package(Python3)
# finds, that can run "import <imports>" (empty when none can). The tests
# need Debian's packaged modules (python3-numpy, -tifffile, -pytest), which
# the PATH's python3 (a pyenv one, say) may not see.
function(fdk_first_python var imports)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(candidates ${ARGN})
  if(Python3_Interpreter_FOUND)
    list(APPEND candidates "${Python3_EXECUTABLE}")
  endif()
  set(found "")
  foreach(candidate IN LISTS candidates)
    if(EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import ${imports}"
                      RESULT_VARIABLE failed OUTPUT_QUIET ERROR_QUIET)
      if(failed EQUAL 0)
        set(found "${candidate}")
        break()
      endif()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()
