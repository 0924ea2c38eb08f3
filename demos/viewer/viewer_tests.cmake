# The viewer's and the plots' tests (tests/CMakeLists.txt registers them):
#   cmake -DMODE=frames -DPROGRAM=avalanche -DCHECK=png_check -DDIR=out -P viewer_tests.cmake
#     30 frames of a 64-blob avalanche with no display, checked by png_check:
#     all there, at least 640x480, not blank, bodies drawn, not all the same.
#   cmake -DMODE=no_display -DPROGRAM=avalanche -P viewer_tests.cmake
#     --view with no display fails with exit code 1 and says why (no crash).
#   cmake -DMODE=plots -DPYTHON=python -DSCRIPT=plots.py -DDEMO_DIR=dir -DCHECK=png_check -DDIR=out -P viewer_tests.cmake
#     the plot script's figures from short runs: PNG files that png_check
#     reads, of a size and not blank; SVG files that are SVG.
cmake_minimum_required(VERSION 3.20)
# no display, whatever the machine running the tests has
set(no_display ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY)

if(MODE STREQUAL "frames")
  file(REMOVE_RECURSE "${DIR}")
  execute_process(COMMAND ${no_display} "${PROGRAM}" --objects 64 --steps 30 --frames "${DIR}" --backend cpu --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "avalanche --frames exited with ${rc}:\n${err}")
  endif()
  execute_process(COMMAND "${CHECK}" --frames "${DIR}" 30 --min-size 640x480 --bodies
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the frames failed the check:\n${err}")
  endif()
elseif(MODE STREQUAL "no_display")
  execute_process(COMMAND ${no_display} "${PROGRAM}" --objects 8 --steps 2 --view --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "1")
    message(FATAL_ERROR "avalanche --view with no display: exit '${rc}', want 1:\n${err}")
  endif()
  if(NOT err MATCHES "--view: cannot open a window, no display")
    message(FATAL_ERROR "avalanche --view with no display did not say why:\n${err}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "avalanche --view with no display ran anyway:\n${out}")
  endif()
elseif(MODE STREQUAL "plots")
  file(REMOVE_RECURSE "${DIR}")
  execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --demo-dir "${DEMO_DIR}" --out "${DIR}/images" --data "${DIR}/data"
                          --quick --formats png,svg
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "plots.py exited with ${rc}:\n${err}")
  endif()
  set(pngs "")
  foreach(name narrowphase_algorithms penetration scaling)
    list(APPEND pngs "${DIR}/images/${name}.png")
    file(READ "${DIR}/images/${name}.svg" svg LIMIT 4096)
    if(NOT svg MATCHES "<svg")
      message(FATAL_ERROR "${DIR}/images/${name}.svg is not an SVG file")
    endif()
  endforeach()
  execute_process(COMMAND "${CHECK}" --min-size 600x400 ${pngs} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the figures failed the check:\n${err}")
  endif()
else()
  message(FATAL_ERROR "viewer_tests.cmake: MODE frames|no_display|plots")
endif()
