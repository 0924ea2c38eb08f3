# Bit-identical results across backends and thread counts, from the command
# line: runs PROGRAM once per variant with the common ARGS followed by the
# variant's own arguments, reads "pose_checksum" from the one-line JSON
# object each run prints, and passes when every run exits with 0, every
# checksum is 16 lower-case hex digits and all of them are equal.
#
#   cmake -DPROGRAM=<exe> "-DARGS=<args>" "-DVARIANTS=<variant>|<variant>..."
#         ["-DEXPECT=<expect>|<expect>..."] -P run_checksum_equal.cmake
#
# ARGS: arguments separated by spaces (a CMake list works too).
# VARIANTS: one entry per run, separated by '|'; each entry is split on
#   spaces. Leading NAME=VALUE words set environment variables for that run
#   only (through cmake -E env), e.g. "RTCD_DEVICES=0:0/2 --backend opencl".
#   An empty entry runs ARGS alone.
# EXPECT (optional): one entry per variant, in the same order, separated by
#   '|'; each entry is a space-separated list of KEY=VALUE that the run's
#   JSON must hold (string(JSON GET) text: "threads=2 backend=opencl
#   devices=1"), so a silent fallback to another backend or thread count
#   fails instead of passing with the reference's checksum. An empty entry
#   checks nothing.
cmake_minimum_required(VERSION 3.19)

foreach(var PROGRAM VARIANTS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_checksum_equal.cmake: -D${var}=... is required")
  endif()
endforeach()

# Space-separated text (or a CMake list) -> a CMake list of words.
function(split_words out_var text)
  string(REPLACE ";" " " text "${text}")
  string(STRIP "${text}" text)
  if(text STREQUAL "")
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  separate_arguments(words UNIX_COMMAND "${text}")
  set(${out_var} "${words}" PARENT_SCOPE)
endfunction()

# "a|b||c" -> a CMake list with one element per entry (empty ones kept).
function(split_entries out_var text count_var)
  string(REPLACE ";" " " text "${text}")
  string(REPLACE "|" ";" entries "${text}")
  list(LENGTH entries n)
  # A trailing empty entry ("a|") is dropped by list(LENGTH): count the bars.
  string(REGEX MATCHALL "\\|" bars "${text}")
  list(LENGTH bars nbars)
  math(EXPR n "${nbars} + 1")
  set(${out_var} "${entries}" PARENT_SCOPE)
  set(${count_var} ${n} PARENT_SCOPE)
endfunction()

split_words(common "${ARGS}")
split_entries(variants "${VARIANTS}" variant_count)
set(expect_count 0)
if(DEFINED EXPECT AND NOT "${EXPECT}" STREQUAL "")
  split_entries(expects "${EXPECT}" expect_count)
  if(NOT expect_count EQUAL variant_count)
    message(FATAL_ERROR "EXPECT has ${expect_count} entries for ${variant_count} variants")
  endif()
endif()

set(checksums "")
set(failures "")
math(EXPR last "${variant_count} - 1")
foreach(i RANGE ${last})
  set(entry "")
  list(LENGTH variants have)
  if(i LESS have)
    list(GET variants ${i} entry)
  endif()
  split_words(words "${entry}")
  # Leading NAME=VALUE words: the run's environment.
  set(env "")
  set(args "")
  set(in_env TRUE)
  foreach(w IN LISTS words)
    if(in_env AND w MATCHES "^[A-Za-z_][A-Za-z0-9_]*=")
      list(APPEND env "${w}")
    else()
      set(in_env FALSE)
      list(APPEND args "${w}")
    endif()
  endforeach()
  set(command "${PROGRAM}" ${common} ${args})
  if(env)
    set(command "${CMAKE_COMMAND}" -E env ${env} ${command})
  endif()
  string(REPLACE ";" " " shown "${env} ${common} ${args}")
  string(STRIP "${shown}" shown)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  math(EXPR seconds "${t1} - ${t0}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "variant ${i} (${shown}): exited with ${rc}\n${err}${out}")
  endif()
  # The JSON object: the last line of stdout that starts with '{'.
  # (Found by position: a list of lines would split at any ';' in the text.)
  set(json "")
  string(FIND "${out}" "\n{" at REVERSE)
  if(at GREATER -1)
    math(EXPR at "${at} + 1")
    string(SUBSTRING "${out}" ${at} -1 json)
  elseif(out MATCHES "^{")
    set(json "${out}")
  endif()
  string(FIND "${json}" "\n" end)
  if(end GREATER -1)
    string(SUBSTRING "${json}" 0 ${end} json)
  endif()
  string(JSON sum ERROR_VARIABLE json_err GET "${json}" pose_checksum)
  if(json_err)
    message(FATAL_ERROR "variant ${i} (${shown}): no pose_checksum in the output: ${json_err}\n${out}")
  endif()
  if(NOT sum MATCHES "^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$")
    message(FATAL_ERROR "variant ${i} (${shown}): pose_checksum '${sum}' is not 16 hex digits")
  endif()
  # What the run reports about itself.
  set(report "")
  foreach(key backend devices threads)
    string(JSON value ERROR_VARIABLE key_err GET "${json}" ${key})
    if(NOT key_err)
      string(APPEND report " ${key}=${value}")
    endif()
  endforeach()
  message("variant ${i} (${shown}): pose_checksum ${sum} [${report} ] ${seconds} s")
  if(expect_count GREATER 0)
    set(expect_entry "")
    list(LENGTH expects have)
    if(i LESS have)
      list(GET expects ${i} expect_entry)
    endif()
    split_words(pairs "${expect_entry}")
    foreach(pair IN LISTS pairs)
      if(NOT pair MATCHES "^([^=]+)=(.*)$")
        message(FATAL_ERROR "EXPECT entry ${i}: '${pair}' is not KEY=VALUE")
      endif()
      set(key "${CMAKE_MATCH_1}")
      set(want "${CMAKE_MATCH_2}")
      string(JSON got ERROR_VARIABLE key_err GET "${json}" ${key})
      if(key_err)
        list(APPEND failures "variant ${i} (${shown}): no \"${key}\" in the output (want ${want})")
      elseif(NOT got STREQUAL want)
        list(APPEND failures "variant ${i} (${shown}): \"${key}\" is ${got}, want ${want}")
      endif()
    endforeach()
  endif()
  list(APPEND checksums "${sum}")
endforeach()

if(failures)
  string(REPLACE ";" "\n" failures "${failures}")
  message(FATAL_ERROR "a run did not use what its variant asks for:\n${failures}")
endif()
list(REMOVE_DUPLICATES checksums)
list(LENGTH checksums distinct)
if(NOT distinct EQUAL 1)
  string(REPLACE ";" ", " checksums "${checksums}")
  message(FATAL_ERROR "the variants disagree: ${distinct} different pose_checksum values (${checksums})")
endif()
message("all ${variant_count} variants: pose_checksum ${checksums}")
