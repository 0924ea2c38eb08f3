# The watertight wrap (core/wrap.cpp, include/rtcd/rtcd_wrap.h) needs OpenVDB
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
    target_include_directories(rtcd SYSTEM PRIVATE ${RTCD_OPENVDB_INCLUDE})
    target_link_libraries(rtcd PRIVATE ${RTCD_OPENVDB_LIB} ${RTCD_TBB_LIB})
    target_compile_definitions(rtcd PRIVATE RTCD_WITH_WRAP)
    message(STATUS "rtcd: watertight wrap with OpenVDB (${RTCD_OPENVDB_LIB})")
  else()
    message(STATUS "rtcd: OpenVDB not found (Debian libopenvdb-dev, libboost-dev): the wrap is not available")
  endif()
endif()
# C++ symbols of the wrap stay private like the C ones.
set_target_properties(rtcd PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
