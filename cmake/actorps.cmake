# The two helpers every folder uses: one library per folder, one ctest per test suite.

# actorps_add_library(NAME SOURCES src... [DEPS target...])
# Builds the static library NAME from the listed sources; its public include root is the repo root.
function(actorps_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${ACTORPS_WARNINGS}>)
endfunction()

# actorps_add_test_module(MODULE SOURCES tests/MODULE/x_test.cpp... [DEPS target...] [TIMEOUT seconds])
# Builds one Boost.Test executable per module (the runner main is in tests/support) and
# registers one ctest per suite: file tests/MODULE/x_test.cpp holds suite `x`, run as ctest `MODULE.x`.
function(actorps_add_test_module module)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(exe ${module}_tests)
  add_executable(${exe} ${ARG_SOURCES})
  target_link_libraries(${exe} PRIVATE actorps_test_support ${ARG_DEPS})
  target_compile_options(${exe} PRIVATE ${ACTORPS_WARNINGS})
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(suite ${src} NAME_WE)
    string(REGEX REPLACE "_test$" "" suite ${suite})
    add_test(NAME ${module}.${suite} COMMAND ${exe} --run_test=${suite} --log_level=message)
    set_tests_properties(${module}.${suite} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
                         WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  endforeach()
endfunction()
