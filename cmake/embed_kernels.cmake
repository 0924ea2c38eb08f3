# Turns a kernel source into one C string: its quoted #includes (the shared
# headers in core/shared/, the kernels' binding headers) are resolved
# against the including file's folder and inlined once each, as the
# preprocessor would with include guards. The files stay the source of
# truth; the generated file is not committed.
# cmake -DOUT=file.c -DSOURCE=kernel.cl -P embed_kernels.cmake
cmake_policy(SET CMP0057 NEW) # if(IN_LIST)
set(RTCD_EMBEDDED "")

function(rtcd_expand path out_var)
  get_filename_component(path "${path}" REALPATH)
  if(path IN_LIST RTCD_EMBEDDED)
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  list(APPEND RTCD_EMBEDDED "${path}")
  set(RTCD_EMBEDDED "${RTCD_EMBEDDED}" PARENT_SCOPE)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "embed_kernels: cannot find ${path}")
  endif()
  file(READ "${path}" body)
  get_filename_component(dir "${path}" DIRECTORY)
  string(REGEX MATCHALL "#include \"[^\"]*\"" includes "${body}")
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE "#include \"([^\"]*)\"" "\\1" name "${inc}")
    rtcd_expand("${dir}/${name}" text)
    set(RTCD_EMBEDDED "${RTCD_EMBEDDED}" PARENT_SCOPE)
    string(REPLACE "${inc}" "${text}" body "${body}")
  endforeach()
  get_filename_component(name "${path}" NAME)
  set(${out_var} "/* ---- ${name} ---- */\n${body}\n" PARENT_SCOPE)
endfunction()

rtcd_expand("${SOURCE}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE "${OUT}.tmp" "/* Generated from opencl/kernels and core/shared: do not edit. */\n"
                        "const char rtcd_kernel_source[] =\n\"${text}\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
