# Installs the build tree into a scratch prefix, builds the drop-in program as
# a separate project with find_package(rtcd), runs it, and checks rtcd.pc.
# cmake -DBUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. -DEXTRA_FLAGS=.. -P install_and_build.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}"
                        "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}"
                        "-DCMAKE_BUILD_RPATH=${prefix}/lib;${prefix}/lib/x86_64-linux-gnu"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the separate project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the separate project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/dropin" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "rtcd pairs owned: [1-9]")
  message(FATAL_ERROR "the installed drop-in did not run through rtcd (${rc}):\n${out}\n${err}")
endif()
file(GLOB_RECURSE pcs "${prefix}/*/rtcd.pc")
list(GET pcs 0 pc)
get_filename_component(pcdir "${pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
execute_process(COMMAND pkg-config --cflags --libs rtcd RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT flags MATCHES "-lrtcd_bullet" OR NOT flags MATCHES "-I${prefix}")
  message(FATAL_ERROR "pkg-config rtcd: ${flags} ${err}")
endif()
message(STATUS "pkg-config rtcd: ${flags}")
