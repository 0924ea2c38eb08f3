# Runs a program and passes only when it exits with 0 and its standard output
# is one valid JSON document (parsed with CMake's own JSON reader, so no
# python on the test machine is needed) holding every key path given.
# cmake -DPROGRAM=<exe> "-DARGS=<arg>;<arg>..." "-DKEYS=<key>;<key>..." -P run_json_check.cmake
# A key path is dot-separated: "scenes.0.runs" (list indices are numbers).
cmake_minimum_required(VERSION 3.19)
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${err}${out}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
string(STRIP "${out}" out)
if(out STREQUAL "")
  message(FATAL_ERROR "${PROGRAM}: no output")
endif()
string(JSON type ERROR_VARIABLE json_err TYPE "${out}")
if(json_err)
  message(FATAL_ERROR "${PROGRAM}: output is not valid JSON: ${json_err}")
endif()
if(NOT type STREQUAL "OBJECT")
  message(FATAL_ERROR "${PROGRAM}: output is JSON ${type}, not an object")
endif()
foreach(key IN LISTS KEYS)
  string(REPLACE "." ";" path "${key}")
  string(JSON value ERROR_VARIABLE json_err GET "${out}" ${path})
  if(json_err)
    message(FATAL_ERROR "${PROGRAM}: no '${key}' in the output: ${json_err}")
  endif()
endforeach()
