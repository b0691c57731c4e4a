# Finds the C++ Actor Framework (Debian's libcaf-dev ships no CMake config).
# Components: core, io, openssl. Defines CAF_FOUND, CAF_VERSION, CAF_INCLUDE_DIR
# and the imported targets CAF::core, CAF::io, CAF::openssl.
find_path(CAF_INCLUDE_DIR caf/config.hpp)
if(CAF_INCLUDE_DIR)
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_v "${_caf_version_line}")
  math(EXPR _caf_major "${_caf_v} / 10000")
  math(EXPR _caf_minor "(${_caf_v} / 100) % 100")
  math(EXPR _caf_patch "${_caf_v} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

if(NOT CAF_FIND_COMPONENTS)
  set(CAF_FIND_COMPONENTS core io)
endif()

set(_caf_required_vars CAF_INCLUDE_DIR)
foreach(_comp IN LISTS CAF_FIND_COMPONENTS)
  find_library(CAF_${_comp}_LIBRARY NAMES caf_${_comp})
  if(CAF_${_comp}_LIBRARY)
    set(CAF_${_comp}_FOUND TRUE)
    if(NOT TARGET CAF::${_comp})
      add_library(CAF::${_comp} UNKNOWN IMPORTED)
      set_target_properties(CAF::${_comp} PROPERTIES
        IMPORTED_LOCATION "${CAF_${_comp}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
    endif()
  endif()
  if(CAF_FIND_REQUIRED_${_comp})
    list(APPEND _caf_required_vars CAF_${_comp}_LIBRARY)
  endif()
endforeach()
if(TARGET CAF::io AND TARGET CAF::core)
  set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
endif()
if(TARGET CAF::openssl AND TARGET CAF::io)
  set_property(TARGET CAF::openssl APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::io)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS ${_caf_required_vars}
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)
mark_as_advanced(CAF_INCLUDE_DIR)
