include(GoogleTest)

# moeval_add_test(<name> LABELS <cpu|gpu|multi_gpu|large|sanitize ...> SOURCES <files> LIBS <targets>)
#
# Every gtest case becomes its own ctest test carrying the labels. A GPU test on a machine without a
# device calls GTEST_SKIP(); the SKIP_REGULAR_EXPRESSION turns that into ctest's "Skipped" (never
# "Passed"). Discovery runs the binary with --gtest_list_tests only, which touches no device.
function(moeval_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS;SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABELS)
    message(FATAL_ERROR "moeval_add_test(${name}): LABELS is required (cpu, gpu, multi_gpu, large, sanitize)")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main moeval_warnings)
  gtest_discover_tests(${name}
    TEST_PREFIX "${name}."
    DISCOVERY_TIMEOUT 120
    NO_PRETTY_VALUES  # every parameterised suite names its cases; the values would be byte dumps
    PROPERTIES
      LABELS "${ARG_LABELS}"
      TIMEOUT ${ARG_TIMEOUT}
      SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
