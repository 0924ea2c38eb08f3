# Turns the kernel sources into one C string (the .cl files and the shared
# headers stay the source of truth; the generated file is not committed).
# cmake -DOUT=file.c -DSOURCES="a.h|b.h|k.cl" -P embed_kernels.cmake
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(text "")
foreach(src IN LISTS SOURCES)
  file(READ "${src}" body)
  # The headers are concatenated in order, so their local includes go.
  string(REGEX REPLACE "#include \"[^\"]*\"" "" body "${body}")
  get_filename_component(name "${src}" NAME)
  string(APPEND text "/* ---- ${name} ---- */\n${body}\n")
endforeach()
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE "${OUT}.tmp" "/* Generated from opencl/kernels and core/shared: do not edit. */\n"
                        "const char rtcd_kernel_source[] =\n\"${text}\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
