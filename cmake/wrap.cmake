# The watertight wrap (core/wrap/wrap.cpp, include/rtcd/rtcd_wrap.h) needs OpenVDB
# (Debian libopenvdb-dev) and TBB. Optional like assimp: without them rtcd
# builds, rtcd_wrap_available() is 0 and rtcd_wrap says "wrap not available".
option(RTCD_WITH_WRAP "Build the watertight wrap (needs OpenVDB: Debian libopenvdb-dev)" ON)
set(RTCD_WRAP_FOUND OFF)
if(RTCD_WITH_WRAP)
  find_path(RTCD_OPENVDB_INCLUDE openvdb/openvdb.h)
  find_library(RTCD_OPENVDB_LIB openvdb)
  find_library(RTCD_TBB_LIB tbb)
  find_path(RTCD_BOOST_INCLUDE boost/numeric/conversion/conversion_traits.hpp) # OpenVDB's headers need it
  if(RTCD_OPENVDB_INCLUDE AND RTCD_OPENVDB_LIB AND RTCD_TBB_LIB AND RTCD_BOOST_INCLUDE)
    set(RTCD_WRAP_FOUND ON)
    # OpenVDB lives in a module of its own, loaded on the first wrap
    # (core/wrap/wrap.cpp says why: log4cplus's thread pool and fork), written
    # beside librtcd so that the loader finds it in the build tree and installed.
    add_library(rtcd_wrap_vdb MODULE core/wrap/wrap_vdb.cpp)
    target_include_directories(rtcd_wrap_vdb SYSTEM PRIVATE ${RTCD_OPENVDB_INCLUDE})
    target_include_directories(rtcd_wrap_vdb PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(rtcd_wrap_vdb PRIVATE rtcd ${RTCD_OPENVDB_LIB} ${RTCD_TBB_LIB})
    set_target_properties(rtcd_wrap_vdb PROPERTIES LIBRARY_OUTPUT_DIRECTORY $<TARGET_FILE_DIR:rtcd>
                          CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    target_link_libraries(rtcd PRIVATE ${CMAKE_DL_LIBS})
    target_compile_definitions(rtcd PRIVATE RTCD_WITH_WRAP)
    message(STATUS "rtcd: watertight wrap with OpenVDB (${RTCD_OPENVDB_LIB}), module rtcd_wrap_vdb")
  else()
    message(STATUS "rtcd: OpenVDB not found (Debian libopenvdb-dev, libboost-dev): the wrap is not available")
  endif()
endif()
# C++ symbols of the wrap stay private like the C ones.
set_target_properties(rtcd PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
