# Determinism of a demo from the command line: runs the program twice with the
# same arguments and once more with OTHER_ARGS appended (a different seed),
# each printing one JSON object with "pose_checksum" (demo_pose_checksum: the
# final poses' bits). Passes when every run exits with 0, every checksum is 16
# lower-case hex digits, the two same-argument runs agree and the third differs.
# cmake -DPROGRAM=<exe> "-DARGS=<arg>;<arg>..." "-DOTHER_ARGS=<arg>;..." -P run_pose_checksum_check.cmake
cmake_minimum_required(VERSION 3.19)

function(pose_checksum out_var)
  execute_process(COMMAND "${PROGRAM}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${ARGN}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${PROGRAM} ${shown}: exited with ${rc}\n${err}${out}")
  endif()
  string(STRIP "${out}" out)
  string(JSON sum ERROR_VARIABLE json_err GET "${out}" pose_checksum)
  if(json_err)
    message(FATAL_ERROR "${PROGRAM} ${shown}: no pose_checksum in the output: ${json_err}\n${out}")
  endif()
  if(NOT sum MATCHES "^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$")
    message(FATAL_ERROR "${PROGRAM} ${shown}: pose_checksum '${sum}' is not 16 hex digits")
  endif()
  message("${shown}: pose_checksum ${sum}")
  set(${out_var} "${sum}" PARENT_SCOPE)
endfunction()

pose_checksum(first ${ARGS})
pose_checksum(second ${ARGS})
pose_checksum(other ${ARGS} ${OTHER_ARGS})
if(NOT first STREQUAL second)
  message(FATAL_ERROR "two runs with the same arguments differ: ${first} vs ${second}")
endif()
if(first STREQUAL other)
  message(FATAL_ERROR "a run with '${OTHER_ARGS}' has the same checksum ${first}")
endif()
