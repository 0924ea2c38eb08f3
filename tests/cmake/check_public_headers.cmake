# Every public C header compiles on its own, first in a translation unit,
# under -std=c99 -pedantic and -std=c11 -pedantic with warnings as errors
# (the C++ header rtcd_bullet.h is compiled by the plugin and the drop-in).
# cmake -DCC=<c compiler> -DINCLUDE=<include dir> -DWORK=<scratch dir> -P check_public_headers.cmake
file(GLOB headers RELATIVE "${INCLUDE}" "${INCLUDE}/rtcd/*.h")
list(REMOVE_ITEM headers "rtcd/rtcd_bullet.h")
list(LENGTH headers count)
if(count LESS 8)
  message(FATAL_ERROR "only ${count} public headers under ${INCLUDE}/rtcd")
endif()
file(MAKE_DIRECTORY "${WORK}")
set(failed "")
foreach(h IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${h}" name)
  set(src "${WORK}/${name}.c")
  file(WRITE "${src}" "#include <${h}>\nint rtcd_header_check_${name}(void) { return 0; }\n")
  foreach(std c99 c11)
    execute_process(COMMAND "${CC}" -std=${std} -pedantic -Wall -Wextra -Werror -I "${INCLUDE}" -c "${src}"
                            -o "${WORK}/${name}.${std}.o"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      list(APPEND failed "${h} (${std})")
      message("${h} with -std=${std} -pedantic:\n${err}${out}")
    endif()
  endforeach()
endforeach()
if(failed)
  message(FATAL_ERROR "public headers that do not compile alone: ${failed}")
endif()
message("${count} public headers compile alone under -std=c99 and -std=c11 -pedantic -Werror")
