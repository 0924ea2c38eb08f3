# The installed package, end to end:
#  1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix, and the installed tree
#     holds the two libraries, the public headers and the package files only;
#  2. SOURCE_DIR (tests/dropin) as a separate project: find_package(rtcd) with
#     CMAKE_PREFIX_PATH=prefix, built and run; the drop-in's output must show
#     that rtcd processed its pairs, and the libraries it loads come from prefix;
#  3. pkg-config --cflags --libs rtcd (PKG_CONFIG_PATH=prefix/<libdir>/pkgconfig)
#     alone builds the same program, which runs the same way.
# EXTRA_FLAGS (the sanitizer flags of an RTCD_SANITIZE build) go to every
# compile and link, so the programs match the installed libraries.
#   cmake -DBUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. -DGENERATOR=.. -DC_COMPILER=..
#         -DCXX_COMPILER=.. -DEXTRA_FLAGS=.. -P install_and_build.cmake
cmake_minimum_required(VERSION 3.20)
set(expected_output "rtcd pairs owned: [1-9]" "rays cast: [1-9]" "colliding rays: [1-9]" "bodies at rest above the ground")

function(run)
  cmake_parse_arguments(R "" "WHAT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${R_WHAT} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()

function(check_dropin_output program out)
  foreach(re IN LISTS expected_output)
    if(NOT out MATCHES "${re}")
      message(FATAL_ERROR "${program}: no line matches '${re}':\n${out}")
    endif()
  endforeach()
endfunction()

# Every librtcd* the program loads comes from the installed tree.
function(check_loads_from_prefix program)
  run(WHAT "ldd ${program}" COMMAND ldd "${program}")
  string(REGEX MATCHALL "librtcd[a-z_]*\\.so[^\n]*" lines "${out}")
  list(LENGTH lines n)
  if(n LESS 2)
    message(FATAL_ERROR "${program} does not load librtcd and librtcd_bullet:\n${out}")
  endif()
  foreach(line IN LISTS lines)
    string(FIND "${line}" "=> ${prefix}/" at)
    if(at LESS 0)
      message(FATAL_ERROR "${program}: ${line} (expected under ${prefix})")
    endif()
  endforeach()
endfunction()

separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

# 1. install
run(WHAT "cmake --install" COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
file(GLOB_RECURSE pcs "${prefix}/*/rtcd.pc")
list(LENGTH pcs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one installed rtcd.pc, found: ${pcs}")
endif()
get_filename_component(pcdir "${pcs}" DIRECTORY)
get_filename_component(libdir "${pcdir}" DIRECTORY)
file(RELATIVE_PATH libdir_rel "${prefix}" "${libdir}")
file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
list(SORT installed)
string(REPLACE "." "\\." libdir_re "${libdir_rel}")
foreach(want "${libdir_rel}/librtcd.so" "${libdir_rel}/librtcd_bullet.so" "${libdir_rel}/cmake/rtcd/rtcdConfig.cmake"
             "${libdir_rel}/cmake/rtcd/rtcdConfigVersion.cmake" "${libdir_rel}/cmake/rtcd/rtcdTargets.cmake"
             "include/rtcd/rtcd.h" "include/rtcd/rtcd_bullet.h" "include/rtcd/rtcd_world.h")
  if(NOT want IN_LIST installed)
    message(FATAL_ERROR "not installed: ${want}\ninstalled: ${installed}")
  endif()
endforeach()
foreach(f IN LISTS installed)
  if(NOT f MATCHES "^(bin/rtcd_mesh_check|include/rtcd/[a-z_]+\\.h|${libdir_re}/(librtcd(_bullet|_import)?\\.so(\\.[0-9]+)*|librtcd_wrap_vdb\\.so|cmake/rtcd/rtcd[A-Za-z-]*\\.cmake|pkgconfig/rtcd\\.pc))$")
    message(FATAL_ERROR "installed, but not part of the package: ${f}")
  endif()
endforeach()
list(LENGTH installed n)
message(STATUS "installed ${n} files under ${prefix}")

# 2. the separate project, with find_package(rtcd)
set(gen)
if(GENERATOR)
  set(gen -G "${GENERATOR}")
endif()
set(compilers)
if(C_COMPILER)
  list(APPEND compilers "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND compilers "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run(WHAT "configuring the separate project"
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" ${gen} ${compilers}
            "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
            "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run(WHAT "building the separate project" COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run(WHAT "the separate project's dropin" COMMAND "${WORK_DIR}/build/dropin")
message("${out}")
check_dropin_output(dropin "${out}")
check_loads_from_prefix("${WORK_DIR}/build/dropin")
run(WHAT "the separate project's core_only" COMMAND "${WORK_DIR}/build/core_only")
message("${out}")

# 3. pkg-config
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
run(WHAT "pkg-config --cflags --libs rtcd" COMMAND pkg-config --cflags --libs rtcd)
string(STRIP "${out}" flags)
message(STATUS "pkg-config --cflags --libs rtcd: ${flags}")
separate_arguments(pc_flags UNIX_COMMAND "${flags}")
if(NOT CXX_COMPILER)
  set(CXX_COMPILER c++)
endif()
run(WHAT "building with pkg-config's flags"
    COMMAND "${CXX_COMPILER}" -std=c++17 ${extra} "${SOURCE_DIR}/rtcd_bullet_dropin.cpp" -o "${WORK_DIR}/dropin_pc"
            ${pc_flags} "-Wl,-rpath,${libdir}")
run(WHAT "the drop-in built with pkg-config's flags" COMMAND "${WORK_DIR}/dropin_pc")
check_dropin_output(dropin_pc "${out}")
check_loads_from_prefix("${WORK_DIR}/dropin_pc")
message(STATUS "the installed package works through find_package(rtcd) and pkg-config")
