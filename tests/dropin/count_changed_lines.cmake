# The drop-in is "at most two changed lines": counts the lines diff reports as
# removed ('<') and added ('>') between the plain Bullet program and its rtcd
# version, and fails unless 1 <= added <= MAX and removed <= MAX.
# cmake -DPLAIN=<file> -DRTCD=<file> -DMAX=2 -P count_changed_lines.cmake
execute_process(COMMAND diff "${PLAIN}" "${RTCD}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0" AND NOT rc STREQUAL "1")
  message(FATAL_ERROR "diff failed (${rc}): ${err}")
endif()
message("${out}")
string(REGEX MATCHALL "(^|\n)>" added "${out}")
string(REGEX MATCHALL "(^|\n)<" removed "${out}")
list(LENGTH added n_added)
list(LENGTH removed n_removed)
message("changed lines: ${n_added} added, ${n_removed} removed (at most ${MAX} each)")
if(n_added LESS 1 OR n_added GREATER MAX OR n_removed GREATER MAX)
  message(FATAL_ERROR "the rtcd version is not the plain program with at most ${MAX} lines changed")
endif()
