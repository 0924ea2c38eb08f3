# Runs a program and passes only when it exits with 0 and its output matches
# every regular expression given (unlike ctest's PASS_REGULAR_EXPRESSION,
# which ignores the exit code and needs only one match).
# cmake -DPROGRAM=<exe> "-DEXPECT=<regex>;<regex>..." -P run_check.cmake
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
foreach(re IN LISTS EXPECT)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "${PROGRAM}: no line matches '${re}'")
  endif()
endforeach()
